"""The thread tools: resume, interject, stop, threads, show, history, fork, prune, export.

They work on a thread of any pattern: the pattern is read from the thread's metadata and
asked for its title, result and rendering.
"""

from __future__ import annotations

import json
import sys
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich import box
from rich.markup import escape
from rich.table import Column, Table

from debategraph import registry
from debategraph.checkpoints.inbox import STOP
from debategraph.checkpoints.savers import DEFAULT_DB, open_checkpointer
from debategraph.checkpoints.threads import (
    list_threads,
    read_run,
    thread_config,
)
from debategraph.cli.group import app
from debategraph.cli.interrupts import resume_command
from debategraph.cli.options import (
    ArchiveOpt,
    CacheOpt,
    ConcurrencyOpt,
    DbOpt,
    InterjectOpt,
    JsonOpt,
    MaxCostOpt,
    ReportOpt,
    cache_opened,
    max_cost_of,
)
from debategraph.cli.patterns import get_pattern
from debategraph.cli.patterns.shared import short
from debategraph.cli.render import (
    emit_json,
    err,
    out,
    print_result,
    turn_block,
    write_output,
)
from debategraph.cli.runner import Runner, reader
from debategraph.errors import UsageError
from debategraph.models.spec import ModelSpec
from debategraph.nodes.review import hitl_response
from debategraph.registry import names
from debategraph.runs.human import (
    interject,
    post_to_inbox,
    refuse_finished,
    refuse_running,
    refuse_unread,
)
from debategraph.runs.results import result_of, thread_wall
from debategraph.runs.start import check_concurrency, resumed_run
from debategraph.runs.thread import require_run
from debategraph.words import plural


