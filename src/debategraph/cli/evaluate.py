"""``debategraph eval gsm8k|mcq|arithmetic``: accuracy, cost and paired tests of solver modes.

The run is three steps, each its own function: :func:`build_plan` checks every option
and makes the :class:`~debategraph.eval.plan.EvalPlan`; :func:`execute` runs (or reads
back) every thread of the plan on the questions and returns what it found, printing
nothing; :func:`write_report` writes the result files and prints the tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from debategraph.cli.app import app
from debategraph.cli.options import (
    ApiKeyEnvOpt,
    BaseUrlOpt,
    JsonOpt,
    MaxTokensOpt,
    ModelOpt,
    RetriesOpt,
    TimeoutOpt,
)
from debategraph.cli.render import emit_json, err, fail, model_label, out
from debategraph.cli.served import Endpoints, check_served
from debategraph.errors import DebategraphError, UsageError
from debategraph.eval.arithmetic import DEFAULT_COUNT, DEFAULT_MAX_OPERAND, DEFAULT_OPERANDS
from debategraph.eval.modes import MODES
from debategraph.models.spec import LOCAL, ModelSpec, same_endpoint
from debategraph.words import plural

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from debategraph.eval.modes import RosterMode
    from debategraph.eval.plan import EvalPlan
    from debategraph.eval.records import Item, Outcome
    from debategraph.eval.runner import EvalRun, OnOutcome

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
#: ``--modes`` when not given: every built-in mode.
DEFAULT_MODES = ",".join(MODES)


DatasetOpt = Annotated[
    Path,
    typer.Option(
        "--dataset",
        help="JSONL file, one question per line: gsm8k lines have question and answer "
        "(the gold number after '#### '), mcq lines question, choices and answer (a letter).",
    ),
]
LimitOpt = Annotated[int | None, typer.Option("--limit", help="Questions to run \\[default: all].")]
OffsetOpt = Annotated[int, typer.Option("--offset", help="Questions to skip first.")]
ModesOpt = Annotated[
    str,
    typer.Option(
        "--modes",
        help=f"Comma-separated: {', '.join(MODES)}, or NAME=AGENTS_FILE (the file's solvers "
        "debate like debate-ring, each on its own model; an entry named judge judges).",
    ),
]
DecisionsOpt = Annotated[
    str,
    typer.Option(
        "--decisions",
        help="Comma-separated decision protocols applied to the same finished threads: "
        "plurality, weighted, supermajority[:THRESHOLD[:FALLBACK]], unanimity[:FALLBACK], "
        "judge (only the judge calls a model). Plurality, the mode's own row, is always in.",
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
AgentsOpt = Annotated[int, typer.Option("--agents", help="Solvers of the vote and debate modes.")]
RoundsOpt = Annotated[int, typer.Option("--rounds", help="Rounds of the debate modes.")]
NeighboursOpt = Annotated[
    int, typer.Option("--neighbours", help="Solvers each one hears on the ring.")
]
ParallelOpt = Annotated[int, typer.Option("--parallel", help="Questions in flight at once.")]
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


@dataclass(frozen=True)
class EvalOptions:
    """The options every ``eval`` command shares.

    Attributes:
        modes: ``--modes``.
        decisions: ``--decisions``.
        judge_model: ``--judge-model``.
        matched: ``--matched/--no-matched``.
        shape: ``--agents``, ``--rounds``, ``--neighbours``.
        parallel: ``--parallel``.
        out_dir: ``--out``.
        spec: The model.
        db: ``--db`` (``None``: a file in ``--out``).
        json_output: ``--json``.
        shard: ``--shard`` as ``(i, N)``; ``None``: every question.
    """

    modes: str
    decisions: str
    judge_model: str | None
    matched: bool
    shape: tuple[int, int, int]
    parallel: int
    out_dir: Path
    spec: ModelSpec
    db: str | None
    json_output: bool
    shard: tuple[int, int] | None = None

    @property
    def checkpoints(self) -> str:
        """The checkpoint database: ``--db``, else a file in ``--out``."""
        return self.db or str(self.out_dir / CHECKPOINTS_FILE)


@dataclass(frozen=True)
class Questions:
    """The questions an eval runs, and what to record about where they came from.

    Attributes:
        items: The questions (after ``--offset`` and ``--limit``).
        meta: Their source's entries of ``results.json``'s meta.
        notes: Lines to tell the user (skipped lines, a clamped limit).
        generated: Questions to write to ``questions.jsonl`` in ``--out`` (a generated
            task's); empty for a dataset file.
    """

    items: list[Item]
    meta: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    generated: tuple[Item, ...] = ()


def _options(
    modes: str,
    decisions: str,
    judge_model: str | None,
    matched: bool,
    shape: tuple[int, int, int],
    parallel: int,
    out_dir: Path,
    model: str,
    base_url: str | None,
    timeout: float | None,
    max_retries: int,
    db: str | None,
    json_output: bool,
    shard: str | None = None,
    api_key_env: str | None = None,
    max_tokens: int | None = None,
) -> EvalOptions:
    from debategraph.eval.shards import parse_shard

    spec = ModelSpec(
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        timeout_s=timeout,
        max_tokens=max_tokens,
        max_retries=max_retries,
    ).validated()
    split = None if shard is None else parse_shard(shard)
    return EvalOptions(
        modes,
        decisions,
        judge_model,
        matched,
        shape,
        parallel,
        out_dir,
        spec,
        db,
        json_output,
        split,
    )


def _eval_command(kind: str) -> Callable[..., None]:
    """The command of one dataset kind; both kinds take the same options."""

    def command(
        dataset: DatasetOpt,
        limit: LimitOpt = None,
        offset: OffsetOpt = 0,
        seed: Annotated[
            int | None,
            typer.Option("--seed", help="Shuffle the questions with this seed before --offset."),
        ] = None,
        modes: ModesOpt = DEFAULT_MODES,
        decisions: DecisionsOpt = "plurality",
        judge_model: JudgeModelOpt = None,
        matched: MatchedOpt = True,
        agents: AgentsOpt = 3,
        rounds: RoundsOpt = 2,
        neighbours: NeighboursOpt = 1,
        parallel: ParallelOpt = 4,
        out_dir: OutOpt = None,
        model: ModelOpt = LOCAL,
        base_url: BaseUrlOpt = None,
        api_key_env: ApiKeyEnvOpt = None,
        timeout: TimeoutOpt = None,
        max_tokens: MaxTokensOpt = None,
        max_retries: RetriesOpt = 2,
        db: DbOpt = None,
        shard: ShardOpt = None,
        json_output: JsonOpt = False,
    ) -> None:
        options = _options(
            modes, decisions, judge_model, matched, (agents, rounds, neighbours), parallel,
            out_dir or Path(f"eval-{kind}"), model, base_url, timeout, max_retries, db,
            json_output, shard, api_key_env, max_tokens,
        )  # fmt: skip
        run_eval(options, lambda: dataset_questions(kind, dataset, (offset, limit, seed)))

    return command


eval_app.command(
    "gsm8k",
    help="Run GSM8K-style math questions (the gold number after '#### ') in each mode.",
)(_eval_command("gsm8k"))
eval_app.command(
    "mcq",
    help="Run multiple-choice questions (question, choices, answer letter) in each mode.",
)(_eval_command("mcq"))


@eval_app.command("arithmetic")
def arithmetic_command(
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
    modes: ModesOpt = DEFAULT_MODES,
    decisions: DecisionsOpt = "plurality",
    judge_model: JudgeModelOpt = None,
    matched: MatchedOpt = True,
    agents: AgentsOpt = 3,
    rounds: RoundsOpt = 2,
    neighbours: NeighboursOpt = 1,
    parallel: ParallelOpt = 4,
    out_dir: OutOpt = None,
    model: ModelOpt = LOCAL,
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    timeout: TimeoutOpt = None,
    max_tokens: MaxTokensOpt = None,
    max_retries: RetriesOpt = 2,
    db: DbOpt = None,
    shard: ShardOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Run generated arithmetic questions (exact integer answers; no download) in each mode.

    The questions are written to questions.jsonl in --out before any runs.
    """
    options = _options(
        modes, decisions, judge_model, matched, (agents, rounds, neighbours), parallel,
        out_dir or Path("eval-arithmetic"), model, base_url, timeout, max_retries, db,
        json_output, shard, api_key_env, max_tokens,
    )  # fmt: skip
    run_eval(
        options,
        lambda: arithmetic_questions((count, operands, max_operand, seed), (offset, limit)),
    )


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


def dataset_questions(
    kind: str, dataset: Path, selection: tuple[int, int | None, int | None]
) -> Questions:
    """The questions of a dataset file, selected.

    Args:
        kind: ``gsm8k`` or ``mcq``.
        dataset: The JSONL file.
        selection: ``--offset``, ``--limit``, ``--seed`` (the shuffle's).

    Returns:
        The questions.

    Raises:
        UsageError: On a bad file or selection, naming it.
    """
    from debategraph.eval.datasets import load_gsm8k, load_mcq, select

    loaded = load_gsm8k(dataset) if kind == "gsm8k" else load_mcq(dataset)
    offset, limit, seed = selection
    items, note = select(loaded.items, offset=offset, limit=limit, seed=seed)
    notes = []
    if loaded.skipped:
        lines = ", ".join(map(str, loaded.skipped_lines[:5]))
        more = ", ..." if loaded.skipped > 5 else ""
        notes.append(
            f"{plural(loaded.skipped, 'question')} skipped, their gold answer unusable "
            f"(line {lines}{more})"
        )
    if note:
        notes.append(note)
    meta = {
        "kind": kind,
        "dataset": str(dataset),
        "questions": len(items),
        "skipped": loaded.skipped,
        "skipped_lines": list(loaded.skipped_lines),
        "offset": offset,
        "limit": limit,
        "seed": seed,
    }
    return Questions(items, meta, notes)


def arithmetic_questions(
    generation: tuple[int, int, int, int], selection: tuple[int, int | None]
) -> Questions:
    """The generated arithmetic questions, selected.

    Args:
        generation: ``--count``, ``--operands``, ``--max-operand``, ``--seed``.
        selection: ``--offset``, ``--limit``.

    Returns:
        The questions; all that were generated go to ``questions.jsonl``.

    Raises:
        UsageError: On a setting out of range, naming the option.
    """
    from debategraph.eval.arithmetic import QUESTIONS_FILE, form, generate_arithmetic
    from debategraph.eval.datasets import select

    count, operands, max_operand, seed = generation
    generated = generate_arithmetic(count, operands=operands, max_operand=max_operand, seed=seed)
    offset, limit = selection
    items, note = select(generated, offset=offset, limit=limit, seed=None)
    meta = {
        "kind": "arithmetic",
        "dataset": QUESTIONS_FILE,
        "questions": len(items),
        "skipped": 0,
        "skipped_lines": [],
        "offset": offset,
        "limit": limit,
        "seed": seed,
        "arithmetic": {
            "count": count,
            "operands": operands,
            "max_operand": max_operand,
            "form": form(operands),
        },
    }
    return Questions(items, meta, [note] if note else [], tuple(generated))


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
    from debategraph.eval.shards import shard_items, write_plan

    plan, notes = build_plan(options)
    chosen = questions()
    items = shard_items(chosen.items, options.shard)
    if options.shard is not None and not items:
        index, count = options.shard
        raise UsageError(
            f"--shard {index}/{count}: no questions (the selection has {len(chosen.items)}): "
            "use fewer shards"
        )
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

    if chosen.generated:  # the questions this run used (its selection and shard)
        write_questions(options.out_dir / QUESTIONS_FILE, chosen.items)
    for line in [*notes, *chosen.notes]:
        err.print(f"note: {escape(line)}")
    spec = options.spec
    if spec.is_local:
        spec = _local_slots(spec, options.parallel * max(_solvers(plan)))
    started = time.perf_counter()
    with (
        _Progress(plan.modes, len(chosen.items), options.json_output) as bar,
        _calls_at_once(spec.slots if spec.is_local else None),
    ):
        try:
            found = execute(plan, spec, chosen.items, options.checkpoints, bar.advance, dbs=dbs)
        except KeyboardInterrupt:
            bar.stop()
            fail(f"interrupted; {_resume_hint(options.checkpoints)}", 130)
            raise  # not reached: fail exits
    meta = {
        **chosen.meta,
        **plan_meta(plan, options, notes),
        "threads": found.counts,
        "judge_calls": found.judge_calls,
        "wall_s": round(time.perf_counter() - started, 3),
    }
    write_report(options.out_dir, plan, found, meta, options.json_output)


def plan_record(plan: EvalPlan, options: EvalOptions, source: Mapping[str, Any]) -> dict[str, Any]:
    """What ``plan.json`` holds: every setting that decides the run's answers, and its shard.

    ``eval report`` rebuilds the run from it (the questions, the modes, the model) and
    compares shards by it: the rosters are kept by content, so an edited agents file is
    a difference; the database is kept without its password.

    Args:
        plan: The plan.
        options: The shared options.
        source: The questions' meta (kind, dataset or generation, selection).

    Returns:
        The settings, JSON values.
    """
    from debategraph.checkpoints.savers import redact_url

    dataset = source.get("dataset")
    digest = None
    if source.get("kind") != "arithmetic" and dataset is not None:
        dataset = str(Path(dataset).resolve())
        digest = _sha256(Path(dataset))
    spec = options.spec
    db = options.checkpoints
    if "://" not in db:
        db = str(Path(db).resolve())
    return {
        "kind": source.get("kind"),
        "dataset": dataset,
        "dataset_sha256": digest,
        "offset": source.get("offset"),
        "limit": source.get("limit"),
        "seed": source.get("seed"),
        "arithmetic": source.get("arithmetic"),
        "modes": list(plan.modes),
        "modes_text": options.modes,
        "rosters": {name: _roster_record(r) for name, r in plan.rosters.items()},
        "roster_paths": {name: str(Path(r.path).resolve()) for name, r in plan.rosters.items()},
        "decisions": [p.spec for p in plan.decisions],
        "judge_model": plan.judge_model,
        "matched": plan.matched,
        "agents": plan.agents,
        "rounds": plan.rounds,
        "neighbours": plan.neighbours,
        # max_tokens decides answers: compared between shards, and only where it is set
        # (a plan written before it existed reads the same).
        "model": {
            "model": spec.model,
            "base_url": spec.base_url,
            **({"max_tokens": spec.max_tokens} if spec.max_tokens is not None else {}),
        },
        "client": {"timeout": spec.timeout_s, "max_retries": spec.max_retries},
        "model_key": dict(plan.model_key),
        "parallel": plan.parallel,
        "shard": list(options.shard) if options.shard is not None else None,
        "db": redact_url(db),
        "db_default": options.db is None,
        "db_redacted": redact_url(db) != db,
    }


def _sha256(path: Path) -> str:
    """A file's content digest (how shards on other machines know they read one dataset)."""
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise UsageError(f"--dataset {path}: cannot read it ({exc.strerror or exc})") from exc


def _roster_record(roster: RosterMode) -> dict[str, Any]:
    """A roster mode as ``plan.json`` keeps it: its file, and its content (JSON)."""
    import json

    content = {"solvers": list(roster.solvers), "judge": roster.judge}
    return {
        "path": str(Path(roster.path).resolve()),
        **json.loads(json.dumps(content, default=str)),
    }


def build_plan(options: EvalOptions) -> tuple[EvalPlan, list[str]]:
    """Check the options that shape the run and make its plan (nothing is written).

    Args:
        options: The shared options.

    Returns:
        The plan, and notes for the user (debate modes that ``--rounds 1`` makes plain
        votes, a judge model no protocol consults).

    Raises:
        UsageError: One line naming the bad option: an unknown mode or protocol, a bad
            roster mode or agents file, a bad judge model, a bad ``--agents``,
            ``--rounds``, ``--neighbours`` or ``--parallel``.
    """
    from debategraph.eval.modes import (
        check_settings,
        parse_modes,
        plain_vote_modes,
        plain_vote_note,
    )
    from debategraph.eval.plan import EvalPlan, check_judges
    from debategraph.strategies.decisions import parse_protocols

    agents, rounds, neighbours = options.shape
    chosen, files = parse_modes(options.modes)
    try:
        protocols = parse_protocols(options.decisions)
    except ValueError as exc:
        raise UsageError(f"--decisions: {exc}") from None
    if options.parallel < 1:
        raise UsageError(f"--parallel {options.parallel} must be at least 1")
    judge_model = _judge_model(options.judge_model)
    rosters = {name: read_roster(name, path) for name, path in files.items()}
    check_settings(chosen, agents=agents, rounds=rounds, neighbours=neighbours, rosters=rosters)
    plan = EvalPlan(
        chosen,
        agents,
        rounds,
        neighbours,
        options.parallel,
        _spec_record(options.spec),
        _model_key(options.spec),
        decisions=protocols,
        rosters=rosters,
        judge_model=judge_model,
        matched=options.matched,
    )
    _refuse_tools_on_embedded(plan, options.spec)
    check_judges(plan)
    endpoints = Endpoints()
    _check_judge_endpoints(plan, options.spec, endpoints)
    check_served(_own_specs(plan), options.spec, endpoints)
    votes_only = plain_vote_modes(chosen, rounds, rosters)
    notes = [plain_vote_note(votes_only)] if votes_only else []
    if judge_model is not None and not any(plan.needs_judge(m) for m in chosen):
        notes.append(
            f"--judge-model {judge_model} is not used: no protocol of --decisions consults "
            "a judge (add judge to --decisions)"
        )
    return plan, notes


def _check_judge_endpoints(plan: EvalPlan, run: ModelSpec, endpoints: Endpoints) -> None:
    """A judge on an endpoint of its own that does not answer: refused before any call.

    The run's own endpoint is not refused here when it does not answer (its first call
    says so, resumable); a judge elsewhere would otherwise fail only after every solver
    of a question ran.
    """
    for mode, own in _judge_specs(plan):
        if own.is_local or own.base_url is None:
            continue
        if run.base_url is not None and same_endpoint(own.base_url, run.base_url):
            continue
        found = endpoints.probe(own.base_url, own.key())
        if not found.ok:
            raise UsageError(
                f"the judge of mode {mode} ({own.label}): {found.detail}; start it, or "
                "give the judge another model"
            )


def _judge_specs(plan: EvalPlan) -> list[tuple[str, ModelSpec]]:
    """``(mode, spec)`` of each mode's judge that has a model spec of its own."""
    from debategraph.models.spec import parse_model
    from debategraph.strategies.decisions import JUDGE

    found = []
    for mode in plan.modes:
        if not plan.needs_judge(mode):
            continue
        model = getattr(plan.judge_record(mode), "model", None)
        own = None if model is None else parse_model(model, f"agent {JUDGE!r}")
        if isinstance(own, ModelSpec):
            found.append((mode, own))
    return found


def _own_specs(plan: EvalPlan) -> list[tuple[str, ModelSpec]]:
    """``(who, spec)`` of every model spec the plan's rosters and judges name."""
    from debategraph.cli.runner import own_specs

    found = [(f"the judge of mode {mode}", own) for mode, own in _judge_specs(plan)]
    for name, roster in plan.rosters.items():
        found += [
            (f"mode {name}: {who}", own) for who, own in own_specs({"agents": roster.solvers})
        ]
    return found


def _judge_model(text: str | None) -> str | None:
    """``--judge-model``, checked: a model spec string (as an agent's ``model``)."""
    if text is None:
        return None
    from debategraph.models.spec import parse_model

    try:
        parse_model(text, "--judge-model")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return text.strip()


def read_roster(name: str, path: str) -> RosterMode:
    """Read a roster mode's agents file with the ``--agents-file`` reader and its checks.

    Args:
        name: The mode's name.
        path: The file.

    Returns:
        The roster mode: its solvers, and its ``judge`` entry if it has one.

    Raises:
        UsageError: One line naming the mode's file, the entry's line and the field.
    """
    from debategraph.cli.agents_file import OPTION, read_agents_file
    from debategraph.eval.modes import RosterMode
    from debategraph.state.records import Participant
    from debategraph.strategies.decisions import JUDGE

    try:
        roster = read_agents_file(path, Participant, officials=(JUDGE,))
    except UsageError as exc:
        said = str(exc)
        if said.startswith(OPTION):  # the reader names its option; here it is --modes
            said = f"--modes {name}={said.removeprefix(OPTION).lstrip()}"
        raise UsageError(said) from None
    judge = roster.officials[0] if roster.officials else None
    return RosterMode(name, path, tuple(roster.agents), judge)


def _refuse_tools_on_embedded(plan: EvalPlan, run: ModelSpec) -> None:
    """A roster's agent (or judge) with tools on the embedded model: refused in one line."""
    from debategraph.cli.runner import refuse_tools_on_embedded

    for name, roster in plan.rosters.items():
        agents = [*roster.solvers, *([roster.judge] if roster.judge else [])]
        try:
            refuse_tools_on_embedded({"agents": agents}, run)
        except UsageError as exc:
            raise UsageError(f"mode {name}: {exc}") from None


def _solvers(plan: EvalPlan) -> list[int]:
    """Each mode's solvers (a question's calls at once)."""
    return [plan.agents, *(len(r.solvers) for r in plan.rosters.values())]


def plan_meta(plan: EvalPlan, options: EvalOptions, notes: Sequence[str]) -> dict[str, Any]:
    """The plan's entries of ``results.json``'s meta.

    Args:
        plan: The plan.
        options: The shared options.
        notes: The notes told the user.

    Returns:
        The entries.
    """
    from debategraph.eval.modes import plain_vote_modes
    from debategraph.nodes.agent import agent_of
    from debategraph.strategies.decisions import JUDGE

    judges: dict[str, str] = {}
    for mode in plan.modes:
        if plan.needs_judge(mode):
            agent = agent_of(plan.judge_record(mode), None, JUDGE)
            plain = agent.own is None and agent.runnable is None  # the run's model
            judges[mode] = model_label(options.spec) if plain else agent.label()
    return {
        "modes": list(plan.modes),
        "rosters": {name: r.path for name, r in plan.rosters.items()},
        "decisions": [p.spec for p in plan.decisions],
        "judge_model": plan.judge_model,
        "judges": judges,
        "matched": plan.matched,
        "agents": plan.agents,
        "rounds": plan.rounds,
        "neighbours": plan.neighbours,
        "plain_vote_modes": plain_vote_modes(plan.modes, plan.rounds, plan.rosters),
        "notes": list(notes),
        "parallel": plan.parallel,
        "model": model_label(options.spec),
    }


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
    """The embedded model's slots: the calls the eval makes at once, fitted to the machine.

    At most its memory's limit, and at most the cores it decodes on: on 2 cores, 12
    slots made each call six times slower, until one ran past its timeout.
    """
    from debategraph.local import check_gguf, resolve_gguf, slot_limit, usable_cores

    limit = min(slot_limit(check_gguf(resolve_gguf(spec.model))), usable_cores())
    return replace(spec, slots=max(1, min(wanted, limit)))


@contextlib.contextmanager
def _calls_at_once(limit: int | None) -> Iterator[None]:
    """Cap the process's model calls in flight (the embedded model's slots) for a run.

    A call queued inside the server would wait out its own timeout; queued here, it
    waits before its clock starts (:func:`~debategraph.models.limits.set_call_limit`).
    ``None`` leaves the cap as it is.
    """
    from debategraph.models.limits import call_limit, set_call_limit

    if limit is None:
        yield
        return
    before = call_limit()
    set_call_limit(limit)
    try:
        yield
    finally:
        set_call_limit(before)


def _resume_hint(db: str) -> str:
    from debategraph.checkpoints.savers import redact_url

    return f"rerun the same command to resume (answers so far are saved in {redact_url(db)})"


def execute(
    plan: EvalPlan,
    spec: ModelSpec,
    items: Sequence[Item],
    db: str,
    on_outcome: OnOutcome | None = None,
    *,
    dbs: Mapping[int, str] | None = None,
) -> EvalRun:
    """Run or read back every thread of the plan on ``items``, then the matched votes.

    Prints nothing: ``on_outcome`` sees each thread's plurality outcome as it is done.

    Args:
        plan: The plan.
        spec: The model (the embedded model's slots set).
        items: The questions.
        db: The checkpoint database (SQLite path or Postgres URL).
        on_outcome: Called with each thread's plurality outcome (progress).
        dbs: A question's own database, by its line (shards that kept their own);
            the others use ``db``.

    Returns:
        The outcomes (one per question, mode and protocol), the thread counts, the
        matched votes and the judge calls made.

    Raises:
        UsageError: If another live process runs one of the threads.
        DebategraphError: If an endpoint, the embedded server or the database fails,
            one line naming the question and how to resume (every answer so far saved).
        KeyboardInterrupt: On Ctrl-C (every answer so far saved).
    """
    from debategraph.checkpoints.savers import open_checkpointer
    from debategraph.eval.runner import Evaluation
    from debategraph.models import bind_model

    resume = _resume_hint(db)
    with contextlib.ExitStack() as stack:
        opened: dict[str, BaseCheckpointSaver[Any]] = {}

        def saver(path: str) -> BaseCheckpointSaver[Any]:
            if path not in opened:
                opened[path] = stack.enter_context(open_checkpointer(path))
            return opened[path]

        own = {line: saver(path) for line, path in (dbs or {}).items()}
        evaluation = Evaluation(saver(db), bind_model(spec), plan, on_outcome, savers=own)
        try:
            return asyncio.run(evaluation.evaluate(items))
        except UsageError:
            raise
        except DebategraphError as exc:  # an endpoint or the embedded server failed
            raise type(exc)(f"{exc}; {resume}") from exc
        except _run_failures() as exc:  # the database, or a model reply nothing could read
            text = " ".join(str(exc).split())[:300]
            raise DebategraphError(f"{type(exc).__name__}: {text}; {resume}") from exc


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
    shows only when it ends) as a line of its own, so a long run is never silent.
    """

    def __init__(self, modes: tuple[str, ...], total: int, quiet: bool) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.modes = modes
        self.total = total
        self.quiet = quiet
        self.done = 0
        self.started = time.monotonic()
        self.stopped = threading.Event()
        self.ticker = threading.Thread(target=self._tick, name="eval-progress", daemon=True)
        self.right: dict[str, int] = {}
        self.seen: dict[str, int] = {}
        self.pending: dict[int, int] = {}
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

    def status(self) -> str:
        """How far the run is: questions done, model calls in flight, time so far."""
        from debategraph.models.limits import calls_in_flight

        seconds = int(time.monotonic() - self.started)
        return (
            f"eval: {self.done}/{self.total} questions done · {calls_in_flight()} model "
            f"call(s) in flight · {seconds // 60}m{seconds % 60:02d}s"
        )

    def _tick(self) -> None:
        """Every :data:`PROGRESS_EVERY_S`: a line, or (on a terminal) the bar's own field."""
        from debategraph.models.limits import calls_in_flight

        while not self.stopped.wait(PROGRESS_EVERY_S):
            if err.is_terminal:
                flying = f"questions ({calls_in_flight()} calls in flight)"
                self.bar.update(self.task, what=flying)
            else:
                progress_line(self.status())

    def advance(self, outcome: Outcome) -> None:
        """Count one (question, mode); a question is done when all its modes are.

        Args:
            outcome: What the mode answered (its plurality row).
        """
        mode = outcome.mode
        self.seen[mode] = self.seen.get(mode, 0) + 1
        self.right[mode] = self.right.get(mode, 0) + outcome.correct
        accuracy = f"{mode} {self.right[mode] / self.seen[mode]:.2f}"
        if mode not in self.modes:
            if mode not in self.extra:
                self.extra[mode] = self.bar.add_task("", total=self.total, what=mode)
            self.bar.update(self.extra[mode], advance=1, description=accuracy)
            return
        left = self.pending.get(outcome.line, len(self.modes)) - 1
        self.pending[outcome.line] = left
        self.done += left == 0
        running = " · ".join(
            f"{m} {self.right[m] / self.seen[m]:.2f}" for m in self.modes if self.seen.get(m)
        )
        self.bar.update(self.task, advance=1 if left == 0 else 0, description=running)


