"""The ``debategraph`` command: run, pause, resume, fork and inspect durable debates.

Every run is durable: it writes checkpoints to ``--db`` (a SQLite file, default
``debates.sqlite``, or a Postgres URL) under a thread id, so Ctrl-C, ``kill -9`` or a dead
endpoint leave a thread that ``debategraph resume THREAD`` continues. Errors print as one
line (exit 2 for usage errors, 1 for runtime failures, 130 when interrupted).
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import InvalidUpdateError
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StreamMode
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from debategraph.checkpoints import (
    DEFAULT_DB,
    RunInfo,
    ThreadState,
    is_postgres_url,
    list_threads,
    open_checkpointer,
    read_run,
    sqlite_path,
    thread_config,
    thread_exists,
    thread_state,
)
from debategraph.checkpoints.archive import archive_debate, export_json, jsonable, render_markdown
from debategraph.checkpoints.maintenance import fork as fork_thread
from debategraph.checkpoints.maintenance import history as thread_history
from debategraph.checkpoints.maintenance import prune as prune_threads
from debategraph.documents import load_document
from debategraph.errors import DebategraphError, ModelUnavailableError, UsageError
from debategraph.graphs.debate import DEFAULT_DEBATERS
from debategraph.graphs.discussion import render_report_markdown
from debategraph.graphs.solver_debate import GRAPH_NAME
from debategraph.models import LOCAL, ModelSpec, bind_model
from debategraph.nodes.human import APPROVE, INTERJECT
from debategraph.nodes.solver import CLOSE_ROUND_NODE, HUMAN_NODE, OPEN_ROUND_NODE
from debategraph.patterns import PATTERNS, Pattern, get_pattern, result_of
from debategraph.state import RoundRecord, Turn, interjection
from debategraph.strategies import TOPOLOGY_NAMES

Graph = CompiledStateGraph[Any, Any, Any, Any]

app = typer.Typer(
    name="debategraph",
    help="Multi-agent debate graphs on LangGraph, durable on SQLite or Postgres.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True, highlight=False, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)

#: Archive of Postgres checkpoints, in the working directory. A SQLite ``--db FILE`` is
#: archived beside it in ``FILE-archive.sqlite``: a file of its own, so pruning checkpoints
#: shrinks the checkpoint file and the archive can be copied or served (Datasette) alone.
POSTGRES_ARCHIVE = "debates-archive.sqlite"
ARCHIVE_SUFFIX = "-archive"


def default_archive(db: str) -> str:
    """Where finished debates of ``--db`` are archived unless ``--archive`` says otherwise.

    Args:
        db: The ``--db`` value.

    Returns:
        ``x.sqlite`` -> ``x-archive.sqlite``; a Postgres URL -> ``debates-archive.sqlite``.
    """
    if is_postgres_url(db):
        return POSTGRES_ARCHIVE
    path = sqlite_path(db)
    return str(path.with_name(f"{path.stem}{ARCHIVE_SUFFIX}{path.suffix or '.sqlite'}"))


ModelOpt = Annotated[
    str,
    typer.Option(
        "--model", help="'local' (embedded SmolLM2) or the model name an endpoint serves."
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        envvar="OPENAI_BASE_URL",
        help="OpenAI-compatible base URL (with a model name); env OPENAI_BASE_URL.",
        show_envvar=False,
    ),
]
TimeoutOpt = Annotated[
    float | None, typer.Option("--timeout", help="Seconds per model request (default 60).")
]
RetriesOpt = Annotated[int, typer.Option("--max-retries", help="Client retries per request.")]
DbOpt = Annotated[
    str, typer.Option("--db", help="Checkpoint database: a SQLite file path or Postgres URL.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object at the end.")]
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option(
        "--max-concurrency",
        help="Agent calls in flight at once, and the embedded model's parallel slots "
        "[default: the agents of one round].",
    ),
]
ArchiveOpt = Annotated[
    str | None,
    typer.Option(
        "--archive",
        help="SQLite file for the plain debates/messages/usage tables written when a debate "
        "finishes [default: beside the --db file, debates.sqlite -> debates-archive.sqlite; "
        f"{POSTGRES_ARCHIVE} for Postgres].",
    ),
]
PauseOpt = Annotated[
    bool,
    typer.Option("--pause-after-round", help="Pause between rounds to approve or interject."),
]
NewThreadOpt = Annotated[
    str | None, typer.Option("--thread", help="Thread id (generated if absent).")
]
InterjectOpt = Annotated[
    str | None,
    typer.Option("--interject", help="A message every agent reads next round."),
]


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning every expected failure into one line.

    Args:
        argv: Arguments (default ``sys.argv[1:]``).
    """
    command = typer.main.get_command(app)
    try:
        code = command.main(args=argv, prog_name="debategraph", standalone_mode=False)
    except typer.TyperException as exc:  # bad options/arguments (typer's own click)
        _fail(exc.format_message(), exc.exit_code)
    except typer.Abort:
        _fail("aborted", 130)
    except DebategraphError as exc:
        _fail(str(exc), exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str, code: int) -> None:
    err.print(f"debategraph: error: {escape(' '.join(message.split()))}")
    sys.exit(code)


