"""Checkpoint maintenance: a thread's history, forking a thread, pruning finished threads.

Everything goes through the :class:`~langgraph.checkpoint.base.BaseCheckpointSaver` API
(``list``, ``get_tuple``, ``put``, ``put_writes``) except what it has no operation for:
reading the ``task_path`` of stored writes, deleting single checkpoints, and reclaiming
space. Those use SQL on the tables of LangGraph's SQLite and Postgres savers.

The ``transcript`` and ``rounds`` channels are :class:`~langgraph.channels.delta.DeltaChannel`
s: a checkpoint stores only what a step appended, and a value is rebuilt by replaying the
writes of every ancestor checkpoint back to the nearest stored snapshot. So a fork copies
the whole ancestor chain, and pruning first stores a full snapshot in the oldest checkpoint
it keeps.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import NULL_TASK_ID
from langgraph._internal._typing import MISSING
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    Checkpoint,
    CheckpointTuple,
    PendingWrite,
)
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.pregel import Pregel
from langgraph.pregel._algo import task_path_str

from debategraph.checkpoints.threads import list_threads, thread_config
from debategraph.errors import UsageError

if TYPE_CHECKING:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

__all__ = ["HistoryEntry", "PruneReport", "fork", "history", "prune"]

#: Only the root graph's checkpoints are forked and pruned.
ROOT_NS = ""
#: Ids per SQL statement when deleting checkpoints (SQLite caps bound parameters).
_CHUNK = 500

AnyGraph = Pregel[Any, Any, Any, Any]
AnySaver = BaseCheckpointSaver[Any]


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
    for snap in graph.get_state_history(thread_config(thread_id)):
        metadata: dict[str, Any] = dict(snap.metadata or {})
        values = snap.values if isinstance(snap.values, dict) else {}
        done = tuple(t.name for t in snap.tasks if t.result is not None)
        pending = tuple(t.name for t in snap.tasks if t.result is None)
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
) -> None:
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
        checkpoint_id: The checkpoint to fork at (see :func:`history`).
        new_thread_id: The thread to create.

    Raises:
        UsageError: If the thread or checkpoint does not exist, or ``new_thread_id`` does.
    """
    if saver.get_tuple(thread_config(thread_id)) is None:
        raise UsageError(f"no thread {thread_id!r} in this database (see: debategraph threads)")
    target = saver.get_tuple(_checkpoint_config(thread_id, checkpoint_id))
    if target is None:
        raise UsageError(
            f"thread {thread_id!r} has no checkpoint {checkpoint_id!r}"
            f" (see: debategraph history {thread_id})"
        )
    if saver.get_tuple(thread_config(new_thread_id)) is not None:
        raise UsageError(f"thread {new_thread_id!r} already exists: choose another name")

    chain = [target]
    while (parent := chain[-1].parent_config) is not None:
        tup = saver.get_tuple(parent)
        if tup is None:  # gone (pruned: then its child holds a full snapshot)
            break
        chain.append(tup)
    chain.reverse()

    paths = _stored_task_paths(saver, thread_id)
    for i, tup in enumerate(chain):
        source_id = _checkpoint_id(tup)
        # The oldest copied has no parent, or one that is gone: don't link to it.
        parent_id = _parent_id(tup) if i else None
        put_config: RunnableConfig = {
            "configurable": {"thread_id": new_thread_id, "checkpoint_ns": ROOT_NS}
        }
        if parent_id is not None:
            put_config["configurable"]["checkpoint_id"] = parent_id
        saved = saver.put(
            put_config,
            tup.checkpoint,
            tup.metadata,
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


def _stored_task_paths(saver: AnySaver, thread_id: str) -> dict[str, dict[str, str]] | None:
    """The ``task_path`` of every stored write of a thread: checkpoint -> task -> path.

    The saver API returns writes without their task path, but a replay sorts a
    step's writes by it (``writes_sort_key``), so a copy must keep it or the
    transcript of a round comes back in another order.

    Returns:
        The paths; ``None`` if the saver is not one whose tables this module knows.
    """
    rows: list[tuple[str, str, str]]
    if isinstance(saver, SqliteSaver):
        with saver.cursor(transaction=False) as cur:
            try:
                cur.execute(
                    "SELECT checkpoint_id, task_id, task_path FROM writes"
                    " WHERE thread_id = ? AND checkpoint_ns = ?",
                    (thread_id, ROOT_NS),
                )
            except sqlite3.OperationalError:  # a read-only file from before task_path
                return None
            rows = cur.fetchall()
    elif (pg := _as_postgres(saver)) is not None:
        with _pg_cursor(pg) as cur:
            cur.execute(
                "SELECT checkpoint_id, task_id, task_path FROM checkpoint_writes"
                " WHERE thread_id = %s AND checkpoint_ns = %s",
                (thread_id, ROOT_NS),
            )
            rows = cur.fetchall()
    else:
        return None
    out: dict[str, dict[str, str]] = {}
    for checkpoint_id, task_id, task_path in rows:
        out.setdefault(str(checkpoint_id), {})[str(task_id)] = str(task_path)
    return out


def _derived_task_paths(graph: AnyGraph, config: RunnableConfig) -> dict[str, str]:
    """Task paths as the graph computes them for a checkpoint's tasks (any saver)."""
    snap = graph.get_state(config)
    return {task.id: task_path_str(task.path) for task in snap.tasks}


# --------------------------------------------------------------------------
# prune
# --------------------------------------------------------------------------


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
    store = _store_for(saver)
    keep = 1 if keep_last is None else keep_last
    cutoff: datetime | None = None
    if finished_older_than_days is not None:
        cutoff = _utc(now or datetime.now(UTC)) - timedelta(days=finished_older_than_days)

    bytes_before = store.size()
    threads_pruned = checkpoints_deleted = 0
    for summary in list_threads(saver):
        graph = graph_for(summary.thread_id)
        if graph is None:
            continue
        deleted = _prune_thread(graph, saver, store, summary.thread_id, keep, cutoff)
        if deleted:
            threads_pruned += 1
            checkpoints_deleted += deleted
    if checkpoints_deleted:
        store.vacuum()
    return PruneReport(
        threads_pruned=threads_pruned,
        checkpoints_deleted=checkpoints_deleted,
        bytes_before=bytes_before,
        bytes_after=store.size(),
    )


def _prune_thread(
    graph: AnyGraph,
    saver: AnySaver,
    store: _Store,
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
    for tup in saver.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ROOT_NS}}):
        cid = _checkpoint_id(tup)
        head = head or cid  # newest first
        parents[cid] = _parent_id(tup)
    kept: list[str] = []
    cursor = head
    while cursor is not None and cursor in parents and len(kept) < keep:
        kept.append(cursor)
        cursor = parents[cursor]
    doomed = [cid for cid in parents if cid not in kept]
    if not doomed:
        return 0

    oldest = kept[-1]
    if parents[oldest] is not None and not _store_snapshot(graph, saver, thread_id, oldest):
        return 0  # deleted meanwhile
    store.delete(thread_id, doomed)
    return len(doomed)


