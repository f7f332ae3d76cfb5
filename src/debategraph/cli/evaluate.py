"""``debategraph eval gsm8k|mcq``: accuracy, cost and paired tests of solver modes on a dataset."""

from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from debategraph.cli.app import app
from debategraph.cli.options import BaseUrlOpt, JsonOpt, ModelOpt, RetriesOpt, TimeoutOpt
from debategraph.cli.render import emit_json, err, fail, model_label, out
from debategraph.errors import DebategraphError, UsageError
from debategraph.eval.modes import MODES
from debategraph.models.spec import LOCAL, ModelSpec

if TYPE_CHECKING:
    from collections.abc import Callable

    from debategraph.eval.datasets import Loaded
    from debategraph.eval.records import Item, Outcome
    from debategraph.eval.runner import EvalPlan

eval_app = typer.Typer(
    name="eval",
    help="Accuracy and cost of single, vote and debate modes on a dataset, resumable.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(eval_app)

#: Where the checkpoints go unless ``--db`` says otherwise: inside ``--out``, so one
#: folder holds an eval's threads and its results, and the same command resumes it.
CHECKPOINTS_FILE = "checkpoints.sqlite"


DatasetOpt = Annotated[
    Path,
    typer.Option(
        "--dataset",
        help="JSONL file, one question per line: gsm8k lines have question and answer "
        "(the gold number after '#### '), mcq lines question, choices and answer (a letter).",
    ),
]
OutOpt = Annotated[
    Path | None,
    typer.Option("--out", help="Folder for the results \\[default: eval-gsm8k or eval-mcq]."),
]


def _eval_command(kind: str) -> Callable[..., None]:
    """The command of one dataset kind; both kinds take the same options."""

    def command(
        dataset: DatasetOpt,
        limit: Annotated[
            int | None, typer.Option("--limit", help="Questions to run \\[default: all].")
        ] = None,
        offset: Annotated[int, typer.Option("--offset", help="Questions to skip first.")] = 0,
        seed: Annotated[
            int | None,
            typer.Option("--seed", help="Shuffle the questions with this seed before --offset."),
        ] = None,
        modes: Annotated[
            str, typer.Option("--modes", help=f"Comma-separated: {', '.join(MODES)}.")
        ] = ",".join(MODES),
        agents: Annotated[
            int, typer.Option("--agents", help="Solvers of the vote and debate modes.")
        ] = 3,
        rounds: Annotated[int, typer.Option("--rounds", help="Rounds of the debate modes.")] = 2,
        neighbours: Annotated[
            int, typer.Option("--neighbours", help="Solvers each one hears on the ring.")
        ] = 1,
        parallel: Annotated[
            int, typer.Option("--parallel", help="Questions in flight at once.")
        ] = 4,
        out_dir: OutOpt = None,
        model: ModelOpt = LOCAL,
        base_url: BaseUrlOpt = None,
        timeout: TimeoutOpt = None,
        max_retries: RetriesOpt = 2,
        db: Annotated[
            str | None,
            typer.Option(
                "--db",
                help=f"Checkpoint database (SQLite path or Postgres URL) "
                f"\\[default: {CHECKPOINTS_FILE} in --out].",
            ),
        ] = None,
        json_output: JsonOpt = False,
    ) -> None:
        spec = ModelSpec(
            model=model, base_url=base_url, timeout_s=timeout, max_retries=max_retries
        ).validated()
        run_eval(
            kind,
            dataset,
            selection=(offset, limit, seed),
            modes=modes,
            shape=(agents, rounds, neighbours),
            parallel=parallel,
            out_dir=out_dir or Path(f"eval-{kind}"),
            spec=spec,
            db=db,
            json_output=json_output,
        )

    return command


eval_app.command(
    "gsm8k",
    help="Run GSM8K-style math questions (the gold number after '#### ') in each mode.",
)(_eval_command("gsm8k"))
eval_app.command(
    "mcq",
    help="Run multiple-choice questions (question, choices, answer letter) in each mode.",
)(_eval_command("mcq"))


def check_out_dir(path: Path) -> None:
    """Make ``--out`` and prove it writable before any question runs.

    Args:
        path: The folder.

    Raises:
        UsageError: If it cannot be made or written to.
    """
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise UsageError(f"--out {path}: not writable: {exc.strerror or exc}") from exc


def _load(kind: str, dataset: Path) -> Loaded:
    from debategraph.eval.datasets import load_gsm8k, load_mcq

    return load_gsm8k(dataset) if kind == "gsm8k" else load_mcq(dataset)


def run_eval(
    kind: str,
    dataset: Path,
    *,
    selection: tuple[int, int | None, int | None],
    modes: str,
    shape: tuple[int, int, int],
    parallel: int,
    out_dir: Path,
    spec: ModelSpec,
    db: str | None,
    json_output: bool,
) -> None:
    """Check everything, run the eval (resuming what is saved), write and print results.

    Args:
        kind: ``gsm8k`` or ``mcq``.
        dataset: The JSONL file.
        selection: ``--offset``, ``--limit``, ``--seed``.
        modes: ``--modes``.
        shape: ``--agents``, ``--rounds``, ``--neighbours``.
        parallel: ``--parallel``.
        out_dir: ``--out``.
        spec: The model.
        db: ``--db`` (``None``: a file in ``--out``).
        json_output: ``--json``.

    Raises:
        UsageError: On bad input, before any question runs.
        DebategraphError: If the endpoint, the embedded server or the database fails
            midway, naming the question and how to resume (every answer so far is saved).
    """
    from debategraph.eval.datasets import select
    from debategraph.eval.modes import (
        check_settings,
        parse_modes,
        plain_vote_modes,
        plain_vote_note,
    )

    agents, rounds, neighbours = shape
    chosen = parse_modes(modes)
    if parallel < 1:
        raise UsageError(f"--parallel {parallel} must be at least 1")
    check_settings(chosen, agents=agents, rounds=rounds, neighbours=neighbours)
    votes_only = plain_vote_modes(chosen, rounds)
    notes = [plain_vote_note(votes_only)] if votes_only else []
    for line in notes:
        err.print(f"note: {escape(line)}")
    loaded = _load(kind, dataset)
    offset, limit, seed = selection
    items, note = select(loaded.items, offset=offset, limit=limit, seed=seed)
    check_out_dir(out_dir)
    if loaded.skipped:
        lines = ", ".join(map(str, loaded.skipped_lines[:5]))
        more = ", ..." if loaded.skipped > 5 else ""
        err.print(
            f"note: {loaded.skipped} question(s) skipped, their gold answer unusable "
            f"(line {lines}{more})"
        )
    if note:
        err.print(f"note: {escape(note)}")
    if spec.is_local:
        spec = _local_slots(spec, parallel * agents)
    from debategraph.eval.runner import EvalPlan

    plan = EvalPlan(
        chosen, agents, rounds, neighbours, parallel, _spec_record(spec), _model_key(spec)
    )
    started = time.perf_counter()
    outcomes, counts = _run(plan, spec, items, db or str(out_dir / CHECKPOINTS_FILE), json_output)
    meta = {
        "kind": kind,
        "dataset": str(dataset),
        "questions": len(items),
        "skipped": loaded.skipped,
        "skipped_lines": list(loaded.skipped_lines),
        "offset": offset,
        "limit": limit,
        "seed": seed,
        "agents": agents,
        "rounds": rounds,
        "neighbours": neighbours,
        "plain_vote_modes": votes_only,
        "notes": notes,
        "parallel": parallel,
        "model": model_label(spec),
        "threads": counts,
        "wall_s": round(time.perf_counter() - started, 3),
    }
    _report(out_dir, plan.modes, outcomes, meta, json_output)


def _spec_record(spec: ModelSpec) -> dict[str, Any]:
    from debategraph.cli.runner import spec_record

    return spec_record(spec)


def _model_key(spec: ModelSpec) -> dict[str, Any]:
    """What of the model decides its answers: part of each thread's id.

    Not the client's settings (timeout, retries, slots); for the embedded model, the
    GGUF file ``local`` or ``local:PATH`` means here (``DEBATEGRAPH_GGUF`` may change it).
    """
    fields = ("model", "base_url", "temperature", "max_tokens", "structured_method")
    key: dict[str, Any] = {name: getattr(spec, name) for name in fields}
    if spec.is_local:
        from debategraph.local import resolve_gguf

        key["gguf"] = str(resolve_gguf(spec.model).resolve())
    return key


def _local_slots(spec: ModelSpec, wanted: int) -> ModelSpec:
    """The embedded model serves as many calls at once as the eval makes, up to its limit."""
    from debategraph.local import check_gguf, resolve_gguf, slot_limit

    return replace(
        spec, slots=max(1, min(wanted, slot_limit(check_gguf(resolve_gguf(spec.model)))))
    )


def _run(
    plan: EvalPlan, spec: ModelSpec, items: list[Item], db: str, json_output: bool
) -> tuple[list[Outcome], dict[str, int]]:
    """Run every thread with a progress bar; a failure is one line that says how to resume."""
    from debategraph.checkpoints.savers import open_checkpointer, redact_url
    from debategraph.eval.runner import Evaluation
    from debategraph.models import bind_model

    resume = f"rerun the same command to resume (answers so far are saved in {redact_url(db)})"
    with open_checkpointer(db) as saver, _Progress(plan.modes, len(items), json_output) as bar:
        evaluation = Evaluation(saver, bind_model(spec), plan, bar.advance)
        try:
            outcomes = asyncio.run(evaluation.run(items))
        except UsageError:
            raise
        except DebategraphError as exc:  # the endpoint or the embedded server failed
            raise type(exc)(f"{exc}; {resume}") from exc
        except _run_failures() as exc:  # the database, or a model reply nothing could read
            text = " ".join(str(exc).split())[:300]
            raise DebategraphError(f"{type(exc).__name__}: {text}; {resume}") from exc
        except KeyboardInterrupt:
            bar.stop()
            fail(f"interrupted; {resume}", 130)
    return outcomes, evaluation.counts


def _run_failures() -> tuple[type[Exception], ...]:
    """What else may stop a long eval midway (each question's saved steps stay)."""
    import sqlite3

    import openai
    from langgraph.errors import GraphRecursionError

    kinds: list[type[Exception]] = [sqlite3.Error, GraphRecursionError, openai.OpenAIError]
    try:
        import psycopg
    except ImportError:  # the postgres extra is not installed
        return tuple(kinds)
    return (*kinds, psycopg.Error)


class _Progress:
    """A progress bar across questions (stderr) with each mode's running accuracy."""

    def __init__(self, modes: tuple[str, ...], total: int, quiet: bool) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.modes = modes
        self.right = dict.fromkeys(modes, 0)
        self.seen = dict.fromkeys(modes, 0)
        self.pending: dict[int, int] = {}
        self.bar = Progress(
            TextColumn("questions"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            console=err,
            disable=quiet,
            transient=False,
        )
        self.task = self.bar.add_task("", total=total)

    def __enter__(self) -> _Progress:
        self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop drawing (idempotent)."""
        self.bar.stop()

    def advance(self, outcome: Outcome) -> None:
        """Count one (question, mode); a question is done when all its modes are.

        Args:
            outcome: What the mode answered.
        """
        self.seen[outcome.mode] += 1
        self.right[outcome.mode] += outcome.correct
        left = self.pending.get(outcome.line, len(self.modes)) - 1
        self.pending[outcome.line] = left
        running = " · ".join(
            f"{m} {self.right[m] / self.seen[m]:.2f}" for m in self.modes if self.seen[m]
        )
        self.bar.update(self.task, advance=1 if left == 0 else 0, description=running)


def _report(
    out_dir: Path,
    modes: tuple[str, ...],
    outcomes: list[Outcome],
    meta: dict[str, Any],
    json_output: bool,
) -> None:
    """Write results.json, results.csv and the plot; print the tables (or the JSON)."""
    import json

    from debategraph.eval.report import results_table, write_results
    from debategraph.eval.stats import compare, summarize

    summaries = summarize(outcomes, modes)
    comparisons = compare(outcomes, modes)
    paths = write_results(out_dir, outcomes, summaries, comparisons, meta)
    if json_output:
        result = json.loads(paths["json"].read_text(encoding="utf-8"))
        emit_json({**result, "files": {k: str(v) for k, v in paths.items()}})
        return
    counts = meta["threads"]
    err.print(
        f"{meta['questions']} questions x {len(modes)} modes · model {escape(meta['model'])} · "
        f"{counts['started']} started, {counts['resumed']} resumed, "
        f"{counts['finished']} read back from checkpoints · {meta['wall_s']:.1f} s"
    )
    for table in results_table(summaries, comparisons):
        out.print(table)
    out.print(f"results: {escape(', '.join(str(p) for p in paths.values()))}")
