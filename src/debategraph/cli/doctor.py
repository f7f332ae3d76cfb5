"""``debategraph doctor``: the set-up checks (Python, packages, the model, ``--db``), shown."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from debategraph.checkpoints.savers import DEFAULT_DB
from debategraph.cli.group import app
from debategraph.cli.options import ApiKeyEnvOpt, BaseUrlOpt, DbOpt
from debategraph.cli.render import emit_json, out
from debategraph.models.spec import LOCAL, ModelSpec
from debategraph.words import plural


@app.command()
def doctor(
    model: Annotated[
        str,
        typer.Option(
            "--model", help="'local', 'local:PATH.gguf', or the model name an endpoint serves."
        ),
    ] = LOCAL,
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    db: DbOpt = DEFAULT_DB,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Seconds per request the checks make.")
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print one JSON list of the checks.")
    ] = False,
) -> None:
    """Check Python, packages, the model (file, runtime, speed or endpoint) and --db."""
    from debategraph import doctor as checks

    # One request per probe (no client retries): the doctor reports what the endpoint does.
    spec = checks.check_input(
        ModelSpec(
            model=model,
            base_url=base_url,
            api_key_env=api_key_env,
            timeout_s=timeout,
            max_retries=0,
        )
    )
    results = []
    for check in checks.run_checks(spec, db):
        results.append(check)
        if not json_output:
            mark = "[green]✓[/green]" if check.ok else "[red]✗[/red]"
            out.print(f"{mark} {escape(check.name)}: {escape(check.detail)}")
    failed = sum(not check.ok for check in results)
    if json_output:
        emit_json([check.as_dict() for check in results])
    elif failed:
        out.print(f"[red]{failed} of {plural(len(results), 'check')} failed[/red]")
    else:
        out.print(f"[green]all {plural(len(results), 'check')} passed[/green]")
    if failed:
        raise typer.Exit(1)
