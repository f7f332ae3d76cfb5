"""A scripted fake chat model for unit tests.

:class:`ScriptedChatModel` answers with pre-scripted :class:`AIMessage` objects
in order (or from a callback), supports ``bind_tools`` and therefore
``with_structured_output(..., method="function_calling")``, records every
prompt it receives, and is safe to call from several threads at once.

Example:
    >>> model = ScriptedChatModel(responses=[tool_reply("Answer", {"x": 1})])
    >>> model.with_structured_output(Answer, method="function_calling").invoke("hi")
    Answer(x=1)
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import tool_call
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import Field, PrivateAttr

__all__ = [
    "ScriptExhaustedError",
    "ScriptedChatModel",
    "TextOnlyChatModel",
    "ToolCallingChatModel",
    "example_of",
    "text_reply",
    "tool_reply",
]


class ScriptExhaustedError(RuntimeError):
    """Raised when a :class:`ScriptedChatModel` has no scripted reply left."""


class ScriptedChatModel(FakeMessagesListChatModel):
    """Replies with scripted AIMessages in order; bind_tools returns itself.

    Unlike its parent it never cycles: once ``responses`` is used up it raises
    :class:`ScriptExhaustedError`. If ``respond`` is set it is called with the
    prompt messages instead of consuming ``responses``. Each reply is a deep
    copy, so the scripted messages are never mutated by LangChain.

    Attributes:
        responses: Scripted replies, returned in order (inherited field).
        respond: Optional callback ``(messages) -> AIMessage`` used instead of
            ``responses`` when set.
        prompts: Every message list the model was invoked with, in call order.
        bound_tools: The tools passed to the most recent ``bind_tools`` call.
        bound_tool_choice: The ``tool_choice`` of the most recent
            ``bind_tools`` call.
    """

    responses: list[BaseMessage] = Field(default_factory=list)
    respond: Callable[[list[BaseMessage]], AIMessage] | None = None

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _prompts: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _bound_tools: list[Any] = PrivateAttr(default_factory=list)
    _bound_tool_choice: Any = PrivateAttr(default=None)

    @property
    def prompts(self) -> list[list[BaseMessage]]:
        """Every message list the model was invoked with (live list)."""
        return self._prompts

    @property
    def bound_tools(self) -> list[Any]:
        """The tools passed to the most recent ``bind_tools`` call."""
        return self._bound_tools

    @property
    def bound_tool_choice(self) -> Any:
        """The ``tool_choice`` of the most recent ``bind_tools`` call."""
        return self._bound_tool_choice

    @property
    def remaining(self) -> int:
        """Number of scripted replies not yet consumed."""
        with self._lock:
            return max(0, len(self.responses) - self.i)

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Record the tools and return the model itself.

        Args:
            tools: Tools to "bind" (recorded only).
            tool_choice: Requested tool choice (recorded only).
            **kwargs: Ignored.

        Returns:
            ``self``.
        """
        with self._lock:
            self._bound_tools = list(tools)
            self._bound_tool_choice = tool_choice
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """Return the next scripted reply.

        Args:
            messages: The prompt.
            stop: Ignored.
            run_manager: Ignored.
            **kwargs: Ignored.

        Returns:
            A result holding a copy of the next scripted message.

        Raises:
            ScriptExhaustedError: If no scripted reply is left.
        """
        callback = self.respond
        scripted: BaseMessage | None = None
        with self._lock:
            self._prompts.append(list(messages))
            if callback is None:
                if self.i >= len(self.responses):
                    msg = f"ScriptedChatModel: script exhausted after {len(self.responses)} replies"
                    raise ScriptExhaustedError(msg)
                scripted = self.responses[self.i]
                self.i += 1
        if self.sleep is not None:
            time.sleep(self.sleep)
        message: BaseMessage
        if callback is not None:
            message = callback(list(messages))
        else:
            assert scripted is not None
            message = scripted
        reply = message.model_copy(deep=True)
        return ChatResult(generations=[ChatGeneration(message=reply)])

    @property
    def _llm_type(self) -> str:
        """Return the model type identifier."""
        return "scripted-chat-model"


def _usage(prompt_tokens: int, completion_tokens: int) -> UsageMetadata:
    """Build usage metadata.

    Args:
        prompt_tokens: Input tokens.
        completion_tokens: Output tokens.

    Returns:
        The usage metadata.
    """
    return UsageMetadata(
        input_tokens=prompt_tokens,
        output_tokens=completion_tokens,
        total_tokens=prompt_tokens + completion_tokens,
    )


