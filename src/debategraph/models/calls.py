"""The calls every node makes: :func:`structured_call` and :func:`text_call`.

:func:`structured_call` takes a pydantic output schema, uses the structured-output method
the endpoint supports, validates, repairs (clamp, coerce, truncate) and retries malformed
output, falls back to a recorded reason instead of crashing, and records token usage and
latency. Transport failures (an endpoint that is down, or keeps answering 5xx after the
client's retries) raise :class:`~debategraph.errors.ModelUnavailableError` so the graph
run stops and the thread stays resumable.

:func:`astructured_call` and :func:`atext_call` are the same calls for async code: they
await the model (``ainvoke``), with no thread in between. The logic is written once, as
generators that yield each model call they need and are sent its reply (or thrown its
error); one driver runs them, awaiting ``ainvoke`` (:func:`arun_steps`) or calling
``invoke`` (:func:`run_steps`). A graph node written as such a generator (``yield from``
the steps of each call it makes, see :func:`debategraph.nodes.dual.agent_node`) gets a
sync and a native async path from one body.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic

import openai
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ValidationError

from debategraph.models.binding import ModelBinding, for_running_loop
from debategraph.models.cache import from_cache
from debategraph.models.failures import (
    made,
    provider_failure,
    rejects_json_schema,
    slow_not_dead,
    spent,
    unavailable,
)
from debategraph.models.output import S, _cut_off_reply, _try_repair, json_in_text
from debategraph.models.pacing import paced
from debategraph.models.spec import StructuredMethod
from debategraph.models.steps import Steps, TimeLimitReached, arun_steps, run_steps
from debategraph.models.usage import usage_of
from debategraph.state.records import Turn, Usage
from debategraph.words import one_line, plural

#: What a retry after a reply cut off at the token cap asks for.
CUT_OFF_HINT = "keep every text field short"
#: What a model asked for JSON in its text reads after the prompt (``json_text``).
JSON_TEXT_HINT = "Reply with one JSON object and nothing else, matching this JSON schema:\n{schema}"
REPAIR_HINT = (
    "Your previous reply could not be used: {error}. Reply again, calling the tool with "
    "arguments that match its schema exactly."
)


@dataclass(frozen=True)
class CallResult(Generic[S]):
    """Outcome of :func:`structured_call`.

    Attributes:
        value: The validated output, or ``None`` when every attempt failed.
        usage: Tokens and latency summed over all attempts.
        attempts: How many model calls were made.
        reason: Why ``value`` is ``None`` (or what was repaired), else ``None``.
        model: The model that answered (its :attr:`ModelBinding.name`).
        records: The tool calls the agent made first (see :mod:`debategraph.models.loops`).
    """

    value: S | None
    usage: Usage
    attempts: int
    reason: str | None = None
    model: str | None = None
    records: tuple[Turn, ...] = ()


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
        model: The bound model (see :func:`~debategraph.models.binding.bind_model`).
        schema: The pydantic model the reply must fit.
        messages: The prompt.
        max_attempts: Model calls to try before falling back (>= 1).

    Returns:
        The result; ``value`` is ``None`` with a ``reason`` after ``max_attempts`` bad replies.

    Raises:
        ModelUnavailableError: If the endpoint cannot be reached or keeps failing.
    """
    return run_steps(structured_steps(model, schema, messages, max_attempts=max_attempts))


async def astructured_call(
    model: ModelBinding,
    schema: type[S],
    messages: Sequence[BaseMessage],
    *,
    max_attempts: int = 3,
) -> CallResult[S]:
    """:func:`structured_call` for async code: it awaits the model, on no thread.

    Takes, returns and raises what :func:`structured_call` does.
    """
    return await arun_steps(structured_steps(model, schema, messages, max_attempts=max_attempts))


