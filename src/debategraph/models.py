"""Chat-model factory and the one structured-call helper every node uses.

Every LLM call in debategraph goes through :func:`structured_call`: it takes a pydantic
output schema, uses the structured-output method the endpoint supports, validates,
repairs (clamp, coerce, truncate) and retries malformed output, falls back to a recorded
reason instead of crashing, and records token usage and latency. Transport failures (an
endpoint that is down, or keeps answering 5xx after the client's retries) raise
:class:`~debategraph.errors.ModelUnavailableError` so the graph run stops and the thread
stays resumable.
"""

from __future__ import annotations

import functools
import json
import os
import time
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, Literal, NamedTuple, TypeVar
from urllib.parse import urlparse

import annotated_types
import openai
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, ValidationError

from debategraph.errors import ModelUnavailableError, UsageError
from debategraph.state.records import Usage

StructuredMethod = Literal["function_calling", "json_schema", "json_mode"]
MethodChoice = Literal["auto", "function_calling", "json_schema", "json_mode"]
LOCAL = "local"
DEFAULT_TIMEOUT_S = 60.0
LOCAL_TIMEOUT_S = 300.0
LOCAL_MAX_TOKENS = 320
#: Characters per token when an endpoint reports no usage and its count is estimated.
CHARS_PER_TOKEN = 4
CUT_OFF_HINT = "keep every text field short"
REPAIR_HINT = (
    "Your previous reply could not be used: {error}. Reply again, calling the tool with "
    "arguments that match its schema exactly."
)

S = TypeVar("S", bound=BaseModel)


@dataclass(frozen=True)
class ModelSpec:
    """Which chat model to call and how.

    Attributes:
        model: ``local`` for the embedded model (SmolLM2, or the GGUF file named by
            ``DEBATEGRAPH_GGUF``), ``local:PATH.gguf`` for another GGUF file served the
            same way, else the endpoint's model name.
        base_url: OpenAI-compatible base URL; ``None`` uses ``OPENAI_BASE_URL`` or OpenAI.
        api_key: API key; ``None`` uses ``OPENAI_API_KEY`` (or a placeholder).
        temperature: Sampling temperature.
        max_tokens: Completion token cap (``None``: endpoint default; local: 320).
        timeout_s: Per-request timeout in seconds (``None``: 60, local: 300).
        max_retries: Client retries on connection errors, 429 and 5xx.
        structured_method: ``auto`` picks ``json_schema`` for api.openai.com and the
            embedded model (grammar-constrained), ``function_calling`` (the most widely
            supported) elsewhere.
        slots: Embedded model only: requests its server answers at once (``None``: 4).
            The CLI sets it to the run's maximum concurrency.
    """

    model: str = LOCAL
    base_url: str | None = None
    api_key: str | None = None
    temperature: float = 0.7
    max_tokens: int | None = None
    timeout_s: float | None = None
    max_retries: int = 2
    structured_method: MethodChoice = "auto"
    slots: int | None = None

    @property
    def is_local(self) -> bool:
        """Whether this is the embedded model (``local`` or ``local:PATH``)."""
        return is_local(self.model)

    def check_values(self) -> None:
        """Check the values themselves, reading no file and no environment.

        Raises:
            UsageError: On a bad value, naming it and what is allowed.
        """
        if not self.model.strip():
            raise UsageError("model name is empty: use 'local' or the endpoint's model name")
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise UsageError(f"timeout {self.timeout_s} must be > 0 seconds")
        if self.max_retries < 0:
            raise UsageError(f"max retries {self.max_retries} must be >= 0")
        if self.is_local and self.base_url:
            raise UsageError(f"--base-url {self.base_url} needs --model NAME (the model it serves)")

    def validated(self) -> ModelSpec:
        """Check the values, the embedded model's file and slots, and fill in defaults.

        Returns:
            A spec with ``base_url`` resolved for remote models.

        Raises:
            UsageError: On a bad value, naming it and what is allowed.
        """
        self.check_values()
        if self.is_local:
            from debategraph.local import check_gguf, check_slots, resolve_gguf

            info = check_gguf(resolve_gguf(self.model))
            if self.slots is not None:
                check_slots(info, self.slots)
            return self
        base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or None
        if base_url is not None:
            parsed = urlparse(base_url)
            if parsed.scheme not in ("http", "https") or not parsed.netloc:
                raise UsageError(f"base URL {base_url!r} is not an http(s) URL")
        return replace(self, base_url=base_url)


