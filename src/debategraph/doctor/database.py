"""The ``checkpoint db`` check: can the ``--db`` value hold checkpoints.

An existing SQLite file is opened as the commands open it; for a file that does not
exist yet, a checkpoint file is written and removed in a temporary folder beside it (the
user's file is never created). A Postgres URL is connected to.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from debategraph.checkpoints import (
    check_sqlite_file,
    is_postgres_url,
    open_checkpointer,
    sqlite_path,
)
from debategraph.doctor.common import Check, _size
from debategraph.errors import DebategraphError, UsageError
from debategraph.words import one_line


def check_database(db: str) -> Check:
    """Whether ``db`` can hold checkpoints, leaving nothing behind.

    Args:
        db: A SQLite file path (``sqlite:///`` prefix allowed) or a Postgres URL.

    Returns:
        The check.
    """
    if is_postgres_url(db):
        return _check_postgres(db)
    path = sqlite_path(db)
    try:
        check_sqlite_file(path)  # refuses a folder, a read-only or non-SQLite file untouched
        if path.exists():
            return _check_sqlite_file(db, path)
        return _check_sqlite_folder(path)
    except (DebategraphError, OSError, sqlite3.Error) as exc:
        return Check("checkpoint db", False, one_line(str(exc)))


def _check_sqlite_file(db: str, path: Path) -> Check:
    """Open an existing SQLite file as the commands do, and take (then drop) a write lock."""
    with open_checkpointer(db) as saver:
        conn = getattr(saver, "conn", None)
        if isinstance(conn, sqlite3.Connection):
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise UsageError(f"--db {path} cannot be written: {exc}") from exc
            conn.rollback()
    return Check("checkpoint db", True, f"{path}: SQLite, writable ({_size(path.stat().st_size)})")


def _check_sqlite_folder(path: Path) -> Check:
    """Write and remove a checkpoint file in a temporary folder beside ``path``."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        with tempfile.TemporaryDirectory(prefix=".debategraph-doctor-", dir=folder) as tmp:
            try:
                with open_checkpointer(Path(tmp) / "probe.sqlite"):
                    pass
            except UsageError as exc:
                why = exc.__cause__ or exc
                raise UsageError(
                    f"--db {path}: SQLite cannot write in folder {folder}: {why}"
                ) from exc
    except OSError as exc:
        raise UsageError(
            f"--db {path}: folder {folder} is not writable ({exc.strerror or exc})"
        ) from exc
    return Check(
        "checkpoint db",
        True,
        f"{path} does not exist yet; folder {folder.resolve()} is writable "
        "(the file is created by the first run)",
    )


def _check_postgres(db: str) -> Check:
    """Connect to a Postgres URL (and set up the checkpoint tables, as a run would)."""
    where = urlsplit(db)
    label = f"Postgres {where.hostname or 'localhost'}{where.path}"
    errors: tuple[type[Exception], ...] = (DebategraphError, OSError, *_postgres_errors())
    try:
        with open_checkpointer(db):
            pass
    except errors as exc:
        return Check("checkpoint db", False, one_line(str(exc)))
    return Check("checkpoint db", True, f"{label}: connected, checkpoint tables ready")


def _postgres_errors() -> tuple[type[Exception], ...]:
    try:
        import psycopg
    except ImportError:
        return ()
    return (psycopg.Error,)
