"""The span of one call an agent's turn makes: a model call's or a tool call's.

:func:`debategraph.models.tracing.turn` opens one for each call its steps yield
(:func:`call_span`), hands it the call's outcome (:func:`answered`) and ends it; what
each span says is :mod:`debategraph.models.genai`'s. A call of an agent's own agent (a
runnable of the user's) has no span of its own here: the turn's span is current while it
runs, for spans of its own.

The module imports only the standard library until a call is traced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from debategraph.models import genai
from debategraph.words import one_line

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import Runnable
    from opentelemetry.trace import Span, Tracer

OPERATION = "gen_ai.operation.name"


def failed(span: Span, error: BaseException) -> None:
    """Mark ``span`` as failed by ``error``.

    Args:
        span: The span.
        error: What failed it (recorded, with its type and its first line as the status).
    """
    from opentelemetry.trace import Status, StatusCode

    span.record_exception(error)
    span.set_status(Status(StatusCode.ERROR, one_line(str(error))[:200]))
    span.set_attribute("error.type", type(error).__qualname__)


def call_span(
    tracer: Tracer,
    turn: Span,
    runnable: Runnable[Any, Any],
    given: Any,
    attributes: dict[str, Any],
    content: bool,
) -> tuple[Span | None, BaseChatModel | None]:
    """The span of one call of a turn (``chat {model}``, ``execute_tool {tool}``, or none).

    Args:
        tracer: The tracer.
        turn: The turn's span (the call's parent).
        runnable: What the call calls.
        given: The call's input (a model's prompt, a tool's arguments).
        attributes: The turn's attributes (the run's, the round, the agent).
        content: Whether the span holds the input (the GenAI opt-in).

    Returns:
        The span (started), and the chat model a model call calls; ``(None, None)`` for
        a call of the agent's own agent.
    """
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import RunnableBinding
    from langchain_core.tools import BaseTool
    from opentelemetry import trace

    under = trace.set_span_in_context(turn)
    # A call bound to its config (a request's tools, a tag) is its runnable's.
    chat = runnable.bound if isinstance(runnable, RunnableBinding) else runnable
    if isinstance(chat, BaseTool):
        tool = {
            OPERATION: "execute_tool",
            genai.SPAN_KIND: "TOOL",
            "gen_ai.tool.name": chat.name,
            **attributes,
        }
        if content:
            tool.update(genai.tool_input_attributes(given))
        return tracer.start_span(f"execute_tool {chat.name}", context=under, attributes=tool), None
    if not isinstance(chat, BaseChatModel):
        return None, None
    model = str(getattr(chat, "model_name", None) or getattr(chat, "model", None) or "")
    named: dict[str, Any] = {OPERATION: "chat", genai.SPAN_KIND: "LLM", **attributes}
    if model:
        named["gen_ai.request.model"] = model
    if content:
        named.update(genai.prompt_attributes(given))
    span = tracer.start_span(
        f"chat {model}".strip(), context=under, kind=trace.SpanKind.CLIENT, attributes=named
    )
    return span, chat


def answered(span: Span | None, chat: bool, content: bool, replies: list[Any], reply: Any) -> None:
    """Write what a call's outcome says on its span.

    Args:
        span: The call's span (``None``: no span, nothing to write).
        chat: Whether it is a model call (else a tool call).
        content: Whether the span holds the outcome (the GenAI opt-in).
        replies: A model call's reply is added here (the turn's replies).
        reply: The outcome: a model's reply (tokens, model, finish reason), a tool's result.
    """
    if span is None:
        return
    if not chat:  # a tool's result
        if content:
            span.set_attributes(genai.tool_output_attributes(reply))
        return
    replies.append(reply)
    span.set_attributes(genai.reply_attributes(reply, content))
