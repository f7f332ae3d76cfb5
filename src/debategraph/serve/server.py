"""Start Aegra's server in this process, on a config checked beforehand.

Aegra reads its settings from the environment when it is imported (``DATABASE_URL``,
``AEGRA_CONFIG``, the pool sizes), so :func:`serve` sets them, then imports and runs it
with uvicorn. The generated ``aegra.json`` lies in a temporary folder for the server's
lifetime. Once Aegra has read its settings, the database URL leaves the process
environment: a run's graph cannot read its password there.

The password never stands where another local user can read it: not on the command line
(``--db`` with a password is refused, :func:`database_url`), and not in
``/proc/PID/environ``, which shows a process's environment as it was when it started,
whatever it unsets since. ``debategraph serve`` reads the URL (from ``--db``, ``DATABASE_URL``
or the variable ``--db-env`` names, the password from ``PGPASSWORD`` where the URL has
none), then starts itself again in the same process (:func:`restart_without_secrets`:
``execve``, the same pid) with none of those variables, the URL handed over through a
pipe whose descriptor the new start reads it from (:func:`handed_over`).

It refuses to start in one line (exit 2): on a host reachable beyond this machine with
no sign-in (unless ``--insecure-no-auth`` says so in so many words), on an auth handler
that cannot be loaded, on a model list or tokens file it cannot read.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from debategraph.checkpoints.savers import redact_url, url_secrets, with_password
from debategraph.errors import UsageError
from debategraph.serve.browsers import ALLOWED_HOSTS_ENV
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
#: The variable ``--db`` is read from when not given (Aegra's own name for its URL).
URL_ENV = "DATABASE_URL"
#: The variable libpq (psycopg) and asyncpg read a password from when a URL has none.
PASSWORD_ENV = "PGPASSWORD"
#: The hidden option a restarted server reads its database URL from: a pipe's descriptor.
DB_FD_OPTION = "--db-fd"
#: The most bytes of a database URL handed over (what every system's pipe holds unread).
HANDOVER_LIMIT = 16384


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


def database_url(db: str, *, db_env: str | None = None, on_command_line: bool = False) -> str:
    """The URL of the database to serve from, its password included, from where it was put.

    A URL with a password on the command line is refused: any local user reads a command
    line (``ps``). The password goes in ``PGPASSWORD`` or a passfile (``~/.pgpass``,
    ``PGPASSFILE``: libpq and asyncpg read those themselves), or the whole URL in a
    variable: ``DATABASE_URL`` or the one ``--db-env`` names.

    Args:
        db: ``--db``: from the command line, or from ``DATABASE_URL``.
        db_env: ``--db-env``: the variable that holds the whole URL.
        on_command_line: Whether ``db`` was given on the command line.

    Returns:
        The URL, with ``PGPASSWORD``'s password where it has none of its own
        (:func:`with_environment_password`).

    Raises:
        UsageError: One line if no URL is given, two are, the variable is not set, or the
            command line holds a password.
    """
    if db_env is not None:
        if on_command_line and db:
            raise UsageError(f"--db and --db-env {db_env} both name the database: give one")
        db = os.environ.get(db_env, "").strip() if db_env else ""
        if not db:
            raise UsageError(
                f"--db-env {db_env}: no such variable is set: set it to the PostgreSQL URL"
            )
    elif not db:
        raise UsageError(
            f"--db is missing: give a PostgreSQL URL (or set {URL_ENV}, or name the variable "
            "that holds it with --db-env VAR)"
        )
    elif on_command_line and url_secrets(db):
        raise UsageError(
            f"--db {redact_url(db)} holds a password, and any local user can read a command "
            f"line: give the URL without it and the password in {PASSWORD_ENV} or a passfile "
            "(~/.pgpass or PGPASSFILE), or the whole URL in an environment variable named "
            "with --db-env VAR"
        )
    return with_environment_password(db)


def with_environment_password(db: str) -> str:
    """``db`` with the password of ``PGPASSWORD`` where it has none, which leaves ``os.environ``.

    The server's connections then need no variable (a run's graph cannot read it there),
    and a URL's own password wins, as it does for libpq.

    Args:
        db: A PostgreSQL URL.

    Returns:
        The URL to connect with.
    """
    password = os.environ.pop(PASSWORD_ENV, "")
    if not password or "password" in url_secrets(db) or not db.startswith("postgres"):
        return db
    return with_password(db, password)


def restart_without_secrets(db: str, command: Sequence[str], variables: Sequence[str]) -> NoReturn:
    """Start this program again in this process, ``db`` in a pipe, not in its environment.

    ``execve`` keeps the process (its pid, its process group, a parent's wait on it) and
    replaces its command line and its environment, which ``/proc/PID/environ`` then
    shows. The new start reads the URL from the pipe's descriptor (:func:`handed_over`),
    which ``command`` is given as ``--db-fd N``.

    Args:
        db: The database URL, password included.
        command: The interpreter's arguments that start the server again.
        variables: What leaves the environment besides ``DATABASE_URL`` and
            ``PGPASSWORD`` (the variable ``--db-env`` named).

    Raises:
        UsageError: If the URL is too long for a pipe, or the program cannot be started.
    """
    data = db.encode()
    if len(data) > HANDOVER_LIMIT:
        raise UsageError(f"the database URL is over {HANDOVER_LIMIT} bytes: give a shorter one")
    gone = {URL_ENV, PASSWORD_ENV, *variables}
    env = {name: value for name, value in os.environ.items() if name not in gone}
    read, write = os.pipe()
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(write, view) :]
    finally:
        os.close(write)
    os.set_inheritable(read, True)
    argv = [sys.executable, *command, DB_FD_OPTION, str(read)]
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, argv, env)
    except OSError as exc:
        os.close(read)
        raise UsageError(f"cannot start {sys.executable} again: {exc.strerror}") from None


def handed_over(fd: int) -> str:
    """The database URL :func:`restart_without_secrets` handed over; the pipe is closed.

    Args:
        fd: The pipe's descriptor (``--db-fd``).

    Returns:
        The URL.

    Raises:
        UsageError: One line if the descriptor cannot be read.
    """
    try:
        with open(fd, "rb") as pipe:
            return pipe.read(HANDOVER_LIMIT + 1).decode()
    except (OSError, ValueError) as exc:  # not an open descriptor, or not a URL's text
        why = exc.strerror if isinstance(exc, OSError) else "not text"
        raise UsageError(f"{DB_FD_OPTION} {fd}: cannot read the database URL ({why})") from None


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
    allowed_hosts: tuple[str, ...] = (),
) -> None:
    """Check the config, the model list, sign-in and the database, then serve until stopped.

    Args:
        db: PostgreSQL URL of the database the server keeps its threads in (with the
            password of ``PGPASSWORD`` where it has none; the variable leaves the
            environment).
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
        allowed_hosts: Names clients reach the server by (its ``Host`` header), besides
            ``host`` and the loopback names (``*``: any). A request naming another is
            refused: a web page whose name was rebound to this machine names its own.

    Raises:
        UsageError: One line if Aegra is missing, the config names a graph debategraph
            does not have, the model list or tokens file cannot be read, the auth handler
            cannot be loaded, a non-loopback host would serve without sign-in, the
            database does not answer, or a setting is out of range.
    """
    db = with_environment_password(db)
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
                URL_ENV: db,
                "LANGGRAPH_MAX_POOL_SIZE": str(pool_size),
                "SQLALCHEMY_POOL_SIZE": str(max(2, pool_size // 2)),
                "SQLALCHEMY_MAX_OVERFLOW": str(max(2, pool_size // 2)),
                "LOG_LEVEL": log_level.upper(),
                "HOST": host,
                "PORT": str(port),
                ALLOWED_HOSTS_ENV: ",".join((host, *allowed_hosts)),
            }
        )
        import uvicorn

        from debategraph.compat import aegra_read_settings

        aegra_read_settings()  # Aegra reads DATABASE_URL here, once
        os.environ.pop(URL_ENV, None)  # read: no run can find the password here
        uvicorn.run("aegra_api.main:app", host=host, port=port, log_level=log_level)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
