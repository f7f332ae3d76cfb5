"""An agent's work before its answer: a bounded tool loop, or a whole agent of its own.

Both are written as steps (see :mod:`debategraph.models.steps`), like
:func:`~debategraph.models.calls.structured_steps`: each model call, each tool call and
the call of a user's agent is yielded, so they run blocking or awaited from one body
and the run's deadline bounds them all.

* :func:`tool_steps`: the model, with the agent's tools bound, asks for tool calls; each
  is run and its result (or its error: a tool that raises never ends the run) handed
  back, until the model asks for none or the cap per turn is reached (the calls past
  it are recorded as not run). Every call is a transcript record
  (:class:`~debategraph.state.records.Turn` with ``role="tool"``).
* :func:`agent_steps`: a LangChain ``Runnable`` or compiled LangGraph graph taking
  ``{"messages": [...]}`` and returning ``{"messages": [...]}`` is given the prompt; its
  last message is the turn, the tool calls among its messages are recorded, and a
  failure (it raises, or returns no message) is the turn's reason, like an abstention.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp

from debategraph.errors import UsageError
from debategraph.models.binding import ModelBinding, for_running_loop
from debategraph.models.failures import provider_failure, spent, unavailable
from debategraph.models.pacing import paced
from debategraph.models.steps import Steps, TimeLimitReached
from debategraph.models.usage import usage_of
from debategraph.state.records import TOOL_STAGE, Turn, Usage
from debategraph.words import one_line

#: What the model is told once its tool calls are done, before its typed answer.
ANSWER_NOW = "Now give your final answer, in the form asked for."
#: What a tool call past the cap gets as its result (and its record as its reason).
CAP_REACHED = "not run: the cap of {cap} tool calls per turn was reached; answer without tools"


@dataclass
class Work:
    """What an agent did before its answer.

    Attributes:
        messages: The prompt with the tool calls and results appended (what the answer
            call is given).
        usage: The model calls' tokens and latency.
        records: One tool-call record per tool call (agent and round filled in by the
            node, see :func:`debategraph.nodes.agent.recorded`).
        text: The last reply's text (a tool loop: the reply that asked for no tool; a
            user's agent: its last message).
        reason: Why the work stopped short (the deadline, a failed agent), else ``None``.
    """

    messages: list[BaseMessage]
    usage: Usage = field(default_factory=Usage)
    records: list[Turn] = field(default_factory=list)
    text: str = ""
    reason: str | None = None


def tools_unsupported(binding: ModelBinding, agent: str) -> UsageError:
    """The one-line error for tools on a model that cannot call them."""
    return UsageError(
        f"agent {agent!r} has tools, but model {binding.name or binding.endpoint} cannot call "
        "tools (the embedded SmolLM2's chat template has none): give the agent a model with "
        "tool calls, e.g. model: NAME@BASE_URL"
    )


def tool_record(name: str, arguments: Any, result: str, error: str | None, latency: float) -> Turn:
    """The transcript record of one tool call (agent and round are set by the node)."""
    return Turn(
        agent="",
        role="tool",
        content=result,
        stage=TOOL_STAGE,
        round=0,
        tool=name,
        arguments=json.dumps(arguments, sort_keys=True, default=str),
        reason=error,
        usage=Usage(latency_s=round(latency, 6)),
    )


def tool_steps(
    binding: ModelBinding,
    messages: Sequence[BaseMessage],
    tools: Sequence[BaseTool],
    cap: int,
    agent: str,
) -> Steps[Work]:
    """The steps of a bounded tool loop (see the module's docstring).

    Args:
        binding: The agent's model.
        messages: The prompt.
        tools: The agent's tools.
        cap: The most tool calls run in this turn.
        agent: The agent's name, for errors.

    Returns:
        What the loop did: the conversation with every call and result, its usage and
        records.

    Raises:
        UsageError: If the model cannot call tools.
        ModelUnavailableError: If the endpoint cannot be reached or keeps failing.
    """
    if not binding.tool_calls:
        raise tools_unsupported(binding, agent)
    binding = for_running_loop(binding)
    by_name = {t.name: t for t in tools}
    chat = binding.chat.bind_tools(list(tools))
    work = Work(list(messages))
    run = 0
    while True:
        started = time.perf_counter()
        try:
            reply = yield from paced(binding, chat, work.messages)
        except TimeLimitReached as exc:
            work.usage = work.usage + spent(exc)
            work.reason = str(exc)
            return work
        except Exception as exc:  # any provider's failure (openai's too): one line
            if not provider_failure(exc):
                raise
            raise unavailable(binding, exc) from exc
        work.usage = work.usage + usage_of(
            reply, time.perf_counter() - started, work.messages, binding.price
        )
        calls = reply.tool_calls if isinstance(reply, AIMessage) else []
        for bad in reply.invalid_tool_calls if isinstance(reply, AIMessage) else []:
            why = f"invalid arguments: {bad.get('error') or 'not JSON'}"  # recorded, not run
            work.records.append(tool_record(bad.get("name") or "?", bad.get("args"), "", why, 0.0))
        if not calls:
            work.text = reply.text.strip() if isinstance(reply, AIMessage) else ""
            return work
        work.messages.append(reply)
        refused = False
        for call in calls:
            if run >= cap:
                refused = True
                note = CAP_REACHED.format(cap=cap)
                work.records.append(tool_record(call["name"], call["args"], "", note, 0.0))
                work.messages.append(
                    ToolMessage(note, tool_call_id=call["id"] or "", status="error")
                )
                continue
            run += 1
            result, error, took_s = yield from _run_tool(by_name.get(call["name"]), call)
            if error == TimeLimitReached.__name__:
                work.reason = result
                work.records.append(tool_record(call["name"], call["args"], "", result, took_s))
                return work
            work.records.append(tool_record(call["name"], call["args"], result, error, took_s))
            status = "error" if error else "success"
            content = f"Error: {error}" if error else result
            work.messages.append(ToolMessage(content, tool_call_id=call["id"] or "", status=status))
        if refused:
            work.messages.append(HumanMessage(ANSWER_NOW))
            return work


def _run_tool(
    tool: BaseTool | None, call: Mapping[str, Any]
) -> Steps[tuple[str, str | None, float]]:
    """Run one tool call: ``(result, error, seconds)``; a tool that raises gives its error."""
    if tool is None:
        return "", f"no tool named {call['name']!r}", 0.0
    started = time.perf_counter()
    try:
        out = yield tool, dict(call["args"])
    except TimeLimitReached as exc:
        return str(exc), TimeLimitReached.__name__, time.perf_counter() - started
    except GraphBubbleUp:  # an interrupt() inside the tool: LangGraph's to handle
        raise
    except Exception as exc:  # noqa: BLE001 - a tool that raises gives the agent its error
        return "", f"{type(exc).__name__}: {one_line(str(exc))}", time.perf_counter() - started
    return tool_text(out), None, time.perf_counter() - started


def tool_text(out: Any) -> str:
    """A tool's result as the transcript and the model read it.

    Args:
        out: What the tool returned: text, content blocks (an MCP tool's, loaded with
            ``langchain-mcp-adapters``) or any value.

    Returns:
        The text; text blocks joined by newlines; anything else as JSON.
    """
    if isinstance(out, str):
        return out
    if isinstance(out, list) and out and all(_is_text_block(b) for b in out):
        return "\n".join(str(b["text"]) for b in out)
    return json.dumps(out, default=str)


def _is_text_block(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("type") == "text" and "text" in block


def agent_steps(runnable: Runnable[Any, Any], messages: Sequence[BaseMessage]) -> Steps[Work]:
    """The steps of a user's agent's turn (see the module's docstring).

    Args:
        runnable: The agent: ``{"messages": [...]}`` in, ``{"messages": [...]}`` out.
        messages: The prompt.

    Returns:
        What it did: its last message's text (empty, with the reason, if it failed), the
        usage its replies report, a record per tool call among its messages.
    """
    prompt = [m if m.id else m.model_copy(update={"id": uuid.uuid4().hex}) for m in messages]
    sent = {m.id for m in prompt}
    work = Work(prompt)
    started = time.perf_counter()
    try:
        out = yield runnable, {"messages": prompt}
    except TimeLimitReached as exc:
        work.usage, work.reason = spent(exc), str(exc)
        return work
    except GraphBubbleUp:  # an interrupt() inside the agent: LangGraph's to handle
        raise
    except Exception as exc:  # noqa: BLE001 - a user's agent that fails loses its turn
        work.reason = f"the agent failed: {type(exc).__name__}: {one_line(str(exc))}"
        return work
    latency = time.perf_counter() - started
    replies = out.get("messages") if isinstance(out, Mapping) else None
    if not isinstance(replies, Sequence) or not replies:
        work.reason = "the agent returned no messages"
        return work
    new = [m for m in replies if getattr(m, "id", None) not in sent]  # it may echo the prompt
    ai = [m for m in new if isinstance(m, AIMessage)]
    work.usage = Usage.total(usage_of(m, 0.0, []) for m in ai) + Usage(latency_s=round(latency, 6))
    work.records = _tool_records(new)
    last = new[-1] if new else None
    work.text = last.text.strip() if isinstance(last, AIMessage) else ""
    if not work.text:
        work.reason = "the agent's last message has no text"
    return work


def _tool_records(messages: Sequence[BaseMessage]) -> list[Turn]:
    """A record per tool call among an agent's messages, with the result its tool gave."""
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    records = []
    for message in messages:
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls:
            answer = results.get(call["id"] or "")
            text = answer.text if answer is not None else ""
            error = text if answer is not None and answer.status == "error" else None
            if answer is None:
                error = "no result"
            records.append(
                tool_record(call["name"], call["args"], "" if error else text, error, 0.0)
            )
    return records
