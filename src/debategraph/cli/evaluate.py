"""``debategraph eval gsm8k|mcq|arithmetic|TASK|report``: the options, and what the user sees.

The standard benchmarks' commands (``TASK``: ``eval mmlu``, ``eval gpqa``...) are
:mod:`~debategraph.cli.eval_tasks`', built with :func:`eval_command`.

The eval itself is in :mod:`debategraph.eval`, callable without the CLI: the options
become a plan (:mod:`~debategraph.eval.options`, with the checks every run gets,
:mod:`~debategraph.eval.checks`), the questions are read and selected
(:mod:`~debategraph.eval.questions`), the plan runs (:func:`~debategraph.eval.runner.execute`)
and its results are written (:mod:`~debategraph.eval.report`). Here: each command's
options, the notes, the progress bar and the tables.
"""

from __future__ import annotations

import inspect
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from debategraph.cli.group import app
from debategraph.cli.options import (
    JsonOpt,
    cache_opened,
    max_cost_of,
    price_of,
    run_options,
    seconds_of,
)
from debategraph.cli.render import err, fail, model_label
from debategraph.eval.arithmetic import DEFAULT_COUNT, DEFAULT_MAX_OPERAND, DEFAULT_OPERANDS
from debategraph.eval.modes import DEFAULT_AGREE, DEFAULT_MODES, MODES, VOTE_THEN_DEBATE
from debategraph.eval.options import (
    CHECKPOINTS_FILE,
    DEFAULT_AGENTS,
    DEFAULT_CHOICE_SEED,
    DEFAULT_DECISIONS,
    DEFAULT_EPOCHS,
    DEFAULT_MATCHED,
    DEFAULT_MAX_ERRORS,
    DEFAULT_NEIGHBOURS,
    DEFAULT_PARALLEL,
    DEFAULT_ROUNDS,
    DEFAULT_TEMPERATURE,
    EvalOptions,
    eval_options,
)
from debategraph.eval.questions import Questions, arithmetic_questions, dataset_questions
from debategraph.strategies.decisions import PROTOCOL_RULE, agreement_rule

if TYPE_CHECKING:
    from debategraph.eval.plan import EvalPlan
    from debategraph.eval.records import Outcome

