"""Forking a thread: its state at one checkpoint copied into a new thread.

The delta channels (see :mod:`debategraph.checkpoints.maintenance`) make a fork copy the
checkpoint's whole ancestor chain, with the writes saved for each, under their task paths.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import WRITES_IDX_MAP, CheckpointMetadata, PendingWrite

from debategraph.checkpoints.maintenance import (
    AnyGraph,
    checkpoint_config,
    graphs_saver,
    id_of,
    no_checkpoint,
    parent_of,
)
from debategraph.checkpoints.tables import ROOT_NS, AnySaver, stored_task_paths
from debategraph.checkpoints.threads import COPIED_FROM, RUN_STARTED, thread_config
from debategraph.compat import NULL_TASK_ID, task_path_str
from debategraph.errors import UsageError


def fork(
    graph: AnyGraph,
    saver: AnySaver,
    thread_id: str,
    checkpoint_id: str,
    new_thread_id: str,
) -> str:
    """Copy a thread as it was at one checkpoint into a new thread.

    The checkpoint and its whole ancestor chain are copied, oldest first, with their
    ids, timestamps, metadata, parent links and saved writes, so delta channels rebuild
    the same values. The new thread starts at the beginning of the step after
    ``checkpoint_id``: writes that step's tasks saved in the original thread are not
    copied, so ``graph.get_state`` of the new thread equals ``graph.get_state`` of the
    original at ``checkpoint_id``, and ``graph.invoke(None, ...)`` runs that step again
    (as LangGraph's own time travel does). The original thread is not changed.

    Args:
        graph: The compiled graph, with ``saver`` as its checkpointer.
        saver: The checkpointer holding the thread.
        thread_id: The thread to fork.
        checkpoint_id: The checkpoint to fork at (see
            :func:`~debategraph.checkpoints.maintenance.history`), or a prefix of
            its id that no other checkpoint of the thread shares.
        new_thread_id: The thread to create.

    Returns:
        The whole id of the checkpoint forked at.

    Raises:
        UsageError: If the thread or checkpoint does not exist, a prefix is ambiguous, or
            ``new_thread_id`` exists.
    """
    saver = graphs_saver(graph, saver)
    if saver.get_tuple(thread_config(thread_id)) is None:
        raise UsageError(f"no thread {thread_id!r} in this database (see: debategraph threads)")
    checkpoint_id = resolve_checkpoint(saver, thread_id, checkpoint_id)
    target = saver.get_tuple(checkpoint_config(thread_id, checkpoint_id))
    if target is None:  # deleted meanwhile
        raise UsageError(no_checkpoint(thread_id, checkpoint_id))
    if saver.get_tuple(thread_config(new_thread_id)) is not None:
        raise UsageError(f"thread {new_thread_id!r} already exists: choose another name")

    chain = [target]
    while (parent := chain[-1].parent_config) is not None:
        tup = saver.get_tuple(parent)
        if tup is None:  # gone (pruned: then its child holds a full snapshot)
            break
        chain.append(tup)
    chain.reverse()

    paths = stored_task_paths(saver, thread_id)
    for i, tup in enumerate(chain):
        source_id = id_of(tup)
        # The oldest copied has no parent, or one that is gone: don't link to it.
        parent_id = parent_of(tup) if i else None
        put_config: RunnableConfig = {
            "configurable": {"thread_id": new_thread_id, "checkpoint_ns": ROOT_NS}
        }
        if parent_id is not None:
            put_config["configurable"]["checkpoint_id"] = parent_id
        # The copy is the origin's history, none of the new thread's runs (its wall time).
        metadata = {k: v for k, v in (tup.metadata or {}).items() if k != RUN_STARTED}
        metadata[COPIED_FROM] = thread_id
        saved = saver.put(
            put_config,
            tup.checkpoint,
            cast(CheckpointMetadata, metadata),
            # Postgres stores a channel's blob only for the versions passed here.
            dict(tup.checkpoint["channel_versions"]),
        )
        writes = list(tup.pending_writes or [])
        if tup is target:
            # The tasks of the step after the fork point run again in the new thread;
            # only input written outside any task is part of the state there.
            writes = [w for w in writes if w[0] == NULL_TASK_ID]
        if not writes:
            continue
        if paths is None:
            task_paths = _derived_task_paths(graph, tup.config)
        else:
            task_paths = paths.get(source_id, {})
        for task_id, task_writes in _by_task(writes).items():
            path = task_paths.get(task_id, "")
            regular = [(ch, v) for ch, v in task_writes if ch not in WRITES_IDX_MAP]
            special = [(ch, v) for ch, v in task_writes if ch in WRITES_IDX_MAP]
            for batch in (regular, special):
                if batch:
                    saver.put_writes(saved, batch, task_id, path)
    return checkpoint_id


def resolve_checkpoint(saver: AnySaver, thread_id: str, given: str) -> str:
    """The whole id of one of a thread's checkpoints, from its id or a unique prefix.

    Args:
        saver: The checkpointer holding the thread.
        thread_id: The thread.
        given: A checkpoint id, or the start of one (as ``debategraph history`` shows).

    Returns:
        The checkpoint's id.

    Raises:
        UsageError: If no checkpoint of the thread has that id or prefix, or several
            share the prefix (the line says how many, and to give more characters).
    """
    given = given.strip()
    if given and saver.get_tuple(checkpoint_config(thread_id, given)) is not None:
        return given
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ROOT_NS}}
    matches: list[str] = []
    if given:
        tuples = saver.list(config)
        try:
            matches = [cid for tup in tuples if (cid := id_of(tup)).startswith(given)]
        finally:
            close = getattr(tuples, "close", None)
            if close is not None:
                close()
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(no_checkpoint(thread_id, given))
    raise UsageError(
        f"checkpoint prefix {given!r} matches {len(matches)} checkpoints of thread "
        f"{thread_id!r}: give more of its id (see: debategraph history {thread_id})"
    )


@dataclass(frozen=True)
class ForkPoint:
    """One end of a fork: a thread and the checkpoint the fork was made at.

    Attributes:
        thread_id: The other thread (the origin, or a fork).
        checkpoint_id: The checkpoint forked at (its id in both threads).
    """

    thread_id: str
    checkpoint_id: str


@dataclass(frozen=True)
class Lineage:
    """Where a thread came from and which threads were forked from it.

    Attributes:
        origin: The thread it was forked from, and where; ``None`` for a thread run
            from its start.
        forks: The threads forked from it, each with the checkpoint it was forked at.
    """

    origin: ForkPoint | None
    forks: tuple[ForkPoint, ...]


def lineage(saver: AnySaver, thread_id: str) -> Lineage:
    """A thread's forks, read from the checkpoints :func:`fork` marks as copied.

    A fork's copied checkpoints keep their ids and name the thread they were copied from
    (:data:`~debategraph.checkpoints.threads.COPIED_FROM`); the newest of them is the
    checkpoint the fork was made at.

    Args:
        saver: The checkpointer holding the thread.
        thread_id: The thread.

    Returns:
        Its origin and its forks (ordered by thread id).
    """
    origin = None
    for tup in _closing(saver.list(thread_config(thread_id))):  # newest first
        copied = (tup.metadata or {}).get(COPIED_FROM)
        if copied is not None:
            origin = ForkPoint(str(copied), id_of(tup))
            break
    forks: dict[str, str] = {}
    for tup in _closing(saver.list(None, filter={COPIED_FROM: thread_id})):
        conf = tup.config["configurable"]
        if not conf.get("checkpoint_ns"):
            forks.setdefault(str(conf["thread_id"]), id_of(tup))  # its newest copied one
    return Lineage(origin, tuple(ForkPoint(t, forks[t]) for t in sorted(forks)))


def _closing(tuples: Iterator[Any]) -> Iterator[Any]:
    """Yield from a saver's ``list``, closing it when done (SQLite holds its lock till then)."""
    try:
        yield from tuples
    finally:
        close = getattr(tuples, "close", None)
        if close is not None:
            close()


def _by_task(writes: Sequence[PendingWrite]) -> dict[str, list[tuple[str, Any]]]:
    """Group writes by task, keeping their order (``writes_sort_key`` order)."""
    out: dict[str, list[tuple[str, Any]]] = {}
    for task_id, channel, value in writes:
        out.setdefault(task_id, []).append((channel, value))
    return out


def _derived_task_paths(graph: AnyGraph, config: RunnableConfig) -> dict[str, str]:
    """Task paths as the graph computes them for a checkpoint's tasks (any saver)."""
    snap = graph.get_state(config)
    return {task.id: task_path_str(task.path) for task in snap.tasks}
