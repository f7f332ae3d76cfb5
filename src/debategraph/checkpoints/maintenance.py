"""Checkpoint maintenance: a thread's history, forking a thread, pruning finished threads.

Everything goes through the :class:`~langgraph.checkpoint.base.BaseCheckpointSaver` API
(``list``, ``get_tuple``, ``put``, ``put_writes``) except what it has no operation for:
reading the ``task_path`` of stored writes, deleting single checkpoints, and reclaiming
space. Those use SQL on the tables of LangGraph's SQLite and Postgres savers, in
:mod:`debategraph.checkpoints.tables`.

The ``transcript`` and ``rounds`` channels are :class:`~langgraph.channels.delta.DeltaChannel`
s: a checkpoint stores only what a step appended, and a value is rebuilt by replaying the
writes of every ancestor checkpoint back to the nearest stored snapshot. So a fork copies
the whole ancestor chain, and pruning first stores a full snapshot in the oldest checkpoint
it keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
)
from langgraph.pregel import Pregel

from debategraph.checkpoints.tables import ROOT_NS, AnySaver, Tables, stored_task_paths, tables_for
from debategraph.checkpoints.threads import (
    COPIED_FROM,
    RUN_STARTED,
    THREAD_WALL,
    list_threads,
    thread_config,
    wall_time,
)
from debategraph.compat import MISSING, NULL_TASK_ID, DeltaSnapshot, task_path_str
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


@dataclass(frozen=True)
class PruneReport:
    """What :func:`prune` did.

    Attributes:
        threads_pruned: Threads from which at least one checkpoint was deleted.
        checkpoints_deleted: Checkpoints deleted in all.
        bytes_before: Size of the store before (SQLite: the file and its ``-wal``
            after a WAL checkpoint; Postgres: ``pg_database_size``).
        bytes_after: The same, after deleting and reclaiming space.
    """

    threads_pruned: int
    checkpoints_deleted: int
    bytes_before: int
    bytes_after: int


# --------------------------------------------------------------------------
# history
# --------------------------------------------------------------------------


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


# --------------------------------------------------------------------------
# fork
# --------------------------------------------------------------------------


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
        checkpoint_id: The checkpoint to fork at (see :func:`history`), or a prefix of
            its id that no other checkpoint of the thread shares.
        new_thread_id: The thread to create.

    Returns:
        The whole id of the checkpoint forked at.

    Raises:
        UsageError: If the thread or checkpoint does not exist, a prefix is ambiguous, or
            ``new_thread_id`` exists.
    """
    saver = _graphs_saver(graph, saver)
    if saver.get_tuple(thread_config(thread_id)) is None:
        raise UsageError(f"no thread {thread_id!r} in this database (see: debategraph threads)")
    checkpoint_id = resolve_checkpoint(saver, thread_id, checkpoint_id)
    target = saver.get_tuple(_checkpoint_config(thread_id, checkpoint_id))
    if target is None:  # deleted meanwhile
        raise UsageError(_no_checkpoint(thread_id, checkpoint_id))
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
        source_id = _checkpoint_id(tup)
        # The oldest copied has no parent, or one that is gone: don't link to it.
        parent_id = _parent_id(tup) if i else None
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
    if given and saver.get_tuple(_checkpoint_config(thread_id, given)) is not None:
        return given
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ROOT_NS}}
    matches: list[str] = []
    if given:
        tuples = saver.list(config)
        try:
            matches = [cid for tup in tuples if (cid := _checkpoint_id(tup)).startswith(given)]
        finally:
            close = getattr(tuples, "close", None)
            if close is not None:
                close()
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(_no_checkpoint(thread_id, given))
    raise UsageError(
        f"checkpoint prefix {given!r} matches {len(matches)} checkpoints of thread "
        f"{thread_id!r}: give more of its id (see: debategraph history {thread_id})"
    )


def _no_checkpoint(thread_id: str, checkpoint_id: str) -> str:
    return (
        f"thread {thread_id!r} has no checkpoint {checkpoint_id!r}"
        f" (see: debategraph history {thread_id})"
    )


def _checkpoint_config(thread_id: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ROOT_NS,
            "checkpoint_id": checkpoint_id,
        }
    }


def _checkpoint_id(tup: CheckpointTuple) -> str:
    return str(tup.config["configurable"]["checkpoint_id"])


def _parent_id(tup: CheckpointTuple) -> str | None:
    if tup.parent_config is None:
        return None
    parent = tup.parent_config["configurable"].get("checkpoint_id")
    return None if parent is None else str(parent)


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


# --------------------------------------------------------------------------
# prune
# --------------------------------------------------------------------------


def _graphs_saver(graph: AnyGraph, saver: AnySaver) -> AnySaver:
    """The graph's own checkpointer if it has one, else ``saver``.

    A graph compiled for a pattern may hold ``saver.with_allowlist(...)``: a copy whose
    serializer also revives the pattern's own record types. Reading and rewriting
    checkpoints through ``saver`` itself would store those records as plain dicts.
    """
    own = getattr(graph, "checkpointer", None)
    return own if isinstance(own, BaseCheckpointSaver) else saver