def is_local(model: str) -> bool:
    """Whether a model name means the embedded model (``local`` or ``local:PATH``).

    Args:
        model: The model name.

    Returns:
        ``True`` for the embedded model.
    """
    return model == LOCAL or model.startswith(f"{LOCAL}:")


class ModelBinding(NamedTuple):
    """A chat model plus the structured-output method to use with it.

    Attributes:
        chat: The chat model.
        method: The structured-output method.
        endpoint: Where it is reached (for error lines).
        diagnose: For the embedded model: says how its server process ended, if it
            has, so a failed call names the crash rather than an unreachable endpoint.
    """

    chat: BaseChatModel
    method: StructuredMethod
    endpoint: str
    diagnose: Callable[[], str | None] | None = None


def _pick_method(choice: MethodChoice, base_url: str | None) -> StructuredMethod:
    if choice != "auto":
        return choice
    host = urlparse(base_url).netloc if base_url else "api.openai.com"
    return "json_schema" if host.endswith("api.openai.com") else "function_calling"


def get_chat_model(spec: ModelSpec = ModelSpec()) -> ModelBinding:
    """Build (once per spec and process) the chat model a spec describes.

    ``local`` starts the embedded llama.cpp server (shared by the whole process, one per
    model file and slot count) and reaches it over HTTP like any other OpenAI-compatible
    endpoint; if that server has died, a fresh one is started.

    Args:
        spec: The model spec.

    Returns:
        The bound model.

    Raises:
        UsageError: On a bad spec, a missing model file or runtime.
        LocalModelError: If the embedded server cannot start.
    """
    if is_local(spec.model):
        return _local_binding(spec)
    return _remote_binding(spec)


@functools.lru_cache(maxsize=32)
def _remote_binding(spec: ModelSpec) -> ModelBinding:
    spec = spec.validated()
    api_key = spec.api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
    chat = ChatOpenAI(
        model=spec.model,
        base_url=spec.base_url,
        api_key=lambda: api_key,
        temperature=spec.temperature,
        max_completion_tokens=spec.max_tokens,
        timeout=spec.timeout_s or DEFAULT_TIMEOUT_S,
        max_retries=spec.max_retries,
        stream_usage=True,  # token usage also when a node's call is streamed
    )
    endpoint = spec.base_url or "https://api.openai.com/v1"
    return ModelBinding(chat, _pick_method(spec.structured_method, spec.base_url), endpoint)


_LOCAL_BINDINGS: dict[tuple[ModelSpec, int], ModelBinding] = {}


def clear_model_cache() -> None:
    """Forget the chat models built so far (the next :func:`get_chat_model` builds anew)."""
    _remote_binding.cache_clear()
    _LOCAL_BINDINGS.clear()


def _local_binding(spec: ModelSpec) -> ModelBinding:
    from debategraph.local import DEFAULT_SLOTS, resolve_gguf, shared_server

    spec = spec.validated()
    server = shared_server(resolve_gguf(spec.model), spec.slots or DEFAULT_SLOTS)
    key = (spec, id(server))
    binding = _LOCAL_BINDINGS.get(key)
    if binding is None or binding.endpoint != server.base_url:
        chat = ChatOpenAI(
            model=server.model.name,
            base_url=server.base_url,
            api_key=lambda: "not-needed",
            temperature=spec.temperature,
            # llama.cpp's server reads ``max_tokens``.
            extra_body={"max_tokens": spec.max_tokens or LOCAL_MAX_TOKENS},
            timeout=spec.timeout_s or LOCAL_TIMEOUT_S,
            max_retries=spec.max_retries,
            stream_usage=True,  # llama.cpp sends usage in the last chunk of a stream
        )
        # SmolLM2's chat template has no tool support on llama.cpp (tool calls come back
        # empty), while ``json_schema`` output is grammar-constrained and always parses.
        method = "json_schema" if spec.structured_method == "auto" else spec.structured_method
        binding = ModelBinding(chat, method, server.base_url, lambda: server.failure(1.0))
        _LOCAL_BINDINGS[key] = binding
    return binding


