"""The eval's statistics: summaries, paired tests, the Pareto front, and the whole report.

The rows are :class:`~debategraph.eval.records.Outcome` records, one per question, mode
and decision protocol, grouped by label (:mod:`~debategraph.eval.paired`).
:func:`build_report` computes everything the result files and tables show: the
summaries and paired tests here, the matched budgets (:mod:`~debategraph.eval.budget`)
and the debate dynamics (:mod:`~debategraph.eval.dynamics`).

Pure Python (no scipy or numpy): the McNemar sums are exact integer arithmetic
(:func:`~debategraph.eval.paired.mcnemar_exact`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from debategraph.eval.breakdowns import Agreement, SubjectScore, epoch_agreement, subject_scores
from debategraph.eval.budget import MatchedResult, match_budgets
from debategraph.eval.dynamics import ModeDynamics, mode_dynamics
from debategraph.eval.escalation import Escalation, escalations
from debategraph.eval.modes import DEFAULT_AGREE
from debategraph.eval.paired import Rows, grouped, mcnemar_exact, paired
from debategraph.eval.records import Comparison, Matched, ModeSummary, Outcome
from debategraph.strategies.decisions import PLURALITY
from debategraph.strategies.intervals import Z_95, wilson_interval  # noqa: F401 (Z_95 re-exported)

#: The significance level the tables say "not significant" against.
ALPHA = 0.05


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
        escalation: ``vote-then-debate``'s figures, where the run has that mode
            (:mod:`~debategraph.eval.escalation`).
        subjects: Each mode's accuracy per subject, where the dataset names subjects
            (:mod:`~debategraph.eval.breakdowns`).
        agreement: Each mode's agreement across epochs, where ``--epochs`` is above 1.
    """

    summaries: tuple[ModeSummary, ...]
    comparisons: tuple[Comparison, ...]
    matched: tuple[MatchedResult, ...]
    dynamics: tuple[ModeDynamics, ...]
    pareto: tuple[str, ...]
    escalation: tuple[Escalation, ...] = ()
    subjects: tuple[SubjectScore, ...] = ()
    agreement: tuple[Agreement, ...] = ()


def _summary(label: str, rows: Rows) -> ModeSummary:
    """One label's summary, over its scored rows (the errored ones counted apart)."""
    values = list(rows.lines.values())
    n = len(values)
    if not n:  # every question errored: nothing to score
        return ModeSummary(
            label, 0, 0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, rows.decision, 0.0,
            errored=len(rows.errored),
        )  # fmt: skip
    correct = sum(row.correct for row in values)
    low, high = wilson_interval(correct, n)
    prompt = sum(row.prompt_tokens for row in values)
    completion = sum(row.completion_tokens for row in values)
    priced = [row.cost for row in values if row.cost is not None]
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
        errored=len(rows.errored),
        cost=math.fsum(priced) / n if priced else None,
        cache_hits=sum(row.cache_hits for row in values),
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
    return [_summary(label, rows) for label, rows in grouped(outcomes, labels).items()]


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
    labelled = grouped(outcomes, labels)
    votes = {match.vote_mode for match in matched}
    plain = [
        label
        for label, rows in labelled.items()
        if rows.decision == PLURALITY and label not in votes
    ]
    pairs = list(combinations(plain, 2))
    pairs += [
        (rows.mode, label)
        for label, rows in labelled.items()
        if rows.decision != PLURALITY and rows.mode in labelled
    ]
    pairs += [
        (match.mode, match.vote_mode)
        for match in matched
        if match.mode in labelled and match.vote_mode in labelled
    ]
    comparisons = []
    for a, b in dict.fromkeys(pairs):
        shared, a_only, b_only = paired(labelled[a], labelled[b])
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
    *,
    agree: str = DEFAULT_AGREE,
    round_cap: int | None = None,
) -> Report:
    """Every figure of an eval's results, from its outcomes.

    Args:
        outcomes: Every outcome (one per question, mode and decision protocol).
        labels: The labels or modes to report, in order (a mode brings its protocol
            rows along, right after it; see :func:`summarize`).
        matched: The matched-budget votes the runner ran (``Matched`` records).
        agree: The agreement ``vote-then-debate`` stopped on (``--agree``).
        round_cap: ``--rounds`` (``vote-then-debate``'s estimate of debating every
            question, where the run has no debate row).

    Returns:
        The report: summaries, comparisons, matched results, dynamics, Pareto front.

    Raises:
        ValueError: When a label has two outcomes for the same line, or a row's
            ``rounds`` is not a JSON list of rounds.
    """
    summaries = summarize(outcomes, labels)
    comparisons = compare(outcomes, labels, matched)
    return Report(
        summaries=tuple(summaries),
        comparisons=tuple(comparisons),
        matched=tuple(match_budgets(outcomes, matched)),
        dynamics=tuple(mode_dynamics(outcomes, labels)),
        pareto=tuple(pareto_front(summaries)),
        escalation=tuple(
            escalations(outcomes, comparisons, matched, agree=agree, round_cap=round_cap)
        ),
        subjects=tuple(subject_scores(outcomes, labels)),
        agreement=tuple(epoch_agreement(outcomes, labels)),
    )