@app.command()
def resume(
    thread: Annotated[str, typer.Argument(help="The thread to continue.")],
    interject_text: InterjectOpt = None,
    approve: Annotated[
        bool, typer.Option("--approve", help="Continue a paused thread as it is.")
    ] = False,
    model: Annotated[
        str | None, typer.Option("--model", help="Override the model the thread used.")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="Override the endpoint the thread used.")
    ] = None,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Seconds per model request (default 60).")
    ] = None,
    max_cost: MaxCostOpt = None,
    cache: CacheOpt = None,
    max_concurrency: ConcurrencyOpt = None,
    db: DbOpt = DEFAULT_DB,
    archive: ArchiveOpt = None,
    report: ReportOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Continue a stopped or paused thread from its last checkpoint."""
    from langgraph.types import Command

    check_concurrency(max_concurrency)
    budget = max_cost_of(max_cost)
    if interject_text is not None and approve:
        raise UsageError("give --interject TEXT or --approve, not both")
    if interject_text is not None and not interject_text.strip():
        raise UsageError("interjection text is empty")
    with cache_opened(cache), open_checkpointer(db) as saver:
        run = require_run(saver, thread, db)
        stored = dict(run.model)
        if model is not None:
            stored.update(model=model, base_url=base_url)
        elif base_url is not None:
            stored["base_url"] = base_url
        if timeout is not None:
            stored["timeout_s"] = timeout
        spec = ModelSpec(**stored).validated()
        checked = resumed_run(run, spec, max_concurrency)
        pattern = registry.described(run.pattern)
        with Runner(saver, checked, db, json_output, archive, report, max_cost=budget) as runner:
            reading = runner.thread
            state = reading.state(thread)
            if interject_text is not None and state.status != "waiting":
                refuse_unread(reading.graph, thread, state, run, pattern=pattern)
            if state.status == "finished":
                err.print(f"thread {thread} is already finished; its result:")
                runner.finish(reading, thread)
                return
            refuse_running(thread, state)
            graph_input: Any = None
            if state.status == "waiting":
                if interject_text is not None:
                    graph_input = Command(resume=hitl_response("respond", interject_text))
                elif approve:
                    graph_input = Command(resume=hitl_response("approve"))
            elif interject_text is not None:
                interject(reading.graph, thread, interject_text, state, db, run, pattern=pattern)
            runner.run(thread, graph_input)


@app.command("interject")
def interject_command(
    thread: Annotated[str, typer.Argument(help="A running, waiting or stopped thread.")],
    text: Annotated[str, typer.Argument(help="What every agent reads next round.")],
    db: DbOpt = DEFAULT_DB,
) -> None:
    """Add a human message to a thread; every agent reads it next round.

    A waiting thread, or one stopped between rounds, takes it now; a running thread (or
    one stopped mid-round) finds it in its inbox at its next round boundary.
    """
    with open_checkpointer(db) as saver:
        run = require_run(saver, thread, db)
        reading = reader(saver, run, thread)
        graph = reading.graph
        state = reading.state(thread)
        described = registry.described(run.pattern)
        delivery = interject(graph, thread, text, state, db, run, pattern=described)
    word = described.round_word
    if delivery == "recorded":
        err.print(
            f"interjection added to thread {thread} (read in {word} {(state.round or 0) + 1}); "
            f"continue with: {resume_command(thread, db)}"
        )
    elif state.status == "running":
        err.print(
            f"interjection sent to running thread {thread}: "
            f"its agents read it from its next {word} on"
        )
    else:
        err.print(
            f"interjection sent to thread {thread}: its agents read it from its next {word} on, "
            f"once it continues: {resume_command(thread, db)}"
        )


@app.command()
def stop(
    thread: Annotated[str, typer.Argument(help="A running, waiting or stopped thread.")],
    db: DbOpt = DEFAULT_DB,
) -> None:
    """Ask a thread to stop after its next round (termination reason: stopped).

    The request waits in the thread's inbox until the thread opens its next round (a
    thread not running now: when it continues); that round is the last.
    """
    with open_checkpointer(db) as saver:
        run = require_run(saver, thread, db)
        state = reader(saver, run, thread).state(thread)
        refuse_finished(thread, state, "there is nothing to stop")
        post_to_inbox(db, thread, STOP)
    word = registry.described(run.pattern).round_word
    ends = f"it ends (stopped) once the {word} it opens next is done"
    if state.status == "running":
        err.print(f"stop sent to running thread {thread}: {ends}")
    else:
        err.print(
            f"stop sent to thread {thread}: when it continues ({resume_command(thread, db)}) {ends}"
        )


@app.command()
def threads(db: DbOpt = DEFAULT_DB, json_output: JsonOpt = False) -> None:
    """List the threads in the checkpoint database with their status."""
    rows = []
    known = set(names())
    with open_checkpointer(db) as saver:
        for summary in list_threads(saver):
            row: dict[str, Any] = {
                "thread_id": summary.thread_id,
                "pattern": summary.run.pattern if summary.run else None,
                "status": None,
                "round": None,
                "where": None,
                "step": summary.step,
                "updated": summary.updated,
                "question": None,
            }
            if summary.run is not None and summary.run.pattern in known:
                try:
                    reading = reader(saver, summary.run, summary.thread_id)
                except UsageError as exc:  # one unreadable thread hides no other
                    err.print(f"[dim]{escape(str(exc))}[/dim]")
                    rows.append(row)
                    continue
                graph = reading.graph
                state = reading.state(summary.thread_id)
                values = graph.get_state(thread_config(summary.thread_id)).values
                row.update(
                    status=state.status,
                    round=state.round,
                    where=state.where(),
                    question=registry.described(summary.run.pattern).title(values),
                )
            rows.append(row)
    if json_output:
        emit_json(rows)
        return
    if not rows:
        err.print(f"no threads in {db}")
        return
    table = _table(
        Column("thread", no_wrap=True),
        Column("pattern", no_wrap=True),
        Column("status", no_wrap=True),
        Column("round", justify="right", no_wrap=True),
        Column("updated (UTC)", no_wrap=True),
        Column("question / topic", ratio=1, no_wrap=True, overflow="ellipsis"),
    )
    for row in rows:
        table.add_row(
            escape(row["thread_id"]),
            row["pattern"] or "?",
            row["status"] or "?",
            "-" if row["round"] is None else str(row["round"]),
            _minute(row["updated"]),
            escape(short(row["question"] or "", 200)),
        )
    out.print(table)


def _table(*columns: Column) -> Table:
    """A table that fits the terminal: ids and names whole, the last column takes the rest.

    Columns marked ``no_wrap`` keep their width; the flexible one (``ratio``) gets what
    is left, so an id a user types back is never cut.
    """
    return Table(
        *columns,
        expand=True,
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )


def _minute(stamp: object, *, seconds: bool = False) -> str:
    """``2025-01-31T12:34:56.789+00:00`` -> ``01-31 12:34`` (``:56`` with ``seconds``)."""
    text = str(stamp or "")
    return text[5 : 19 if seconds else 16].replace("T", " ") or "-"


@app.command()
def show(
    thread: Annotated[str, typer.Argument(help="The thread to print.")],
    db: DbOpt = DEFAULT_DB,
    json_output: JsonOpt = False,
) -> None:
    """Print a thread's transcript and result."""
    from debategraph.checkpoints.archive import export_json

    with open_checkpointer(db) as saver:
        run = require_run(saver, thread, db)
        pattern = get_pattern(run.pattern)
        reading = reader(saver, run, thread)
        graph = reading.graph
        values = graph.get_state(thread_config(thread)).values
        state = reading.state(thread)
        wall_s = thread_wall(saver, db, thread)
    if json_output:
        emit_json(export_json(thread, values, status=state.status, wall_s=wall_s))
        return
    described = pattern.described
    out.print(f"[bold]{escape(described.title(values))}[/bold]  ({state.status})")
    choices = values.get("choices") or None
    for turn in values.get("transcript", []):
        for line in turn_block(turn, choices, values.get("answer_kind") or "number"):
            out.print(line)
    if state.status == "finished":
        print_result(pattern, result_of(described, thread, values, wall_s), json_output=False)
    elif state.status == "failed":
        out.print(f"failed after running {wall_s:.1f}s: {escape(state.where())}")
    else:
        out.print(f"{state.status}: {escape(state.where())} · ran {wall_s:.1f}s so far")