def bind_model(model: BaseChatModel | ModelBinding | ModelSpec | None) -> ModelBinding:
    """Normalise whatever a graph factory was given into a :class:`ModelBinding`.

    Args:
        model: A chat model (used with ``function_calling``), a binding, a spec, or
            ``None`` for the embedded model.

    Returns:
        The binding.
    """
    if isinstance(model, ModelBinding):
        return model
    if isinstance(model, BaseChatModel):
        endpoint = str(getattr(model, "openai_api_base", None) or type(model).__name__)
        return ModelBinding(model, "function_calling", endpoint)
    return get_chat_model(model or ModelSpec())


@dataclass(frozen=True)
class CallResult(Generic[S]):
    """Outcome of :func:`structured_call`.

    Attributes:
        value: The validated output, or ``None`` when every attempt failed.
        usage: Tokens and latency summed over all attempts.
        attempts: How many model calls were made.
        reason: Why ``value`` is ``None`` (or what was repaired), else ``None``.
    """

    value: S | None
    usage: Usage
    attempts: int
    reason: str | None = None


#: Endpoints seen rejecting ``json_schema``; they get ``function_calling`` from then on.
_NO_JSON_SCHEMA: set[str] = set()


def json_schema_rejected(endpoint: str, *, forget: bool = False) -> bool:
    """Whether ``endpoint`` was seen rejecting ``json_schema`` (its calls use tools).

    Args:
        endpoint: The binding's endpoint.
        forget: Forget that verdict, so the next call tries ``json_schema`` again.

    Returns:
        The verdict (before forgetting it).
    """
    rejected = endpoint in _NO_JSON_SCHEMA
    if forget:
        _NO_JSON_SCHEMA.discard(endpoint)
    return rejected


_OUTPUT_ERRORS = (
    OutputParserException,
    ValidationError,
    json.JSONDecodeError,
    openai.APIResponseValidationError,
)