def tool_reply(
    name: str,
    args: dict[str, Any],
    *,
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
) -> AIMessage:
    """Build an AIMessage carrying one tool call.

    For ``with_structured_output(Schema, method="function_calling")`` the name
    must be the schema's class name.

    Args:
        name: Tool (function) name.
        args: Tool-call arguments.
        prompt_tokens: ``usage_metadata.input_tokens``.
        completion_tokens: ``usage_metadata.output_tokens``.

    Returns:
        The message, with a generated tool-call id and usage metadata.
    """
    call = tool_call(name=name, args=dict(args), id="call_" + uuid.uuid4().hex[:24])
    return AIMessage(
        content="",
        tool_calls=[call],
        usage_metadata=_usage(prompt_tokens, completion_tokens),
    )


def text_reply(content: str, *, prompt_tokens: int = 10, completion_tokens: int = 5) -> AIMessage:
    """Build a plain-text AIMessage with usage metadata.

    Args:
        content: The assistant text.
        prompt_tokens: ``usage_metadata.input_tokens``.
        completion_tokens: ``usage_metadata.output_tokens``.

    Returns:
        The message.
    """
    return AIMessage(content=content, usage_metadata=_usage(prompt_tokens, completion_tokens))


class TextOnlyChatModel(BaseChatModel):
    """A chat model of no OpenAI kind and no tool calls: raises, then answers one text.

    LangChain's ``BaseChatModel.bind_tools`` stays unimplemented, as in LangChain's fake
    models and many a community model.

    Attributes:
        reply: What every call answers once the failures are spent.
        failures: Raised in order, one per call, before any reply.
        prompts: Every message list it was called with.
    """

    reply: str = "seven"
    failures: list[BaseException] = Field(default_factory=list)
    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def calls(self) -> int:
        """Calls made, failed ones included."""
        return len(self.prompts)

    @property
    def _llm_type(self) -> str:
        return "text-only"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """Raise the next failure, else answer ``reply``."""
        self.prompts.append(list(messages))
        if self.failures:
            raise self.failures.pop(0)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.reply))])


class ToolCallingChatModel(TextOnlyChatModel):
    """A chat model of no OpenAI kind whose only structured output is a tool call.

    It has ``bind_tools`` (so debategraph asks it with ``function_calling``) and no
    ``response_format``: asked to call one tool (``tool_choice`` names it), it calls it
    with arguments made from the tool's JSON schema (:func:`example_of`: every property,
    a plausible value of its type); asked otherwise, it answers ``reply`` as text. It
    raises its ``failures`` first, as :class:`TextOnlyChatModel` does.
    """

    @property
    def _llm_type(self) -> str:
        return "tool-calling-only"

    def bind_tools(  # type: ignore[override]
        self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, BaseMessage]:
        """The model, asked to call ``tool_choice`` among ``tools`` (OpenAI tool dicts)."""
        return self.bind(tools=list(tools), tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """Raise the next failure; call the tool asked for; else answer ``reply``."""
        result = super()._generate(messages, stop, run_manager)
        choice = kwargs.get("tool_choice")
        tools = {
            t["function"]["name"]: t["function"]
            for t in kwargs.get("tools") or []
            if "function" in t
        }
        if not isinstance(choice, str) or choice not in tools:
            return result
        parameters = tools[choice].get("parameters") or {}
        args = example_of(parameters, parameters.get("$defs") or {})
        message = AIMessage("", tool_calls=[tool_call(name=choice, args=args, id=uuid.uuid4().hex)])
        return ChatResult(generations=[ChatGeneration(message=message)])


def example_of(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A value ``schema`` (a JSON schema) accepts: what a model that follows it might send.

    Args:
        schema: The schema.
        defs: Its ``$defs``, for ``$ref``.

    Returns:
        The first enum value or const; the first non-null ``anyOf`` branch's example; a
        word, 1, 0.5 (within its bounds) or ``True`` by type; one item of an array that
        needs one; every property of an object.
    """
    if "$ref" in schema:
        return example_of(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key) or [] if o.get("type") != "null"]
        if options:
            return example_of(options[0], defs)
    kind = schema.get("type", "object")
    if kind == "string":
        return "fine"
    if kind in ("integer", "number"):
        low, high = schema.get("minimum", 0), schema.get("maximum", 1)
        value = min(max(0.5 if kind == "number" else 1, low), high)
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return True
    if kind == "array":
        count = max(1, schema.get("minItems", 0))
        return [example_of(schema.get("items") or {"type": "string"}, defs)] * count
    properties = schema.get("properties") or {}
    return {name: example_of(prop, defs) for name, prop in properties.items()}
