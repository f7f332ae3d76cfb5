"""Messages in and out: every pattern's graph is also an agent (DESIGN.md principle 6).

A graph takes ``{"messages": [...]}`` besides its own fields: a run given them passes
:data:`INPUT_NODE` before the pattern's first node, which reads the last human message
into the pattern's question, topic, document or task (its
:attr:`~debategraph.state.base.Schemas.text`) when that field is not given. So a graph
is a node of any ``MessagesState`` graph, an agent of ``langgraph-supervisor`` or
``langgraph-swarm``, and (through :func:`debategraph.graphs.tool.as_tool`) a tool.

The last node of every pattern, :data:`RESPOND_NODE`, returns the run's content as
``messages``: the transcript as chat messages named after their agents, ending in one
message that states the outcome, named after the compiled graph (the pattern's
``outcome`` function: the decided answer, the verdict, the report's overview, the chat's
last word, the meeting's decision). No checkpoint holds that reply, and an input only
until it is read (:class:`~debategraph.state.reducers.MessagesChannel`): the transcript
is what a thread keeps.

Each agent turn reaches ``stream_mode="messages"`` once, as it is made: an agent node
returns its turns as messages beside its update (:func:`said`, under :data:`SAID_KEY`,
which is no state key: LangGraph drops it from the writes, and its messages stream reads
it), under the turn's id, so a parent graph that streams the run's ``messages`` again
finds them sent already.

:func:`emit` writes the events a UI follows with ``stream_mode="custom"`` (and
``astream_events``' ``on_custom_event``): a round opening, a solver round's votes, a
decision, the outcome.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from typing_extensions import TypedDict

from debategraph.state.records import INTERJECT_STAGE, Turn, tool_call_text
from debategraph.state.reducers import CONSUMED, Reply

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from debategraph.state.base import Schemas

#: The first node of every pattern: reads a ``messages`` input into the pattern's field.
INPUT_NODE = "take_input"
#: The last node of every pattern: writes the run's ``messages``.
RESPOND_NODE = "respond"

#: The metadata key that names the agent of a model call (LangChain's own, which
#: ``stream_mode="messages"`` consumers read), set on every agent's calls.
AGENT_NAME_KEY = "lc_agent_name"

#: The stage recorded on the outcome message's metadata.
OUTCOME_STAGE = "outcome"

#: The key of an agent node's return value that holds its turns as messages: no state
#: key (LangGraph writes none of it), read by ``stream_mode="messages"`` (:func:`said`).
SAID_KEY = "__debategraph_said__"


#: A pattern's outcome: ``(speaker, text)`` of the message that states it, or ``None``
#: when the transcript's last agent turn is the outcome (a chat's last word).
Outcome: TypeAlias = "tuple[str, str] | None"

#: What a chat message's ``name`` may not hold (OpenAI's rule for message names).
_NOT_IN_NAME = re.compile(r"[\s<|\\/>]+")

MESSAGE_FORMS = (
    "LangChain messages, {'role': ..., 'content': ...} dicts, (role, text) pairs or strings"
)
#: What ``messages`` may be: a list of :data:`MESSAGE_FORMS`, or one string (a human
#: message, as LangGraph's server sends a graph's ``messages`` over MCP).
MESSAGES_FORMS = f"a string (one human message) or a list of {MESSAGE_FORMS}"


def message_name(agent: str) -> str:
    """An agent's name as a chat message's ``name``: no spaces, slashes, ``<``, ``>`` or ``|``.

    Args:
        agent: The agent's name.

    Returns:
        The name, each run of characters a model endpoint refuses in a name made ``_``.
    """
    return _NOT_IN_NAME.sub("_", agent.strip()) or "agent"


def as_messages(value: Any) -> list[BaseMessage]:
    """A ``messages`` input as LangChain messages.

    Args:
        value: Messages in any form LangChain reads (see :data:`MESSAGE_FORMS`), or one
            string: a human message.

    Returns:
        The messages.

    Raises:
        ValueError: One line naming the item that is not a message.
    """
    from langchain_core.messages import HumanMessage, convert_to_messages

    if isinstance(value, str):
        return [HumanMessage(value)]
    if isinstance(value, bytes) or not isinstance(value, Sequence):
        raise ValueError(f"messages must be {MESSAGES_FORMS}, got {value!r}"[:300])
    try:
        return list(convert_to_messages(value))
    except (ValueError, TypeError, NotImplementedError, KeyError) as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"messages must be a list of {MESSAGE_FORMS}: {reason}"[:300]) from None


def last_human_text(messages: Sequence[BaseMessage]) -> str:
    """The text of the last human message.

    Args:
        messages: The conversation.

    Returns:
        Its stripped text: ``""`` if it has none, or there is no human message (an
        empty last message is not read past: the pattern refuses the empty field).
    """
    for message in reversed(messages):
        if message.type == "human":
            return message.text.strip()
    return ""


def read_messages(
    values: Mapping[str, Any], schemas: Schemas[Any, Any], *, first: bool = True
) -> dict[str, Any]:
    """The writes that fill a pattern's own field from a ``messages`` input.

    The last human message becomes :attr:`~debategraph.state.base.Schemas.text` on a
    thread's first invocation (:attr:`~debategraph.state.base.Schemas.later_text` on a
    later one, where the pattern has one). Where the field is given too, the field wins
    and a note says so. A conversation with no human message fills nothing: the
    pattern's own check then refuses the empty field with its own line.

    Args:
        values: The input (or the state at the run's first node).
        schemas: The pattern's schemas.
        first: Whether the thread has no transcript yet.

    Returns:
        ``{field: text}`` and/or ``notes``; empty when there is nothing to read.

    Raises:
        ValueError: If ``messages`` is not a list of messages (one line).
    """
    raw = values.get("messages")
    key = schemas.text if first else schemas.later_text
    if not raw or not key:
        return {}
    text = last_human_text(as_messages(raw))
    given = values.get(key)
    if isinstance(given, str) and given.strip():
        if text and given.strip() != text:
            return {"notes": [f"both {key} and messages were given: {key} wins, messages not read"]}
        return {}
    return {key: text} if text else {}


def make_take_input(
    schemas: Schemas[Any, Any], pattern: str
) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The :data:`INPUT_NODE` of a pattern: a ``messages`` input read into its field.

    It runs only on a run given ``messages`` (see :func:`has_messages`), and marks them
    read (:data:`~debategraph.state.reducers.CONSUMED`): saved with the checkpoints
    until then, so a thread paused or crashed before this node still has them, and no
    checkpoint holds them after. On a thread that has run before, a pattern without a
    later field (all but the group chat) refuses a new question: one thread, one
    question.

    Args:
        schemas: The pattern's schemas.
        pattern: The pattern's name, for the message.

    Returns:
        The node function.

    Raises:
        ValueError: One line, for messages that are not messages or a new question on a
            thread that has answered one.
    """

    def take_input(state: Mapping[str, Any]) -> dict[str, Any]:
        first = not state.get("transcript")
        held = str(state.get(schemas.text) or "").strip()
        if not first and not schemas.later_text and state.get("messages"):
            text = last_human_text(as_messages(state["messages"]))
            if text and text != held:
                raise ValueError(
                    f"this {pattern} thread has run on its {schemas.text} ({held[:60]!r}): "
                    f"a new {schemas.text} ({text[:60]!r}) needs a new thread"
                )
        filled = read_messages(state, schemas, first=first)
        if first and not filled.get(schemas.text) and not held:
            return filled  # unread: the pattern's check refuses the empty field, naming them
        return {**filled, "messages": CONSUMED}

    return take_input


class MessagesIn(TypedDict, total=False):
    """What the edge from ``START`` reads: only whether the run was given messages."""

    messages: Any


def has_messages(state: MessagesIn) -> bool:
    """Whether a run was given ``messages`` (the edge from ``START`` then reads them).

    Args:
        state: The run's input, as the edge from ``START`` reads it.

    Returns:
        True if it holds a non-empty ``messages``.
    """
    return bool(state.get("messages"))


def turn_message(turn: Turn) -> BaseMessage | None:
    """One transcript record as a chat message, or ``None`` for a caller's own input.

    An agent's turn is an ``AIMessage`` named after it (its usage as the message's
    ``usage_metadata``); a tool call the agent made, one with the call's line
    (:func:`~debategraph.state.records.tool_call_text`); a human's interjection, a
    ``HumanMessage``. A chat's task and a caller's message are what the caller sent,
    not part of the reply. Each message's id is its record's, and its
    ``response_metadata["debategraph"]`` holds the agent's name, stage and round.

    Args:
        turn: The record.

    Returns:
        The message.
    """
    from langchain_core.messages import AIMessage, HumanMessage

    meta: dict[str, Any] = {"agent": turn.agent, "stage": turn.stage, "round": turn.round}
    if turn.answer is not None:
        meta["answer"] = turn.answer
    if turn.reason:
        meta["reason"] = turn.reason
    if turn.role == "user":
        if turn.stage != INTERJECT_STAGE:
            return None
        return HumanMessage(
            turn.content,
            name=message_name(turn.agent),
            id=turn.id,
            response_metadata={"debategraph": meta},
        )
    if turn.role == "tool":
        content = tool_call_text(turn)
    elif turn.role == "agent":
        content = turn.content or f"(no reply: {turn.reason or 'empty'})"
    else:
        return None
    response: dict[str, Any] = {"debategraph": meta}
    if turn.model:
        response["model_name"] = turn.model
    usage = turn.usage
    return AIMessage(
        content,
        name=message_name(turn.agent),
        id=turn.id,
        response_metadata=response,
        usage_metadata={
            "input_tokens": usage.prompt_tokens,
            "output_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        }
        if usage.calls and turn.role == "agent"
        else None,
    )


def transcript_messages(turns: Sequence[Turn]) -> list[BaseMessage]:
    """A transcript as chat messages (see :func:`turn_message`), oldest first.

    Args:
        turns: The transcript.

    Returns:
        The messages.
    """
    return [m for m in map(turn_message, turns) if m is not None]


def said(update: Any) -> Any:
    """An agent node's update, with its new turns as messages for ``stream_mode="messages"``.

    The turns of the update's ``transcript`` (an agent's turn, its tool calls) as chat
    messages (:func:`turn_message`), under :data:`SAID_KEY`: LangGraph writes no key a
    state does not have, and its messages stream sends the messages a node returns, each
    once by id. So each turn streams once, under its id and its agent's name, as it is
    made: a structured reply as its readable text (its JSON never streamed, see
    :func:`~debategraph.models.steps.quiet`), a prose reply not again (its tokens
    streamed under the turn's id), and a parent streaming the run's ``messages`` finds
    them all sent.

    Args:
        update: What the node returns.

    Returns:
        The update, with :data:`SAID_KEY` where it records agent turns.
    """
    if not isinstance(update, dict):
        return update
    turns = update.get("transcript")
    if not isinstance(turns, Sequence) or not turns:
        return update
    spoken = transcript_messages([t for t in turns if isinstance(t, Turn) and t.role != "user"])
    return {**update, SAID_KEY: spoken} if spoken else update


def make_respond(
    outcome: Callable[[Mapping[str, Any]], Outcome] | None,
    pattern: str,
    graph: str | None = None,
    hand_back: str | None = None,
) -> Callable[[Mapping[str, Any]], Any]:
    """The :data:`RESPOND_NODE` of a pattern: the run's content as ``messages``.

    The transcript as messages, then one outcome message named after the compiled graph,
    whoever stated it (its ``response_metadata["debategraph"]["agent"]``). A graph
    compiled with ``hand_back`` ends inside a parent by handing the conversation back
    (:func:`~debategraph.nodes.handback.handed_back`). The compiled graph's node is made
    when it is compiled (:meth:`~debategraph.graphs.skeleton.PatternGraph.compile`),
    knowing its name.

    Args:
        outcome: The pattern's outcome (see :data:`Outcome`; ``None``: the last agent
            turn states it).
        pattern: The pattern's name.
        graph: The compiled graph's name (``None``: the pattern's).
        hand_back: The swarm agent to hand back to (``None``: none).

    Returns:
        The node function: writes ``messages`` (never checkpointed), or hands back, and
        emits an ``outcome`` event.
    """

    def respond(state: Mapping[str, Any]) -> Any:
        from langchain_core.messages import AIMessage

        from debategraph.nodes.handback import handed_back

        turns: Sequence[Turn] = state.get("transcript") or ()
        messages = transcript_messages(turns)
        stated = outcome(state) if outcome is not None else None
        reason = state.get("termination_reason")
        if stated is None:
            last = next((t for t in reversed(turns) if t.role == "agent" and t.content), None)
            stated = (
                (last.agent, last.content)
                if last is not None
                else (pattern, f"The {pattern} ended ({reason or 'no reason'}) with no reply.")
            )
        speaker, text = stated
        name = graph or pattern
        stated_by = AIMessage(
            text,
            name=message_name(name),
            id=f"{OUTCOME_STAGE}-{turns[-1].id if turns else pattern}",
            response_metadata={
                "debategraph": {
                    "agent": speaker,
                    "stage": OUTCOME_STAGE,
                    "termination_reason": reason,
                }
            },
        )
        messages.append(stated_by)
        emit(OUTCOME_STAGE, agent=speaker, graph=name, text=text, termination_reason=reason)
        if hand_back:
            command = handed_back(messages, hand_back)
            if command is not None:
                return command
        return {"messages": Reply(messages)}

    return respond


def emit(event: str, **data: Any) -> None:
    """Write an event to the run's custom stream (``stream_mode="custom"``).

    Every event is ``{"event": event, **data}``, JSON-ready. It is also dispatched as a
    LangChain custom event named ``event`` (LangChain's public ``dispatch_custom_event``),
    which ``astream_events`` shows as ``on_custom_event`` (LangGraph's custom stream
    reaches no callback). Outside a run (a node function called directly) it does
    nothing.

    Args:
        event: ``round`` (a round opens), ``votes`` (a solver round's answers counted),
            ``decision`` (a debate moderator's, a meeting controller's call, a
            discussion's convergence record), ``outcome`` (the run's outcome).
        **data: The event's fields.
    """
    from langchain_core.callbacks import dispatch_custom_event
    from langgraph.config import get_config, get_stream_writer

    try:
        writer = get_stream_writer()
        config = get_config()
    except (RuntimeError, KeyError):  # not inside a run (no config, or none of a graph's)
        return
    payload = {"event": event, **data}
    writer(payload)
    if config.get("callbacks") is not None:  # someone listens: astream_events, a tracer
        dispatch_custom_event(event, payload, config=config)
