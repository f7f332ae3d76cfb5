"""The checkpoint backends a test runs against: ``checkpoint_url`` and ``saver`` fixtures.

``checkpoint_url`` yields a fresh ``--db`` value per test, once per backend:

* ``sqlite``: a path to a new SQLite file in the test's tmp folder;
* ``postgres``: a URL to a database created for the test (and dropped after it) on the
  server named by ``DEBATEGRAPH_TEST_POSTGRES_URL``, whose role may create databases
  (``.ci/postgres.sh`` starts one and prints the variable).

Without ``DEBATEGRAPH_TEST_POSTGRES_URL`` the postgres case is skipped, unless the real
parts are required (:func:`real_parts_required`: ``.ci/run`` exports
``DEBATEGRAPH_REQUIRE_REAL_PARTS=1``): then it fails. The embedded model's and the Studio
server's tests decide the same way, through :func:`missing_part`. Use the fixtures with
``from tests.backends import checkpoint_url`` in a conftest or test module.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit, urlunsplit

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver

POSTGRES_URL_ENV = "DEBATEGRAPH_TEST_POSTGRES_URL"
#: Set (to a true value) by ``.ci/run``: PostgreSQL, the embedded model and the Studio
#: server must be there, so a test that needs a missing one fails instead of skipping.
REQUIRE_ENV = "DEBATEGRAPH_REQUIRE_REAL_PARTS"
BACKENDS = ["sqlite", "postgres"]
TRUE_WORDS = frozenset({"1", "true", "yes"})


def env_flag(name: str) -> bool:
    """Whether environment variable ``name`` is ``1``, ``true`` or ``yes`` (any case).

    ``CI=false``, ``CI=0`` and ``CI=`` are off, as is any other value.
    """
    return os.environ.get(name, "").strip().lower() in TRUE_WORDS


def real_parts_required() -> bool:
    """Whether a missing real part (PostgreSQL, embedded model, Studio) fails the test.

    On with ``DEBATEGRAPH_REQUIRE_REAL_PARTS`` (``.ci/run`` exports it) or a true ``CI``.
    """
    return env_flag(REQUIRE_ENV) or env_flag("CI")


def missing_part(why: str, fix: str) -> NoReturn:
    """Skip the test for a missing real part, or fail it where the parts are required.

    Args:
        why: What is missing, e.g. ``xllamacpp is not importable``.
        fix: How to get it, e.g. ``pip install -e '.[local]'``.

    Raises:
        pytest.fail.Exception: Where :func:`real_parts_required`.
        pytest.skip.Exception: Elsewhere.
    """
    if real_parts_required():
        switch = f"{REQUIRE_ENV}=1" if env_flag(REQUIRE_ENV) else f"CI={os.environ['CI']}"
        pytest.fail(f"{why}, but {switch}: the real parts must run here ({fix})", pytrace=False)
    pytest.skip(f"{why} ({fix})", allow_module_level=True)


def require_module(module: str, fix: str) -> None:
    """Go on if ``module`` is importable; else :func:`missing_part`.

    Args:
        module: The module a real part needs, e.g. ``xllamacpp``.
        fix: How to install it.
    """
    if importlib.util.find_spec(module) is None:
        missing_part(f"{module} is not importable", fix)


def postgres_admin_url() -> str:
    """The server URL the postgres tests use (skip without one; fail where required)."""
    url = os.environ.get(POSTGRES_URL_ENV, "").strip()
    if not url:
        missing_part(
            f"{POSTGRES_URL_ENV} is not set",
            'eval "$(bash .ci/postgres.sh | tail -1)" starts a server and sets it',
        )
    return url


def with_database(url: str, database: str) -> str:
    """``url`` pointing at another database on the same server.

    Args:
        url: A ``postgresql://`` URL.
        database: The database name.

    Returns:
        The URL with its path replaced.
    """
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{database}"))


@pytest.fixture(params=BACKENDS)
def checkpoint_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty checkpoint store per test: a SQLite path or a Postgres URL."""
    if request.param == "sqlite":
        yield str(tmp_path / "checkpoints.sqlite")
        return
    with fresh_database() as url:
        yield url


