"""Open a LangGraph checkpointer from a ``--db`` value: a SQLite path or a ``postgresql://`` URL.

What a ``--db`` value names (:func:`is_postgres_url`, :func:`sqlite_path`), the checks
on a SQLite file before it is touched (:func:`check_sqlite_file`), opening it for a saver
or a store (:func:`open_database`, :func:`open_checkpointer`), and its text in messages
and hand-overs (:func:`redact_url`, :func:`url_secrets`, :func:`with_password`). The
saver classes it opens are :mod:`debategraph.checkpoints.backends`'.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from debategraph.checkpoints.backends import postgres_saver_class, sqlite_saver_class
from debategraph.checkpoints.serde import serializer
from debategraph.errors import UsageError
from debategraph.redaction import MASK, mask_parameters, parameters

if TYPE_CHECKING:  # imported where used: the CLI's --help loads none of LangGraph
    from langgraph.checkpoint.base import BaseCheckpointSaver


DEFAULT_DB = "debates.sqlite"
#: How long a writer waits for another process's lock before failing (milliseconds).
BUSY_TIMEOUT_MS = 30_000
_SQLITE_MAGIC = b"SQLite format 3\x00"

T = TypeVar("T")


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
    with open_database(url, postgres_saver_class, lambda conn: sqlite_saver_class()(conn)) as saver:
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
def setting_up(path: Path) -> Iterator[None]:
    """Hold the file's setup lock: one process at a time connects to it and makes its tables.

    LangGraph's savers and stores read which migrations a file has, then run the rest
    and record each, and a new file's first connection turns WAL on: two processes
    opening a new file at once (``solve`` twice on one ``--db``) would both run the first
    migration, one failing on recording it (``UNIQUE constraint failed:
    store_migrations.v``, ``duplicate column name``), or find the file locked. The lock is
    ``flock`` on a file of its own in the temporary folder, named by the database's path:
    a descriptor of the database itself, once closed, would drop this process's SQLite
    locks on it (see :func:`check_sqlite_file`). Where there is no ``flock`` (Windows) or
    no lock file can be made, setup runs unlocked.

    Args:
        path: The SQLite file.

    Yields:
        Nothing; the lock is held until the block ends.
    """
    try:
        import fcntl
    except ImportError:  # no flock here
        yield
        return
    name = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]
    folder = Path(tempfile.gettempdir()) / "debategraph-setup"
    try:
        folder.mkdir(mode=0o1777, exist_ok=True)
        handle = open(folder / f"{name}.lock", "a")  # noqa: SIM115 (held across the yield)
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


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

    path = sqlite_path(url)
    with setting_up(path):
        conn = connect_sqlite(path, read_header=read_header)
        ready = False
        try:
            made = make(conn)
            made.setup()  # type: ignore[attr-defined]
            ready = True
        except sqlite3.DatabaseError as exc:
            raise UsageError(f"--db {url} is not a usable checkpoint database: {exc}") from exc
        finally:
            if not ready:
                conn.close()
    try:
        yield made
    finally:
        close_thread(made)
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
