"""``debategraph serve``: every pattern on an Agent Protocol server (Aegra) on PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from debategraph.cli.group import app
from debategraph.errors import UsageError
from debategraph.serve.server import (
    DEFAULT_HOST,
    DEFAULT_LOG_LEVEL,
    DEFAULT_POOL_SIZE,
    DEFAULT_PORT,
)


@app.command()
def serve(
    db: Annotated[
        str,
        typer.Option(
            "--db",
            envvar="DATABASE_URL",
            help="PostgreSQL URL the server keeps threads, runs and the store in.",
        ),
    ] = "",
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
) -> None:
    """Serve every pattern to langgraph-sdk clients (Aegra, Agent Protocol, on PostgreSQL).

    Several processes on one --db serve the same threads. Clients name models from
    --models, never endpoints or keys; with --tokens each user signs in and sees only
    their own threads. Needs the serve extra: pip install 'debategraph[serve]'.
    """
    from debategraph.serve import serve as run_server
    from debategraph.serve.config import read_config

    if not db:
        raise UsageError("--db is missing: give a PostgreSQL URL (or set DATABASE_URL)")
    user = read_config(config) if config is not None else None
    run_server(
        db,
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
    )