def structured_call(
    model: ModelBinding,
    schema: type[S],
    messages: Sequence[BaseMessage],
    *,
    max_attempts: int = 3,
) -> CallResult[S]:
    """Call the model for an instance of ``schema``: validate, repair, retry, fall back.

    Args:
        model: The bound model (see :func:`bind_model`).
        schema: The pydantic model the reply must fit.
        messages: The prompt.
        max_attempts: Model calls to try before falling back (>= 1).

    Returns:
        The result; ``value`` is ``None`` with a ``reason`` after ``max_attempts`` bad replies.

    Raises:
        ModelUnavailableError: If the endpoint cannot be reached or keeps failing.
    """
    prompt = list(messages)
    usage = Usage()
    last_error = "no attempt made"
    method = model.method
    attempts = 0
    while attempts < max(1, max_attempts):
        attempts += 1
        if method == "json_schema" and model.endpoint in _NO_JSON_SCHEMA:
            method = "function_calling"
        runnable = _structured_runnable(model.chat, schema, method)
        started = time.perf_counter()
        try:
            out = runnable.invoke(prompt)
        except openai.APIStatusError as exc:
            if method == "json_schema" and _rejects_json_schema(exc):
                _NO_JSON_SCHEMA.add(model.endpoint)
                method = "function_calling"
                attempts -= 1
                continue
            raise _unavailable(model, exc) from exc
        except openai.APIConnectionError as exc:
            raise _unavailable(model, exc) from exc
        except openai.LengthFinishReasonError as exc:
            # The reply hit the token cap mid-JSON (``json_schema`` parsing refuses it):
            # close what was written and keep it if it is complete enough, else retry.
            cut = _cut_off_reply(exc)
            usage = usage + _usage_of(cut, time.perf_counter() - started, prompt)
            repaired = _try_repair(schema, cut, "json_schema")
            if repaired is not None:
                return CallResult(repaired, usage, attempts, reason="repaired: reply was cut off")
            last_error = f"the reply was cut off at the token limit; {CUT_OFF_HINT}"
            prompt = [*messages, HumanMessage(REPAIR_HINT.format(error=last_error))]
            continue
        except _OUTPUT_ERRORS as exc:
            usage = usage + Usage(calls=1, latency_s=round(time.perf_counter() - started, 6))
            last_error = one_line(str(exc))
            prompt = [*messages, HumanMessage(REPAIR_HINT.format(error=last_error[:300]))]
            continue
        latency = time.perf_counter() - started
        raw = out.get("raw") if isinstance(out, dict) else None
        usage = usage + _usage_of(raw, latency, prompt)
        parsed = out.get("parsed") if isinstance(out, dict) else None
        error = out.get("parsing_error") if isinstance(out, dict) else None
        if isinstance(parsed, dict):  # json_schema replies are validated here, not by the client
            try:
                parsed = schema.model_validate(parsed)
            except ValidationError as exc:
                error = exc
        if isinstance(parsed, schema):
            return CallResult(parsed, usage, attempts)
        repaired = _try_repair(schema, raw, method)
        if repaired is not None:
            return CallResult(repaired, usage, attempts, reason=f"repaired: {one_line(str(error))}")
        last_error = one_line(str(error) if error else "the reply had no structured output")
        prompt = [*messages, HumanMessage(REPAIR_HINT.format(error=last_error[:300]))]
    return CallResult(
        None, usage, attempts, reason=f"invalid output after {attempts} attempt(s): {last_error}"
    )


@dataclass(frozen=True)
class TextResult:
    """Outcome of :func:`text_call`.

    Attributes:
        text: The reply's text ("" when every attempt came back empty).
        usage: Tokens and latency summed over all attempts.
        attempts: How many model calls were made.
        reason: Why ``text`` is empty, else ``None``.
    """

    text: str
    usage: Usage
    attempts: int
    reason: str | None = None


def text_call(
    model: ModelBinding, messages: Sequence[BaseMessage], *, max_attempts: int = 2
) -> TextResult:
    """Call the model for free text (a debater's turn): retry empty replies, record usage.

    The sibling of :func:`structured_call` for prose, with the same error handling. Called
    inside a graph node, its tokens stream with LangGraph's ``stream_mode="messages"``.

    Args:
        model: The bound model (see :func:`bind_model`).
        messages: The prompt.
        max_attempts: Model calls to try while the reply is empty (>= 1).

    Returns:
        The result; ``text`` is empty with a ``reason`` if every reply was empty.

    Raises:
        ModelUnavailableError: If the endpoint cannot be reached or keeps failing.
    """
    usage = Usage()
    attempts = 0
    while attempts < max(1, max_attempts):
        attempts += 1
        started = time.perf_counter()
        try:
            reply = model.chat.invoke(list(messages))
        except (openai.APIStatusError, openai.APIConnectionError) as exc:
            raise _unavailable(model, exc) from exc
        usage = usage + _usage_of(reply, time.perf_counter() - started, messages)
        text = reply.text.strip() if isinstance(reply, AIMessage) else ""
        if text:
            return TextResult(text, usage, attempts)
    return TextResult("", usage, attempts, reason=f"empty reply after {attempts} attempt(s)")


def _rejects_json_schema(exc: openai.APIStatusError) -> bool:
    """Whether an error says the endpoint does not take a ``json_schema`` response format.

    Other errors of the same status (a prompt longer than the context, say) are not
    reasons to switch method.
    """
    text = str(exc.message).lower()
    return exc.status_code in (400, 422, 500, 501) and any(
        word in text for word in ("response_format", "json_schema", "schema")
    )