@app.command()
def history(
    thread: Annotated[str, typer.Argument(help="The thread whose checkpoints to list.")],
    db: DbOpt = DEFAULT_DB,
    json_output: JsonOpt = False,
) -> None:
    """List a thread's checkpoints, newest first (ids to fork from)."""
    from debategraph.checkpoints.maintenance import history as thread_history
    from debategraph.checkpoints.thread_values import jsonable

    with open_checkpointer(db) as saver:
        graph = reader(saver, require_run(saver, thread, db), thread).graph
        entries = thread_history(graph, thread)
    if json_output:
        emit_json([jsonable(asdict(e)) for e in entries])
        return
    table = _table(
        Column("checkpoint", no_wrap=True),
        Column("round", justify="right", no_wrap=True),
        Column("source", no_wrap=True),
        Column("created (UTC)", no_wrap=True),
        Column("next", ratio=1),
    )
    for e in entries:
        table.add_row(
            e.checkpoint_id,
            "-" if e.round is None else str(e.round),
            str(e.source),
            _minute(e.created_at, seconds=True),
            ", ".join(e.next) or "(end)",
        )
    out.print(table)
    err.print(
        f"[dim]branch from one: debategraph fork {escape(thread)} --at CHECKPOINT --db "
        f"{escape(db)} (a unique start of its id is enough)[/dim]"
    )