@contextlib.contextmanager
def fresh_database(prefix: str = "debategraph_test") -> Iterator[str]:
    """An empty database on the test PostgreSQL server, dropped afterwards.

    Args:
        prefix: The start of its name (a random suffix follows).

    Yields:
        Its URL.
    """
    admin = postgres_admin_url()
    import psycopg
    from psycopg import sql

    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield with_database(admin, name)
    finally:
        drop_database(admin, name)


@contextlib.contextmanager
def fresh_database_as(prefix: str) -> Iterator[tuple[str, str]]:
    """A fresh database owned by a role of its own, with a password no other text holds.

    The test server's role has ``CREATEROLE`` (``.ci/postgres.sh``); the new role makes
    the database, so it owns it (Aegra creates its tables there). Both are dropped after.

    Args:
        prefix: The start of the database's and the role's names.

    Yields:
        ``(url, password)``: the URL signs in as the new role.
    """
    admin = postgres_admin_url()
    import psycopg
    from psycopg import sql

    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    password = f"pw-{uuid.uuid4().hex}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN CREATEDB PASSWORD {}").format(
                sql.Identifier(name), sql.Literal(password)
            )
        )
    parts = urlsplit(admin)
    netloc = f"{name}:{password}@{parts.hostname}:{parts.port or 5432}"
    own = urlunsplit(parts._replace(netloc=netloc))
    try:
        with psycopg.connect(own, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        yield with_database(own, name), password
    finally:
        drop_database(own, name)
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))


#: Columns that hold a serialized blob beside a ``type`` column: Postgres' ``blob``
#: (``checkpoint_blobs``, ``checkpoint_writes``), SQLite's ``checkpoint`` and ``value``.
BLOB_COLUMNS = ("blob", "checkpoint", "value")
SQLITE_HEADER = b"SQLite format 3\x00"


def decoded_dump(where: str | os.PathLike[str]) -> str:
    """Every row of every table of a database as text, checkpoints decoded.

    The one way a test searches what was stored (for a key that must not be there): a
    PostgreSQL URL (checkpoints, the store, Aegra's run records) or a file. A SQLite file
    (checkpoints, the inbox store, an archive) is read table by table; any other file
    (an export, a report, a SQLite ``-wal``) as its text. A ``(type, blob)`` pair
    (LangGraph's checkpoint blobs and pending writes) is read with debategraph's
    serializer (which reads LangGraph's plain ``msgpack`` and its own compressed
    ``msgpack+z1``); any other bytes are read as UTF-8. So a secret in a checkpoint is
    found whether or not it was stored compressed.

    Args:
        where: A ``postgresql://`` URL, or a path (``sqlite:///`` prefix allowed).

    Returns:
        One line per row: ``table: {column: value, ...}`` (a file that is not SQLite:
        its text).
    """
    from debategraph.checkpoints.savers import sqlite_path

    text = str(where)
    if text.startswith(("postgres://", "postgresql://")):
        rows = _postgres_rows(text)
    else:
        path = sqlite_path(text)
        data = path.read_bytes()
        if not data.startswith(SQLITE_HEADER):
            return data.decode("utf-8", "replace")
        rows = _sqlite_rows(path)
    from debategraph.checkpoints.serde import serializer

    serde = serializer()
    return "\n".join(f"{table}: {_decoded(values, serde)!r}" for table, values in rows)


def _decoded(values: dict[str, Any], serde: Any) -> dict[str, Any]:
    """A row with its serialized blob loaded (by ``serde``) and other bytes read as UTF-8."""
    kind = values.get("type")
    for column in BLOB_COLUMNS:
        blob = values.get(column)
        if isinstance(kind, str) and isinstance(blob, bytes | memoryview):
            values[column] = serde.loads_typed((kind, bytes(blob)))
    for column, value in values.items():
        if isinstance(value, bytes | memoryview):
            values[column] = bytes(value).decode("utf-8", "replace")
    return values


def _postgres_rows(url: str) -> list[tuple[str, dict[str, Any]]]:
    """Every row of every table of a PostgreSQL database, as ``(table, row)``."""
    import psycopg
    from psycopg.rows import dict_row

    rows = []
    with psycopg.connect(url, row_factory=dict_row) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') "
            "AND table_type = 'BASE TABLE'"
        ).fetchall()
        for table in tables:
            query = 'SELECT * FROM "{}"."{}"'.format(table["table_schema"], table["table_name"])
            rows += [(str(table["table_name"]), dict(row)) for row in conn.execute(query)]
    return rows