def report_labels(plan: EvalPlan, run: EvalRun) -> list[str]:
    """The row labels in report order: the plan's modes, then the matched votes.

    Args:
        plan: The plan.
        run: What the run found.

    Returns:
        The labels (a mode brings its protocol rows along).
    """
    return [*plan.modes, *dict.fromkeys(m.vote_mode for m in run.matched)]


def write_report(
    out_dir: Path,
    plan: EvalPlan,
    run: EvalRun,
    meta: Mapping[str, Any],
    json_output: bool,
) -> None:
    """Write the result files; print the tables (or the JSON).

    Args:
        out_dir: ``--out``.
        plan: The plan.
        run: What the run found.
        meta: ``results.json``'s meta.
        json_output: Print ``results.json`` (with the files' paths) instead of tables.

    Raises:
        UsageError: If a file cannot be written.
    """
    import json

    from debategraph.eval.report import write_results
    from debategraph.eval.stats import build_report
    from debategraph.eval.tables import results_table

    labels = report_labels(plan, run)
    report = build_report(run.outcomes, labels, run.matched)
    paths = write_results(out_dir, run.outcomes, report, meta)
    if json_output:
        result = json.loads(paths["json"].read_text(encoding="utf-8"))
        emit_json({**result, "files": {k: str(v) for k, v in paths.items()}})
        return
    counts = meta["threads"]
    protocols = len({"plurality", *(meta.get("decisions") or ())})  # plurality: always a row
    shown = f" x {plural(protocols, 'decision')}" if protocols > 1 else ""
    err.print(
        f"{plural(meta['questions'], 'question')} x {plural(len(labels), 'mode')}{shown} · model "
        f"{escape(str(meta['model']))} · {counts['started']} started, {counts['resumed']} "
        f"resumed, {counts['finished']} read back from checkpoints · {meta['wall_s']:.1f} s"
    )
    for table in results_table(report, width=out.width):
        out.print(table)
    out.print(f"results: {escape(', '.join(str(p) for p in paths.values()))}")


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
    import json

    from debategraph.eval.shards import check_shards, read_plan, shard_items

    plans = {folder: read_plan(folder) for folder in shards}
    check_shards(plans)
    first = plans[shards[0]]
    options, questions = options_from_plan(first, out_dir, db, json_output)
    plan, notes = build_plan(options)
    _check_rosters(plan, first, shards[0])
    if dict(plan.model_key) != first["model_key"]:
        raise UsageError(
            f"the model here ({json.dumps(dict(plan.model_key), sort_keys=True)}) is not the "
            f"one the shards ran ({json.dumps(first['model_key'], sort_keys=True)}): run eval "
            "report where the shards' model is the same"
        )
    chosen = questions()
    dbs: dict[int, str] = {}
    for folder, settings in plans.items():
        shard = settings.get("shard")
        split = None if shard is None else (int(shard[0]), int(shard[1]))
        own = _shard_db(settings, folder, db)
        dbs.update((item.line, own) for item in shard_items(chosen.items, split))
    check_out_dir(out_dir)
    meta = {**chosen.meta, "shards": [str(folder) for folder in shards]}
    run_and_report(plan, options, replace(chosen, meta=meta), notes, dbs)


