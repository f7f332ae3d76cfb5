"""The eval's statistics: summaries, exact McNemar tests, matched budgets, debate dynamics.

The rows are :class:`~debategraph.eval.records.Outcome` records, one per question, mode
and decision protocol; a row's *label* (``Outcome.label``) names it in every table: the
mode for its default plurality decision, ``mode/decision`` for another protocol applied
to the same threads. :func:`build_report` computes everything the result files and
tables show.

Pure Python (no scipy or numpy): the McNemar sums are exact integer arithmetic, so the
p-values stay right for counts far beyond what a float binomial coefficient could hold.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

from debategraph.eval.records import Comparison, Matched, ModeSummary, Outcome
from debategraph.strategies.decisions import PLURALITY
from debategraph.strategies.dynamics import (
    Dynamics,
    DynamicsSummary,
    summarize_dynamics,
    thread_dynamics,
)
from debategraph.strategies.intervals import Z_95, wilson_interval  # noqa: F401 (Z_95 re-exported)

#: A matched vote's mean total tokens per question may differ from its debate's by this
#: share at most (:func:`debategraph.eval.modes.within_budget` applies it).
BUDGET_TOLERANCE = Fraction(1, 10)
#: The significance level the tables say "not significant" against.
ALPHA = 0.05


@dataclass(frozen=True)
class MatchedResult:
    """A debate mode against the vote run at its token budget, on the questions both answered.

    Attributes:
        mode: The debate mode.
        vote_mode: The matched vote's mode (``vote@K``).
        k: The vote's solvers.
        how: How ``k`` was chosen (from the runner's :class:`Matched`).
        n: Questions both answered.
        tokens: The debate's mean total tokens per question (over those ``n``).
        vote_tokens: The vote's.
        ratio: ``vote_tokens / tokens``; ``None`` when the debate used no tokens.
        within: Whether the vote's budget is within 10% of the debate's
            (``|vote_tokens - tokens| <= tokens / 10``, exactly 10% within; by
            :func:`~debategraph.eval.modes.within_budget`).
        accuracy: The debate's accuracy on the ``n`` questions.
        vote_accuracy: The vote's.
        a_only: Questions the debate got right and the vote wrong.
        b_only: Questions the vote got right and the debate wrong.
        p_value: Two-sided exact McNemar p-value.
    """

    mode: str
    vote_mode: str
    k: int
    how: str
    n: int
    tokens: float
    vote_tokens: float
    ratio: float | None
    within: bool
    accuracy: float
    vote_accuracy: float
    a_only: int
    b_only: int
    p_value: float


@dataclass(frozen=True)
class DecisionResult:
    """One label of a debate mode measured against its threads' oracle.

    Attributes:
        label: The row label (``debate-full``, ``debate-full/judge``).
        decision: Its decision protocol's spec.
        threads: Its questions with per-round answers recorded.
        oracle: Share of them where some solver gave the gold answer in some round.
        oracle_ci: Its 95% Wilson interval.
        final_accuracy: Share whose decision is right.
        final_ci: Its 95% Wilson interval.
        loss: Share where the oracle holds and the decision is wrong.
        loss_ci: Its 95% Wilson interval.
    """

    label: str
    decision: str
    threads: int
    oracle: float
    oracle_ci: tuple[float, float]
    final_accuracy: float
    final_ci: tuple[float, float]
    loss: float
    loss_ci: tuple[float, float]


@dataclass(frozen=True)
class ModeDynamics:
    """A debate mode's dynamics (a mode whose threads have two rounds or more).

    Attributes:
        mode: The mode.
        summary: Per round, the oracle and the loss, over its plurality rows.
        decisions: Final accuracy and loss of each of its labels (the plurality row
            first, then each protocol row in label order).
    """

    mode: str
    summary: DynamicsSummary
    decisions: tuple[DecisionResult, ...]


@dataclass(frozen=True)
class Report:
    """Everything ``results.*`` and the printed tables show.

    Attributes:
        summaries: One per label, in label order.
        comparisons: The paired tests that matter (see :func:`compare`).
        matched: Each debate mode against its matched-budget vote.
        dynamics: Each debate mode's dynamics, in label order.
        pareto: The labels on the Pareto front of accuracy against mean total tokens
            (see :func:`pareto_front`), cheapest first.
    """

    summaries: tuple[ModeSummary, ...]
    comparisons: tuple[Comparison, ...]
    matched: tuple[MatchedResult, ...]
    dynamics: tuple[ModeDynamics, ...]
    pareto: tuple[str, ...]


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar test on the discordant pairs of two paired classifiers.

    Under the null hypothesis each discordant pair goes either way with probability 1/2,
    so the p-value is ``min(1, 2 * P(X <= min(a_only, b_only)))`` with
    ``X ~ Binomial(a_only + b_only, 1/2)``, summed exactly with integers.

    Args:
        a_only: Pairs the first classifier got right and the second wrong.
        b_only: Pairs the second got right and the first wrong.

    Returns:
        The p-value; 1.0 when there are no discordant pairs.

    Raises:
        ValueError: When a count is negative.
    """
    if a_only < 0 or b_only < 0:
        raise ValueError(f"mcnemar_exact: counts must be >= 0, got {a_only}, {b_only}")
    total = a_only + b_only
    if total == 0:
        return 1.0
    tail = sum(math.comb(total, i) for i in range(min(a_only, b_only) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**total)))


