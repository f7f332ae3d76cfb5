"""The saver classes :func:`~debategraph.checkpoints.savers.open_checkpointer` builds.

- :func:`sqlite_saver_class`: LangGraph's ``SqliteSaver``, leaner: short channel
  versions (:func:`next_version`), each run's settings stored once per file
  (:data:`METADATA_TABLE`), a ``writes`` table without a second copy of its key.
- :func:`postgres_saver_class`: LangGraph's ``PostgresSaver``, usable from async runs.

Both define their class on first use (they import LangGraph; the CLI's ``--help``
loads none of it), with async methods on a thread of their own
(:class:`~debategraph.checkpoints.threaded.ThreadedAsync`).
"""

from __future__ import annotations

import functools
import hashlib
import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

from debategraph.checkpoints.threads import RUN_METADATA_KEY

if TYPE_CHECKING:
    from langgraph.checkpoint.sqlite import SqliteSaver


def next_version(current: str | int | float | None) -> str | int | float:
    """The channel version after ``current``: short strings that sort in version order.

    LangGraph's ``SqliteSaver`` writes ``f"{n:032}.{random():016}"`` (52 characters), and a
    checkpoint names a version for every channel and for every node that read one: about
    1.4 KB of a solver debate's checkpoint. Ours are ``n`` in decimal after a letter
    giving its number of digits (``a1`` ... ``a9``, ``b10`` ...), so string order is number
    order, and every one sorts after every old-style version (those start with a digit): a
    thread written before goes on with short versions, each newer than the last old one.
    Numbers stay numbers (a thread another saver started).

    Args:
        current: The channel's current version (``None`` if it has none).

    Returns:
        The next version.
    """
    if isinstance(current, int | float):
        return current + 1
    if current is None:
        number = 0
    elif current[:1].isdigit():  # SqliteSaver's form
        number = int(current.split(".", 1)[0])
    else:
        number = int(current[1:])
    digits = str(number + 1)
    return chr(ord("a") + len(digits) - 1) + digits


#: Table of the values of :data:`INTERNED_METADATA_KEYS`, each stored once per file.
METADATA_TABLE = "debategraph_metadata"
#: Checkpoint-metadata keys whose long values repeat in every checkpoint of a run (its
#: settings, some 450 bytes): the SQLite saver stores each value once in
#: :data:`METADATA_TABLE`, and a checkpoint holds ``@`` and its key there instead.
INTERNED_METADATA_KEYS = (RUN_METADATA_KEY,)
_REF = "@"
#: Created before LangGraph's ``setup()``, which keeps existing tables. ``writes`` has the
#: columns and key LangGraph gives it, ``WITHOUT ROWID``: its rows are found by that key,
#: which then is the table itself instead of a second copy of every key in an index.
_SETUP_SQL = f"""
CREATE TABLE IF NOT EXISTS writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    task_path TEXT NOT NULL DEFAULT '',
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    value BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {METADATA_TABLE} (
    digest TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
"""