def prune(
    graph_for: Callable[[str], AnyGraph | None],
    saver: AnySaver,
    *,
    keep_last: int | None,
    finished_older_than_days: float | None,
    now: datetime | None = None,
) -> PruneReport:
    """Delete old checkpoints of finished threads, keeping their state readable.

    A thread is pruned only if it is finished (its latest state has no task left) and,
    with ``finished_older_than_days``, its latest checkpoint is older than that. Of its
    checkpoints on the path to the latest one, the newest ``keep_last`` are kept (1 if
    only ``finished_older_than_days`` is given); every other checkpoint of the thread
    goes, with its writes. Before that, the oldest kept checkpoint is saved again with
    a full snapshot of every delta channel and no parent, so the kept checkpoints
    rebuild the same state. Space is then reclaimed (``VACUUM``).

    Args:
        graph_for: The compiled graph (with ``saver``) for a thread id, or ``None`` to
            leave the thread alone.
        saver: A SQLite or Postgres checkpointer.
        keep_last: Checkpoints to keep per pruned thread (>= 1).
        finished_older_than_days: Prune only threads whose latest checkpoint is older
            than this many days (>= 0).
        now: The current time (default: now, UTC); naive means UTC.

    Returns:
        What was deleted, and the store's size before and after.

    Raises:
        UsageError: On a bad value, or a saver other than SQLite or Postgres.
    """
    if keep_last is not None and keep_last < 1:
        raise UsageError(f"keep-last must be at least 1, got {keep_last}")
    if finished_older_than_days is not None and finished_older_than_days < 0:
        raise UsageError(
            f"finished-older-than days must be 0 or more, got {finished_older_than_days}"
        )
    if keep_last is None and finished_older_than_days is None:
        raise UsageError("prune needs keep-last and/or finished-older-than days")
    tables = tables_for(saver)
    keep = 1 if keep_last is None else keep_last
    cutoff: datetime | None = None
    if finished_older_than_days is not None:
        cutoff = _utc(now or datetime.now(UTC)) - timedelta(days=finished_older_than_days)

    bytes_before = tables.size()
    threads_pruned = checkpoints_deleted = 0
    for summary in list_threads(saver):
        graph = graph_for(summary.thread_id)
        if graph is None:
            continue
        thread_saver = _graphs_saver(graph, saver)
        deleted = _prune_thread(graph, thread_saver, tables, summary.thread_id, keep, cutoff)
        if deleted:
            threads_pruned += 1
            checkpoints_deleted += deleted
    if checkpoints_deleted:
        tables.vacuum()
    return PruneReport(
        threads_pruned=threads_pruned,
        checkpoints_deleted=checkpoints_deleted,
        bytes_before=bytes_before,
        bytes_after=tables.size(),
    )


def _prune_thread(
    graph: AnyGraph,
    saver: AnySaver,
    tables: Tables,
    thread_id: str,
    keep: int,
    cutoff: datetime | None,
) -> int:
    """Prune one thread if it is finished (and old enough); return checkpoints deleted."""
    latest = graph.get_state(thread_config(thread_id))
    if latest.tasks or latest.created_at is None:
        return 0  # unfinished (or empty): never pruned
    if cutoff is not None and _utc(datetime.fromisoformat(latest.created_at)) >= cutoff:
        return 0

    parents: dict[str, str | None] = {}
    head: str | None = None
    stamps: list[tuple[object, dict[str, Any]]] = []  # what the thread's wall time is read from
    for tup in saver.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ROOT_NS}}):
        cid = _checkpoint_id(tup)
        head = head or cid  # newest first
        parents[cid] = _parent_id(tup)
        stamps.append((tup.checkpoint.get("ts"), dict(tup.metadata or {})))
    kept: list[str] = []
    cursor = head
    while cursor is not None and cursor in parents and len(kept) < keep:
        kept.append(cursor)
        cursor = parents[cursor]
    doomed = [cid for cid in parents if cid not in kept]
    if not doomed:
        return 0

    oldest = kept[-1]
    if parents[oldest] is not None and not _store_snapshot(
        graph, saver, thread_id, oldest, wall_s=wall_time(stamps, {})
    ):
        return 0  # deleted meanwhile
    tables.delete(thread_id, doomed)
    return len(doomed)


def _store_snapshot(
    graph: AnyGraph,
    saver: AnySaver,
    thread_id: str,
    checkpoint_id: str,
    *,
    wall_s: float | None = None,
) -> bool:
    """Save a checkpoint again with every delta channel's full value and no parent.

    The value is what LangGraph rebuilds for the checkpoint (the nearest stored value
    plus the ancestors' writes, not the checkpoint's own writes, which belong to the
    next step), so its descendants replay onto the same base once the ancestors go.
    ``wall_s`` (the thread's wall time) goes into its metadata as
    :data:`~debategraph.checkpoints.threads.THREAD_WALL`: the thread's wall time is read
    from it once the checkpoints of its earlier runs are gone.

    Returns:
        False if the checkpoint does not exist.
    """
    tup = saver.get_tuple(_checkpoint_config(thread_id, checkpoint_id))
    if tup is None:
        return False
    checkpoint = tup.checkpoint
    values = dict(checkpoint["channel_values"])
    deltas = {
        key: spec
        for key, spec in graph.channels.items()
        if isinstance(spec, DeltaChannel)
        and key in checkpoint["channel_versions"]  # never written: empty without a walk
        and key not in values  # already a snapshot
    }
    if deltas:
        histories = saver.get_delta_channel_history(config=tup.config, channels=list(deltas))
        for key, spec in deltas.items():
            channel = spec.from_checkpoint(histories[key].get("seed", MISSING))
            channel.replay_writes(histories[key]["writes"])
            values[key] = DeltaSnapshot(channel.get())
    snapshot: Checkpoint = {**checkpoint, "channel_values": values}
    metadata = dict(tup.metadata or {})
    if wall_s is not None:
        metadata[THREAD_WALL] = round(wall_s, 3)
    saver.put(
        {"configurable": {"thread_id": thread_id, "checkpoint_ns": ROOT_NS}},
        snapshot,
        cast(CheckpointMetadata, metadata),
        # Postgres stores a channel's blob only for the versions passed here.
        dict(checkpoint["channel_versions"]),
    )
    return True


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
