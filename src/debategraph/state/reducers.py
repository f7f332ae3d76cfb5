"""Reducers and channels shared by every graph's state."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.channels.untracked_value import UntrackedValue

from debategraph.compat import MISSING
from debategraph.state.records import INTERJECT_STAGE, USER, Turn, model_read_back

T = TypeVar("T")

#: Updates between full snapshots of an append-only channel. Between snapshots a checkpoint
#: stores only the new writes, so storage grows linearly with the transcript.
SNAPSHOT_EVERY = 1000


def extend(current: list[T], writes: Sequence[Any]) -> list[T]:
    """Append every write (a record or a list of records) to ``current``, in order.

    Batching-invariant as :class:`DeltaChannel` requires:
    ``extend(extend(s, xs), ys) == extend(s, [*xs, *ys])``.

    Args:
        current: The records so far.
        writes: The writes of one or more steps, oldest first.

    Returns:
        A new list with the written records appended.
    """
    out = list(current)
    for write in writes:
        if isinstance(write, list | tuple):
            out.extend(write)
        else:
            out.append(write)
    return out


def append_only() -> DeltaChannel[Any]:
    """Channel for an append-only list whose checkpoints store only deltas.

    Returns:
        A :class:`DeltaChannel` using :func:`extend`.
    """
    return DeltaChannel(extend, snapshot_frequency=SNAPSHOT_EVERY)


def extend_turns(current: list[Turn], writes: Sequence[Any]) -> list[Turn]:
    """Append transcript records, accepting what JSON clients send as well as :class:`Turn`.

    ``update_state`` from LangGraph Studio or ``langgraph-sdk`` sends dicts; a dict with
    ``role``/``content`` is turned into a chat message by LangGraph before it reaches the
    reducer. Both become a :class:`Turn`; missing fields default to a human interjection
    after the last round so far (``{"role": "user", "content": "..."}`` is enough).
    A record stored with a reference to an earlier record's model label
    (:func:`~debategraph.state.records.stored_once`) gets the label back here.

    Args:
        current: The transcript so far.
        writes: The writes of one or more steps, oldest first.

    Returns:
        A new list with the written records appended, each a :class:`Turn`.
    """
    out = list(current)
    items: list[Any] = extend([], writes)
    for item in items:
        out.append(_as_turn(item, out))
    return out


def _as_turn(item: Any, so_far: Sequence[Turn]) -> Turn:
    if isinstance(item, Turn):
        return model_read_back(item, so_far)
    if isinstance(item, BaseMessage):
        data: dict[str, Any] = {
            **item.additional_kwargs,
            "content": item.text,
            "role": "user" if item.type == "human" else "agent",
        }
        if item.id:
            data.setdefault("id", item.id)
    elif isinstance(item, Mapping):
        data = dict(item)
    else:
        raise TypeError(f"transcript record must be a Turn, dict or message, got {item!r}")
    data.setdefault("role", "user")
    if data["role"] == "user":
        data.setdefault("agent", USER)
        data.setdefault("stage", INTERJECT_STAGE)
    data.setdefault("round", max((t.round for t in so_far if t.role == "agent"), default=0))
    return model_read_back(Turn.model_validate(data), so_far)


def transcript_channel() -> DeltaChannel[Any]:
    """Channel for the transcript: append-only, delta-stored, dicts coerced to :class:`Turn`.

    Returns:
        A :class:`DeltaChannel` using :func:`extend_turns`.
    """
    return DeltaChannel(extend_turns, snapshot_frequency=SNAPSHOT_EVERY)


#: What the node that reads a ``messages`` input writes to the channel once it has read it.
CONSUMED = "__debategraph_messages_read__"


class MessagesChannel(UntrackedValue[Any]):
    """The ``messages`` channel: an input kept until the run has read it, a reply never.

    A ``messages`` input is saved with the checkpoints (a thread paused, crashed or
    forked before its first node still has it) until the node that reads it into the
    pattern's own field writes :data:`CONSUMED`; from then on no checkpoint holds it.
    The run's reply (the transcript as messages, written when the run ends) is never
    saved: the transcript is what a thread keeps, so storage per turn is the
    transcript's alone (DESIGN.md principle 5). As an :class:`UntrackedValue`, no write
    to it is saved as a pending write either.
    """

    __slots__ = ("kept",)

    def __init__(self, typ: Any = list, guard: bool = False) -> None:
        super().__init__(typ, guard)
        self.kept = False

    def copy(self) -> MessagesChannel:
        """A copy of the channel, its value and whether it is kept."""
        empty = MessagesChannel(self.typ, self.guard)
        empty.key, empty.value, empty.kept = self.key, self.value, self.kept
        return empty

    def checkpoint(self) -> Any:
        """The input until it is read; nothing after (no reply is ever saved)."""
        return self.value if self.kept else MISSING

    def from_checkpoint(self, checkpoint: Any) -> MessagesChannel:
        """The channel with a saved input (an unread one), or empty."""
        empty = MessagesChannel(self.typ, self.guard)
        empty.key = self.key
        if checkpoint is not MISSING:
            empty.value, empty.kept = checkpoint, True
        return empty

    def update(self, values: Sequence[Any]) -> bool:
        """Take the step's last write: :data:`CONSUMED` empties the channel."""
        if not values:
            return False
        last = values[-1]
        if isinstance(last, Reply):
            self.value, self.kept = list(last.messages), False
        elif isinstance(last, str) and last == CONSUMED:
            self.value, self.kept = MISSING, False
        else:
            self.value, self.kept = last, True
        return True


class Reply:
    """A run's reply written to :class:`MessagesChannel`: read as its list, never saved.

    Attributes:
        messages: The messages.
    """

    __slots__ = ("messages",)

    def __init__(self, messages: Sequence[Any]) -> None:
        self.messages = messages


def messages_channel() -> MessagesChannel:
    """Channel for ``messages``: an input kept until read, a reply never saved.

    Returns:
        A :class:`MessagesChannel`.
    """
    return MessagesChannel(list, guard=False)