def _unavailable(
    model: ModelBinding, exc: openai.APIStatusError | openai.APIConnectionError
) -> ModelUnavailableError:
    """The one-line error for a transport failure (after the client's own retries)."""
    failure = model.diagnose() if model.diagnose is not None else None
    if failure is not None:
        return ModelUnavailableError(failure)
    if isinstance(exc, openai.APIStatusError):
        detail = f"answered HTTP {exc.status_code}: {one_line(exc.message)}"
    elif isinstance(exc, openai.APITimeoutError):
        detail = f"timed out: {one_line(_root_cause(exc))}"
    else:
        detail = f"is unreachable: {one_line(_root_cause(exc))}"
    return ModelUnavailableError(f"model endpoint {model.endpoint} {detail}")


_RUNNABLES: dict[tuple[int, type[BaseModel], str], tuple[BaseChatModel, Runnable[Any, Any]]] = {}
_RUNNABLES_MAX = 256


def _structured_runnable(
    chat: BaseChatModel, schema: type[BaseModel], method: StructuredMethod
) -> Runnable[Any, Any]:
    """``chat.with_structured_output(...)``, built once per model, schema and method.

    For ``json_schema`` the schema goes as a plain JSON schema, so the reply comes back as
    a dict and :func:`structured_call` validates and repairs it (handed the pydantic class,
    the OpenAI client validates the reply itself and raises, losing the reply: a confidence
    of -1.1 would cost a retry instead of a clamp).
    """
    key = (id(chat), schema, method)
    hit = _RUNNABLES.get(key)
    if hit is not None and hit[0] is chat:
        return hit[1]
    if len(_RUNNABLES) >= _RUNNABLES_MAX:
        _RUNNABLES.clear()
    target: type[BaseModel] | dict[str, Any] = schema
    if method == "json_schema":
        target = {"name": schema.__name__, "schema": schema.model_json_schema()}
    runnable = chat.with_structured_output(target, method=method, include_raw=True)
    _RUNNABLES[key] = (chat, runnable)
    return runnable


def _root_cause(exc: BaseException) -> str:
    """The innermost message of an exception chain (``Connection refused``, not ``error``)."""
    while exc.__cause__ is not None and str(exc.__cause__):
        exc = exc.__cause__
    return str(exc)


def one_line(text: str) -> str:
    """``text`` on one line (whitespace runs collapsed), at most 400 characters."""
    return " ".join(text.split())[:400]


def _usage_of(raw: object, latency_s: float, prompt: Sequence[BaseMessage]) -> Usage:
    """The usage a reply reports; estimated from text length if it reports none."""
    meta = getattr(raw, "usage_metadata", None)
    if meta:
        return Usage(
            prompt_tokens=int(meta.get("input_tokens", 0)),
            completion_tokens=int(meta.get("output_tokens", 0)),
            calls=1,
            latency_s=round(latency_s, 6),
        )
    reply = raw if isinstance(raw, AIMessage) else None
    completion = _estimate_tokens(reply.text if reply is not None else "")
    if reply is not None:
        completion += sum(_estimate_tokens(json.dumps(c["args"])) for c in reply.tool_calls)
    return Usage(
        prompt_tokens=sum(_estimate_tokens(m.text) for m in prompt),
        completion_tokens=completion,
        calls=1,
        latency_s=round(latency_s, 6),
        estimated=True,
    )