def options_from_plan(
    settings: Mapping[str, Any], out_dir: Path, db: str | None, json_output: bool
) -> tuple[EvalOptions, Callable[[], Questions]]:
    """The options and questions of the run a ``plan.json`` describes, for ``eval report``.

    Args:
        settings: The plan's settings.
        out_dir: Where the merged results go.
        db: ``--db`` (``None``: each shard's own).
        json_output: ``--json``.

    Returns:
        The options (no shard) and the questions' reader.
    """
    model, client = settings["model"], settings["client"]
    options = _options(
        settings["modes_text"],
        ",".join(settings["decisions"]),
        settings["judge_model"],
        bool(settings["matched"]),
        (int(settings["agents"]), int(settings["rounds"]), int(settings["neighbours"])),
        int(settings["parallel"]),
        out_dir,
        model["model"],
        model["base_url"],
        client["timeout"],
        int(client["max_retries"]),
        db,
        json_output,
        max_tokens=model.get("max_tokens"),
    )
    selection = (int(settings["offset"]), settings["limit"], settings["seed"])
    if settings["kind"] == "arithmetic":
        task = settings["arithmetic"]
        generation = (task["count"], task["operands"], task["max_operand"], settings["seed"])
        return options, lambda: arithmetic_questions(generation, selection[:2])
    dataset = Path(settings["dataset"])
    if not dataset.is_file() or _sha256(dataset) != settings["dataset_sha256"]:
        raise UsageError(
            f"--dataset {dataset}: not here, or not the file the shards ran (its content "
            "differs): run eval report where the shards' dataset is at that path"
        )
    return options, lambda: dataset_questions(settings["kind"], dataset, selection)


def _shard_db(settings: Mapping[str, Any], folder: Path, db: str | None) -> str:
    """A shard's database: ``--db``, else the default file in its folder, else its plan's.

    The default file is found in the folder as given to ``eval report`` (a folder copied
    from another machine included); a database whose password the plan left out is
    refused.
    """
    if db is not None:
        return db
    if settings.get("db_default"):
        return str(folder / CHECKPOINTS_FILE)
    if settings.get("db_redacted"):
        raise UsageError(
            f"{folder}: its database {settings['db']} has a password plan.json does not keep: "
            "give the URL with --db"
        )
    return str(settings["db"])


def _check_rosters(plan: EvalPlan, settings: Mapping[str, Any], folder: Path) -> None:
    """Refuse a roster file edited since the shards ran (its threads would not be found)."""
    for name, roster in plan.rosters.items():
        then = dict(settings["rosters"].get(name, {}))
        if then != _roster_record(roster):  # the file at the first shard's path, here
            raise UsageError(
                f"--modes {name}={roster.path}: the file changed since {folder} ran: restore "
                "it (the shards' threads are keyed by its content)"
            )