def _store_snapshot(graph: AnyGraph, saver: AnySaver, thread_id: str, checkpoint_id: str) -> bool:
    """Save a checkpoint again with every delta channel's full value and no parent.

    The value is what LangGraph rebuilds for the checkpoint (the nearest stored value
    plus the ancestors' writes, not the checkpoint's own writes, which belong to the
    next step), so its descendants replay onto the same base once the ancestors go.

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
            values[key] = _DeltaSnapshot(channel.get())
    snapshot: Checkpoint = {**checkpoint, "channel_values": values}
    saver.put(
        {"configurable": {"thread_id": thread_id, "checkpoint_ns": ROOT_NS}},
        snapshot,
        tup.metadata,
        # Postgres stores a channel's blob only for the versions passed here.
        dict(checkpoint["channel_versions"]),
    )
    return True


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


# --------------------------------------------------------------------------
# Storage: what the saver API has no operation for
# --------------------------------------------------------------------------


class _Store(Protocol):
    def size(self) -> int: ...

    def delete(self, thread_id: str, checkpoint_ids: Sequence[str]) -> None: ...

    def vacuum(self) -> None: ...


def _store_for(saver: AnySaver) -> _Store:
    if isinstance(saver, SqliteSaver):
        return _SqliteStore(saver)
    if (pg := _as_postgres(saver)) is not None:
        return _PostgresStore(pg)
    raise UsageError(f"prune works on SQLite and Postgres checkpoints, not {type(saver).__name__}")


class _SqliteStore:
    """Tables ``checkpoints`` and ``writes`` of :class:`SqliteSaver`."""

    def __init__(self, saver: SqliteSaver) -> None:
        self.saver = saver

    def size(self) -> int:
        conn = self.saver.conn
        with self.saver.lock:
            conn.commit()
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            path = next(
                (row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"),
                "",
            )
            if not path:  # in memory
                pages = conn.execute("PRAGMA page_count").fetchone()[0]
                page_size = conn.execute("PRAGMA page_size").fetchone()[0]
                return int(pages) * int(page_size)
        return sum(os.path.getsize(p) for p in (path, f"{path}-wal") if os.path.exists(p))

    def delete(self, thread_id: str, checkpoint_ids: Sequence[str]) -> None:
        with self.saver.cursor() as cur:  # one transaction, committed on exit
            for start in range(0, len(checkpoint_ids), _CHUNK):
                chunk = list(checkpoint_ids[start : start + _CHUNK])
                marks = ", ".join("?" * len(chunk))
                for table in ("writes", "checkpoints"):
                    cur.execute(
                        f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns = ?"
                        f" AND checkpoint_id IN ({marks})",
                        (thread_id, ROOT_NS, *chunk),
                    )
                cur.execute(
                    "UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE thread_id = ?"
                    f" AND checkpoint_ns = ? AND parent_checkpoint_id IN ({marks})",
                    (thread_id, ROOT_NS, *chunk),
                )

    def vacuum(self) -> None:
        conn = self.saver.conn
        with self.saver.lock:
            conn.commit()  # VACUUM cannot run inside a transaction
            conn.execute("VACUUM")


class _PostgresStore:
    """Tables ``checkpoints``, ``checkpoint_writes`` and ``checkpoint_blobs``."""

    def __init__(self, saver: PostgresSaver) -> None:
        self.saver = saver

    def size(self) -> int:
        with _pg_cursor(self.saver) as cur:
            cur.execute("SELECT pg_database_size(current_database())")
            row = cur.fetchone()
        return 0 if row is None else int(row[0])

    def delete(self, thread_id: str, checkpoint_ids: Sequence[str]) -> None:
        ids = list(checkpoint_ids)
        with _pg_cursor(self.saver, transaction=True) as cur:
            cur.execute(
                "DELETE FROM checkpoint_writes"
                " WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)",
                (thread_id, ROOT_NS, ids),
            )
            cur.execute(
                "WITH deleted AS (DELETE FROM checkpoints"
                " WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)"
                " RETURNING checkpoint -> 'channel_versions' AS versions)"
                " SELECT DISTINCT v.key, v.value FROM deleted"
                " CROSS JOIN LATERAL jsonb_each_text(deleted.versions) AS v",
                (thread_id, ROOT_NS, ids),
            )
            freed = {(str(k), str(v)) for k, v in cur.fetchall()}
            # `put` does not change the parent of a checkpoint saved again.
            cur.execute(
                "UPDATE checkpoints SET parent_checkpoint_id = NULL"
                " WHERE thread_id = %s AND checkpoint_ns = %s AND parent_checkpoint_id = ANY(%s)",
                (thread_id, ROOT_NS, ids),
            )
            cur.execute(
                "SELECT DISTINCT v.key, v.value FROM checkpoints c"
                " CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v"
                " WHERE c.thread_id = %s AND c.checkpoint_ns = %s",
                (thread_id, ROOT_NS),
            )
            garbage = freed - {(str(k), str(v)) for k, v in cur.fetchall()}
            by_channel: dict[str, list[str]] = {}
            for channel, version in garbage:
                by_channel.setdefault(channel, []).append(version)
            for channel, versions in by_channel.items():
                cur.execute(
                    "DELETE FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = %s"
                    " AND channel = %s AND version = ANY(%s)",
                    (thread_id, ROOT_NS, channel, versions),
                )

    def vacuum(self) -> None:
        with self.saver.lock, _pg_connection(self.saver) as conn:
            autocommit = conn.autocommit
            conn.autocommit = True  # VACUUM cannot run inside a transaction
            try:
                for table in ("checkpoints", "checkpoint_writes", "checkpoint_blobs"):
                    conn.execute(f"VACUUM {table}")
            finally:
                conn.autocommit = autocommit


def _as_postgres(saver: AnySaver) -> PostgresSaver | None:
    """The saver as a :class:`PostgresSaver`, or ``None`` (also without psycopg)."""
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
    except ImportError:
        return None
    return saver if isinstance(saver, PostgresSaver) else None


@contextlib.contextmanager
def _pg_connection(saver: PostgresSaver) -> Iterator[psycopg.Connection[Any]]:
    from psycopg_pool import ConnectionPool

    conn = saver.conn
    if isinstance(conn, ConnectionPool):
        with conn.connection() as pooled:
            yield pooled
    else:
        yield conn


@contextlib.contextmanager
def _pg_cursor(
    saver: PostgresSaver, *, transaction: bool = False
) -> Iterator[psycopg.Cursor[tuple[Any, ...]]]:
    """A plain (tuple-row) cursor on the saver's connection, under the saver's lock."""
    from psycopg.rows import tuple_row

    with saver.lock, _pg_connection(saver) as conn:
        if saver.pipe is not None:
            saver.pipe.sync()
        with contextlib.ExitStack() as stack:
            if transaction:
                stack.enter_context(conn.transaction())
            yield stack.enter_context(conn.cursor(row_factory=tuple_row))