@dataclass(frozen=True)
class _Rows:
    """A label's rows by question line, with the mode and decision they share."""

    mode: str
    decision: str
    lines: dict[int, Outcome]


def _grouped(outcomes: Sequence[Outcome], labels: Sequence[str]) -> dict[str, _Rows]:
    """Group the outcomes by label, then by question line, in the order wanted.

    A name in ``labels`` is a label (``vote``, ``debate-full/judge``) or a mode: a mode
    stands for its own rows, then its protocol rows (those not named themselves, in the
    order they first appear in ``outcomes``). Labels named twice count once, where first
    named; labels of neither kind are left out, and so are names without outcomes.

    Raises:
        ValueError: When a label has two outcomes for the same line.
    """
    found: dict[str, _Rows] = {}
    for outcome in outcomes:
        label = outcome.label
        rows = found.get(label)
        if rows is None:
            rows = found[label] = _Rows(outcome.mode, outcome.decision, {})
        if outcome.line in rows.lines:
            raise ValueError(f"two outcomes for {label!r}, line {outcome.line}")
        rows.lines[outcome.line] = outcome
    named = set(labels)
    ordered: dict[str, _Rows] = {}
    for name in labels:
        if name in found:
            ordered.setdefault(name, found[name])
        for label, rows in found.items():
            if rows.mode == name and label not in named:
                ordered.setdefault(label, rows)
    return ordered


def _summary(label: str, rows: _Rows) -> ModeSummary:
    """One label's summary."""
    values = list(rows.lines.values())
    n = len(values)
    correct = sum(row.correct for row in values)
    low, high = wilson_interval(correct, n)
    prompt = sum(row.prompt_tokens for row in values)
    completion = sum(row.completion_tokens for row in values)
    return ModeSummary(
        mode=label,
        n=n,
        correct=correct,
        accuracy=correct / n,
        ci_low=low,
        ci_high=high,
        abstention_rate=sum(row.answer is None for row in values) / n,
        prompt_tokens=prompt / n,
        completion_tokens=completion / n,
        calls=sum(row.calls for row in values) / n,
        wall_s=math.fsum(row.wall_s for row in values) / n,
        decision=rows.decision,
        tokens=(prompt + completion) / n,
    )


def summarize(outcomes: Sequence[Outcome], labels: Sequence[str]) -> list[ModeSummary]:
    """Summarise each label over the questions it answered.

    Args:
        outcomes: Outcomes of any modes and decision protocols.
        labels: The labels (or modes: a mode brings its protocol rows along, right after
            it) to summarise, in the order wanted; other outcomes are ignored.

    Returns:
        One summary per label that has outcomes, in that order: accuracy with its 95%
        Wilson interval, abstention rate (share of ``answer is None``), the decision
        protocol, and the mean prompt, completion and total tokens, calls and wall time
        per question.

    Raises:
        ValueError: When a label has two outcomes for the same line.
    """
    return [_summary(label, rows) for label, rows in _grouped(outcomes, labels).items()]


def _paired(a: _Rows, b: _Rows) -> tuple[list[int], int, int]:
    """The lines both answered, and how many only ``a`` and only ``b`` got right."""
    shared = sorted(a.lines.keys() & b.lines.keys())
    a_only = sum(a.lines[line].correct and not b.lines[line].correct for line in shared)
    b_only = sum(b.lines[line].correct and not a.lines[line].correct for line in shared)
    return shared, a_only, b_only


