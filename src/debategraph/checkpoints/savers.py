"""Open a LangGraph checkpointer from a URL: a SQLite path or a ``postgresql://`` URL."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from debategraph.errors import UsageError

if TYPE_CHECKING:  # imported where used: the CLI's --help loads none of LangGraph
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

DEFAULT_DB = "debates.sqlite"
#: How long a writer waits for another process's lock before failing (milliseconds).
BUSY_TIMEOUT_MS = 30_000
_SQLITE_MAGIC = b"SQLite format 3\x00"


def serializer() -> JsonPlusSerializer:
    """Checkpoint serializer that deserializes only LangGraph's safe types and our records.

    Returns:
        The serializer.
    """
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from debategraph.state import RECORD_TYPES

    return JsonPlusSerializer(
        allowed_msgpack_modules=[(t.__module__, t.__name__) for t in RECORD_TYPES]
    )


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


def check_sqlite_file(path: Path, *, label: str = "--db") -> None:
    """Refuse a path that cannot hold a SQLite file we write, before touching it.

    Args:
        path: The database file.
        label: How messages name it (``--db``, ``archive file``).

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
        with path.open("rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
        if head and head != _SQLITE_MAGIC:
            raise UsageError(f"{label} {path} is not a SQLite database (refusing to touch it)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{label} {path}: folder {folder} is read-only")


def connect_sqlite(path: Path) -> sqlite3.Connection:
    """Connect to a checkpoint file with WAL and a busy timeout, usable from worker threads.

    Args:
        path: The database file.

    Returns:
        The connection.

    Raises:
        UsageError: If SQLite cannot open or read the file.
    """
    check_sqlite_file(path)
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
    text = os.fspath(url)
    if is_postgres_url(text):
        with _open_postgres(text) as saver:
            yield saver
        return
    conn = connect_sqlite(sqlite_path(text))
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver

        saver = SqliteSaver(conn, serde=serializer())
        try:
            saver.setup()
        except sqlite3.DatabaseError as exc:
            raise UsageError(f"--db {text} is not a usable checkpoint database: {exc}") from exc
        yield saver
    finally:
        conn.close()


@contextlib.contextmanager
def _open_postgres(url: str) -> Iterator[BaseCheckpointSaver[str]]:
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
    except ImportError:
        raise UsageError('Postgres checkpoints need: pip install "debategraph[postgres]"') from None
    try:
        cm = PostgresSaver.from_conn_string(url)
        saver = cm.__enter__()
        saver.serde = serializer()
    except psycopg.OperationalError as exc:
        raise UsageError(
            f"--db {_redact(url)}: cannot connect: {' '.join(str(exc).split())}"
        ) from exc
    try:
        saver.setup()
        yield saver
    finally:
        cm.__exit__(None, None, None)


def _redact(url: str) -> str:
    """Hide a password in a database URL."""
    head, sep, tail = url.partition("@")
    if not sep or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, creds = head.partition("//")
    user = creds.split(":", 1)[0]
    return f"{scheme}//{user}:***@{tail}"
