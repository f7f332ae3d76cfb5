"""Start Aegra's server in this process, on a config checked beforehand.

Aegra reads its settings from the environment when it is imported (``DATABASE_URL``,
``AEGRA_CONFIG``, the pool sizes), so :func:`serve` sets them, then imports and runs it
with uvicorn. The generated ``aegra.json`` lies in a temporary folder for the server's
lifetime. Once Aegra has read its settings, the database URL leaves the process
environment: a run's graph cannot read its password there.

It refuses to start in one line (exit 2): on a host reachable beyond this machine with
no sign-in (unless ``--insecure-no-auth`` says so in so many words), on an auth handler
that cannot be loaded, on a model list or tokens file it cannot read.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from debategraph.errors import UsageError
from debategraph.serve.config import check_auth, check_database, serve_config
from debategraph.serve.models import MODELS_ENV, read_models

#: Connections each server process keeps for checkpoints and the store (Aegra's default
#: is 6, which makes 100 debates at once queue for a connection). Aegra's other pool, for
#: its threads and runs tables, gets half as many and as many again on demand (its default
#: is 2 and no more, which makes 100 clients at once wait 30 s and fail): a process opens
#: at most twice this, so two on PostgreSQL's default 100 connections leave room.
DEFAULT_POOL_SIZE = 20
#: uvicorn's log levels.
LOG_LEVELS = ("critical", "error", "warning", "info", "debug")
#: Where and how a server listens and logs when not told (``debategraph serve``'s defaults).
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_LOG_LEVEL = "warning"
#: What to install when Aegra is missing.
INSTALL_HINT = "pip install 'debategraph[serve]'"


def require_aegra() -> None:
    """Refuse to start without Aegra installed.

    Raises:
        UsageError: One line saying what to install.
    """
    import importlib.util

    for module in ("aegra_api", "uvicorn", "greenlet"):
        if importlib.util.find_spec(module) is None:
            raise UsageError(f"debategraph serve needs {module}: {INSTALL_HINT}")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (``127.0.0.1``, ``::1``, ``localhost``).

    Args:
        host: The interface to listen on.

    Returns:
        ``True`` for a loopback interface.
    """
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve to any interface


def serve(
    db: str,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    user_config: Mapping[str, Any] | None = None,
    source: str = "config",
    pool_size: int = DEFAULT_POOL_SIZE,
    log_level: str = DEFAULT_LOG_LEVEL,
    models: Path | None = None,
    tokens: Path | None = None,
    insecure_no_auth: bool = False,
    cors_origins: tuple[str, ...] = (),
) -> None:
    """Check the config, the model list, sign-in and the database, then serve until stopped.

    Args:
        db: PostgreSQL URL of the database the server keeps its threads in.
        host: Interface to listen on.
        port: Port to listen on.
        user_config: A user's ``aegra.json`` / ``langgraph.json`` (default: every graph).
        source: Its file, for messages and its relative ``auth.path``.
        pool_size: Connections for checkpoints and the store.
        log_level: uvicorn's and Aegra's log level.
        models: The operator's model list (:mod:`debategraph.serve.models`); default: the
            embedded model only.
        tokens: The tokens file that turns on sign-in (:mod:`debategraph.serve.auth`).
        insecure_no_auth: Serve a non-loopback host with no sign-in (everyone is
            ``anonymous`` and reaches every thread).
        cors_origins: Origins a browser may call the server from (default: none).

    Raises:
        UsageError: One line if Aegra is missing, the config names a graph debategraph
            does not have, the model list or tokens file cannot be read, the auth handler
            cannot be loaded, a non-loopback host would serve without sign-in, the
            database does not answer, or a setting is out of range.
    """
    if not 1 <= port <= 65535:
        raise UsageError(f"--port {port} is not a port: give 1 to 65535")
    if log_level not in LOG_LEVELS:
        raise UsageError(f"--log-level {log_level!r} is not a level: use {', '.join(LOG_LEVELS)}")
    if pool_size < 1:
        raise UsageError(f"--pool-size {pool_size} must be at least 1")
    require_aegra()
    config = serve_config(user_config, source, cors_origins)
    if models is not None:
        read_models(models)
    if tokens is not None:
        from debategraph.serve.auth import AUTH_PATH, TOKENS_ENV, read_tokens

        if "auth" in config:
            raise UsageError(f"--tokens and {source}'s auth both sign users in: give one")
        read_tokens(tokens)
        config["auth"] = {"path": AUTH_PATH}
        os.environ[TOKENS_ENV] = str(Path(tokens).resolve())  # where the handler reads them
    if "auth" in config:
        check_auth(config["auth"]["path"])
    elif not is_loopback(host) and not insecure_no_auth:
        raise UsageError(
            f"--host {host} is reachable beyond this machine and nobody signs in: give "
            "--tokens FILE (or an auth handler in --config), or --insecure-no-auth to serve "
            "everyone as one anonymous user"
        )
    check_database(db)
    folder = Path(tempfile.mkdtemp(prefix="debategraph-serve-"))
    try:
        path = folder / "aegra.json"
        path.write_text(json.dumps(config, indent=2))
        if models is not None:
            os.environ[MODELS_ENV] = str(Path(models).resolve())
        os.environ.update(
            {
                "AEGRA_CONFIG": str(path),
                "DATABASE_URL": db,
                "LANGGRAPH_MAX_POOL_SIZE": str(pool_size),
                "SQLALCHEMY_POOL_SIZE": str(max(2, pool_size // 2)),
                "SQLALCHEMY_MAX_OVERFLOW": str(max(2, pool_size // 2)),
                "LOG_LEVEL": log_level.upper(),
                "HOST": host,
                "PORT": str(port),
            }
        )
        import importlib

        import uvicorn

        importlib.import_module("aegra_api.settings")  # Aegra reads DATABASE_URL here, once
        os.environ.pop("DATABASE_URL", None)  # read: no run can find the password here
        uvicorn.run("aegra_api.main:app", host=host, port=port, log_level=log_level)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
