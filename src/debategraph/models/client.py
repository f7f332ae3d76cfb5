"""The chat model debategraph builds: ``ChatOpenAI``, with a lean path for plain requests.

:class:`LeanChatOpenAI` is langchain-openai's ``ChatOpenAI`` (its message conversion, its
request payload, its reply conversion, its errors), minus four costs of every call that
a chat-completions request of text messages does not need (together about 3 ms of
client CPU per call, from about 5 ms for one structured call; see ``make profile`` and
``benchmarks/speed.py``):

1. The openai SDK's request *transform*: ``chat.completions.create`` walks the whole
   body (messages, tool schemas) against its typed parameter dicts to apply field
   aliases and file encodings. The chat-completions parameters have none of either
   (``tests/test_client.py`` checks that the transform leaves every payload the
   package sends unchanged), so the body is posted as it is.
2. Building the SDK's typed ``ChatCompletion`` from the reply's JSON, only for
   langchain-openai to dump it back to a dict: the JSON is handed over as a dict, which
   ``ChatOpenAI._create_chat_result`` takes as well.
3. A trip to a worker thread per async call (``run_in_executor``) to convert the reply:
   it is done on the event loop, where it takes a fraction of a millisecond.
4. langchain-core's run managers, when nobody listens: a call to which LangChain would
   attach no callback handler (no handler, tracer, ``verbose``/``debug`` or configure
   hook) goes straight to the model's generation, cache and rate limiter included.

Anything else takes ``ChatOpenAI``'s own path unchanged: a call someone observes
(LangGraph's ``stream_mode="messages"`` streams it), streaming, a message whose content
is not text (images, audio, files), a pydantic ``response_format``, the Responses API,
response headers.

The private names of langchain-openai and langchain-core it calls are reached through
:mod:`debategraph.compat`; :func:`debategraph.models.binding.get_chat_model` builds it only
where all of them exist as expected (:func:`~debategraph.compat.lean_client_problems`) and
``DEBATEGRAPH_LEAN_CLIENT`` is not ``0``, else stock ``ChatOpenAI``.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import openai
from langchain_core.callbacks import (
    AsyncCallbackManager,
    AsyncCallbackManagerForLLMRun,
    CallbackManager,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, convert_to_messages
from langchain_core.outputs import ChatResult
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import RunnableConfig, ensure_config
from langchain_core.utils.utils import LC_ID_PREFIX
from langchain_openai import ChatOpenAI

from debategraph import compat

#: Keys of a ``create`` call that are request options, not body fields.
_OPTIONS = {
    "extra_headers": "headers",
    "extra_query": "params",
    "extra_body": "extra_json",
    "timeout": "timeout",
}
_PATH = "/chat/completions"
#: Arguments of a call that only tracers read (see :func:`_untraced`).
_TRACING_ONLY = frozenset({"ls_structured_output_format", "structured_output_format"})


class LeanChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` that posts plain chat-completions requests without the SDK's extras.

    Behaves as ``ChatOpenAI`` in every respect a caller sees (same request body on the
    wire, same ``AIMessage``, usage, errors); see the module's docstring for what it
    skips and when it falls back to ``ChatOpenAI``'s own path.
    """

    def invoke(
        self,
        input: LanguageModelInput,
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> AIMessage:
        """``ChatOpenAI.invoke``; with nobody listening, without the callback machinery."""
        config = ensure_config(config)
        messages = self._unobserved(input, config, CallbackManager)
        if messages is None:
            return super().invoke(input, config, stop=stop, **kwargs)
        return _message(compat.generate_with_cache(self, messages, stop, **_untraced(kwargs)))

    async def ainvoke(
        self,
        input: LanguageModelInput,
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> AIMessage:
        """``ChatOpenAI.ainvoke``; with nobody listening, without the callback machinery."""
        config = ensure_config(config)
        messages = self._unobserved(input, config, AsyncCallbackManager)
        if messages is None:
            return await super().ainvoke(input, config, stop=stop, **kwargs)
        reply = await compat.agenerate_with_cache(self, messages, stop, **_untraced(kwargs))
        return _message(reply)

    def _unobserved(
        self, input: LanguageModelInput, config: RunnableConfig, manager: Any
    ) -> list[BaseMessage] | None:
        """The prompt's messages when no one observes this call, else ``None``.

        No one observes it when LangChain would attach no callback handler to it (no
        handler in the config or on the model, no tracing, no ``verbose``/``debug``, no
        configure hook such as ``get_usage_metadata_callback``; asked of LangChain's own
        ``configure``) and its prompt is text. Then what LangChain's ``invoke`` adds
        around the model's ``_generate`` (run managers, start and end events, the
        messages formatted for tracing) has nobody to serve.
        """
        callbacks = manager.configure(
            inheritable_callbacks=config.get("callbacks"),
            local_callbacks=self.callbacks,
            verbose=self.verbose,
            inheritable_tags=config.get("tags"),
            local_tags=self.tags,
        )
        if callbacks.handlers:
            return None
        messages = _prompt_messages(input)
        if not all(isinstance(m.content, str) for m in messages):
            return None
        return messages

    def _lean_request(self, payload: dict[str, Any]) -> tuple[dict[str, Any], Any] | None:
        """The body and request options to post, or ``None`` for ``ChatOpenAI``'s path."""
        fmt = payload.get("response_format")
        if (
            payload.get("stream")
            or self.include_response_headers
            or not (fmt is None or isinstance(fmt, Mapping))
            or compat.uses_responses_api(self, payload)
            or not all(_text_only(m) for m in payload.get("messages") or ())
        ):
            return None
        body = {k: v for k, v in payload.items() if k not in _OPTIONS}
        options = {_OPTIONS[k]: v for k, v in payload.items() if k in _OPTIONS}
        return body, options

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        compat.ensure_sync_client(self)
        payload = compat.request_payload(self, messages, stop, **kwargs)
        lean = self._lean_request(payload)
        if lean is None:
            return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
        body, options = lean
        with _as_chat_openai_raises():
            reply = self.root_client.post(_PATH, body=body, options=options, cast_to=object)
        return compat.chat_result(self, _reply_dict(reply))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        payload = compat.request_payload(self, messages, stop, **kwargs)
        lean = self._lean_request(payload)
        if lean is None:
            return await super()._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
        body, options = lean
        with _as_chat_openai_raises():
            reply = await self.root_async_client.post(
                _PATH, body=body, options=options, cast_to=object
            )
        return compat.chat_result(self, _reply_dict(reply))


@contextlib.contextmanager
def _as_chat_openai_raises() -> Iterator[None]:
    """Turn the SDK's errors into the ones ``ChatOpenAI`` raises (context overflow...)."""
    try:
        yield
    except openai.APIError as exc:
        compat.raise_as_chat_openai(exc)
        raise


def _prompt_messages(input: LanguageModelInput) -> list[BaseMessage]:
    """A model input as messages, as ``BaseChatModel`` reads it (text, prompt value, list)."""
    if isinstance(input, str):
        return [HumanMessage(input)]
    if isinstance(input, PromptValue):
        return input.to_messages()
    return convert_to_messages(input)


def _untraced(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments less those only tracing reads, as LangChain's ``generate`` does.

    ``with_structured_output`` binds the schema as ``ls_structured_output_format`` for
    tracers; LangChain's own path pops it before the model's ``_generate``, or it would
    be sent in the request body (a pydantic class, which JSON cannot carry).
    """
    return {k: v for k, v in kwargs.items() if k not in _TRACING_ONLY}


def _message(result: ChatResult) -> AIMessage:
    """The reply of a call made without run managers, with the id LangChain would give it."""
    message = result.generations[0].message
    if not isinstance(message, AIMessage):  # a chat model's reply always is one
        raise TypeError(f"expected an AIMessage, got {type(message).__name__}")
    if message.id is None:
        message.id = f"{LC_ID_PREFIX}-{uuid.uuid4()}-0"
    return message


def _text_only(message: Mapping[str, Any]) -> bool:
    """Whether a converted message's content is text (or absent, as beside tool calls)."""
    content = message.get("content")
    return content is None or isinstance(content, str)


def _reply_dict(reply: Any) -> Any:
    """The reply as ``_create_chat_result`` takes it: a dict (or the text of a non-JSON body).

    The SDK parses a JSON body into a dict (``cast_to=object``) and hands back the text
    of any other body, which ``_create_chat_result`` refuses with one line, as it does on
    ``ChatOpenAI``'s path. A JSON body whose text came back undecoded is decoded here.
    """
    if isinstance(reply, str):
        try:
            decoded = json.loads(reply)
        except json.JSONDecodeError:
            return reply
        return decoded if isinstance(decoded, dict) else reply
    return reply
