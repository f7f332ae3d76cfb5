"""Reducers and channels shared by every graph's state."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.channels.untracked_value import UntrackedValue

from debategraph.state.records import INTERJECT_STAGE, USER, Turn

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
        return item
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
    return Turn.model_validate(data)


def transcript_channel() -> DeltaChannel[Any]:
    """Channel for the transcript: append-only, delta-stored, dicts coerced to :class:`Turn`.

    Returns:
        A :class:`DeltaChannel` using :func:`extend_turns`.
    """
    return DeltaChannel(extend_turns, snapshot_frequency=SNAPSHOT_EVERY)


def messages_channel() -> UntrackedValue[Any]:
    """Channel for ``messages``: what a graph takes and returns as chat messages, never stored.

    A run's messages are a view of its transcript (:mod:`debategraph.nodes.messages` makes
    them when the run ends), and a ``messages`` input is read into the pattern's own
    field (its question, topic, document or task) when the run starts; a checkpoint
    keeps neither, so storage per turn is the transcript's alone (DESIGN.md principle
    5). A parent graph that takes them (a ``MessagesState``, a supervisor) stores them
    in its own state.

    Returns:
        An :class:`UntrackedValue` keeping the last write of a step.
    """
    return UntrackedValue(list, guard=False)
