"""SQL on the tables of LangGraph's SQLite and Postgres checkpoint savers.

The :class:`~langgraph.checkpoint.base.BaseCheckpointSaver` API has no operation for
reading the ``task_path`` of stored writes, deleting single checkpoints, or reclaiming
space. :mod:`debategraph.checkpoints.maintenance` needs all three; this module does them
with SQL on the tables of :class:`~langgraph.checkpoint.sqlite.SqliteSaver` and
:class:`~langgraph.checkpoint.postgres.PostgresSaver` (the latter only when psycopg is
installed). Like the private names in :mod:`debategraph.compat`, these tables are not
LangGraph's public API: :data:`SQLITE_COLUMNS` and :data:`POSTGRES_COLUMNS` list every
table and column used here, and ``tests/test_compat.py`` checks them against the schema
LangGraph's own savers create. (Not to be confused with LangGraph's *stores*,
``SqliteTables``/``PostgresTables``, which hold the threads' inboxes.)
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from debategraph.errors import UsageError

if TYPE_CHECKING:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver


#: Only the root graph's checkpoints are forked and pruned.
ROOT_NS = ""
#: Ids per SQL statement when deleting checkpoints (SQLite caps bound parameters).
_CHUNK = 500

AnySaver = BaseCheckpointSaver[Any]

#: Every table and column of :class:`SqliteSaver` that this module's SQL names.
SQLITE_COLUMNS: dict[str, frozenset[str]] = {
    "checkpoints": frozenset(
        {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id"}
    ),
    "writes": frozenset({"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "task_path"}),
}
#: Every table and column of :class:`PostgresSaver` that this module's SQL names.
POSTGRES_COLUMNS: dict[str, frozenset[str]] = {
    "checkpoints": frozenset(
        {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "checkpoint"}
    ),
    "checkpoint_writes": frozenset(
        {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "task_path"}
    ),
    "checkpoint_blobs": frozenset({"thread_id", "checkpoint_ns", "channel", "version"}),
}


class Tables(Protocol):
    """What pruning needs from a saver's tables, beyond the saver API."""

    def size(self) -> int:
        """The size of the store in bytes."""
        ...

    def delete(self, thread_id: str, checkpoint_ids: Sequence[str]) -> None:
        """Delete root checkpoints of a thread with their writes, unlinking their children."""
        ...

    def vacuum(self) -> None:
        """Reclaim the space of deleted rows."""
        ...


def tables_for(saver: AnySaver) -> Tables:
    """The :class:`Tables` of a saver.

    Args:
        saver: A SQLite or Postgres checkpointer.

    Returns:
        A :class:`SqliteTables` or :class:`PostgresTables`.

    Raises:
        UsageError: If the saver is neither.
    """
    if isinstance(saver, SqliteSaver):
        return SqliteTables(saver)
    if (pg := as_postgres(saver)) is not None:
        return PostgresTables(pg)
    raise UsageError(f"prune works on SQLite and Postgres checkpoints, not {type(saver).__name__}")


def stored_task_paths(saver: AnySaver, thread_id: str) -> dict[str, dict[str, str]] | None:
    """The ``task_path`` of every stored write of a thread: checkpoint -> task -> path.

    The saver API returns writes without their task path, but a replay sorts a
    step's writes by it (``writes_sort_key``), so a copy must keep it or the
    transcript of a round comes back in another order.

    Args:
        saver: The checkpointer holding the thread.
        thread_id: The thread.

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
    elif (pg := as_postgres(saver)) is not None:
        with pg_cursor(pg) as cur:
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


class SqliteTables:
    """Tables ``checkpoints`` and ``writes`` of :class:`SqliteSaver`."""

    def __init__(self, saver: SqliteSaver) -> None:
        self.saver = saver

    def size(self) -> int:
        """The database file and its ``-wal`` after a WAL checkpoint, in bytes."""
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
        """Delete root checkpoints of a thread with their writes, unlinking their children."""
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
        """Run ``VACUUM`` on the database."""
        conn = self.saver.conn
        with self.saver.lock:
            conn.commit()  # VACUUM cannot run inside a transaction
            conn.execute("VACUUM")


class PostgresTables:
    """Tables ``checkpoints``, ``checkpoint_writes`` and ``checkpoint_blobs``."""

    def __init__(self, saver: PostgresSaver) -> None:
        self.saver = saver

    def size(self) -> int:
        """The database's ``pg_database_size``, in bytes."""
        with pg_cursor(self.saver) as cur:
            cur.execute("SELECT pg_database_size(current_database())")
            row = cur.fetchone()
        return 0 if row is None else int(row[0])

    def delete(self, thread_id: str, checkpoint_ids: Sequence[str]) -> None:
        """Delete root checkpoints of a thread with their writes and the blobs left unused."""
        ids = list(checkpoint_ids)
        with pg_cursor(self.saver, transaction=True) as cur:
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
        """Run ``VACUUM`` on the three checkpoint tables."""
        with self.saver.lock, pg_connection(self.saver) as conn:
            autocommit = conn.autocommit
            conn.autocommit = True  # VACUUM cannot run inside a transaction
            try:
                for table in ("checkpoints", "checkpoint_writes", "checkpoint_blobs"):
                    conn.execute(f"VACUUM {table}")
            finally:
                conn.autocommit = autocommit


def as_postgres(saver: AnySaver) -> PostgresSaver | None:
    """The saver as a :class:`PostgresSaver`, or ``None`` (also without psycopg).

    Args:
        saver: Any checkpointer.

    Returns:
        ``saver`` if it is a :class:`PostgresSaver`, else ``None``.
    """
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
    except ImportError:
        return None
    return saver if isinstance(saver, PostgresSaver) else None


@contextlib.contextmanager
def pg_connection(saver: PostgresSaver) -> Iterator[psycopg.Connection[Any]]:
    """The saver's connection, or one borrowed from its pool for the ``with`` block.

    Args:
        saver: A Postgres checkpointer.

    Yields:
        A psycopg connection.
    """
    from psycopg_pool import ConnectionPool

    conn = saver.conn
    if isinstance(conn, ConnectionPool):
        with conn.connection() as pooled:
            yield pooled
    else:
        yield conn


@contextlib.contextmanager
def pg_cursor(
    saver: PostgresSaver, *, transaction: bool = False
) -> Iterator[psycopg.Cursor[tuple[Any, ...]]]:
    """A plain (tuple-row) cursor on the saver's connection, under the saver's lock.

    Args:
        saver: A Postgres checkpointer.
        transaction: Run the ``with`` block in one transaction.

    Yields:
        A cursor returning tuples.
    """
    from psycopg.rows import tuple_row

    with saver.lock, pg_connection(saver) as conn:
        if saver.pipe is not None:
            saver.pipe.sync()
        with contextlib.ExitStack() as stack:
            if transaction:
                stack.enter_context(conn.transaction())
            yield stack.enter_context(conn.cursor(row_factory=tuple_row))