def structured_steps(
    model: ModelBinding,
    schema: type[S],
    messages: Sequence[BaseMessage],
    *,
    max_attempts: int = 3,
) -> Steps[CallResult[S]]:
    """The steps of :func:`structured_call`: each model call is yielded, not made.

    Run them with :func:`run_steps` or :func:`arun_steps`, or ``yield from`` them in a
    longer generator; they take what :func:`structured_call` takes.
    """
    model = for_running_loop(model)
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
        asked = [*prompt, _json_text_hint(schema)] if method == "json_text" else prompt
        started = time.perf_counter()
        try:
            out = yield from paced(model, runnable, asked)
        except TimeLimitReached as exc:  # the run's deadline: no retry, a recorded fallback
            return CallResult(None, usage + spent(exc), made(attempts, exc), reason=str(exc))
        except openai.APITimeoutError as exc:  # slow, or dead: its endpoint says which
            slow = yield from slow_not_dead(model, exc, time.perf_counter() - started)
            if slow is None:
                raise unavailable(model, exc) from exc
            return CallResult(None, usage + slow[1], attempts, reason=slow[0])
        except openai.APIStatusError as exc:
            if method == "json_schema" and rejects_json_schema(exc):
                _NO_JSON_SCHEMA.add(model.endpoint)
                method = "function_calling"
                attempts -= 1
                continue
            raise unavailable(model, exc) from exc
        except openai.LengthFinishReasonError as exc:
            # The reply hit the token cap mid-JSON (``json_schema`` parsing refuses it):
            # close what was written and keep it if it is complete enough, else retry.
            cut = _cut_off_reply(exc)
            usage = usage + usage_of(cut, time.perf_counter() - started, prompt, model.price)
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
        except Exception as exc:  # any provider's failure (openai's too): one line
            if not provider_failure(exc):
                raise
            raise unavailable(model, exc) from exc
        latency = time.perf_counter() - started
        raw = out if isinstance(out, AIMessage) else None
        usage = usage + usage_of(raw, latency, prompt, model.price)
        parsed, error = parse_reply(schema, raw, method)
        if parsed is not None:
            return CallResult(parsed, usage, attempts)
        repaired = _try_repair(schema, raw, method)
        if repaired is not None:
            return CallResult(repaired, usage, attempts, reason=f"repaired: {one_line(error)}")
        last_error = one_line(error)
        prompt = [*messages, HumanMessage(REPAIR_HINT.format(error=last_error[:300]))]
    return CallResult(
        None,
        usage,
        attempts,
        reason=f"invalid output after {plural(attempts, 'attempt')}: {last_error}",
    )


@dataclass(frozen=True)
class TextResult:
    """Outcome of :func:`text_call`.

    Attributes:
        text: The reply's text ("" when every attempt came back empty).
        usage: Tokens and latency summed over all attempts.
        attempts: How many model calls were made.
        reason: Why ``text`` is empty, else ``None``.
        model: The model that answered (its :attr:`ModelBinding.name`).
        records: The tool calls the agent made first (see :mod:`debategraph.models.loops`).
        message_id: The id of the reply the text is, where a model call just made it
            (``None``: from the cache, an agent of its own, or no reply): the id its
            tokens streamed under, which the turn takes (:func:`debategraph.nodes.agent.recorded`).
    """

    text: str
    usage: Usage
    attempts: int
    reason: str | None = None
    model: str | None = None
    records: tuple[Turn, ...] = ()
    message_id: str | None = None


def text_call(
    model: ModelBinding, messages: Sequence[BaseMessage], *, max_attempts: int = 2
) -> TextResult:
    """Call the model for free text (a debater's turn): retry empty replies, record usage.

    The sibling of :func:`structured_call` for prose, with the same error handling. Called
    inside a graph node, its tokens stream with LangGraph's ``stream_mode="messages"``.

    Args:
        model: The bound model (see :func:`~debategraph.models.binding.bind_model`).
        messages: The prompt.
        max_attempts: Model calls to try while the reply is empty (>= 1).

    Returns:
        The result; ``text`` is empty with a ``reason`` if every reply was empty.

    Raises:
        ModelUnavailableError: If the endpoint cannot be reached or keeps failing.
    """
    return run_steps(text_steps(model, messages, max_attempts=max_attempts))


async def atext_call(
    model: ModelBinding, messages: Sequence[BaseMessage], *, max_attempts: int = 2
) -> TextResult:
    """:func:`text_call` for async code: it awaits the model, on no thread.

    Takes, returns and raises what :func:`text_call` does.
    """
    return await arun_steps(text_steps(model, messages, max_attempts=max_attempts))