# -- commands --------------------------------------------------------------------------


@app.command()
def solve(
    question: Annotated[str, typer.Argument(help="The problem to solve.")],
    agents: Annotated[int, typer.Option("--agents", help="Number of solvers.")] = 4,
    rounds: Annotated[int, typer.Option("--rounds", help="Rounds of answering.")] = 3,
    topology: Annotated[
        str,
        typer.Option(
            "--topology", help="ring, full, star, or a JSON file {solver: [solvers it hears]}."
        ),
    ] = "ring",
    neighbours: Annotated[
        int | None,
        typer.Option("--neighbours", help="For ring: nearest solvers each hears [default: 2]."),
    ] = None,
    token_budget: Annotated[
        int | None, typer.Option("--token-budget", help="Stop after the round reaching this.")
    ] = None,
    unanimous: Annotated[
        bool, typer.Option("--stop-when-unanimous", help="Stop early once all agree.")
    ] = False,
    pause_after_round: PauseOpt = False,
    model: ModelOpt = LOCAL,
    base_url: BaseUrlOpt = None,
    timeout: TimeoutOpt = None,
    max_retries: RetriesOpt = 2,
    max_concurrency: ConcurrencyOpt = None,
    db: DbOpt = DEFAULT_DB,
    thread: NewThreadOpt = None,
    archive: ArchiveOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Solvers debate a math question on a communication topology, then vote."""
    if not question.strip():
        raise UsageError('question is empty: give the problem text, e.g. debategraph solve "2+3?"')
    settings: dict[str, Any] = {
        "agents": agents,
        "rounds": rounds,
        "topology": _parse_topology(topology),
        "neighbours": neighbours,
        "token_budget": token_budget,
        "stop_when_unanimous": unanimous,
        "pause_after_round": pause_after_round,
    }
    spec = ModelSpec(
        model=model, base_url=base_url, timeout_s=timeout, max_retries=max_retries
    ).validated()
    run = RunInfo(GRAPH_NAME, settings, _spec_record(spec))
    _start(run, spec, {"question": question}, thread, db, max_concurrency, json_output, archive)


@app.command("debate")
def debate_command(
    topic: Annotated[str, typer.Argument(help="The motion to debate.")],
    debater: Annotated[
        list[str] | None,
        typer.Option(
            "--debater",
            help="'Name:side', once per debater (two or more) "
            f"[default: {' and '.join(repr(d) for d in DEFAULT_DEBATERS)}].",
        ),
    ] = None,
    rounds: Annotated[int, typer.Option("--rounds", help="Round cap.")] = 3,
    first: Annotated[
        str | None, typer.Option("--first", help="Who opens each round [default: first].")
    ] = None,
    words: Annotated[int, typer.Option("--words", help="Word limit per turn.")] = 80,
    moderator: Annotated[
        bool, typer.Option("--moderator", help="A moderator may end the debate early.")
    ] = False,
    judge: Annotated[bool, typer.Option("--judge", help="A judge gives a verdict.")] = False,
    history: Annotated[
        Literal["full", "window"],
        typer.Option("--history", help="full, or window: last turns plus a running summary."),
    ] = "full",
    keep_last: Annotated[
        int, typer.Option("--keep-last", help="Turns kept verbatim with --history window.")
    ] = 4,
    pause_after_round: PauseOpt = False,
    model: ModelOpt = LOCAL,
    base_url: BaseUrlOpt = None,
    timeout: TimeoutOpt = None,
    max_retries: RetriesOpt = 2,
    max_concurrency: ConcurrencyOpt = None,
    db: DbOpt = DEFAULT_DB,
    thread: NewThreadOpt = None,
    archive: ArchiveOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Named debaters argue a motion turn by turn; optional moderator and judge."""
    if not topic.strip():
        raise UsageError(
            'topic is empty: give the motion, e.g. debategraph debate "Cats beat dogs"'
        )
    settings: dict[str, Any] = {
        "debaters": list(debater or DEFAULT_DEBATERS),
        "max_rounds": rounds,
        "first_speaker": first,
        "words": words,
        "moderator": moderator,
        "judge": judge,
        "history": history,
        "keep_last": keep_last,
        "pause_after_round": pause_after_round,
    }
    spec = ModelSpec(
        model=model, base_url=base_url, timeout_s=timeout, max_retries=max_retries
    ).validated()
    run = RunInfo(get_pattern("debate").name, settings, _spec_record(spec))
    _start(run, spec, {"topic": topic}, thread, db, max_concurrency, json_output, archive)


@app.command()
def discuss(
    paper: Annotated[Path, typer.Argument(help="The document: Markdown or plain text.")],
    max_iterations: Annotated[
        int, typer.Option("--max-iterations", help="Question/answer iterations at most.")
    ] = 5,
    threshold: Annotated[
        float, typer.Option("--threshold", help="Convergence (0-1) that ends the discussion.")
    ] = 0.75,
    time_limit: Annotated[
        str, typer.Option("--time-limit", help="Stop after this long: 30m, 90s, 1h.")
    ] = "30m",
    persona: Annotated[
        Path | None,
        typer.Option("--persona", help="JSON file: a list of {name, focus, description} personas."),
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option("--report", help="Markdown report file [default: discussion-THREAD.md]."),
    ] = None,
    model: ModelOpt = LOCAL,
    base_url: BaseUrlOpt = None,
    timeout: TimeoutOpt = None,
    max_retries: RetriesOpt = 2,
    max_concurrency: ConcurrencyOpt = None,
    db: DbOpt = DEFAULT_DB,
    thread: NewThreadOpt = None,
    archive: ArchiveOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Four personas analyse a paper, question each other and write a consensus report."""
    try:
        document = load_document(paper)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    for note in document.notes:
        err.print(f"note: {escape(note)}")
    settings: dict[str, Any] = {
        "personas": _read_personas(persona) if persona is not None else None,
        "max_iterations": max_iterations,
        "threshold": threshold,
        "time_limit_s": _seconds(time_limit),
    }
    spec = ModelSpec(
        model=model, base_url=base_url, timeout_s=timeout, max_retries=max_retries
    ).validated()
    run = RunInfo(get_pattern("discussion").name, settings, _spec_record(spec))
    text = paper.read_text(encoding="utf-8")
    _start(run, spec, {"document": text}, thread, db, max_concurrency, json_output, archive, report)


def _read_personas(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"--persona {path}: cannot read: {exc.strerror}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"--persona {path}: not valid JSON ({exc})") from exc
    if not isinstance(data, list) or not all(isinstance(p, dict) for p in data):
        raise UsageError(
            f"--persona {path}: expected a JSON list of {{name, focus, description}} objects"
        )
    return data


def _seconds(value: str) -> float:
    """``30m`` / ``90s`` / ``1h`` / ``120`` -> seconds."""
    text = value.strip().lower()
    scale = {"s": 1, "m": 60, "h": 3600}.get(text[-1:])
    number = text[:-1] if scale else text
    try:
        seconds = float(number) * (scale or 1)
    except ValueError:
        raise UsageError(
            f"--time-limit {value!r} is not a duration: use e.g. 30m, 90s, 1h or seconds"
        ) from None
    if seconds <= 0:
        raise UsageError(f"--time-limit {value!r} must be positive")
    return seconds


def _start(
    run: RunInfo,
    spec: ModelSpec,
    graph_input: dict[str, Any],
    thread: str | None,
    db: str,
    max_concurrency: int | None,
    json_output: bool,
    archive: str | None,
    report: Path | None = None,
) -> None:
    """Validate a new run's settings, open the database and run a new thread."""
    if thread is not None and not thread.strip():
        raise UsageError("--thread is empty: give a thread id or leave it out")
    _check_concurrency(max_concurrency)
    _validate_settings(run)
    with open_checkpointer(db) as saver:
        thread_id = thread or uuid.uuid4().hex[:12]
        if thread_exists(saver, thread_id):
            raise UsageError(
                f"thread {thread_id} already exists in {db}: "
                f"continue it with debategraph resume {thread_id}"
            )
        runner = _Runner(saver, run, spec, db, max_concurrency, json_output, archive, report)
        runner.run(thread_id, graph_input)


@app.command()
def resume(
    thread: Annotated[str, typer.Argument(help="The thread to continue.")],
    interject: InterjectOpt = None,
    approve: Annotated[
        bool, typer.Option("--approve", help="Continue a paused thread as it is.")
    ] = False,
    model: Annotated[
        str | None, typer.Option("--model", help="Override the model the thread used.")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="Override the endpoint the thread used.")
    ] = None,
    timeout: TimeoutOpt = None,
    max_concurrency: ConcurrencyOpt = None,
    db: DbOpt = DEFAULT_DB,
    archive: ArchiveOpt = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="Discussions: where to write the report.")
    ] = None,
    json_output: JsonOpt = False,
) -> None:
    """Continue a stopped or paused thread from its last checkpoint."""
    _check_concurrency(max_concurrency)
    if interject is not None and approve:
        raise UsageError("give --interject TEXT or --approve, not both")
    with open_checkpointer(db) as saver:
        run = _require_run(saver, thread, db)
        stored = dict(run.model)
        if model is not None:
            stored.update(model=model, base_url=base_url)
        elif base_url is not None:
            stored["base_url"] = base_url
        if timeout is not None:
            stored["timeout_s"] = timeout
        spec = ModelSpec(**stored).validated()
        runner = _Runner(saver, run, spec, db, max_concurrency, json_output, archive, report)
        state = thread_state(runner.graph, thread)
        if state.status == "finished":
            err.print(f"thread {thread} is already finished; its result:")
            runner.finish(thread, 0.0)
            return
        _refuse_running(thread, state)
        graph_input: Command[Any] | None = None
        if state.status == "waiting":
            reply = {INTERJECT: interject} if interject is not None else {APPROVE: True}
            if interject is not None or approve:
                graph_input = Command(resume=reply)
        elif interject is not None:
            _interject(runner.graph, thread, interject, state)
        runner.run(thread, graph_input)