eval_app = typer.Typer(
    name="eval",
    help="Accuracy and cost of single, vote and debate modes on a dataset, resumable.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(eval_app)

#: ``--modes`` when not given: the built-in modes but vote-then-debate.
DEFAULT_MODES_TEXT = ",".join(DEFAULT_MODES)


DatasetOpt = Annotated[
    Path,
    typer.Option(
        "--dataset",
        help="JSONL file, one question per line: gsm8k lines have question and answer "
        "(the gold number after '#### '), mcq lines question, choices and answer (a letter).",
    ),
]
SeedOpt = Annotated[
    int | None,
    typer.Option("--seed", help="Shuffle the questions with this seed before --offset."),
]


ShuffleChoicesOpt = Annotated[
    bool,
    typer.Option(
        "--shuffle-choices",
        help="Shuffle each question's choices (seeded by --choice-seed; the gold letter "
        "moves with its choice; recorded in results.json).",
    ),
]
ChoiceSeedOpt = Annotated[
    int,
    typer.Option(
        "--choice-seed", help="The seed the choices are shuffled with (recorded in results.json)."
    ),
]
LimitOpt = Annotated[int | None, typer.Option("--limit", help="Questions to run \\[default: all].")]
OffsetOpt = Annotated[int, typer.Option("--offset", help="Questions to skip first.")]
ModesOpt = Annotated[
    str,
    typer.Option(
        "--modes",
        help=f"Comma-separated: {', '.join(MODES)}, or NAME=AGENTS_FILE (the file's solvers "
        "debate like debate-ring, each on its own model; an entry named judge judges); "
        f"{VOTE_THEN_DEBATE} debates (as debate-full) only the questions whose first "
        "round does not agree (--agree).",
    ),
]
DecisionsOpt = Annotated[
    str,
    typer.Option(
        "--decisions",
        help="Comma-separated decision protocols applied to the same finished threads: "
        + PROTOCOL_RULE.replace("[", "\\[")
        + "; only the judge calls a model. Plurality, the mode's own row, is always in.",
    ),
]
JudgeModelOpt = Annotated[
    str | None,
    typer.Option(
        "--judge-model",
        help="The judge's model: local, NAME (at the run's endpoint) or NAME@BASE_URL "
        "\\[default: the run's model; a roster mode's judge entry wins].",
    ),
]
MatchedOpt = Annotated[
    bool,
    typer.Option(
        "--matched/--no-matched",
        help="Run each debate mode's vote of independent samples at its token budget (vote@K).",
    ),
]
AgreeOpt = Annotated[
    str,
    typer.Option(
        "--agree",
        help=f"When {VOTE_THEN_DEBATE} stops (after any round, the first included): "
        + agreement_rule().replace("[", "\\[")
        + ".",
    ),
]
AgentsOpt = Annotated[int, typer.Option("--agents", help="Solvers of the vote and debate modes.")]
RoundsOpt = Annotated[int, typer.Option("--rounds", help="Rounds of the debate modes.")]
NeighboursOpt = Annotated[
    int, typer.Option("--neighbours", help="Solvers each one hears on the ring.")
]
ParallelOpt = Annotated[int, typer.Option("--parallel", help="Questions in flight at once.")]
TemperatureOpt = Annotated[
    float,
    typer.Option(
        "--temperature",
        help="Sampling temperature of every call, the solvers' and the judge's, 0 to 2 "
        "(recorded in results.json; another temperature is another set of threads).",
    ),
]
EpochsOpt = Annotated[
    int,
    typer.Option(
        "--epochs",
        help="Ask each question N times, each a thread of its own: accuracy is over every "
        "asking, and results show how often each question's answers agree across epochs.",
    ),
]
MaxErrorsOpt = Annotated[
    float,
    typer.Option(
        "--max-errors",
        help="The share of questions (in each mode) whose calls may keep failing before the "
        "eval stops; each is recorded errored, left out of accuracy, and retried by the next "
        "run.",
    ),
]
ShardOpt = Annotated[
    str | None,
    typer.Option(
        "--shard",
        help="i/N: run every N-th question from the i-th (machines split one eval; "
        "'debategraph eval report' merges their --out folders).",
    ),
]
OutOpt = Annotated[
    Path | None,
    typer.Option("--out", help="Folder for the results \\[default: eval-KIND]."),
]
DbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        help=f"Checkpoint database (SQLite path or Postgres URL) "
        f"\\[default: {CHECKPOINTS_FILE} in --out].",
    ),
]


