"""Pruning finished threads: old checkpoints deleted, each thread's state still readable.

Before a thread's older checkpoints go, the oldest one kept is saved again with a full
snapshot of every delta channel (see :mod:`debategraph.checkpoints.maintenance`); the
deleting and reclaiming of space is SQL in :mod:`debategraph.checkpoints.tables`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import Checkpoint, CheckpointMetadata

from debategraph.checkpoints.maintenance import (
    AnyGraph,
    checkpoint_config,
    graphs_saver,
    id_of,
    parent_of,
)
from debategraph.checkpoints.tables import ROOT_NS, AnySaver, Tables, tables_for
from debategraph.checkpoints.threads import THREAD_WALL, list_threads, thread_config, wall_time
from debategraph.compat import MISSING, DeltaSnapshot
from debategraph.errors import UsageError


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
        thread_saver = graphs_saver(graph, saver)
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
        cid = id_of(tup)
        head = head or cid  # newest first
        parents[cid] = parent_of(tup)
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
    tup = saver.get_tuple(checkpoint_config(thread_id, checkpoint_id))
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
