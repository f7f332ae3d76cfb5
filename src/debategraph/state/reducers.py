"""Reducers and channels shared by every graph's state."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from langgraph.channels.delta import DeltaChannel

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