@functools.cache
def sqlite_saver_class() -> type[SqliteSaver]:
    """LangGraph's SQLite saver, leaner (defined on first use: it imports LangGraph)."""
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import (
        ChannelVersions,
        Checkpoint,
        CheckpointMetadata,
        CheckpointTuple,
    )
    from langgraph.checkpoint.sqlite import SqliteSaver

    from debategraph.checkpoints.threaded import ThreadedAsync

    class LeanSqliteSaver(ThreadedAsync, SqliteSaver):
        """:class:`SqliteSaver` with short versions, settings stored once, lean writes.

        Same tables, columns and SQL as its parent, plus :data:`METADATA_TABLE`;
        :meth:`get_tuple` and :meth:`list` expand the interned metadata again, so
        readers see the metadata the graph wrote. Async runs use it too (see
        :class:`~debategraph.checkpoints.threaded.ThreadedAsync`).
        """

        def __init__(self, conn: sqlite3.Connection, *, serde: Any = None) -> None:
            super().__init__(conn, serde=serde)
            self._interned: dict[str, str] = {}  # digest -> value

        def setup(self) -> None:
            """Create the missing tables (see :data:`_SETUP_SQL`), then LangGraph's."""
            if self.is_setup:
                return
            try:
                self.conn.executescript(_SETUP_SQL)
            except sqlite3.OperationalError as exc:
                if "readonly database" not in str(exc):
                    raise
            super().setup()

        def get_next_version(self, current: str | None, channel: None) -> str:
            """See :func:`next_version`."""
            return str(next_version(current))

        def put(
            self,
            config: RunnableConfig,
            checkpoint: Checkpoint,
            metadata: CheckpointMetadata,
            new_versions: ChannelVersions,
        ) -> RunnableConfig:
            """Save as the parent does, the values of :data:`INTERNED_METADATA_KEYS` by key."""
            meta: dict[str, Any] = dict(metadata)
            extra: dict[str, Any] = dict(config.get("metadata") or {})
            for key in INTERNED_METADATA_KEYS:
                for where in (meta, extra):
                    value = where.get(key)
                    if isinstance(value, str) and not value.startswith(_REF):
                        where[key] = _REF + self._intern(value)
            config = {**config, "metadata": extra}
            return super().put(config, checkpoint, cast("CheckpointMetadata", meta), new_versions)

        def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
            """The checkpoint ``config`` names, its metadata expanded."""
            tup = super().get_tuple(config)
            return None if tup is None else self._expand(tup, locked=False)

        def list(
            self,
            config: RunnableConfig | None,
            *,
            filter: dict[str, Any] | None = None,
            before: RunnableConfig | None = None,
            limit: int | None = None,
        ) -> Iterator[CheckpointTuple]:
            """Checkpoints, newest first, their metadata expanded."""
            tuples = super().list(config, filter=filter, before=before, limit=limit)
            try:
                for tup in tuples:
                    yield self._expand(tup, locked=True)  # the parent holds its lock
            finally:  # a caller may stop early: close the parent's, releasing the lock
                close = getattr(tuples, "close", None)
                if close is not None:
                    close()

        def _intern(self, value: str) -> str:
            """The key of ``value`` in :data:`METADATA_TABLE`, stored there if new.

            The key is the start of its SHA-256: 12 hex digits, more if another value
            already has those.
            """
            full = hashlib.sha256(value.encode()).hexdigest()
            for digits in (12, 24, 64):
                digest = full[:digits]
                if digest not in self._interned:
                    with self.cursor() as cur:
                        cur.execute(
                            f"INSERT OR IGNORE INTO {METADATA_TABLE} (digest, value) VALUES (?, ?)",
                            (digest, value),
                        )
                        row = cur.execute(
                            f"SELECT value FROM {METADATA_TABLE} WHERE digest = ?", (digest,)
                        ).fetchone()
                    self._interned[digest] = str(row[0])
                if self._interned[digest] == value:
                    return digest
            raise RuntimeError(f"SHA-256 collision in {METADATA_TABLE}")  # pragma: no cover

        def _expand(self, tup: CheckpointTuple, *, locked: bool) -> CheckpointTuple:
            """``tup`` with its interned metadata values read back."""
            metadata: dict[str, Any] = dict(tup.metadata or {})
            refs = {
                key: value[len(_REF) :]
                for key in INTERNED_METADATA_KEYS
                if isinstance(value := metadata.get(key), str) and value.startswith(_REF)
            }
            if not refs:
                return tup
            if any(digest not in self._interned for digest in refs.values()):
                self._load_interned(locked=locked)
            for key, digest in refs.items():
                if digest in self._interned:
                    metadata[key] = self._interned[digest]
            return tup._replace(metadata=cast("CheckpointMetadata", metadata))

        def _load_interned(self, *, locked: bool) -> None:
            """Read :data:`METADATA_TABLE` (a row per distinct run settings)."""
            query = f"SELECT digest, value FROM {METADATA_TABLE}"
            try:
                if locked:  # inside list(): its (not reentrant) lock is held
                    rows = self.conn.execute(query).fetchall()
                else:
                    with self.cursor(transaction=False) as cur:
                        rows = cur.execute(query).fetchall()
            except sqlite3.OperationalError as exc:
                if "no such table" not in str(exc):  # a locked or failing file: say so
                    raise
                return  # a file no saver of this version wrote: nothing is interned
            self._interned.update({str(d): str(v) for d, v in rows})

    return LeanSqliteSaver


@functools.cache
def postgres_saver_class() -> type[Any]:
    """LangGraph's ``PostgresSaver``, usable from async runs too (defined on first use)."""
    from langgraph.checkpoint.postgres import PostgresSaver

    from debategraph.checkpoints.threaded import ThreadedAsync

    class ThreadedPostgresSaver(ThreadedAsync, PostgresSaver):
        """LangGraph's ``PostgresSaver``, its async methods on a thread of its own."""

    return ThreadedPostgresSaver
