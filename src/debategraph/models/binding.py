"""Building chat models: a :class:`ModelSpec` becomes a :class:`ModelBinding`.

A binding is the LangChain chat model, the structured-output method to use with it and
the endpoint it reaches. Bindings are built once per spec and process; ``local`` specs
start (or reuse) the embedded llama.cpp server and reach it over HTTP like any other
OpenAI-compatible endpoint.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import NamedTuple
from urllib.parse import urlparse

from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI

from debategraph.models.spec import MethodChoice, ModelSpec, StructuredMethod, is_local

DEFAULT_TIMEOUT_S = 60.0
LOCAL_TIMEOUT_S = 300.0
LOCAL_MAX_TOKENS = 320


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