def text_steps(
    model: ModelBinding, messages: Sequence[BaseMessage], *, max_attempts: int = 2
) -> Steps[TextResult]:
    """The steps of :func:`text_call`: each model call is yielded, not made.

    Run them as :func:`structured_steps` are; they take what :func:`text_call` takes.
    """
    model = for_running_loop(model)
    usage = Usage()
    attempts = 0
    while attempts < max(1, max_attempts):
        attempts += 1
        started = time.perf_counter()
        try:
            reply = yield from paced(model, model.chat, list(messages))
        except TimeLimitReached as exc:  # the run's deadline: no retry, a recorded fallback
            return TextResult("", usage + spent(exc), made(attempts, exc), reason=str(exc))
        except openai.APITimeoutError as exc:  # slow, or dead: its endpoint says which
            slow = yield from slow_not_dead(model, exc, time.perf_counter() - started)
            if slow is None:
                raise unavailable(model, exc) from exc
            return TextResult("", usage + slow[1], attempts, reason=slow[0])
        except Exception as exc:  # any provider's failure (openai's too): one line
            if not provider_failure(exc):
                raise
            raise unavailable(model, exc) from exc
        usage = usage + usage_of(reply, time.perf_counter() - started, messages, model.price)
        text = reply.text.strip() if isinstance(reply, AIMessage) else ""
        if text:
            said = reply.id if isinstance(reply, AIMessage) and not from_cache(reply) else None
            return TextResult(text, usage, attempts, message_id=said)
    return TextResult(
        "", usage, attempts, reason=f"empty reply after {plural(attempts, 'attempt')}"
    )


_RUNNABLES: dict[tuple[int, type[BaseModel], str], tuple[BaseChatModel, Runnable[Any, Any]]] = {}
_RUNNABLES_MAX = 256


def _structured_runnable(
    chat: BaseChatModel, schema: type[BaseModel], method: StructuredMethod
) -> Runnable[Any, Any]:
    """The chat model bound to ask for ``schema``, built once per model, schema and method.

    It is the request ``with_structured_output`` would send (the schema as the one tool
    the model must call, or as a ``json_schema`` response format), without the output
    parsers that method chains after it: :func:`parse_reply` reads the reply, so each
    call runs one runnable instead of six, and the schema is converted to JSON once.
    The JSON schema goes as a plain dict, so the client does not validate the reply
    itself (handed the pydantic class, it would raise and lose the reply: a confidence
    of -1.1 would cost a retry instead of a clamp).
    """
    key = (id(chat), schema, method)
    hit = _RUNNABLES.get(key)
    if hit is not None and hit[0] is chat:
        return hit[1]
    if len(_RUNNABLES) >= _RUNNABLES_MAX:
        _RUNNABLES.clear()
    runnable: Runnable[Any, Any]
    if method == "json_text":  # the schema goes in the prompt (structured_steps)
        runnable = chat
    elif method == "json_schema":
        spec = {"name": schema.__name__, "schema": schema.model_json_schema()}
        runnable = chat.bind(response_format={"type": "json_schema", "json_schema": spec})
    else:
        tool = convert_to_openai_tool(schema)
        if not tool["function"].get("description"):
            del tool["function"]["description"]  # "" says nothing, in every request
        name = tool["function"]["name"]
        runnable = chat.bind_tools([tool], tool_choice=name, parallel_tool_calls=False)
    _RUNNABLES[key] = (chat, runnable)
    return runnable


def parse_reply(
    schema: type[S], raw: AIMessage | None, method: StructuredMethod
) -> tuple[S | None, str]:
    """Read a structured reply: the tool call's arguments, or the JSON content.

    Args:
        schema: The pydantic model the reply must fit.
        raw: The model's message.
        method: How it was asked for.

    Returns:
        The validated value, or ``None`` and why not.
    """
    if raw is None:
        return None, "the reply had no structured output"
    data: Any
    if method in ("json_schema", "json_text"):
        text = raw.content if isinstance(raw.content, str) else raw.text
        if method == "json_text":
            text = json_in_text(text)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            return None, f"the reply is not valid JSON ({exc})"
    else:
        calls = [c for c in raw.tool_calls if c["name"] == schema.__name__] or raw.tool_calls
        if not calls:
            bad = raw.invalid_tool_calls
            if bad:
                return None, f"invalid tool call arguments ({bad[0].get('error') or 'not JSON'})"
            return None, "the reply had no structured output"
        data = calls[0]["args"]
    try:
        return schema.model_validate(data), ""
    except ValidationError as exc:
        return None, str(exc)


_HINTS: dict[type[BaseModel], HumanMessage] = {}


def _json_text_hint(schema: type[BaseModel]) -> HumanMessage:
    """The message that asks for ``schema`` as JSON in text, built once per schema."""
    hint = _HINTS.get(schema)
    if hint is None:
        text = json.dumps(schema.model_json_schema(), separators=(",", ":"))
        hint = _HINTS[schema] = HumanMessage(JSON_TEXT_HINT.format(schema=text))
    return hint