@app.command("interject")
def interject_command(
    thread: Annotated[str, typer.Argument(help="A waiting or stopped thread.")],
    text: Annotated[str, typer.Argument(help="What every agent reads next round.")],
    db: DbOpt = DEFAULT_DB,
) -> None:
    """Add a human message to a waiting or stopped thread; it is read next round."""
    with open_checkpointer(db) as saver:
        run = _require_run(saver, thread, db)
        graph = _compile(saver, run, None)
        state = thread_state(graph, thread)
        _interject(graph, thread, text, state)
    err.print(
        f"interjection added to thread {thread} (read in round {(state.round or 0) + 1}); "
        f"continue with: debategraph resume {thread} --db {db}"
    )


@app.command()
def threads(db: DbOpt = DEFAULT_DB, json_output: JsonOpt = False) -> None:
    """List the threads in the checkpoint database with their status."""
    rows = []
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
            if summary.run is not None and summary.run.pattern in PATTERNS:
                graph = _compile(saver, summary.run, None)
                title_of = get_pattern(summary.run.pattern).title
                state = thread_state(graph, summary.thread_id)
                values = graph.get_state(thread_config(summary.thread_id)).values
                row.update(
                    status=state.status,
                    round=state.round,
                    where=state.where(),
                    question=title_of(values),
                )
            rows.append(row)
    if json_output:
        _emit_json(rows)
        return
    if not rows:
        err.print(f"no threads in {db}")
        return
    table = Table("thread", "pattern", "status", "where", "updated", "question / topic")
    for row in rows:
        table.add_row(
            row["thread_id"],
            row["pattern"] or "?",
            row["status"] or "?",
            escape(row["where"] or "-"),
            str(row["updated"])[:19].replace("T", " "),
            escape(_short(row["question"] or "", 50)),
        )
    out.print(table)