def compare(
    outcomes: Sequence[Outcome], labels: Sequence[str], matched: Sequence[Matched] = ()
) -> list[Comparison]:
    """The paired exact McNemar tests that matter, each on the questions both answered.

    In this order, each pair once: every pair of the plain modes (plurality rows, the
    matched votes left out), in label order; each protocol row against its own mode's
    plurality row; each debate mode against its matched vote.

    Args:
        outcomes: Outcomes of any modes and decision protocols.
        labels: The labels (or modes) to compare, in the order wanted (as for
            :func:`summarize`).
        matched: The matched-budget votes (a pair is tested when both have outcomes).

    Returns:
        The comparisons; ``a`` is the mode, or the first in label order.

    Raises:
        ValueError: When a label has two outcomes for the same line.
    """
    grouped = _grouped(outcomes, labels)
    votes = {match.vote_mode for match in matched}
    plain = [
        label
        for label, rows in grouped.items()
        if rows.decision == PLURALITY and label not in votes
    ]
    pairs = list(combinations(plain, 2))
    pairs += [
        (rows.mode, label)
        for label, rows in grouped.items()
        if rows.decision != PLURALITY and rows.mode in grouped
    ]
    pairs += [
        (match.mode, match.vote_mode)
        for match in matched
        if match.mode in grouped and match.vote_mode in grouped
    ]
    comparisons = []
    for a, b in dict.fromkeys(pairs):
        shared, a_only, b_only = _paired(grouped[a], grouped[b])
        comparisons.append(
            Comparison(
                a=a,
                b=b,
                n=len(shared),
                a_only=a_only,
                b_only=b_only,
                p_value=mcnemar_exact(a_only, b_only),
            )
        )
    return comparisons


def _tokens(rows: _Rows, lines: Sequence[int]) -> int:
    """Total tokens of ``rows`` on ``lines``."""
    return sum(
        rows.lines[line].prompt_tokens + rows.lines[line].completion_tokens for line in lines
    )


def match_budgets(outcomes: Sequence[Outcome], matched: Sequence[Matched]) -> list[MatchedResult]:
    """Each debate mode against its matched-budget vote, paired on the question.

    Args:
        outcomes: Outcomes of any modes; the plurality rows of each pair's modes count.
        matched: The pairs, in the order wanted; one without shared questions is left out.

    Returns:
        One result per pair with questions both answered.

    Raises:
        ValueError: When a label has two outcomes for the same line.
    """
    # Imported here: modes imports BUDGET_TOLERANCE from this module.
    from debategraph.eval.modes import within_budget

    names = [name for match in matched for name in (match.mode, match.vote_mode)]
    grouped = _grouped([o for o in outcomes if o.decision == PLURALITY], names)
    results = []
    for match in matched:
        if match.mode not in grouped or match.vote_mode not in grouped:
            continue
        debate, vote = grouped[match.mode], grouped[match.vote_mode]
        shared, a_only, b_only = _paired(debate, vote)
        if not shared:
            continue
        n = len(shared)
        spent, vote_spent = _tokens(debate, shared), _tokens(vote, shared)
        results.append(
            MatchedResult(
                mode=match.mode,
                vote_mode=match.vote_mode,
                k=match.k,
                how=match.how,
                n=n,
                tokens=spent / n,
                vote_tokens=vote_spent / n,
                ratio=vote_spent / spent if spent else None,
                # On the integer totals (in the means' ratio): exact at 10%, where the
                # means (float quotients) can round either way.
                within=within_budget(spent, vote_spent),
                accuracy=sum(debate.lines[line].correct for line in shared) / n,
                vote_accuracy=sum(vote.lines[line].correct for line in shared) / n,
                a_only=a_only,
                b_only=b_only,
                p_value=mcnemar_exact(a_only, b_only),
            )
        )
    return results


def _rounds(outcome: Outcome) -> list[dict[str, str | None]]:
    """An outcome's per-round answers, read from its ``rounds`` JSON text.

    Raises:
        ValueError: When it is not a JSON list of ``{solver: answer}`` objects.
    """
    try:
        rounds = json.loads(outcome.rounds)
    except ValueError:
        rounds = None
    if not isinstance(rounds, list) or not all(isinstance(r, dict) for r in rounds):
        raise ValueError(
            f"{outcome.label!r}, line {outcome.line}: rounds must be a JSON list of "
            f"{{solver: answer}} objects, got {outcome.rounds[:80]!r}"
        )
    return rounds


