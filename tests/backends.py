"""The checkpoint backends a test runs against: ``checkpoint_url`` and ``saver`` fixtures.

``checkpoint_url`` yields a fresh ``--db`` value per test, once per backend:

* ``sqlite``: a path to a new SQLite file in the test's tmp folder;
* ``postgres``: a URL to a database created for the test (and dropped after it) on the
  server named by ``DEBATEGRAPH_TEST_POSTGRES_URL``, whose role may create databases
  (``.ci/postgres.sh`` starts one and prints the variable).

Without ``DEBATEGRAPH_TEST_POSTGRES_URL`` the postgres case is skipped, unless ``CI`` is
set: CI must run both, so there it fails. Use it with ``from tests.backends import
checkpoint_url`` in a conftest or test module.
"""

from __future__ import annotations

import os
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver

POSTGRES_URL_ENV = "DEBATEGRAPH_TEST_POSTGRES_URL"
BACKENDS = ["sqlite", "postgres"]


def postgres_admin_url() -> str | None:
    """The server URL the postgres tests use, or ``None`` (skip; fail on CI)."""
    url = os.environ.get(POSTGRES_URL_ENV, "").strip()
    if url:
        return url
    if os.environ.get("CI"):
        pytest.fail(
            f"{POSTGRES_URL_ENV} is not set but CI is: CI must run the Postgres tests too"
            ' (eval "$(bash .ci/postgres.sh | tail -1)" first)',
            pytrace=False,
        )
    return None


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
    admin = postgres_admin_url()
    if admin is None:
        pytest.skip(f"{POSTGRES_URL_ENV} is not set (run .ci/postgres.sh)")
    import psycopg
    from psycopg import sql

    name = f"debategraph_test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield with_database(admin, name)
    finally:
        drop_database(admin, name)


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
