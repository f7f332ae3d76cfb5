"""What ``debategraph serve`` checks before the server starts, and the config it serves.

The server is Aegra (``aegra-api``, Apache-2.0): an Agent Protocol server for LangGraph
graphs on PostgreSQL. Its config is an ``aegra.json`` generated from the registry
(:func:`debategraph.registry.aegra_json`) with the installed ``graphs/studio.py``'s path,
or the user's own ``aegra.json`` / ``langgraph.json`` once every graph it names is one of
debategraph's. Aegra 0.6.0 reads a graph only as a ``"path:variable"`` string, so a
``langgraph.json``'s ``{"path", "description"}`` objects are rewritten to that form.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from debategraph import registry
from debategraph.checkpoints.savers import is_postgres_url, redact_url
from debategraph.errors import UsageError

#: Keys of a user's config served as they are (Aegra's auth and store settings).
KEPT_KEYS = ("auth", "store")
#: Seconds to wait for PostgreSQL to answer at start.
CONNECT_TIMEOUT_S = 5


def studio_module() -> str:
    """The installed file that compiles the served graphs (``graphs/studio.py``)."""
    import debategraph.graphs

    return str(Path(debategraph.graphs.__file__).resolve().with_name("studio.py"))


def served_graphs(config: Mapping[str, Any], source: str) -> list[str]:
    """The graph ids a user's ``aegra.json`` / ``langgraph.json`` names, all debategraph's.

    Args:
        config: The parsed file.
        source: Its name, for messages.

    Returns:
        The ids, in the file's order.

    Raises:
        UsageError: One line if it names no graph, or a graph the registry does not have.
    """
    graphs = config.get("graphs")
    if not isinstance(graphs, Mapping) or not graphs:
        raise UsageError(f"{source} names no graphs: give a 'graphs' object (see aegra.json)")
    known = registry.names()
    for graph_id in graphs:
        if graph_id not in known:
            raise UsageError(
                f"{source} names graph {graph_id!r}, which debategraph does not have: "
                f"its graphs are {', '.join(known)}"
            )
    return list(graphs)


def read_config(path: Path) -> dict[str, Any]:
    """A user's ``aegra.json`` / ``langgraph.json``, parsed.

    Args:
        path: The file.

    Returns:
        Its JSON object.

    Raises:
        UsageError: One line if it cannot be read or is not a JSON object.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"--config {path}: cannot read: {exc.strerror}") from None
    except ValueError as exc:
        raise UsageError(f"--config {path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise UsageError(f"--config {path}: must be a JSON object with 'graphs'")
    return data


def serve_config(user: Mapping[str, Any] | None = None, source: str = "config") -> dict[str, Any]:
    """The ``aegra.json`` to serve: every registry graph, or the ones ``user`` names.

    Args:
        user: A user's config (its graphs are checked; ``auth`` and ``store`` are kept).
        source: Its name, for messages.

    Returns:
        The config, with the installed ``graphs/studio.py``'s absolute path.

    Raises:
        UsageError: If ``user`` names a graph the registry does not have.
    """
    config = registry.aegra_json(studio_module())
    if user is not None:
        wanted = served_graphs(user, source)
        config["graphs"] = {g: f"{studio_module()}:{g}" for g in wanted}
        config.update({key: user[key] for key in KEPT_KEYS if key in user})
    return config


def check_database(url: str) -> None:
    """Refuse a database URL that is not PostgreSQL or does not answer.

    Args:
        url: ``postgresql://user:password@host:port/db``.

    Raises:
        UsageError: One line naming the database (password hidden) and why.
    """
    if not is_postgres_url(url):
        raise UsageError(
            f"--db {redact_url(url)!r} is not a PostgreSQL URL: the server keeps its threads "
            "in PostgreSQL (postgresql://user:password@host:port/database)"
        )
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UsageError(f"database {redact_url(url)} is unreachable: {reason}") from None
