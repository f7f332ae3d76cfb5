"""From the ``eval`` command's options to a plan: every option checked before anything runs.

:func:`eval_options` reads the options every ``eval`` command shares (the model, the
shard); :func:`build_plan` checks those that shape the run (modes, decision protocols,
judges, rosters, the graph's settings) and makes the
:class:`~debategraph.eval.plan.EvalPlan`, each bad value refused in one
:class:`~debategraph.errors.UsageError` line naming its option. Nothing is written and no
model is called.

:func:`plan_of` is :func:`build_plan` with what it asks of the endpoints: the judges'
models and every agent's model served where it goes (one request per endpoint).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from debategraph.errors import UsageError
from debategraph.eval.checks import own_specs, read_roster, refuse_tools_on_embedded
from debategraph.eval.modes import (
    DEFAULT_AGREE,
    VOTE_THEN_DEBATE,
    check_settings,
    parse_agree,
    parse_modes,
    plain_vote_modes,
    plain_vote_note,
)
from debategraph.eval.plan import EvalPlan, check_judges
from debategraph.eval.shards import parse_shard
from debategraph.models.money import Price
from debategraph.models.spec import ModelSpec, parse_model
from debategraph.runs.start import spec_record
from debategraph.strategies.decisions import JUDGE, PLURALITY, parse_protocols

# The eval's defaults, written once here (the ``eval`` commands' options read them).
#: ``--decisions``: the mode's own row only.
DEFAULT_DECISIONS = PLURALITY
#: ``--matched``: each debate mode's vote at its token budget is run.
DEFAULT_MATCHED = True
#: ``--agents``: solvers of the vote and debate modes.
DEFAULT_AGENTS = 3
#: ``--rounds``: rounds of the debate modes.
DEFAULT_ROUNDS = 2
#: ``--neighbours``: solvers each one hears on the ring.
DEFAULT_NEIGHBOURS = 1
#: ``--parallel``: questions in flight at once.
DEFAULT_PARALLEL = 4
#: ``--max-errors``: the share of (question, mode) pairs that may error (their calls
#: kept failing) before the eval stops; below it each is recorded and the eval goes on.
DEFAULT_MAX_ERRORS = 0.05
#: ``--temperature``: every call's sampling temperature (the model spec's default).
DEFAULT_TEMPERATURE: float = ModelSpec.temperature
#: ``--epochs``: how many times each question is asked (each asking its own thread).
DEFAULT_EPOCHS = 1
#: ``--choice-seed``: the seed choices are shuffled with (GPQA's, or ``--shuffle-choices``).
DEFAULT_CHOICE_SEED = 0

#: Where the checkpoints go unless ``--db`` says otherwise: inside ``--out``, so one
#: folder holds an eval's threads and its results, and the same command resumes it.
CHECKPOINTS_FILE = "checkpoints.sqlite"


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
        agree: ``--agree``.
        max_errors: ``--max-errors``: the share of (question, mode) pairs that may
            error before the eval stops.
        max_cost: ``--max-cost``: the most this command may spend on priced calls.
        cache: ``--cache``: the response cache's file (``None``: none).
        epochs: ``--epochs``: how many times each question is asked.
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
    agree: str = DEFAULT_AGREE
    max_errors: float = DEFAULT_MAX_ERRORS
    max_cost: float | None = None
    cache: str | None = None
    epochs: int = DEFAULT_EPOCHS

    @property
    def checkpoints(self) -> str:
        """The checkpoint database: ``--db``, else a file in ``--out``."""
        return self.db or str(self.out_dir / CHECKPOINTS_FILE)


def eval_options(
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
    agree: str = DEFAULT_AGREE,
    patience: float | None = None,
    rpm: float | None = None,
    max_errors: float = DEFAULT_MAX_ERRORS,
    tpm: float | None = None,
    price: Price | None = None,
    max_cost: float | None = None,
    cache: str | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
    epochs: int = DEFAULT_EPOCHS,
) -> EvalOptions:
    """The options every ``eval`` command shares, read: the model spec, the shard.

    Each argument is the option of its name (``shape``: ``--agents``, ``--rounds``,
    ``--neighbours``), kept as :class:`EvalOptions` says; ``model``, ``base_url``,
    ``timeout``, ``max_retries``, ``patience`` (seconds), ``rpm``, ``tpm``, ``price``,
    ``api_key_env``, ``max_tokens`` and ``temperature`` (0 to 2) make its ``spec``,
    ``shard`` (``i/N``) is read into ``(i, N)``, ``max_errors`` must be a share
    from 0 to 1, and ``cache`` is kept as it is (opened when the eval runs).

    Returns:
        The options.

    Raises:
        UsageError: On a bad model spec, temperature, shard or share of errors, naming
            the option.
    """
    if isinstance(temperature, bool) or not 0 <= temperature <= 2:
        raise UsageError(
            f"--temperature {temperature:g} must be a number from 0 to 2 (0: the likeliest "
            f"reply every time; default {DEFAULT_TEMPERATURE:g})"
        )
    if isinstance(max_errors, bool) or not 0 <= max_errors <= 1:
        raise UsageError(
            f"--max-errors {max_errors:g} must be a share from 0 to 1 (0.05: 5% of the "
            "questions in each mode may error before the eval stops)"
        )
    spec = ModelSpec(
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        timeout_s=timeout,
        max_tokens=max_tokens,
        max_retries=max_retries,
        patience_s=patience,
        rpm=rpm,
        tpm=tpm,
        price=price,
        temperature=temperature,
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
        agree,
        max_errors,
        max_cost,
        cache,
        epochs,
    )


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
    agents, rounds, neighbours = options.shape
    chosen, files = parse_modes(options.modes)
    try:
        protocols = parse_protocols(options.decisions)
    except ValueError as exc:
        raise UsageError(f"--decisions: {exc}") from None
    if options.parallel < 1:
        raise UsageError(f"--parallel {options.parallel} must be at least 1")
    _check_epochs(options)
    judge_model = _judge_model(options.judge_model)
    agree = parse_agree(options.agree)
    rosters = {name: read_roster(name, path) for name, path in files.items()}
    check_settings(
        chosen, agents=agents, rounds=rounds, neighbours=neighbours, rosters=rosters, agree=agree
    )
    plan = EvalPlan(
        chosen,
        agents,
        rounds,
        neighbours,
        options.parallel,
        spec_record(options.spec),
        model_key(options.spec),
        decisions=protocols,
        rosters=rosters,
        judge_model=judge_model,
        matched=options.matched,
        agree=agree,
        epochs=options.epochs,
    )
    refuse_tools_on_embedded(plan, options.spec)
    check_judges(plan)
    votes_only = plain_vote_modes(chosen, rounds, rosters)
    notes = [plain_vote_note(votes_only)] if votes_only else []
    if judge_model is not None and not any(plan.needs_judge(m) for m in chosen):
        notes.append(
            f"--judge-model {judge_model} is not used: no protocol of --decisions consults "
            "a judge (add judge to --decisions)"
        )
    if agree != DEFAULT_AGREE and VOTE_THEN_DEBATE not in chosen:
        notes.append(f"--agree {agree} is not used: add {VOTE_THEN_DEBATE} to --modes")
    return plan, notes


def plan_of(options: EvalOptions) -> tuple[EvalPlan, list[str]]:
    """The eval's plan (:func:`build_plan`), its models checked at their endpoints.

    Args:
        options: The shared options.

    Returns:
        The plan, and notes for the user.

    Raises:
        UsageError: One line naming the bad option, agent, judge or endpoint.
    """
    from debategraph.eval.plan import check_judge_endpoints
    from debategraph.runs.endpoints import Endpoints, check_served

    plan, notes = build_plan(options)
    endpoints = Endpoints()
    check_judge_endpoints(plan, options.spec, endpoints.probe)
    check_served(own_specs(plan), options.spec, endpoints)
    return plan, notes


def _check_epochs(options: EvalOptions) -> None:
    """``--epochs``: 1 or more, and never with ``--cache`` (each epoch must be a new sample).

    The response cache answers a thread's first identical request with the same sample
    whatever the thread, so every epoch after the first would replay the first's replies.
    """
    if isinstance(options.epochs, bool) or options.epochs < 1:
        raise UsageError(
            f"--epochs {options.epochs} must be 1 or more (how many times each question is "
            "asked, each time a thread of its own)"
        )
    if options.epochs > 1 and options.cache is not None:
        raise UsageError(
            f"--epochs {options.epochs} with --cache {options.cache}: every epoch would get "
            "the first one's cached replies; leave out --cache to ask each question anew"
        )


def _judge_model(text: str | None) -> str | None:
    """``--judge-model``, checked: a model spec string (as an agent's ``model``)."""
    if text is None:
        return None
    try:
        parse_model(text, "--judge-model")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return text.strip()


def model_key(spec: ModelSpec) -> dict[str, Any]:
    """What of the model decides its answers: part of each thread's id.

    Not the client's settings (timeout, retries, slots); for the embedded model, the
    GGUF file ``local`` or ``local:PATH`` means here (``DEBATEGRAPH_GGUF`` may change it).

    Args:
        spec: The run's model.

    Returns:
        The fields (JSON values).
    """
    fields = ("model", "base_url", "temperature", "max_tokens", "structured_method")
    key: dict[str, Any] = {name: getattr(spec, name) for name in fields}
    if spec.is_local:
        from debategraph.local import resolve_gguf

        key["gguf"] = str(resolve_gguf(spec.model).resolve())
    return key


def plan_meta(plan: EvalPlan, notes: Sequence[str], label: str) -> dict[str, Any]:
    """The plan's entries of ``results.json``'s meta.

    Args:
        plan: The plan.
        notes: The notes told the user.
        label: The run's model as the user reads it (a judge on it is named so).

    Returns:
        The entries.
    """
    from debategraph.nodes.agent import agent_of

    judges: dict[str, str] = {}
    for mode in plan.modes:
        if plan.needs_judge(mode):
            agent = agent_of(plan.judge_record(mode), None, JUDGE)
            plain = agent.own is None and agent.runnable is None  # the run's model
            judges[mode] = label if plain else agent.label()
    return {
        "modes": list(plan.modes),
        "rosters": {name: r.path for name, r in plan.rosters.items()},
        "decisions": [p.spec for p in plan.decisions],
        "judge_model": plan.judge_model,
        "judges": judges,
        "matched": plan.matched,
        "agree": plan.agree,
        "agents": plan.agents,
        "rounds": plan.rounds,
        "neighbours": plan.neighbours,
        "plain_vote_modes": plain_vote_modes(plan.modes, plan.rounds, plan.rosters),
        "notes": list(notes),
        "parallel": plan.parallel,
        "model": label,
        "temperature": plan.model.get("temperature"),
        "epochs": plan.epochs,
    }