def _eval_options(
    modes: ModesOpt = DEFAULT_MODES_TEXT,
    decisions: DecisionsOpt = DEFAULT_DECISIONS,
    judge_model: JudgeModelOpt = None,
    matched: MatchedOpt = DEFAULT_MATCHED,
    agree: AgreeOpt = DEFAULT_AGREE,
    agents: AgentsOpt = DEFAULT_AGENTS,
    rounds: RoundsOpt = DEFAULT_ROUNDS,
    neighbours: NeighboursOpt = DEFAULT_NEIGHBOURS,
    parallel: ParallelOpt = DEFAULT_PARALLEL,
    temperature: TemperatureOpt = DEFAULT_TEMPERATURE,
    epochs: EpochsOpt = DEFAULT_EPOCHS,
    max_errors: MaxErrorsOpt = DEFAULT_MAX_ERRORS,
    out_dir: OutOpt = None,
    db: DbOpt = None,
    shard: ShardOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """The options every ``eval`` command ends with, less the model's (its signature counts)."""


#: The model's options, as every run command takes them (``--model`` to ``--rpm``), and
#: its response cache.
_MODEL_OPTIONS = (
    "model",
    "base_url",
    "api_key_env",
    "timeout",
    "max_tokens",
    "max_retries",
    "patience",
    "rpm",
    "tpm",
    "price",
    "max_cost",
    "cache",
)


def _shared_options() -> dict[str, inspect.Parameter]:
    """The options every ``eval`` command ends with: the model's among them, before ``--db``."""
    own = list(inspect.signature(_eval_options, eval_str=True).parameters.values())
    run = inspect.signature(run_options, eval_str=True).parameters
    at = [p.name for p in own].index("db")
    shared = [*own[:at], *(run[name] for name in _MODEL_OPTIONS), *own[at:]]
    return {p.name: p for p in shared}


_SHARED = _shared_options()


def eval_command(kind: str, own: Callable[..., Callable[[], Questions]]) -> Callable[..., None]:
    """An ``eval`` command: ``own``'s options (they pick the questions), then the shared ones.

    Args:
        kind: The dataset kind (``--out`` defaults to ``eval-KIND``).
        own: Takes the command's own options; returns the questions' reader.

    Returns:
        The command, its signature ``own``'s then the shared options (as
        :func:`~debategraph.cli.app.pattern_command` builds a pattern's).
    """

    def command(**values: Any) -> None:
        shared = {name: values.pop(name) for name in _SHARED}
        shape = (shared.pop("agents"), shared.pop("rounds"), shared.pop("neighbours"))
        out_dir = shared.pop("out_dir") or Path(f"eval-{kind}")
        shared["patience"] = seconds_of("--patience", shared["patience"])
        shared["price"] = price_of(shared["price"])
        shared["max_cost"] = max_cost_of(shared["max_cost"])
        run_eval(eval_options(shape=shape, out_dir=out_dir, **shared), own(**values))

    own_options = inspect.signature(own, eval_str=True).parameters.values()
    command.__signature__ = inspect.Signature([*own_options, *_SHARED.values()])  # type: ignore[attr-defined]
    command.__doc__ = own.__doc__
    return command


def _dataset_command(kind: str) -> Callable[..., None]:
    """The command of one dataset kind (``gsm8k``, ``mcq``): a JSONL file's questions.

    Only ``mcq`` takes ``--shuffle-choices`` and ``--choice-seed``.
    """

    def own(
        dataset: DatasetOpt,
        limit: LimitOpt = None,
        offset: OffsetOpt = 0,
        seed: SeedOpt = None,
        shuffle_choices: ShuffleChoicesOpt = False,
        choice_seed: ChoiceSeedOpt = DEFAULT_CHOICE_SEED,
    ) -> Callable[[], Questions]:
        shuffled = choice_seed if shuffle_choices else None
        return lambda: dataset_questions(kind, dataset, (offset, limit, seed), shuffled)

    if kind != "mcq":
        keep_options(own, drop={"shuffle_choices", "choice_seed"})
    return eval_command(kind, own)


def keep_options(own: Callable[..., Any], drop: set[str]) -> None:
    """Leave the options named in ``drop`` out of a command's own (they keep their defaults).

    Args:
        own: The command's own options (a function whose signature typer reads).
        drop: The parameters to leave out.
    """
    options = inspect.signature(own, eval_str=True).parameters.values()
    kept = [option for option in options if option.name not in drop]
    own.__signature__ = inspect.Signature(kept)  # type: ignore[attr-defined]


def _arithmetic(
    count: Annotated[int, typer.Option("--count", help="Questions to generate.")] = DEFAULT_COUNT,
    operands: Annotated[
        int,
        typer.Option(
            "--operands", help="Operands per question, 2 (a+b) to 6 (Du et al.'s a+b*c+d-e*f)."
        ),
    ] = DEFAULT_OPERANDS,
    max_operand: Annotated[
        int, typer.Option("--max-operand", help="The largest operand (each from 0 to it).")
    ] = DEFAULT_MAX_OPERAND,
    seed: Annotated[
        int, typer.Option("--seed", help="The seed the questions are generated from.")
    ] = 0,
    limit: LimitOpt = None,
    offset: OffsetOpt = 0,
) -> Callable[[], Questions]:
    """Run generated arithmetic questions (exact integer answers; no download) in each mode.

    The questions are written to questions.jsonl in --out before any runs.
    """
    return lambda: arithmetic_questions((count, operands, max_operand, seed), (offset, limit))


eval_app.command(
    "gsm8k",
    help="Run GSM8K-style math questions (the gold number after '#### ') in each mode.",
)(_dataset_command("gsm8k"))
eval_app.command(
    "mcq",
    help="Run multiple-choice questions (question, choices, answer letter) in each mode.",
)(_dataset_command("mcq"))
eval_app.command("arithmetic")(eval_command("arithmetic", _arithmetic))


def run_eval(options: EvalOptions, questions: Callable[[], Questions]) -> None:
    """Check everything, run the eval (resuming what is saved), write and print results.

    Args:
        options: The shared options.
        questions: Reads (or generates) and selects the questions; called after the
            options are checked.

    Raises:
        UsageError: On bad input, before any question runs (nothing written).
        DebategraphError: If an endpoint, the embedded server or the database fails
            midway, naming the question and how to resume (every answer so far is saved).
    """
    from debategraph.eval.options import plan_of
    from debategraph.eval.planfile import plan_record
    from debategraph.eval.report import check_out_dir
    from debategraph.eval.shards import this_shard, write_plan

    with cache_opened(options.cache):  # a bad --cache: refused before anything is written
        plan, notes = plan_of(options)
        chosen = questions()
        items = this_shard(chosen.items, options.shard)
        check_out_dir(options.out_dir)
        write_plan(options.out_dir, plan_record(plan, options, chosen.meta))
        meta = {**chosen.meta, "questions": len(items), "shard": options.shard}
        run_and_report(plan, options, replace(chosen, items=items, meta=meta), notes)


def run_and_report(
    plan: EvalPlan,
    options: EvalOptions,
    chosen: Questions,
    notes: Sequence[str],
    dbs: Mapping[int, str] | None = None,
) -> None:
    """Run (or read back) the plan on the chosen questions; write and print the results.

    Args:
        plan: The plan.
        options: The shared options.
        chosen: The questions (and their meta).
        notes: Notes for the user.
        dbs: Each question's database where shards kept their own (by line);
            default: ``options.checkpoints`` for every question.

    Raises:
        DebategraphError: If an endpoint, the embedded server or the database fails
            midway, naming the question and how to resume.
    """
    from debategraph.eval.arithmetic import QUESTIONS_FILE, write_questions
    from debategraph.eval.options import plan_meta
    from debategraph.eval.runner import calls_at_once, execute, resume_hint, run_spec

    if chosen.generated:  # the questions this run used (its selection and shard)
        write_questions(options.out_dir / QUESTIONS_FILE, chosen.items)
    for line in [*notes, *chosen.notes]:
        err.print(f"note: {escape(line)}")
    spec = run_spec(plan, options.spec)
    started, load_before = time.perf_counter(), _loadavg()
    total = len(chosen.items) * plan.epochs
    with _Progress(plan.modes, total, options.json_output) as bar, calls_at_once(spec):
        try:
            found = execute(
                plan,
                spec,
                chosen.items,
                options.checkpoints,
                bar.advance,
                dbs=dbs,
                max_errors=options.max_errors,
                max_cost=options.max_cost,
            )
        except KeyboardInterrupt:
            bar.stop()
            fail(f"interrupted; {resume_hint(options.checkpoints)}", 130)
            raise  # not reached: fail exits
    meta = {
        **chosen.meta,
        **plan_meta(plan, notes, model_label(options.spec)),
        "threads": found.counts,
        "judge_calls": found.judge_calls,
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_s": round(time.perf_counter() - started, 3),
        "load": {"before": load_before, "after": _loadavg()},
        **_cache_meta(),
    }
    threads = (options.checkpoints, dbs or {})
    from debategraph.cli.eval_results import write_report

    write_report(options.out_dir, plan, found, meta, options.json_output, threads)


def _loadavg() -> list[float]:
    """The machine's 1, 5 and 15-minute load averages now (what else ran beside the eval)."""
    return [round(value, 2) for value in os.getloadavg()]


def _cache_meta() -> dict[str, Any]:
    """``cache``: the calls this run made and those the response cache answered (if one)."""
    from debategraph.models.cache import active_cache

    cache = active_cache()
    if cache is None:
        return {}
    return {"cache": {"file": str(cache.path), "calls": cache.lookups, "hits": cache.hits}}


#: Seconds between progress lines on a stderr that is not a terminal (a log, a pipe).
PROGRESS_EVERY_S = 5.0


def progress_line(text: str) -> None:
    """Print one progress line on stderr (the eval's, every :data:`PROGRESS_EVERY_S`)."""
    err.print(text, markup=False, highlight=False, soft_wrap=True)


class _Progress:
    """A progress bar across questions (stderr) with each mode's running accuracy.

    A matched vote's threads (after the listed modes') get a bar of their own. Every
    :data:`PROGRESS_EVERY_S` seconds it says how far the run is and how many model calls
    are in flight: on a terminal in the bar, elsewhere (a log, a pipe, where the bar
    shows only when it ends) as a line of its own, so a long run is never silent. The
    figures are a :class:`~debategraph.eval.progress.Tally`'s.
    """

    def __init__(self, modes: tuple[str, ...], total: int, quiet: bool) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        from debategraph.eval.progress import Tally

        self.tally = Tally(modes, total)
        self.quiet = quiet
        self.stopped = threading.Event()
        self.ticker = threading.Thread(target=self._tick, name="eval-progress", daemon=True)
        self.bar = Progress(
            TextColumn("{task.fields[what]}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            console=err,
            disable=quiet,
            transient=False,
        )
        self.task = self.bar.add_task("", total=total, what="questions")
        self.extra: dict[str, Any] = {}

    def __enter__(self) -> _Progress:
        self.bar.start()
        if not self.quiet:
            self.ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop drawing and ticking (idempotent)."""
        self.stopped.set()
        if self.ticker.is_alive():
            self.ticker.join()
        self.bar.stop()

    def _tick(self) -> None:
        """Every :data:`PROGRESS_EVERY_S`: a line, or (on a terminal) the bar's own field."""
        from debategraph.models.limits import calls_in_flight
        from debategraph.models.pacing import waiting_note

        while not self.stopped.wait(PROGRESS_EVERY_S):
            if err.is_terminal:
                waiting = waiting_note()
                flying = f"questions ({calls_in_flight()} calls in flight)"
                flying += f" · {waiting}" if waiting else ""
                self.bar.update(self.task, what=flying)
            else:
                progress_line(self.tally.status())

    def advance(self, outcome: Outcome) -> None:
        """Count one (question, mode) and draw it; a question is done when all its modes are.

        Args:
            outcome: What the mode answered (its plurality row).
        """
        done = self.tally.count(outcome)
        mode = outcome.mode
        if mode not in self.tally.modes:
            if mode not in self.extra:
                self.extra[mode] = self.bar.add_task("", total=self.tally.total, what=mode)
            self.bar.update(self.extra[mode], advance=1, description=self.tally.accuracy(mode))
            return
        self.bar.update(self.task, advance=1 if done else 0, description=self.tally.running())


@eval_app.command("report")
def report_command(
    shards: Annotated[
        list[Path],
        typer.Argument(help="The --out folder of each shard (each holds its plan.json)."),
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the merged results.")] = Path(
        "eval-report"
    ),
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="The database of every shard, where it is a Postgres URL with a password "
            "(plan.json keeps it without) \\[default: each shard's own].",
        ),
    ] = None,
    json_output: JsonOpt = False,
) -> None:
    """Merge the shards of one eval into one results.* (what any shard left is resumed).

    Every thread is read back from its shard's database; the matched votes are chosen over
    all the questions.
    """
    from debategraph.eval.options import plan_of
    from debategraph.eval.planfile import check_same_run, options_from_plan, shard_dbs
    from debategraph.eval.report import check_out_dir
    from debategraph.eval.shards import check_shards, read_plan

    plans = {folder: read_plan(folder) for folder in shards}
    check_shards(plans)
    first = plans[shards[0]]
    options, questions = options_from_plan(first, out_dir, db, json_output)
    plan, notes = plan_of(options)
    check_same_run(plan, first, shards[0])
    chosen = questions()
    dbs = shard_dbs(plans, chosen.items, db)
    check_out_dir(out_dir)
    meta = {**chosen.meta, "shards": [str(folder) for folder in shards]}
    run_and_report(plan, options, replace(chosen, meta=meta), notes, dbs)