@app.command()
def show(
    thread: Annotated[str, typer.Argument(help="The thread to print.")],
    db: DbOpt = DEFAULT_DB,
    json_output: JsonOpt = False,
) -> None:
    """Print a thread's transcript and result."""
    with open_checkpointer(db) as saver:
        run = _require_run(saver, thread, db)
        pattern = get_pattern(run.pattern)
        graph = _compile(saver, run, None)
        values = graph.get_state(thread_config(thread)).values
        state = thread_state(graph, thread)
    if json_output:
        _emit_json(export_json(thread, values, status=state.status))
        return
    out.print(f"[bold]{escape(pattern.title(values))}[/bold]  ({state.status})")
    for turn in values.get("transcript", []):
        out.print(_turn_line(turn))
        if turn.content and turn.role != "user":
            out.print(f"    {escape(_short(turn.content, 400))}")
    if state.status == "finished":
        _print_result(pattern, result_of(pattern, thread, values, 0.0), json_output=False)
    else:
        out.print(f"{state.status}: {escape(state.where())}")


@app.command()
def history(
    thread: Annotated[str, typer.Argument(help="The thread whose checkpoints to list.")],
    db: DbOpt = DEFAULT_DB,
    json_output: JsonOpt = False,
) -> None:
    """List a thread's checkpoints, newest first (ids to fork from)."""
    with open_checkpointer(db) as saver:
        graph = _compile(saver, _require_run(saver, thread, db), None)
        entries = thread_history(graph, thread)
    if json_output:
        _emit_json([jsonable(asdict(e)) for e in entries])
        return
    table = Table("checkpoint", "step", "round", "next", "source", "created")
    for e in entries:
        table.add_row(
            e.checkpoint_id,
            str(e.step),
            "-" if e.round is None else str(e.round),
            ", ".join(e.next) or "(end)",
            str(e.source),
            str(e.created_at)[:19].replace("T", " "),
        )
    out.print(table)


