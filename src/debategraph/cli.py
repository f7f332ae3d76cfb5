"""The ``debategraph`` command: run, resume and inspect debates on a SQLite checkpointer.

Every run is durable: it writes checkpoints to ``--db`` (default ``debates.sqlite``)
under a thread id, so Ctrl-C, a crash or a dead endpoint leave a thread that
``debategraph resume THREAD`` continues. Errors print as one line (exit 2 for usage
errors, 1 for runtime failures, 130 when interrupted); no tracebacks.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from debategraph.checkpoints import (
    DEFAULT_DB,
    RunInfo,
    list_threads,
    open_checkpointer,
    read_run,
    thread_config,
    thread_exists,
    thread_status,
)
from debategraph.errors import DebategraphError, ModelUnavailableError, UsageError
from debategraph.graphs.solver_debate import GRAPH_NAME, build_solver_debate, recursion_limit
from debategraph.models import LOCAL, ModelSpec, bind_model
from debategraph.nodes.solver import CLOSE_ROUND_NODE, OPEN_ROUND_NODE
from debategraph.state import RoundRecord, Turn, Usage
from debategraph.strategies import TOPOLOGY_NAMES

app = typer.Typer(
    name="debategraph",
    help="Multi-agent debate graphs on LangGraph, durable on SQLite.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True, highlight=False, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)

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
    int, typer.Option("--max-concurrency", help="Agent calls in flight at once.")
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
    model: ModelOpt = LOCAL,
    base_url: BaseUrlOpt = None,
    timeout: TimeoutOpt = None,
    max_retries: RetriesOpt = 2,
    max_concurrency: ConcurrencyOpt = 4,
    db: DbOpt = DEFAULT_DB,
    thread: Annotated[
        str | None, typer.Option("--thread", help="Thread id (generated if absent).")
    ] = None,
    json_output: JsonOpt = False,
) -> None:
    """Solvers debate a math question on a communication topology, then vote."""
    if not question.strip():
        raise UsageError('question is empty: give the problem text, e.g. debategraph solve "2+3?"')
    if thread is not None and not thread.strip():
        raise UsageError("--thread is empty: give a thread id or leave it out")
    _check_concurrency(max_concurrency)
    settings: dict[str, Any] = {
        "agents": agents,
        "rounds": rounds,
        "topology": _parse_topology(topology),
        "neighbours": neighbours,
        "token_budget": token_budget,
        "stop_when_unanimous": unanimous,
    }
    _validate_settings(settings)
    spec = ModelSpec(
        model=model, base_url=base_url, timeout_s=timeout, max_retries=max_retries
    ).validated()
    run = RunInfo(GRAPH_NAME, settings, _spec_record(spec))
    with open_checkpointer(db) as saver:
        thread_id = thread or uuid.uuid4().hex[:12]
        if thread_exists(saver, thread_id):
            raise UsageError(
                f"thread {thread_id} already exists in {db}: "
                f"continue it with debategraph resume {thread_id}"
            )
        _execute(
            saver, run, spec, {"question": question}, thread_id, db, max_concurrency, json_output
        )


@app.command()
def resume(
    thread: Annotated[str, typer.Argument(help="The thread to continue.")],
    model: Annotated[
        str | None, typer.Option("--model", help="Override the model the thread used.")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="Override the endpoint the thread used.")
    ] = None,
    timeout: TimeoutOpt = None,
    max_concurrency: ConcurrencyOpt = 4,
    db: DbOpt = DEFAULT_DB,
    json_output: JsonOpt = False,
) -> None:
    """Continue an interrupted run from its last checkpoint."""
    _check_concurrency(max_concurrency)
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
        graph = _compile(saver, run, None)
        if thread_status(graph, thread) == "finished":
            err.print(f"thread {thread} is already finished; its result:")
            _print_result(_result(thread, graph, 0.0), json_output)
            return
        run = RunInfo(run.pattern, run.settings, _spec_record(spec))
        _execute(saver, run, spec, None, thread, db, max_concurrency, json_output)


@app.command()
def threads(db: DbOpt = DEFAULT_DB, json_output: JsonOpt = False) -> None:
    """List the threads in the checkpoint database with their status."""
    with open_checkpointer(db) as saver:
        rows = []
        for summary in list_threads(saver):
            row: dict[str, Any] = {
                "thread_id": summary.thread_id,
                "pattern": summary.run.pattern if summary.run else None,
                "status": None,
                "round": None,
                "step": summary.step,
                "updated": summary.updated,
                "question": None,
            }
            if summary.run is not None:
                graph = _compile(saver, summary.run, None)
                row["status"] = thread_status(graph, summary.thread_id)
                values = graph.get_state(thread_config(summary.thread_id)).values
                row["round"] = values.get("round")
                row["question"] = values.get("question")
            rows.append(row)
    if json_output:
        _emit_json(rows)
        return
    if not rows:
        err.print(f"no threads in {db}")
        return
    table = Table("thread", "pattern", "status", "round", "updated", "question")
    for row in rows:
        table.add_row(
            row["thread_id"],
            row["pattern"] or "?",
            row["status"] or "?",
            str(row["round"] or "-"),
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
        graph = _compile(saver, run, None)
        values = graph.get_state(thread_config(thread)).values
        status = thread_status(graph, thread)
    if json_output:
        _emit_json({"thread_id": thread, "status": status, **_jsonable(values)})
        return
    out.print(f"[bold]{escape(values.get('question', ''))}[/bold]  ({status})")
    for turn in values.get("transcript", []):
        out.print(_turn_line(turn))
        if turn.content:
            out.print(f"    {escape(_short(turn.content, 400))}")
    if values.get("termination_reason"):
        _print_result(_result_of(thread, values, 0.0), json_output=False)


# -- running ---------------------------------------------------------------------------


def _execute(
    saver: BaseCheckpointSaver[Any],
    run: RunInfo,
    spec: ModelSpec,
    graph_input: dict[str, Any] | None,
    thread_id: str,
    db: str,
    max_concurrency: int,
    json_output: bool,
) -> None:
    resume_hint = f"debategraph resume {thread_id} --db {db}"
    err.print(
        f"thread [bold]{thread_id}[/bold] · db {escape(db)} · model {escape(_model_label(spec))} · "
        f"{_settings_label(run.settings)}"
    )
    binding = bind_model(spec)
    graph = _compile(saver, run, binding)
    config: RunnableConfig = {
        **thread_config(thread_id),
        "recursion_limit": recursion_limit(int(run.settings["rounds"])),
        "max_concurrency": max_concurrency,
        "metadata": run.to_metadata(),
    }
    started = time.perf_counter()
    try:
        for chunk in graph.stream(graph_input, config, stream_mode="updates"):
            _show_progress(chunk)
    except ModelUnavailableError as exc:
        if json_output:
            result = _result(thread_id, graph, time.perf_counter() - started)
            _emit_json({**result, "termination_reason": "error", "error": str(exc)})
        raise ModelUnavailableError(
            f"{exc}; thread {thread_id} is resumable: {resume_hint}"
        ) from exc
    except KeyboardInterrupt:
        _fail(f"interrupted; thread {thread_id} is resumable: {resume_hint}", 130)
    _print_result(_result(thread_id, graph, time.perf_counter() - started), json_output)


def _compile(
    saver: BaseCheckpointSaver[Any], run: RunInfo, binding: Any
) -> CompiledStateGraph[Any, Any, Any, Any]:
    if run.pattern != GRAPH_NAME:
        raise UsageError(f"thread pattern {run.pattern!r} is not supported by this version")
    return build_solver_debate(binding, **run.settings).compile(checkpointer=saver, name=GRAPH_NAME)


def _require_run(saver: BaseCheckpointSaver[Any], thread: str, db: str) -> RunInfo:
    run = read_run(saver, thread)
    if run is None:
        if thread_exists(saver, thread):
            raise UsageError(f"thread {thread} in {db} was not started by debategraph")
        raise UsageError(f"unknown thread id {thread!r} in {db}: see debategraph threads --db {db}")
    return run


def _validate_settings(settings: Mapping[str, Any]) -> None:
    try:
        build_solver_debate(None, **settings)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _check_concurrency(value: int) -> None:
    if value < 1:
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
    return f"{spec.model} @ {spec.base_url or 'api.openai.com'}"


def _settings_label(settings: Mapping[str, Any]) -> str:
    topo = settings["topology"]
    if isinstance(topo, dict):
        shape = f"custom topology of {len(topo)} solvers"
    elif topo == "ring":
        k = settings["neighbours"] or min(2, settings["agents"] - 1)
        shape = f"{settings['agents']} solvers, ring k={k}"
    else:
        shape = f"{settings['agents']} solvers, {topo}"
    return f"{shape}, {settings['rounds']} rounds"


# -- output ----------------------------------------------------------------------------


def _show_progress(chunk: Mapping[str, Any]) -> None:
    for node, update in chunk.items():
        if not isinstance(update, dict):
            continue
        if node == OPEN_ROUND_NODE:
            err.print(f"[bold]round {update['round']}[/bold]")
        elif "transcript" in update:
            for turn in update["transcript"]:
                err.print("  " + _turn_line(turn, with_round=False))
        elif node == CLOSE_ROUND_NODE:
            record = update["rounds"][0]
            tally = _tally(record)
            err.print(
                f"  round {record.round} done: {tally} · "
                f"{record.usage.total_tokens:,} tokens this round"
            )


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
        return f"{head}[bold]user[/bold]: {escape(_short(turn.content, 120))}"
    if turn.answer is None:
        return f"{head}{turn.agent:<10} abstains: {escape(turn.reason or 'no answer')}  {cost}"
    return f"{head}{turn.agent:<10} → [bold]{escape(turn.answer)}[/bold]  {cost}"


def _result(
    thread_id: str, graph: CompiledStateGraph[Any, Any, Any, Any], wall_s: float
) -> dict[str, Any]:
    return _result_of(thread_id, graph.get_state(thread_config(thread_id)).values, wall_s)


def _result_of(thread_id: str, values: Mapping[str, Any], wall_s: float) -> dict[str, Any]:
    usage: Usage = values.get("usage") or Usage()
    return {
        "thread_id": thread_id,
        "answer": values.get("answer"),
        "votes": values.get("votes", {}),
        "agreement": values.get("agreement", 0.0),
        "tie_break": values.get("tie_break"),
        "rounds": [r.model_dump(include={"round", "answers"}) for r in values.get("rounds", [])],
        "termination_reason": values.get("termination_reason"),
        "usage": usage.model_dump(include={"prompt_tokens", "completion_tokens", "calls"}),
        "wall_s": round(wall_s, 3),
    }


def _print_result(result: Mapping[str, Any], json_output: bool) -> None:
    if json_output:
        _emit_json(result)
        return
    votes = result["votes"]
    winner = result["answer"]
    n = sum(len(r["answers"]) for r in result["rounds"][-1:]) or sum(votes.values())
    shown = escape(str(winner)) if winner is not None else "none (every solver abstained)"
    out.print(
        f"answer [bold]{shown}[/bold]  votes {votes.get(winner, 0)}/{n} · "
        f"agreement {result['agreement']:.2f} · {result['termination_reason']} · "
        f"{result['usage']['calls']} calls, "
        f"{result['usage']['prompt_tokens'] + result['usage']['completion_tokens']:,} tokens · "
        f"{result['wall_s']:.1f}s · thread {result['thread_id']}"
    )
    if result.get("tie_break"):
        out.print(f"  {escape(result['tie_break'])}")


def _emit_json(value: Any) -> None:
    """Write one JSON document on one line to stdout (machine-readable output)."""
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


if __name__ == "__main__":  # pragma: no cover
    main()
