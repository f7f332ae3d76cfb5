"""Open a LangGraph checkpointer from a URL: a SQLite path or a ``postgresql://`` URL."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from debategraph.checkpoints.serde import serializer
from debategraph.checkpoints.threads import RUN_METADATA_KEY
from debategraph.errors import UsageError
from debategraph.redaction import MASK, mask_parameters, parameters

if TYPE_CHECKING:  # imported where used: the CLI's --help loads none of LangGraph
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.sqlite import SqliteSaver


DEFAULT_DB = "debates.sqlite"
#: How long a writer waits for another process's lock before failing (milliseconds).
BUSY_TIMEOUT_MS = 30_000
_SQLITE_MAGIC = b"SQLite format 3\x00"

T = TypeVar("T")


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
def _sqlite_saver_class() -> type[SqliteSaver]:
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


def is_postgres_url(url: str) -> bool:
    """Whether ``url`` names a Postgres database.

    Args:
        url: The ``--db`` value.

    Returns:
        True for ``postgres://`` and ``postgresql://`` URLs.
    """
    return url.startswith(("postgres://", "postgresql://"))


def sqlite_path(url: str | os.PathLike[str]) -> Path:
    """The file a SQLite ``--db`` value points to (``sqlite:///`` prefix allowed).

    Args:
        url: A path or ``sqlite:///path`` URL.

    Returns:
        The path.
    """
    text = os.fspath(url)
    if text.startswith("sqlite:///"):
        text = text[len("sqlite:///") :]
    return Path(text).expanduser()


def check_sqlite_file(path: Path, *, label: str = "--db", read_header: bool = True) -> None:
    """Refuse a path that cannot hold a SQLite file we write, before touching it.

    Reading the header opens and closes the file, and closing any descriptor of a file
    drops every POSIX lock this process holds on it, a SQLite connection's too: then
    another process, closing its last connection, takes the file for unused and deletes
    its write-ahead log under the open connection (stale reads, "disk I/O error"). So
    never read the header while this process has a connection to the file open.

    Args:
        path: The database file.
        label: How messages name it (``--db``, ``archive file``).
        read_header: Refuse a file that is not SQLite by its first bytes (only while no
            connection of this process has it open; without it, SQLite refuses such a
            file at its first statement).

    Raises:
        UsageError: If it is a directory, its folder is missing or read-only (SQLite
            writes its journal beside the file), the file is read-only, or not SQLite.
    """
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise UsageError(
            f"{label} {path} is a directory: give a file path such as {path / DEFAULT_DB}"
        )
    if not folder.is_dir():
        raise UsageError(f"{label} {path}: folder {folder} does not exist")
    if path.exists():
        if not os.access(path, os.R_OK):
            raise UsageError(f"{label} {path} is not readable by this user")
        if not os.access(path, os.W_OK):
            raise UsageError(f"{label} {path} is read-only: no write permission")
    if path.exists() and read_header:
        with path.open("rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
        if head and head != _SQLITE_MAGIC:
            raise UsageError(f"{label} {path} is not a SQLite database (refusing to touch it)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{label} {path}: folder {folder} is read-only")


def connect_sqlite(path: Path, *, read_header: bool = True) -> sqlite3.Connection:
    """Connect to a checkpoint file with WAL and a busy timeout, usable from worker threads.

    Args:
        path: The database file.
        read_header: Check the file's first bytes first (see :func:`check_sqlite_file`:
            not while this process has another connection to it open).

    Returns:
        The connection.

    Raises:
        UsageError: If SQLite cannot open or read the file.
    """
    check_sqlite_file(path, read_header=read_header)
    try:
        conn = sqlite3.connect(path, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000)
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"--db {path} cannot be opened as SQLite: {exc}") from exc
    return conn


@contextlib.contextmanager
def open_checkpointer(
    url: str | os.PathLike[str] = DEFAULT_DB,
) -> Iterator[BaseCheckpointSaver[str]]:
    """Open (and set up) the checkpointer a ``--db`` value names.

    Args:
        url: A SQLite file path (``sqlite:///`` prefix allowed) or a Postgres URL.

    Yields:
        The ready checkpointer; its connection is closed on exit.

    Raises:
        UsageError: If the database cannot be opened.
    """
    with open_database(
        url, _postgres_saver_class, lambda conn: _sqlite_saver_class()(conn)
    ) as saver:
        saver.serde = serializer()
        yield saver


@contextlib.contextmanager
def open_database(
    db: str | os.PathLike[str],
    postgres: Callable[[], type[Any]],
    sqlite: Callable[[sqlite3.Connection], T],
    *,
    read_header: bool = True,
) -> Iterator[T]:
    """Open a ``--db`` value for a LangGraph saver or store: a Postgres URL or a SQLite file.

    Args:
        db: A SQLite file path (``sqlite:///`` prefix allowed) or a Postgres URL.
        postgres: Returns the Postgres class (see :func:`open_postgres`).
        sqlite: Makes the SQLite one on a connection (see :func:`open_sqlite`).
        read_header: For SQLite: check the file's header first (see :func:`open_sqlite`).

    Yields:
        The saver or store, set up; closed on exit.
    """
    text = os.fspath(db)
    if is_postgres_url(text):
        with open_postgres(text, postgres) as made:
            yield made
    else:
        with open_sqlite(text, sqlite, read_header=read_header) as made:
            yield made


@contextlib.contextmanager
def open_sqlite(
    url: str, make: Callable[[sqlite3.Connection], T], *, read_header: bool = True
) -> Iterator[T]:
    """Open a SQLite ``--db`` file for a LangGraph saver or store, and set that up.

    Args:
        url: The ``--db`` value.
        make: Builds the saver or store on the connection (see :func:`connect_sqlite`).
        read_header: As for :func:`connect_sqlite`.

    Yields:
        What ``make`` built, set up; its worker thread (if any) and its connection are
        closed on exit.

    Raises:
        UsageError: If the file cannot be opened or is not a usable database.
    """
    from debategraph.checkpoints.threaded import close_thread

    conn = connect_sqlite(sqlite_path(url), read_header=read_header)
    try:
        made = make(conn)
        try:
            made.setup()  # type: ignore[attr-defined]
        except sqlite3.DatabaseError as exc:
            raise UsageError(f"--db {url} is not a usable checkpoint database: {exc}") from exc
        try:
            yield made
        finally:
            close_thread(made)
    finally:
        conn.close()


@contextlib.contextmanager
def open_postgres(url: str, cls: Callable[[], type[Any]]) -> Iterator[Any]:
    """Open a Postgres ``--db`` URL for a LangGraph saver or store, and set that up.

    Args:
        url: The ``--db`` value.
        cls: Returns the saver or store class (one with ``from_conn_string``); it
            imports the optional ``langgraph-checkpoint-postgres``.

    Yields:
        The instance, set up; its worker thread (if any) and its connection are closed
        on exit.

    Raises:
        UsageError: If the optional dependency is missing or the server is unreachable.
    """
    try:
        import psycopg

        factory = cls()
    except ImportError:
        raise UsageError('Postgres checkpoints need: pip install "debategraph[postgres]"') from None
    from debategraph.checkpoints.threaded import close_thread

    try:
        cm = factory.from_conn_string(url)
        made = cm.__enter__()
    except psycopg.OperationalError as exc:
        raise UsageError(
            f"--db {redact_url(url)}: cannot connect: {' '.join(str(exc).split())}"
        ) from exc
    try:
        made.setup()
        yield made
    finally:
        close_thread(made)
        cm.__exit__(None, None, None)


@functools.cache
def _postgres_saver_class() -> type[Any]:
    """LangGraph's ``PostgresSaver``, usable from async runs too (defined on first use)."""
    from langgraph.checkpoint.postgres import PostgresSaver

    from debategraph.checkpoints.threaded import ThreadedAsync

    class ThreadedPostgresSaver(ThreadedAsync, PostgresSaver):
        """LangGraph's ``PostgresSaver``, its async methods on a thread of its own."""

    return ThreadedPostgresSaver


#: A URL's user and password: up to the last ``@`` before any ``/`` (libpq stops at the
#: first, so a password holding a bare ``@`` does not sign in, but is hidden whole).
_USERINFO = re.compile(r"^(?P<head>[A-Za-z][\w+.-]*://[^:@/]*)(?::(?P<password>[^/]*))?@")
#: Characters a password keeps as they are in ``user:password@`` and in ``?password=``
#: (libpq, SQLAlchemy and asyncpg read them back alike): the fewer ``%`` escapes the
#: better, since Aegra hands its URL to alembic, which cannot read one.
_USERINFO_SAFE = "!$&'()*+,;=:"
_QUERY_SAFE = "!$'()*,;:"


def _secret(name: str) -> bool:
    """Whether a connection parameter holds a secret (``password``, ``sslpassword``)."""
    return name.endswith("password")


def url_secrets(url: str) -> list[str]:
    """The parameters of a database URL that hold a password, in the URL's order.

    A URL's ``user:password@`` is ``password``; so is a query parameter (or a
    ``key=value`` connection string's) whose name ends in ``password``: libpq's
    ``password`` and ``sslpassword``, any case. Empty values hold none.

    Args:
        url: A ``--db`` value.

    Returns:
        Their names, lower case, e.g. ``["password", "sslpassword"]``; ``[]`` for none.
    """
    userinfo = _USERINFO.match(url)
    found = ["password"] if userinfo is not None and userinfo.group("password") else []
    return found + [name for name, value in parameters(url) if _secret(name) and value.strip("'")]


def redact_url(url: str) -> str:
    """Hide every password in a database URL (for messages).

    Args:
        url: A ``--db`` value: a URL, or a ``key=value`` connection string.

    Returns:
        ``url`` with the password of its ``user:password@`` and the value of each
        ``password=`` / ``sslpassword=`` parameter (any case) shown as ``***``.
    """
    url = _USERINFO.sub(
        lambda m: m[0] if m.group("password") is None else f"{m.group('head')}:{MASK}@", url
    )
    return mask_parameters(url, _secret)


def with_password(url: str, password: str) -> str:
    """A Postgres URL that signs in with ``password`` (the URL has none of its own).

    It goes in the URL's ``user:password@`` when the URL names a user there, else in a
    ``password=`` parameter; libpq (psycopg), SQLAlchemy and asyncpg all read it back.

    Args:
        url: A ``postgresql://`` URL without a password.
        password: The password.

    Returns:
        The URL with it.
    """
    from urllib.parse import quote

    userinfo = _USERINFO.match(url)
    if userinfo is not None and userinfo.group("password") is None:
        head = userinfo.group("head")
        return f"{head}:{quote(password, safe=_USERINFO_SAFE)}{url[len(head) :]}"
    base, hash_, fragment = url.partition("#")
    joiner = "&" if "?" in base else "?"
    return f"{base}{joiner}password={quote(password, safe=_QUERY_SAFE)}{hash_}{fragment}"