def _threads(rows: _Rows) -> list[Dynamics]:
    """The dynamics of a label's rows that recorded their rounds, each against its gold.

    Each thread's final is the row's answer, ``None`` included (a protocol that
    abstained decided nothing, which is never right).
    """
    return [
        thread_dynamics(rounds, gold=row.gold, final=row.answer)
        for row in rows.lines.values()
        if (rounds := _rounds(row))
    ]


def _decision_result(label: str, decision: str, summary: DynamicsSummary) -> DecisionResult:
    """A label's oracle, final accuracy and loss, as :func:`summarize_dynamics` gave them."""
    n = summary.threads
    right = round(summary.final_accuracy * n)  # the count back (exact: k / n * n rounds to k)
    return DecisionResult(
        label=label,
        decision=decision,
        threads=n,
        oracle=summary.oracle,
        oracle_ci=summary.oracle_ci,
        final_accuracy=summary.final_accuracy,
        final_ci=wilson_interval(right, n),
        loss=summary.loss,
        loss_ci=summary.loss_ci,
    )


def mode_dynamics(outcomes: Sequence[Outcome], labels: Sequence[str]) -> list[ModeDynamics]:
    """The dynamics of each debate mode: each mode whose plurality rows have 2+ rounds.

    Rows whose ``rounds`` are empty (a thread that recorded none) are left out.

    Args:
        outcomes: Outcomes of any modes and decision protocols.
        labels: The labels (or modes) wanted, in order (as for :func:`summarize`).

    Returns:
        One entry per debate mode, in label order: :func:`summarize_dynamics` of its
        plurality rows (per-round agent and decision accuracy, flips, conformity, the
        oracle and the loss) and each of its labels' final accuracy and loss.

    Raises:
        ValueError: When a label has two outcomes for the same line, or a row's
            ``rounds`` is not a JSON list of rounds.
    """
    grouped = _grouped(outcomes, labels)
    found = []
    for mode, rows in grouped.items():
        if rows.decision != PLURALITY:
            continue
        threads = _threads(rows)
        if not any(len(thread.rounds) >= 2 for thread in threads):
            continue
        summary = summarize_dynamics(threads)
        decisions = [_decision_result(mode, PLURALITY, summary)]
        for label, others in grouped.items():
            if others.mode == mode and others.decision != PLURALITY:
                measured = _threads(others)
                if measured:
                    result = _decision_result(label, others.decision, summarize_dynamics(measured))
                    decisions.append(result)
        found.append(ModeDynamics(mode, summary, tuple(decisions)))
    return found


def pareto_front(summaries: Sequence[ModeSummary]) -> list[str]:
    """The labels no other label dominates on accuracy against mean total tokens.

    A label is dominated when another has accuracy at least as high and tokens at most
    as many, one of the two strictly.

    Args:
        summaries: The labels' summaries.

    Returns:
        The labels on the front, fewest tokens first (ties: higher accuracy first, then
        the order given).
    """

    def dominated(s: ModeSummary) -> bool:
        return any(
            o.accuracy >= s.accuracy
            and o.tokens <= s.tokens
            and (o.accuracy > s.accuracy or o.tokens < s.tokens)
            for o in summaries
        )

    front = [s for s in summaries if not dominated(s)]
    return [s.mode for s in sorted(front, key=lambda s: (s.tokens, -s.accuracy))]


def build_report(
    outcomes: Sequence[Outcome],
    labels: Sequence[str],
    matched: Sequence[Matched] = (),
) -> Report:
    """Every figure of an eval's results, from its outcomes.

    Args:
        outcomes: Every outcome (one per question, mode and decision protocol).
        labels: The labels or modes to report, in order (a mode brings its protocol
            rows along, right after it; see :func:`summarize`).
        matched: The matched-budget votes the runner ran (``Matched`` records).

    Returns:
        The report: summaries, comparisons, matched results, dynamics, Pareto front.

    Raises:
        ValueError: When a label has two outcomes for the same line, or a row's
            ``rounds`` is not a JSON list of rounds.
    """
    summaries = summarize(outcomes, labels)
    return Report(
        summaries=tuple(summaries),
        comparisons=tuple(compare(outcomes, labels, matched)),
        matched=tuple(match_budgets(outcomes, matched)),
        dynamics=tuple(mode_dynamics(outcomes, labels)),
        pareto=tuple(pareto_front(summaries)),
    )