def _estimate_tokens(text: str) -> int:
    """Tokens in ``text`` by the usual rule of thumb for English (4 characters a token)."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _raw_arguments(raw: object, method: StructuredMethod) -> Any:
    if not isinstance(raw, AIMessage):
        return None
    if method == "function_calling":
        if raw.tool_calls:
            return raw.tool_calls[0]["args"]
        if raw.invalid_tool_calls:
            return _loads_lenient(raw.invalid_tool_calls[0].get("args") or "")
        return None
    return _loads_lenient(raw.content if isinstance(raw.content, str) else "")


def _cut_off_reply(exc: openai.LengthFinishReasonError) -> AIMessage:
    """The partial reply and usage of a completion that stopped at its token limit."""
    completion = exc.completion
    content = completion.choices[0].message.content if completion.choices else None
    usage = completion.usage
    return AIMessage(
        content=_close_json(content or ""),
        usage_metadata={
            "input_tokens": usage.prompt_tokens,
            "output_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        }
        if usage is not None
        else None,
    )


def _close_json(text: str) -> str:
    """Close a JSON text cut off mid-way, dropping a trailing member that cannot be kept."""
    for _ in range(8):
        closed = _close_brackets(text)
        try:
            json.loads(closed)
        except json.JSONDecodeError:
            if "," not in text:
                return closed
            text = text[: text.rfind(",")]  # drop the member that was being written
            continue
        return closed
    return _close_brackets(text)


def _close_brackets(text: str) -> str:
    """Close the string, arrays and objects left open at the end of ``text``."""
    stack: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]" and stack:
            stack.pop()
    if in_string:
        text += ("\\" if escaped else "") + '"'
    return text.rstrip().rstrip(",") + "".join(reversed(stack))


def _loads_lenient(text: str) -> Any:
    """Parse JSON, or the outermost ``{...}`` inside ``text``; ``None`` if neither works."""
    for candidate in (text, text[text.find("{") : text.rfind("}") + 1]):
        if not candidate:
            continue
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    return None


def _try_repair(schema: type[S], raw: object, method: StructuredMethod) -> S | None:
    data = _raw_arguments(raw, method)
    if not isinstance(data, dict):
        return None
    try:
        return schema.model_validate(repair(schema, data))
    except ValidationError:
        return None


def repair(schema: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    """Coerce and clamp ``data`` towards ``schema``'s constraints.

    Numbers given as text are parsed, numbers outside ``ge``/``le`` bounds are clamped
    (a confidence of 980 becomes 1.0), over-long strings and lists are cut, literal
    choices are matched case-insensitively; nested models and lists of models are
    repaired recursively. Fields it cannot fix are left for validation to reject.

    Args:
        schema: The target model.
        data: The raw arguments.

    Returns:
        The repaired arguments.
    """
    out = dict(data)
    for name, field in schema.model_fields.items():
        key = field.alias or name
        if key not in out:
            continue
        out[key] = _repair_value(field.annotation, field.metadata, out[key])
    return out


def _repair_value(annotation: Any, metadata: Sequence[Any], value: Any) -> Any:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        non_none = [a for a in args if a is not type(None)]
        if value is None or len(non_none) != 1:
            return value
        return _repair_value(non_none[0], metadata, value)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return repair(annotation, value) if isinstance(value, dict) else value
    if origin is Literal and isinstance(value, str):
        for choice in args:
            if isinstance(choice, str) and choice.lower() == value.strip().lower():
                return choice
        return value
    if origin in (list, tuple) and isinstance(value, list):
        item_type = args[0] if args else Any
        value = [_repair_value(item_type, (), v) for v in value]
    if annotation in (int, float):
        value = _coerce_number(value, annotation)
    if annotation is str and isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    return _apply_bounds(metadata, value)


def _coerce_number(value: Any, kind: type) -> Any:
    if isinstance(value, str):
        try:
            value = float(value.strip().rstrip("%").replace(",", ""))
        except ValueError:
            return value
    if isinstance(value, float) and kind is int:
        return round(value)
    return value


def _apply_bounds(metadata: Sequence[Any], value: Any) -> Any:
    for rule in metadata:
        if isinstance(value, int | float) and not isinstance(value, bool):
            if isinstance(rule, annotated_types.Ge) and value < rule.ge:  # type: ignore[operator]
                value = rule.ge
            elif isinstance(rule, annotated_types.Le) and value > rule.le:  # type: ignore[operator]
                value = rule.le
        if isinstance(rule, annotated_types.MaxLen) and isinstance(value, str | list):
            value = value[: rule.max_length]
    return value
