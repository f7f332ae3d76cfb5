"""``debategraph serve``: every pattern on an Agent Protocol server (Aegra) on PostgreSQL.

The database's password is never on the command line nor, once the server runs, in its
environment: ``serve`` reads the URL, then starts itself again in the same process with
the URL in a pipe (:func:`debategraph.serve.server.restart_without_secrets`) and every
option it was given but ``--db`` and ``--db-env`` (:func:`given_options`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from debategraph.cli.group import app
from debategraph.serve.server import (
    DB_FD_OPTION,
    DEFAULT_HOST,
    DEFAULT_LOG_LEVEL,
    DEFAULT_POOL_SIZE,
    DEFAULT_PORT,
    URL_ENV,
    database_url,
    handed_over,
    restart_without_secrets,
)

#: The options that name the database: the restarted server is handed the URL instead.
DATABASE_OPTIONS = ("db", "db_env", "db_fd")


def given_options(ctx: typer.Context, leave_out: tuple[str, ...] = ()) -> list[str]:
    """The options a command was given (not left at their defaults), as a command line.

    Args:
        ctx: The command's context, its options parsed.
        leave_out: Options not to write (by parameter name).

    Returns:
        Each option's first name and value (a flag's name alone, a repeated option once
        per value), in the command's order.
    """
    words: list[str] = []
    for param in ctx.command.params:
        name = param.name or ""
        source = ctx.get_parameter_source(name)
        if param.param_type_name != "option" or name in leave_out:
            continue
        if source is None or source.name == "DEFAULT":
            continue
        value = ctx.params[name]
        if getattr(param, "is_flag", False):
            names = param.opts if value else getattr(param, "secondary_opts", [])
            words += names[:1]
        else:
            for each in value if param.multiple else [value]:
                words += [param.opts[0], str(each)]
    return words


@app.command()
def serve(
    ctx: typer.Context,
    db: Annotated[
        str,
        typer.Option(
            "--db",
            envvar=URL_ENV,
            help="PostgreSQL URL the server keeps threads, runs and the store in, with no "
            "password (that goes in PGPASSWORD or ~/.pgpass).",
        ),
    ] = "",
    db_env: Annotated[
        str | None,
        typer.Option(
            "--db-env",
            help="An environment variable holding the whole PostgreSQL URL, password included "
            "(instead of --db).",
        ),
    ] = None,
    db_fd: Annotated[
        int | None,
        typer.Option(DB_FD_OPTION, hidden=True, help="A pipe to read the URL from (internal)."),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = DEFAULT_PORT,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="An aegra.json or langgraph.json naming the graphs to serve "
            "[default: every pattern].",
        ),
    ] = None,
    pool_size: Annotated[
        int, typer.Option("--pool-size", help="Database connections for checkpoints.")
    ] = DEFAULT_POOL_SIZE,
    log_level: Annotated[
        str, typer.Option("--log-level", help="Server log level.")
    ] = DEFAULT_LOG_LEVEL,
    models: Annotated[
        Path | None,
        typer.Option(
            "--models",
            help="The models clients may name (YAML: name, model, base_url, api_key_env) "
            "\\[default: the embedded model only].",
        ),
    ] = None,
    tokens: Annotated[
        Path | None,
        typer.Option("--tokens", help="Sign-in: a YAML file of USER: TOKEN lines."),
    ] = None,
    insecure_no_auth: Annotated[
        bool,
        typer.Option(
            "--insecure-no-auth",
            help="Serve a non-loopback --host with no sign-in (everyone reaches every thread).",
        ),
    ] = False,
    cors_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--cors-origin", help="An origin a browser may call from (repeat) \\[default: none]."
        ),
    ] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="A name clients reach the server by, besides --host and loopback (repeat; "
            "'*': any).",
        ),
    ] = None,
) -> None:
    """Serve every pattern to langgraph-sdk clients (Aegra, Agent Protocol, on PostgreSQL).

    Several processes on one --db serve the same threads. Clients name models from
    --models, never endpoints or keys; with --tokens each user signs in and sees only
    their own threads. Needs the serve extra: pip install 'debategraph[serve]'.
    """
    from debategraph.serve import serve as run_server
    from debategraph.serve.config import read_config

    if db_fd is not None:  # started again by the lines below
        url = handed_over(db_fd)
    else:
        source = ctx.get_parameter_source("db")
        typed = source is not None and source.name == "COMMANDLINE"
        url = database_url(db, db_env=db_env, on_command_line=typed)
        if os.name == "posix":  # elsewhere execve starts another process: nothing is gained
            again = ["-m", "debategraph.cli", "serve", *given_options(ctx, DATABASE_OPTIONS)]
            restart_without_secrets(url, again, [db_env] if db_env else [])
    user = read_config(config) if config is not None else None
    run_server(
        url,
        host=host,
        port=port,
        user_config=user,
        source=str(config),
        pool_size=pool_size,
        log_level=log_level.lower(),
        models=models,
        tokens=tokens,
        insecure_no_auth=insecure_no_auth,
        cors_origins=tuple(cors_origin or ()),
        allowed_hosts=tuple(allowed_host or ()),
    )