def _sqlite_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every row of every table of a SQLite file (its ``-wal`` read too), as ``(table, row)``."""
    import sqlite3

    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        names = [
            str(name)
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        return [
            (name, dict(row)) for name in names for row in conn.execute(f'SELECT * FROM "{name}"')
        ]
    finally:
        conn.close()


def drop_database(admin: str, name: str, attempts: int = 5) -> None:
    """Drop a test database, retrying while another session (autovacuum) holds it.

    Args:
        admin: The server URL.
        name: The database.
        attempts: Tries before giving up with a warning (a leftover test database on a
            throwaway server is harmless; failing the test for it is not).
    """
    import psycopg
    from psycopg import sql

    drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
    for attempt in range(attempts):
        try:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(drop)
            return
        except (psycopg.errors.ObjectInUse, psycopg.errors.InsufficientPrivilege) as exc:
            if attempt == attempts - 1:
                warnings.warn(f"could not drop test database {name}: {exc}", stacklevel=2)
            time.sleep(0.2 * (attempt + 1))


def saved_tasks(url: str, thread_id: str) -> int:
    """How many tasks of a thread's next step have saved their writes so far.

    Args:
        url: The thread's ``--db`` (a SQLite path or a Postgres URL).
        thread_id: The thread.

    Returns:
        The number of distinct tasks with pending writes on its latest checkpoint.
    """
    from debategraph.checkpoints import open_checkpointer, thread_config

    with open_checkpointer(url) as store:
        found = store.get_tuple(thread_config(thread_id))
    return len({task_id for task_id, _, _ in found.pending_writes or []}) if found else 0


def wait_for_saved_tasks(url: str, thread_id: str, count: int, timeout: float = 60.0) -> bool:
    """Wait until ``count`` tasks of the thread's running step are saved (no fixed sleep).

    A stub responder that must fail one call only after the step's other calls finished
    and were checkpointed waits on this instead of sleeping and hoping.

    Args:
        url: The thread's ``--db``.
        thread_id: The thread.
        count: Tasks whose writes must be saved.
        timeout: Seconds to wait at most (generous: a loaded machine is slow).

    Returns:
        Whether they were saved in time.
    """
    deadline = time.monotonic() + timeout
    while saved_tasks(url, thread_id) < count:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture(params=["memory", "sqlite"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCheckpointSaver[Any]]:
    """A graph's checkpointer, once in memory and once on a SQLite file (the package's)."""
    from langgraph.checkpoint.memory import InMemorySaver

    from debategraph.checkpoints.savers import open_checkpointer
    from debategraph.checkpoints.serde import serializer

    if request.param == "memory":
        yield InMemorySaver(serde=serializer())
    else:
        with open_checkpointer(tmp_path / "graph.sqlite") as sqlite_saver:
            yield sqlite_saver


@pytest.fixture
def serde_events() -> Iterator[list[dict[str, Any]]]:
    """What LangGraph's serializers report while the test runs: each type they revived
    without an allowlist naming it (``msgpack_unregistered_allowed``, the warning), or
    blocked (``msgpack_blocked``, strict msgpack). Its public event hook, which unlike the
    warning (logged once per type and process) reports every time."""
    from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener

    events: list[dict[str, Any]] = []
    unregister = register_serde_event_listener(lambda event: events.append(dict(event)))
    try:
        yield events
    finally:
        unregister()


@pytest.fixture
def strict_msgpack(monkeypatch: pytest.MonkeyPatch) -> None:
    """``LANGGRAPH_STRICT_MSGPACK=true`` for the test, as if set before LangGraph loaded.

    LangGraph reads the variable once, when it is imported, into two flags: one makes a
    serializer built without an allowlist revive only its safe types, the other makes
    ``compile`` derive an allowlist from the graph's schemas. Both are set here (a test
    may name LangGraph's private modules; ``src/`` may not), and the serializer a saver
    gets by default (made when LangGraph loaded) is made again under them, so savers built
    after this fixture are strict; a test that relies on it checks that they are.
    """
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    monkeypatch.setattr("langgraph.checkpoint.serde._msgpack.STRICT_MSGPACK_ENABLED", True)
    monkeypatch.setattr("langgraph._internal._serde.STRICT_MSGPACK_ENABLED", True)
    monkeypatch.setattr(BaseCheckpointSaver, "serde", JsonPlusSerializer())