@app.command()
def fork(
    thread: Annotated[str, typer.Argument(help="The thread to branch from.")],
    at: Annotated[str, typer.Option("--at", help="Checkpoint id (see debategraph history).")],
    interject: InterjectOpt = None,
    new_thread: Annotated[
        str | None, typer.Option("--thread", help="Id of the new thread (generated if absent).")
    ] = None,
    max_concurrency: ConcurrencyOpt = None,
    db: DbOpt = DEFAULT_DB,
    archive: ArchiveOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Continue a thread from an earlier checkpoint as a new thread; the original stays."""
    _check_concurrency(max_concurrency)
    with open_checkpointer(db) as saver:
        run = _require_run(saver, thread, db)
        spec = ModelSpec(**run.model).validated()
        runner = _Runner(saver, run, spec, db, max_concurrency, json_output, archive)
        target = new_thread or uuid.uuid4().hex[:12]
        fork_thread(runner.graph, saver, thread, at, target)
        err.print(f"forked thread {thread} at checkpoint {at} into thread {target}")
        if interject is not None:
            try:
                _interject(runner.graph, target, interject, thread_state(runner.graph, target))
            except UsageError:
                saver.delete_thread(target)
                raise
        runner.run(target, None)


@app.command()
def prune(
    keep_last: Annotated[
        int | None,
        typer.Option("--keep-last", help="Checkpoints to keep per finished thread [default: 1]."),
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
    with open_checkpointer(db) as saver:

        def graph_for(thread_id: str) -> Graph | None:
            run = read_run(saver, thread_id)
            if run is None or run.pattern not in PATTERNS:
                return None
            return _compile(saver, run, None)

        report = prune_threads(
            graph_for,
            saver,
            keep_last=keep_last if keep_last is not None else 1,
            finished_older_than_days=finished_older_than,
        )
    if json_output:
        _emit_json(jsonable(asdict(report)))
        return
    saved = report.bytes_before - report.bytes_after
    share = saved / report.bytes_before if report.bytes_before else 0.0
    out.print(
        f"pruned {report.threads_pruned} finished thread(s): {report.checkpoints_deleted} "
        f"checkpoint(s) removed; {report.bytes_before:,} -> {report.bytes_after:,} bytes "
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
    with open_checkpointer(db) as saver:
        graph = _compile(saver, _require_run(saver, thread, db), None)
        values = graph.get_state(thread_config(thread)).values
        status = thread_state(graph, thread).status
    if fmt == "md":
        text = render_markdown(thread, values, status=status)
    else:
        text = json.dumps(export_json(thread, values, status=status), indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.write_text(text)
    except OSError as exc:
        raise UsageError(f"--output {output}: cannot write: {exc.strerror}") from exc
    err.print(f"wrote {output}")


@app.command()
def doctor(
    model: Annotated[
        str,
        typer.Option(
            "--model", help="'local', 'local:PATH.gguf', or the model name an endpoint serves."
        ),
    ] = LOCAL,
    base_url: BaseUrlOpt = None,
    db: DbOpt = DEFAULT_DB,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Seconds per request the checks make.")
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print one JSON list of the checks.")
    ] = False,
) -> None:
    """Check Python, packages, the model (file, runtime, speed or endpoint) and --db."""
    from debategraph import doctor as checks  # imported here: keeps the CLI quick to start

    # One request per probe (no client retries): the doctor reports what the endpoint does.
    spec = checks.check_input(
        ModelSpec(model=model, base_url=base_url, timeout_s=timeout, max_retries=0)
    )
    results = []
    for check in checks.run_checks(spec, db):
        results.append(check)
        if not json_output:
            mark = "[green]✓[/green]" if check.ok else "[red]✗[/red]"
            out.print(f"{mark} {escape(check.name)}: {escape(check.detail)}")
    failed = sum(not check.ok for check in results)
    if json_output:
        _emit_json([check.as_dict() for check in results])
    elif failed:
        out.print(f"[red]{failed} of {len(results)} checks failed[/red]")
    else:
        out.print(f"[green]all {len(results)} checks passed[/green]")
    if failed:
        raise typer.Exit(1)


# -- running ---------------------------------------------------------------------------


class _Runner:
    """Runs one thread of a pattern to its end, a pause or a failure, and reports it."""

    def __init__(
        self,
        saver: BaseCheckpointSaver[Any],
        run: RunInfo,
        spec: ModelSpec,
        db: str,
        max_concurrency: int | None,
        json_output: bool,
        archive: str | None,
        report: Path | None = None,
    ) -> None:
        self.saver = saver
        self.report = report
        self.run_info = run
        self.db = db
        self.pattern = get_pattern(run.pattern)
        self.max_concurrency = max_concurrency or self.pattern.agents_per_round(run.settings)
        # The embedded model serves as many requests at once as the run makes.
        self.spec = replace(spec, slots=self.max_concurrency).validated() if spec.is_local else spec
        self.json_output = json_output
        self.archive = archive or default_archive(db)
        self.graph = _compile(saver, run, None)

    def run(self, thread_id: str, graph_input: Any) -> None:
        """Stream the thread until it finishes, pauses or fails.

        Args:
            thread_id: The thread.
            graph_input: The input (a new debate), ``None`` (continue) or a ``Command``.

        Raises:
            ModelUnavailableError: If the endpoint fails (the thread stays resumable).
        """
        resume_hint = f"debategraph resume {thread_id} --db {self.db}"
        err.print(
            f"thread [bold]{thread_id}[/bold] · db {escape(self.db)} · "
            f"model {escape(_model_label(self.spec))} · "
            f"{self.pattern.describe(self.run_info.settings)}"
        )
        graph = _compile(self.saver, self.run_info, bind_model(self.spec))
        config: RunnableConfig = {
            **thread_config(thread_id),
            "recursion_limit": self.pattern.recursion_limit(self.run_info.settings),
            "max_concurrency": self.max_concurrency,
            "metadata": self.run_info.to_metadata(),
        }
        started = time.perf_counter()
        progress = _Progress(stream_text=self.pattern.streams_text and not self.json_output)
        modes: list[StreamMode] = ["updates", "messages"] if progress.stream_text else ["updates"]
        while True:
            try:
                for mode, chunk in graph.stream(
                    graph_input, config, stream_mode=modes, durability="sync"
                ):
                    progress.show(mode, chunk)
            except ModelUnavailableError as exc:
                if self.json_output:
                    result = self._result(thread_id, time.perf_counter() - started)
                    _emit_json({**result, "termination_reason": "error", "error": str(exc)})
                raise ModelUnavailableError(
                    f"{exc}; thread {thread_id} is resumable: {resume_hint}"
                ) from exc
            except KeyboardInterrupt:
                _fail(f"interrupted; thread {thread_id} is resumable: {resume_hint}", 130)
            state = thread_state(graph, thread_id)
            if state.status != "waiting":
                break
            payload = graph.get_state(thread_config(thread_id)).interrupts[0].value
            reply = _ask(payload) if _interactive(self.json_output) else None
            if reply is None:
                self._report_waiting(thread_id, graph, payload, time.perf_counter() - started)
                return
            graph_input = Command(resume=reply)
        self.finish(thread_id, time.perf_counter() - started)

    def finish(self, thread_id: str, wall_s: float) -> None:
        """Archive a finished thread and print its result.

        Args:
            thread_id: The thread.
            wall_s: Wall time of this run.

        Raises:
            UsageError: If the archive cannot be written (the checkpoints are intact).
        """
        values = self.graph.get_state(thread_config(thread_id)).values
        result = result_of(self.pattern, thread_id, values, wall_s)
        if values.get("report") is not None:
            result["report_file"] = str(self._write_report(thread_id, values))
        try:
            archive_debate(
                self.archive,
                thread_id=thread_id,
                pattern=self.run_info.pattern,
                values=values,
                status="finished",
            )
        except UsageError as exc:
            _print_result(self.pattern, result, self.json_output)
            raise UsageError(
                f"{exc} (the debate itself is saved in {self.db}, thread {thread_id})"
            ) from exc
        _print_result(self.pattern, result, self.json_output)

    def _write_report(self, thread_id: str, values: Mapping[str, Any]) -> Path:
        path = self.report or Path(f"discussion-{thread_id}.md")
        text = render_report_markdown(
            values["report"],
            title=self.pattern.title(values),
            termination_reason=values.get("termination_reason"),
            convergence=values.get("convergence") or (),
            insights=values.get("insights"),
        )
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--report {path}: cannot write: {exc.strerror}") from exc
        return path

    def _result(self, thread_id: str, wall_s: float) -> dict[str, Any]:
        values = self.graph.get_state(thread_config(thread_id)).values
        return result_of(self.pattern, thread_id, values, wall_s)

    def _report_waiting(self, thread_id: str, graph: Graph, payload: Any, wall_s: float) -> None:
        hint = f"debategraph resume {thread_id} --db {self.db} --approve | --interject TEXT"
        if self.json_output:
            result = self._result(thread_id, wall_s)
            _emit_json({**result, "status": "waiting", "interrupt": payload, "resume": hint})
            return
        err.print(f"thread {thread_id} is waiting after round {payload.get('round')}: {hint}")


def _interactive(json_output: bool) -> bool:
    return not json_output and sys.stdin.isatty() and sys.stderr.isatty()


def _ask(payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Ask the human at a round boundary: Enter approves, text interjects, q stops here."""
    err.print(f"[bold]{escape(str(payload.get('message', 'Paused.')))}[/bold]")
    try:
        text = err.input("[Enter] continue · type a message to interject · q to stop here: ")
    except EOFError:
        return None
    if text.strip().lower() == "q":
        return None
    return {INTERJECT: text} if text.strip() else {APPROVE: True}


def _interject(graph: Graph, thread_id: str, text: str, state: ThreadState) -> None:
    """Add a human message to a thread through ``update_state`` (LangGraph's own API)."""
    if not text.strip():
        raise UsageError("interjection text is empty")
    _refuse_running(thread_id, state)
    if state.status == "finished":
        raise UsageError(
            f"thread {thread_id} is finished: branch it instead with "
            f"debategraph fork {thread_id} --at CHECKPOINT --interject TEXT"
        )
    if not (state.status == "waiting" or state.at_round_boundary):
        raise UsageError(
            f"thread {thread_id} stopped in the middle of round {state.round} "
            f"(next: {', '.join(state.pending) or '-'}); interjections go between rounds: "
            f"let it finish the round (debategraph resume) or run with --pause-after-round"
        )
    turn = interjection(text, after_round=state.round or 0)
    # As the human node when waiting (that also answers its pause), else as the last node.
    as_node = HUMAN_NODE if state.status == "waiting" else None
    try:
        graph.update_state(thread_config(thread_id), {"transcript": [turn]}, as_node=as_node)
    except InvalidUpdateError as exc:
        raise UsageError(f"cannot interject into thread {thread_id} here: {exc}") from exc


def _refuse_running(thread_id: str, state: ThreadState) -> None:
    if state.status == "running":
        raise UsageError(
            f"thread {thread_id} is running (pid {state.pid}): wait until it stops or pauses"
        )


def _compile(saver: BaseCheckpointSaver[Any], run: RunInfo, binding: Any) -> Graph:
    pattern = get_pattern(run.pattern)
    return pattern.build(binding, **run.settings).compile(checkpointer=saver, name=pattern.name)


def _require_run(saver: BaseCheckpointSaver[Any], thread: str, db: str) -> RunInfo:
    run = read_run(saver, thread)
    if run is None:
        if thread_exists(saver, thread):
            raise UsageError(f"thread {thread} in {db} was not started by debategraph")
        raise UsageError(f"unknown thread id {thread!r} in {db}: see debategraph threads --db {db}")
    return run


def _validate_settings(run: RunInfo) -> None:
    try:
        get_pattern(run.pattern).build(None, **run.settings)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _check_concurrency(value: int | None) -> None:
    if value is not None and value < 1:
        raise UsageError(f"--max-concurrency {value} must be at least 1")


def _parse_topology(value: str) -> str | dict[str, list[str]]:
    if value in TOPOLOGY_NAMES:
        return value
    path = Path(value)
    if not path.suffix == ".json" and not path.is_file():
        raise UsageError(
            f"unknown topology {value!r}: use {', '.join(TOPOLOGY_NAMES)} or a JSON file"
        )
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise UsageError(f"--topology {value}: cannot read: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"--topology {value}: not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict) or not all(
        isinstance(v, list) and all(isinstance(x, str) for x in v) for v in data.values()
    ):
        raise UsageError(f"--topology {value}: expected an object {{solver: [solvers it hears]}}")
    return {str(k): list(v) for k, v in data.items()}


def _spec_record(spec: ModelSpec) -> dict[str, Any]:
    record = asdict(spec)
    record.pop("api_key", None)
    return record


def _model_label(spec: ModelSpec) -> str:
    if spec.model == LOCAL:
        return "SmolLM2-135M (embedded)"
    if spec.is_local:
        return f"{Path(spec.model.partition(':')[2]).name} (embedded)"
    return f"{spec.model} @ {spec.base_url or 'api.openai.com'}"


# -- output ----------------------------------------------------------------------------


class _Progress:
    """Live view of a run on stderr.

    Rounds, each agent's turn as it lands, and, for patterns whose agents write prose,
    their tokens as they are generated.
    """

    def __init__(self, *, stream_text: bool) -> None:
        self.stream_text = stream_text
        self.speaking: str | None = None
        self.phase: str | None = None

    def show(self, mode: str, chunk: Any) -> None:
        if mode == "messages":
            self._token(*chunk)
        elif isinstance(chunk, Mapping):
            for node, update in chunk.items():
                if isinstance(update, dict):
                    self._update(node, update)

    def _token(self, message: Any, metadata: Mapping[str, Any]) -> None:
        node = str(metadata.get("langgraph_node", ""))
        text = getattr(message, "content", "")
        if not isinstance(text, str) or not text or node in _NOT_SPOKEN:
            return  # structured calls (moderator, judge) print their result instead
        if self.speaking != node:
            self._end_speech()
            err.print(f"  [bold]{escape(node)}[/bold]: ", end="")
            self.speaking = node
        err.print(escape(text), end="")

    def _end_speech(self) -> None:
        if self.speaking is not None:
            err.print()
            self.speaking = None

    def _update(self, node: str, update: Mapping[str, Any]) -> None:
        self._end_speech()
        phase = _PHASES.get(node.split("_", 1)[0])
        if phase is not None and phase != self.phase:
            err.print(f"  [bold]{phase}[/bold]")
        self.phase = phase or self.phase
        if node == "open_iteration" and "iteration" in update:
            err.print(f"[bold]iteration {update['iteration']}[/bold]")
        elif node == OPEN_ROUND_NODE and "round" in update:
            err.print(f"[bold]round {update['round']}[/bold]")
        elif node == CLOSE_ROUND_NODE and update.get("rounds"):
            record = update["rounds"][0]
            err.print(
                f"  round {record.round} done: {_tally(record)} · "
                f"{record.usage.total_tokens:,} tokens this round"
            )
        elif update.get("moderator_decisions"):
            decision = update["moderator_decisions"][-1]
            settled = "settled" if decision.settled else "not settled"
            err.print(
                f"  [dim]moderator: {settled}, leading {escape(decision.leading)}: "
                f"{escape(_short(decision.reason, 160))}[/dim]"
            )
        elif update.get("verdict") is not None:
            verdict = update["verdict"]
            err.print(f"  judge: winner [bold]{escape(verdict.winner)}[/bold]")
        elif "transcript" in update:
            for turn in update["transcript"]:
                if turn.stage == "argue" and self.stream_text:
                    continue  # already streamed token by token
                err.print("  " + _turn_line(turn, with_round=False))


#: Discussion phases, by the first word of their agents' node names.
_PHASES = {
    "analyse": "phase 1: initial analysis",
    "ask": "phase 2: questioning",
    "answer": "phase 3: responding",
    "assess": "phase 4: convergence",
    "consensus": "phase 5: consensus",
}

#: Nodes whose model output is structured, not prose: never streamed as text.
_NOT_SPOKEN = frozenset({"moderator", "judge", "summarizer"})


def _tally(record: RoundRecord) -> str:
    counts: dict[str, int] = {}
    for answer in record.answers.values():
        key = answer if answer is not None else "abstain"
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{k} x{v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


def _turn_line(turn: Turn, *, with_round: bool = True) -> str:
    head = f"[dim]r{turn.round}[/dim] " if with_round else ""
    cost = f"[dim]{turn.usage.latency_s:.1f}s {turn.usage.total_tokens} tok[/dim]"
    if turn.role == "user":
        return f"{head}[bold]user[/bold] (interjection): {escape(_short(turn.content, 200))}"
    if turn.stage != "solve":
        return f"{head}{turn.agent:<10} ({turn.stage}): {escape(_short(turn.content, 300))}  {cost}"
    if turn.answer is None:
        return f"{head}{turn.agent:<10} abstains: {escape(turn.reason or 'no answer')}  {cost}"
    return f"{head}{turn.agent:<10} → [bold]{escape(turn.answer)}[/bold]  {cost}"


def _print_result(pattern: Pattern, result: Mapping[str, Any], json_output: bool) -> None:
    if json_output:
        _emit_json(result)
        return
    usage = result["usage"]
    tail = (
        f"{result['termination_reason']} · {usage['calls']} calls, "
        f"{usage['prompt_tokens'] + usage['completion_tokens']:,} tokens · "
        f"{result['wall_s']:.1f}s · thread {result['thread_id']}"
    )
    if "report" in result:
        report = result.get("report") or {}
        out.print(
            f"consensus: {len(report.get('consensus_points', []))} point(s), "
            f"{len(report.get('divergent_views', []))} divergent view(s), confidence "
            f"{report.get('overall_confidence', 0):.2f} · "
            f"{result['iterations_completed']} iteration(s) · {tail}"
        )
        if result.get("report_file"):
            out.print(f"  report written to {escape(result['report_file'])}")
        return
    if pattern.name != GRAPH_NAME:
        winner = result.get("winner")
        shown = escape(str(winner)) if winner else "no verdict (no judge)"
        out.print(f"winner [bold]{shown}[/bold] · {result['rounds_completed']} rounds · {tail}")
        verdict = result.get("verdict") or {}
        if verdict.get("rationale"):
            out.print(f"  {escape(_short(verdict['rationale'], 300))}")
        return
    votes = result["votes"]
    winner = result["answer"]
    n = sum(len(r["answers"]) for r in result["rounds"][-1:]) or sum(votes.values())
    shown = escape(str(winner)) if winner is not None else "none (every solver abstained)"
    out.print(
        f"answer [bold]{shown}[/bold]  votes {votes.get(winner, 0)}/{n} · "
        f"agreement {result['agreement']:.2f} · {tail}"
    )
    if result.get("tie_break"):
        out.print(f"  {escape(result['tie_break'])}")


def _emit_json(value: Any) -> None:
    """Write one JSON document on one line to stdout (machine-readable output)."""
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


if __name__ == "__main__":  # pragma: no cover
    main()
