"""Building chat models: a :class:`ModelSpec` becomes a :class:`ModelBinding`.

A binding is the LangChain chat model, the structured-output method to use with it and
the endpoint it reaches. Bindings are built once per spec and process; ``local`` specs
start (or reuse) the embedded llama.cpp server and reach it over HTTP like any other
OpenAI-compatible endpoint. Async calls use the binding's chat model for the running event
loop (:func:`for_running_loop`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any, NamedTuple
from urllib.parse import urlparse

import openai
from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from debategraph.compat import lean_client_problems
from debategraph.models.client import LeanChatOpenAI
from debategraph.models.money import Price
from debategraph.models.spec import (
    DEFAULT_PATIENCE_S,
    DEFAULT_TIMEOUT_S,
    LOCAL_MAX_TOKENS,
    LOCAL_TIMEOUT_S,
    MethodChoice,
    ModelSpec,
    StructuredMethod,
    is_local,
    provider_of,
)

#: Set to ``0`` to build stock ``ChatOpenAI`` instead of the lean client (see
#: :func:`client_class`).
LEAN_CLIENT_ENV = "DEBATEGRAPH_LEAN_CLIENT"
_log = logging.getLogger(__name__)


class ModelBinding(NamedTuple):
    """A chat model plus the structured-output method to use with it.

    Attributes:
        chat: The chat model.
        method: The structured-output method.
        endpoint: Where it is reached (for error lines).
        diagnose: For the embedded model: says how its server process ended, if it
            has, so a failed call names the crash rather than an unreachable endpoint.
        rebuild: Builds the same chat model with an async HTTP client of its own (see
            :func:`for_running_loop`); ``None`` for a model the caller built.
        name: The model as one string, recorded on turns and usage
            (:attr:`ModelSpec.label <debategraph.models.ModelSpec.label>`; never a key).
        tool_calls: Whether the model can call tools (the embedded SmolLM2's chat
            template cannot).
        retries: How many times a call that meets a server fault, a timeout or a
            dropped connection is tried again (:mod:`debategraph.models.pacing`; the
            spec's ``max_retries``: a binding of this module turns its client's own
            retries off). A model the caller built retries as its client does.
        patience_s: The most seconds one call waits on rate limits and faults.
        rpm: The requests a minute the operator allows the endpoint (every call of the
            process to it shares them), or ``None``.
        tpm: The tokens a minute the operator allows the endpoint, or ``None``.
        price: The model's price (:mod:`debategraph.models.money`), or ``None``.
        max_tokens: Its completion cap where known (what a budget holds back for a
            call's reply).
        key_note: Why no key goes to its endpoint, where none does
            (:meth:`ModelSpec.key_note <debategraph.models.ModelSpec.key_note>`): what a
            refused call adds to its line.
    """

    chat: BaseChatModel
    method: StructuredMethod
    endpoint: str
    diagnose: Callable[[], str | None] | None = None
    rebuild: Callable[[], BaseChatModel] | None = None
    name: str = ""
    tool_calls: bool = True
    retries: int = 0
    patience_s: float = DEFAULT_PATIENCE_S
    rpm: float | None = None
    tpm: float | None = None
    price: Price | None = None
    max_tokens: int | None = None
    key_note: str | None = None


#: Per event loop: id of a binding's chat model -> (that model, the binding for the loop,
#: the async generator that closes its HTTP client with the loop and the task starting it).
_PER_LOOP: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[int, tuple[BaseChatModel, ModelBinding, Any]]
] = weakref.WeakKeyDictionary()


def for_running_loop(binding: ModelBinding) -> ModelBinding:
    """The binding to await on the running event loop.

    langchain-openai shares one async HTTP client among the chat models of an endpoint,
    and its pooled connections belong to the loop that opened them: a chat model awaited
    from a second loop (a second ``asyncio.run``) fails with "Event loop is closed"
    (langchain-ai/langchain#35783). A binding this module built gets a chat model of its
    own per loop, built on the loop's first call; a model the caller built, or a call
    outside any loop, keeps the binding as it is.

    Args:
        binding: The binding.

    Returns:
        The binding to use here.
    """
    if binding.rebuild is None:
        return binding
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return binding
    per_loop = _PER_LOOP.setdefault(loop, {})
    hit = per_loop.get(id(binding.chat))
    if hit is None or hit[0] is not binding.chat:
        chat = binding.rebuild()
        closer = _close_with_loop(getattr(chat, "http_async_client", None) or _NoClient())
        started = asyncio.ensure_future(closer.__anext__())  # to its yield: the loop tracks it
        hit = (binding.chat, binding._replace(chat=chat, rebuild=None), (closer, started))
        per_loop[id(binding.chat)] = hit
    return hit[1]


class _NoClient:
    async def aclose(self) -> None:
        """Nothing to close."""


def _async_http_client() -> Any:
    """The async HTTP client of a per-loop chat model.

    The openai SDK's aiohttp transport when ``aiohttp`` is installed (the ``openai[aiohttp]``
    extra, a dependency of this package): under concurrent calls it costs about a fifth
    less client CPU per call than httpx. Otherwise the SDK's default httpx client.
    """
    try:
        return openai.DefaultAioHttpClient()
    except (RuntimeError, AttributeError):  # aiohttp missing, or an SDK without it
        return openai.DefaultAsyncHttpxClient()


async def _close_with_loop(client: Any) -> AsyncIterator[None]:
    """Close ``client`` when its event loop shuts down.

    An async generator that waits at its ``yield``: ``asyncio.run`` (and any
    ``asyncio.Runner``) closes the async generators of its loop before closing the loop
    (``shutdown_asyncgens``), and so this one closes the client's connections, which
    would otherwise be reported unclosed at exit.
    """
    try:
        yield
    finally:
        await client.aclose()


def _openai_binding(
    method: StructuredMethod,
    endpoint: str,
    name: str,
    diagnose: Callable[[], str | None] | None = None,
    *,
    tool_calls: bool = True,
    retries: int = 0,
    limits: ModelSpec | None = None,
    **settings: Any,
) -> ModelBinding:
    """A binding of a ``ChatOpenAI`` with ``settings``, rebuilt per event loop.

    Its client does not retry (``max_retries=0``): the binding's calls do, as
    :mod:`debategraph.models.pacing` says, ``retries`` times and within the patience,
    the rpm, tpm and price of ``limits`` (the spec it is built for).
    """
    chat_class = client_class()
    settings["max_retries"] = 0

    def rebuild() -> BaseChatModel:
        return chat_class(**settings, http_async_client=_async_http_client())

    binding = ModelBinding(
        chat_class(**settings), method, endpoint, diagnose, rebuild, name, tool_calls, retries
    )
    return binding if limits is None else with_limits(binding, limits)


def with_limits(binding: ModelBinding, spec: ModelSpec) -> ModelBinding:
    """``binding`` with what ``spec`` sets around its calls: patience, rpm, tpm and price.

    Args:
        binding: The binding.
        spec: The spec it was built for.

    Returns:
        The binding, its limits and price ``spec``'s; its completion cap ``spec``'s
        where the spec sets one (the embedded model's default otherwise).
    """
    local_cap = LOCAL_MAX_TOKENS if spec.is_local else None
    return binding._replace(
        patience_s=DEFAULT_PATIENCE_S if spec.patience_s is None else float(spec.patience_s),
        rpm=spec.rpm,
        tpm=spec.tpm,
        price=spec.price,
        max_tokens=spec.max_tokens or local_cap,
    )


def client_class() -> type[ChatOpenAI]:
    """The chat model class bindings are built with: the lean client where it is safe.

    :class:`~debategraph.models.client.LeanChatOpenAI`, unless ``DEBATEGRAPH_LEAN_CLIENT``
    is ``0`` or a private name it needs has changed in the installed libraries
    (:func:`debategraph.compat.lean_client_problems`): then langchain-openai's
    ``ChatOpenAI``, with one debug line saying why. The libraries are checked once per
    process; the variable is read for each binding built.

    Returns:
        The class.
    """
    if os.environ.get(LEAN_CLIENT_ENV, "").strip() == "0":
        _log.debug("stock ChatOpenAI: %s=0", LEAN_CLIENT_ENV)
        return ChatOpenAI
    problems = lean_client_problems()
    if problems:
        _log.debug("stock ChatOpenAI, not the lean client: %s", "; ".join(problems))
        return ChatOpenAI
    return LeanChatOpenAI


def _pick_method(choice: MethodChoice, base_url: str | None) -> StructuredMethod:
    if choice != "auto":
        return choice
    host = urlparse(base_url).netloc if base_url else "api.openai.com"
    return "json_schema" if host.endswith("api.openai.com") else "function_calling"


def get_chat_model(spec: ModelSpec = ModelSpec()) -> ModelBinding:  # noqa: B008 (frozen)
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
    if provider_of(spec.model) is not None:
        return _provider_binding(spec.validated())
    return _remote_binding(spec.validated())  # cached by the endpoint it resolves to


@functools.lru_cache(maxsize=32)
def _provider_binding(spec: ModelSpec) -> ModelBinding:
    """A ``PROVIDER:MODEL`` spec's chat model, built by LangChain's ``init_chat_model``.

    Its package reads its own endpoint and key variables (``ANTHROPIC_API_KEY``...);
    a spec's ``api_key_env`` or ``base_url`` is passed where given. Its client retries
    as it does: the binding adds the patience on rate limits and the rpm.
    """
    settings: dict[str, Any] = {"temperature": spec.temperature}
    if spec.max_tokens is not None:
        settings["max_tokens"] = spec.max_tokens
    if spec.timeout_s is not None:
        settings["timeout"] = spec.timeout_s
    if spec.base_url:
        settings["base_url"] = spec.base_url
    if spec.api_key or spec.api_key_env:
        settings["api_key"] = spec.key()
    chat = init_chat_model(spec.model, **settings)
    return with_limits(bind_model(chat)._replace(name=spec.label), spec)


def init_chat_model(model: str, **settings: Any) -> BaseChatModel:
    """LangChain's ``init_chat_model`` (imported on first use: ``langchain`` is slow to load).

    Args:
        model: ``PROVIDER:MODEL``.
        **settings: The chat model's settings.

    Returns:
        The chat model.
    """
    from langchain.chat_models import init_chat_model as init

    chat: BaseChatModel = init(model, **settings)
    return chat


@functools.lru_cache(maxsize=32)
def _remote_binding(spec: ModelSpec) -> ModelBinding:
    spec = spec.validated()
    api_key = spec.key() or "not-needed"  # a key only where it was given (ModelSpec.key)
    binding = _openai_binding(
        _pick_method(spec.structured_method, spec.base_url),
        spec.base_url or "https://api.openai.com/v1",
        spec.label,
        model=spec.model,
        base_url=spec.base_url,
        api_key=SecretStr(api_key),
        temperature=spec.temperature,
        max_completion_tokens=spec.max_tokens,
        retries=spec.max_retries,
        limits=spec,
        timeout=spec.timeout_s or DEFAULT_TIMEOUT_S,
        stream_usage=True,  # token usage also when a node's call is streamed
    )
    return binding._replace(key_note=spec.key_note())


_LOCAL_BINDINGS: dict[tuple[ModelSpec, int], ModelBinding] = {}


def clear_model_cache() -> None:
    """Forget the chat models built so far (the next :func:`get_chat_model` builds anew)."""
    _remote_binding.cache_clear()
    _LOCAL_BINDINGS.clear()


def _local_binding(spec: ModelSpec) -> ModelBinding:
    from debategraph.local import resolve_gguf, shared_server

    spec = spec.validated()
    server = shared_server(resolve_gguf(spec.model), spec.slots)
    key = (spec, id(server))
    binding = _LOCAL_BINDINGS.get(key)
    if binding is None or binding.endpoint != server.base_url:
        # SmolLM2's chat template has no tool support on llama.cpp (tool calls come back
        # empty), while ``json_schema`` output is grammar-constrained and always parses.
        method = "json_schema" if spec.structured_method == "auto" else spec.structured_method
        binding = _openai_binding(
            method,
            server.base_url,
            spec.model,
            lambda: server.failure(1.0),
            tool_calls=False,
            model=server.model.name,
            base_url=server.base_url,
            api_key=SecretStr("not-needed"),
            temperature=spec.temperature,
            # llama.cpp's server reads ``max_tokens``.
            extra_body={"max_tokens": spec.max_tokens or LOCAL_MAX_TOKENS},
            retries=spec.max_retries,
            limits=spec,
            timeout=spec.timeout_s or LOCAL_TIMEOUT_S,
            stream_usage=True,  # llama.cpp sends usage in the last chunk of a stream
        )
        _LOCAL_BINDINGS[key] = binding
    return binding


def calls_tools(model: BaseChatModel) -> bool:
    """Whether a chat model can call tools: its class has a ``bind_tools`` of its own.

    ``BaseChatModel.bind_tools`` itself raises ``NotImplementedError`` (LangChain's fake
    models, many a community model): such a model is asked for JSON in its text.
    """
    return type(model).bind_tools is not BaseChatModel.bind_tools


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
        name = str(getattr(model, "model_name", None) or type(model).__name__)
        label = name if endpoint == type(model).__name__ else f"{name}@{endpoint}"
        if not calls_tools(model):  # structured output as JSON in its text
            return ModelBinding(model, "json_text", endpoint, name=label, tool_calls=False)
        return ModelBinding(model, "function_calling", endpoint, name=label)
    return get_chat_model(model or ModelSpec())
