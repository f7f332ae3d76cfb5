"""What ``debategraph serve`` checks before the server starts, and the config it serves.

The server is Aegra (``aegra-api``, Apache-2.0): an Agent Protocol server for LangGraph
graphs on PostgreSQL. Its config is an ``aegra.json`` generated from the registry
(:func:`debategraph.registry.aegra_json`) with the installed ``graphs/studio.py``'s path,
or the user's own ``aegra.json`` / ``langgraph.json`` once every graph it names is one of
debategraph's. Aegra 0.6.0 reads a graph only as a ``"path:variable"`` string, so a
``langgraph.json``'s ``{"path", "description"}`` objects are rewritten to that form.

From the user's file the served config keeps ``auth`` (a relative ``auth.path`` resolved
against the file's folder, not the temporary one the served config lies in), ``store``
and ``http.cors``; the server's own ``http.app`` stays. CORS allows no other origin
unless the user's file or ``serve --cors-origin`` names some.
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
#: CORS when nobody names an origin: none but the server's own.
NO_CROSS_ORIGIN: dict[str, Any] = {"allow_origins": []}
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


def serve_config(
    user: Mapping[str, Any] | None = None,
    source: str = "config",
    cors_origins: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The ``aegra.json`` to serve: every registry graph, or the ones ``user`` names.

    Args:
        user: A user's config (its graphs are checked; ``auth``, ``store`` and
            ``http.cors`` are kept, a relative ``auth.path`` resolved against ``source``'s
            folder).
        source: Its file, for messages and relative paths.
        cors_origins: Origins a browser may call the server from (before the file's).

    Returns:
        The config, with the installed ``graphs/studio.py``'s absolute path.

    Raises:
        UsageError: If ``user`` names a graph the registry does not have, or its
            ``auth`` or ``http.cors`` is not what Aegra reads.
    """
    config = registry.aegra_json(studio_module())
    cors: Any = None
    if user is not None:
        wanted = served_graphs(user, source)
        config["graphs"] = {g: f"{studio_module()}:{g}" for g in wanted}
        config.update({key: user[key] for key in KEPT_KEYS if key in user})
        if "auth" in config:
            config["auth"] = {**config["auth"], "path": auth_path(config["auth"], source)}
        http = user.get("http")
        cors = http.get("cors") if isinstance(http, Mapping) else None
        if cors is not None and not isinstance(cors, Mapping):
            raise UsageError(f"{source}: http.cors must be an object (allow_origins, ...)")
    if cors_origins:
        cors = {**(cors or {}), "allow_origins": list(cors_origins)}
    config["http"] = {**config["http"], "cors": dict(cors or NO_CROSS_ORIGIN)}
    return config


def auth_path(auth: Any, source: str) -> str:
    """A config's ``auth.path``, a relative file resolved against the config's folder.

    Args:
        auth: The config's ``auth`` object.
        source: The config's file.

    Returns:
        ``/absolute/file.py:variable`` or ``module:variable``.

    Raises:
        UsageError: If it has no ``path`` of the form ``FILE.py:VARIABLE`` or
            ``MODULE:VARIABLE``.
    """
    path = auth.get("path") if isinstance(auth, Mapping) else None
    if not isinstance(path, str) or ":" not in path:
        raise UsageError(
            f"{source}: auth.path {path!r} must be './FILE.py:VARIABLE' or 'MODULE:VARIABLE'"
        )
    module, _, variable = path.rpartition(":")
    if module.endswith(".py") or module.startswith(("./", "../", "/")):
        module = str((Path(source).resolve().parent / module).resolve())
    return f"{module}:{variable}"


def check_auth(path: str) -> None:
    """Refuse to start on an auth handler that cannot be loaded (Aegra would run open).

    Args:
        path: ``/absolute/file.py:variable`` or ``module:variable``.

    Raises:
        UsageError: One line naming the handler and why it cannot be used.
    """
    import importlib
    import importlib.util

    from langgraph_sdk import Auth

    module_path, _, variable = path.rpartition(":")
    try:
        if module_path.endswith(".py") or Path(module_path).is_absolute():
            spec = importlib.util.spec_from_file_location("debategraph_auth_check", module_path)
            if spec is None or spec.loader is None or not Path(module_path).is_file():
                raise UsageError(f"auth handler {path}: no such file")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_path)
    except (UsageError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - a user's module may raise anything at all
        # (any Exception, SystemExit, a BaseException of its own): every one of them means
        # the handler cannot be used, said in one line; only Ctrl-C goes on as Ctrl-C.
        reason = (str(exc).strip().splitlines() or [""])[0]
        raise UsageError(
            f"auth handler {path} cannot be loaded: {type(exc).__name__}"
            + (f": {reason}" if reason else "")
        ) from None
    handler = getattr(module, variable, None)
    if not isinstance(handler, Auth):
        raise UsageError(
            f"auth handler {path}: {variable!r} is not a langgraph_sdk.Auth in that module"
        )
    from debategraph.serve.auth import auth, served_tokens

    if handler is auth:
        served_tokens()  # debategraph's own: its tokens file must be readable now


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
            "in PostgreSQL (postgresql://user@host:port/database)"
        )
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UsageError(f"database {redact_url(url)} is unreachable: {reason}") from None
