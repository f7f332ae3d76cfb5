"""Checkpoint maintenance: a thread's history, and what forking and pruning share.

Everything goes through the :class:`~langgraph.checkpoint.base.BaseCheckpointSaver` API
(``list``, ``get_tuple``, ``put``, ``put_writes``) except what it has no operation for:
reading the ``task_path`` of stored writes, deleting single checkpoints, and reclaiming
space. Those use SQL on the tables of LangGraph's SQLite and Postgres savers, in
:mod:`debategraph.checkpoints.tables`.

The ``transcript`` and ``rounds`` channels are :class:`~langgraph.channels.delta.DeltaChannel`
s: a checkpoint stores only what a step appended, and a value is rebuilt by replaying the
writes of every ancestor checkpoint back to the nearest stored snapshot. So a fork
(:mod:`~debategraph.checkpoints.forking`) copies the whole ancestor chain, and pruning
(:mod:`~debategraph.checkpoints.pruning`) first stores a full snapshot in the oldest
checkpoint it keeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.pregel import Pregel

from debategraph.checkpoints.tables import ROOT_NS, AnySaver
from debategraph.checkpoints.threads import thread_config
from debategraph.errors import UsageError

AnyGraph = Pregel[Any, Any, Any, Any]


@dataclass(frozen=True)
class HistoryEntry:
    """One checkpoint of a thread, as ``debategraph history`` lists it.

    Attributes:
        checkpoint_id: The checkpoint.
        parent_id: The checkpoint it follows; ``None`` for the first one.
        step: LangGraph's step number (``-1`` for the input checkpoint).
        source: ``input``, ``loop``, ``update`` or ``fork``.
        round: The debate round in the state at this checkpoint, if any.
        next: Every node the step after this checkpoint runs (or ran). Unlike
            ``StateSnapshot.next`` it includes tasks whose writes are already saved.
        pending: The tasks of ``next`` with no saved result (still to run).
        done: The tasks of ``next`` whose results are saved.
        created_at: When the checkpoint was saved (ISO 8601).
        interrupts: How many interrupts the step's tasks raised.
    """

    checkpoint_id: str
    parent_id: str | None
    step: int
    source: str
    round: int | None
    next: tuple[str, ...]
    pending: tuple[str, ...]
    done: tuple[str, ...]
    created_at: str | None
    interrupts: int


def history(graph: AnyGraph, thread_id: str) -> list[HistoryEntry]:
    """Every checkpoint of a thread, newest first.

    Args:
        graph: The compiled graph, with the thread's checkpointer.
        thread_id: The thread.

    Returns:
        One entry per checkpoint of the root graph.

    Raises:
        UsageError: If the thread does not exist.
    """
    entries: list[HistoryEntry] = []
    snaps = list(graph.get_state_history(thread_config(thread_id)))
    parents = {  # checkpoints a step of the graph went on from (not an update_state)
        (snap.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        for snap in snaps
        if (snap.metadata or {}).get("source") == "loop"
    }
    for snap in snaps:
        metadata: dict[str, Any] = dict(snap.metadata or {})
        values = snap.values if isinstance(snap.values, dict) else {}
        # A checkpoint a step went on from finished its step: every task is done, also
        # one whose writes are never saved (a graph's messages, say).
        finished = snap.config["configurable"]["checkpoint_id"] in parents
        done = tuple(t.name for t in snap.tasks if finished or t.result is not None)
        pending = tuple(t.name for t in snap.tasks if not finished and t.result is None)
        parent = (snap.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        round_ = values.get("round")
        entries.append(
            HistoryEntry(
                checkpoint_id=str(snap.config["configurable"]["checkpoint_id"]),
                parent_id=None if parent is None else str(parent),
                step=int(metadata.get("step", -1)),
                source=str(metadata.get("source", "")),
                round=round_ if isinstance(round_, int) else None,
                next=tuple(t.name for t in snap.tasks),
                pending=pending,
                done=done,
                created_at=snap.created_at,
                interrupts=len(snap.interrupts),
            )
        )
    if not entries:
        raise UsageError(f"no thread {thread_id!r} in this database (see: debategraph threads)")
    return entries


def no_checkpoint(thread_id: str, checkpoint_id: str) -> str:
    """The one-line error for a checkpoint a thread does not have."""
    return (
        f"thread {thread_id!r} has no checkpoint {checkpoint_id!r}"
        f" (see: debategraph history {thread_id})"
    )


def checkpoint_config(thread_id: str, checkpoint_id: str) -> RunnableConfig:
    """The config that addresses one checkpoint of a thread (the root graph's)."""
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ROOT_NS,
            "checkpoint_id": checkpoint_id,
        }
    }


def id_of(tup: CheckpointTuple) -> str:
    """The id of a stored checkpoint."""
    return str(tup.config["configurable"]["checkpoint_id"])


def parent_of(tup: CheckpointTuple) -> str | None:
    """The id of the checkpoint a stored one follows (``None``: the first one)."""
    if tup.parent_config is None:
        return None
    parent = tup.parent_config["configurable"].get("checkpoint_id")
    return None if parent is None else str(parent)


def graphs_saver(graph: AnyGraph, saver: AnySaver) -> AnySaver:
    """The graph's own checkpointer if it has one, else ``saver``.

    A graph compiled for a pattern may hold ``saver.with_allowlist(...)``: a copy whose
    serializer also revives the pattern's own record types. Reading and rewriting
    checkpoints through ``saver`` itself would store those records as plain dicts.
    """
    own = getattr(graph, "checkpointer", None)
    return own if isinstance(own, BaseCheckpointSaver) else saver