@app.command()
def fork(
    thread: Annotated[str, typer.Argument(help="The thread to branch from.")],
    at: Annotated[
        str,
        typer.Option(
            "--at", help="Checkpoint id, or a unique start of it (see debategraph history)."
        ),
    ],
    interject_text: InterjectOpt = None,
    new_thread: Annotated[
        str | None, typer.Option("--thread", help="Id of the new thread (generated if absent).")
    ] = None,
    max_concurrency: ConcurrencyOpt = None,
    db: DbOpt = DEFAULT_DB,
    archive: ArchiveOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Continue a thread from an earlier checkpoint as a new thread; the original stays."""
    from debategraph.checkpoints.forking import fork as fork_thread

    check_concurrency(max_concurrency)
    with open_checkpointer(db) as saver:
        run = require_run(saver, thread, db)
        spec = ModelSpec(**run.model).validated()
        checked = resumed_run(run, spec, max_concurrency)
        pattern = registry.described(run.pattern)
        target = new_thread or uuid.uuid4().hex[:12]
        with Runner(saver, checked, db, json_output, archive) as runner:
            reading = runner.thread
            checkpoint = fork_thread(reading.graph, saver, thread, at, target)
            if interject_text is not None:
                try:  # refused (no round would read it) before any model call
                    state = reading.state(target)
                    refuse_unread(reading.graph, target, state, run, shown=thread, pattern=pattern)
                    interject(
                        reading.graph, target, interject_text, state, db, run, pattern=pattern
                    )
                except UsageError as exc:
                    saver.delete_thread(target)
                    raise UsageError(f"fork --at {checkpoint}: {exc}") from exc
            err.print(f"forked thread {thread} at checkpoint {checkpoint} into thread {target}")
            runner.run(target, None)


@app.command()
def prune(
    keep_last: Annotated[
        int | None,
        typer.Option("--keep-last", help="Checkpoints to keep per finished thread \\[default: 1]."),
    ] = None,
    finished_older_than: Annotated[
        float | None,
        typer.Option(
            "--finished-older-than", help="Only threads finished more than DAYS days ago."
        ),
    ] = None,
    db: DbOpt = DEFAULT_DB,
    json_output: JsonOpt = False,
) -> None:
    """Remove old checkpoints of finished threads (kept ones stay resumable), then reclaim space."""
    from debategraph.checkpoints.pruning import prune as prune_threads
    from debategraph.checkpoints.thread_values import jsonable

    known = set(names())
    with open_checkpointer(db) as saver:

        def graph_for(thread_id: str) -> Any:
            run = read_run(saver, thread_id)
            if run is None or run.pattern not in known:
                return None
            return reader(saver, run, thread_id).graph

        report = prune_threads(
            graph_for,
            saver,
            keep_last=keep_last if keep_last is not None else 1,
            finished_older_than_days=finished_older_than,
        )
    if json_output:
        emit_json(jsonable(asdict(report)))
        return
    saved = report.bytes_before - report.bytes_after
    share = saved / report.bytes_before if report.bytes_before else 0.0
    out.print(
        f"pruned {plural(report.threads_pruned, 'finished thread')}: "
        f"{plural(report.checkpoints_deleted, 'checkpoint')} removed; "
        f"{report.bytes_before:,} -> {report.bytes_after:,} bytes "
        f"({share:.0%} smaller)"
    )


@app.command()
def export(
    thread: Annotated[str, typer.Argument(help="The thread to export.")],
    fmt: Annotated[
        Literal["md", "json"], typer.Option("--format", help="md (readable) or json.")
    ] = "md",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file, not stdout.")
    ] = None,
    db: DbOpt = DEFAULT_DB,
) -> None:
    """Write a readable transcript of a thread (Markdown or JSON)."""
    from debategraph.checkpoints.archive import export_json
    from debategraph.views.markdown import render_markdown

    with open_checkpointer(db) as saver:
        run = require_run(saver, thread, db)
        reading = reader(saver, run, thread)
        graph = reading.graph
        values = graph.get_state(thread_config(thread)).values
        status = reading.state(thread).status
        wall_s = thread_wall(saver, db, thread)
    if fmt == "md":
        described = registry.described(run.pattern)
        text = render_markdown(thread, values, pattern=described, status=status, wall_s=wall_s)
    else:
        document = export_json(thread, values, status=status, wall_s=wall_s)
        text = json.dumps(document, indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
        return
    write_output(output, text)
    err.print(f"wrote {output}")
