"""The shared conversation of the chats: what a speaker reads, and what it has seen.

A group chat and a staged meeting keep one conversation: every message is a
:class:`~debategraph.state.records.Turn` in the transcript, a human's interjections
included. A speaker reads the latest ``keep_last`` messages it may read (its own as its
replies, the others' with their names), and its turn records the ids of what it read in
``reply_to``: an agent's own history (what it has seen and written) is read back from
state with :func:`agent_history`, no private copy needed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from debategraph.prompts import CHAT_HUMAN_LINE, CHAT_MESSAGE_LINE
from debategraph.state.records import Turn

#: Messages a speaker reads by default (0: all of them).
DEFAULT_KEEP_LAST = 8


def may_read(turn: Turn, name: str) -> bool:
    """Whether ``name`` may read ``turn``: its own, addressed to it, or to everyone.

    Args:
        turn: A transcript record.
        name: An agent.

    Returns:
        True if the agent may read it.
    """
    return turn.agent == name or not turn.recipients or name in turn.recipients


def chat_messages(transcript: Sequence[Turn]) -> list[Turn]:
    """The conversation: agents' messages and a human's, without empty ones.

    Args:
        transcript: The transcript.

    Returns:
        The turns of the conversation, oldest first.
    """
    return [t for t in transcript if t.role in ("agent", "user") and t.content.strip()]


def visible(transcript: Sequence[Turn], name: str | None, keep_last: int) -> list[Turn]:
    """The latest messages ``name`` may read (everyone's when ``name`` is ``None``).

    Args:
        transcript: The transcript.
        name: The reader (``None``: an outside observer such as a selector).
        keep_last: How many to keep (0: all).

    Returns:
        The messages, oldest first.
    """
    turns = [t for t in chat_messages(transcript) if name is None or may_read(t, name)]
    return turns[-keep_last:] if keep_last > 0 else turns


def as_messages(turns: Sequence[Turn], name: str | None) -> list[BaseMessage]:
    """Turns as chat messages from ``name``'s side: its own as replies, others' named.

    Args:
        turns: The messages it reads.
        name: The reader (``None``: every message is someone else's).

    Returns:
        The chat messages.
    """
    out: list[BaseMessage] = []
    for turn in turns:
        if name is not None and turn.agent == name and turn.role == "agent":
            out.append(AIMessage(content=turn.content))
        else:
            out.append(HumanMessage(content=transcript_line(turn)))
    return out


def transcript_line(turn: Turn) -> str:
    """One message as a line of the conversation (``Name: text``).

    Args:
        turn: A message.

    Returns:
        The line.
    """
    if turn.role == "user":
        return CHAT_HUMAN_LINE.format(content=turn.content)
    return CHAT_MESSAGE_LINE.format(agent=turn.agent, content=turn.content)


def agent_history(values: Mapping[str, Any], name: str) -> list[Turn]:
    """What ``name`` has seen and written, in transcript order.

    Its own messages and every message one of them replied to (the ones in its prompt).

    Args:
        values: A chat's state values (or a thread's).
        name: The agent.

    Returns:
        The turns.
    """
    transcript: Sequence[Turn] = values.get("transcript") or ()
    own = [t for t in transcript if t.agent == name and t.role == "agent"]
    seen = {i for t in own for i in t.reply_to} | {t.id for t in own}
    return [t for t in transcript if t.id in seen]


def transcript_json(values: Mapping[str, Any], *, full: bool = False) -> list[dict[str, Any]]:
    """A chat's messages as the CLI's ``--json`` result shows them.

    Args:
        values: The chat's state values.
        full: Every field of each record (id, agent id, stage, round, reply_to,
            timestamp...), not only ``agent``, ``role`` and ``content``.

    Returns:
        One dict per message, oldest first.
    """
    from debategraph.checkpoints.thread_values import turns

    messages = chat_messages(turns(values))
    if full:
        return [t.model_dump(mode="json", exclude={"usage"}) for t in messages]
    return [{"agent": t.agent, "role": t.role, "content": t.content} for t in messages]
