"""The matched budget: a vote of independent samples at a debate's token budget.

The runner sizes each debate mode's vote by :func:`matched_k` (adjusted once by
:func:`adjusted_k` where :func:`within_budget` says it missed), and the report measures
each debate against that vote on the questions both answered (:func:`match_budgets`).
One rule, :data:`BUDGET_TOLERANCE`, decides "within budget" for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from debategraph.eval.paired import grouped, mcnemar_exact, paired
from debategraph.eval.records import Matched, Outcome
from debategraph.strategies.decisions import PLURALITY

#: A matched vote's mean total tokens per question may differ from its debate's by this
#: share at most (:func:`within_budget` applies it).
BUDGET_TOLERANCE = Fraction(1, 10)
#: The fewest solvers of a matched vote (one solver is no vote).
MIN_VOTERS = 2


def matched_k(debate_tokens: float, answer_tokens: float) -> int:
    """The solvers of a debate's matched vote: its tokens over one independent answer's.

    Args:
        debate_tokens: The debate's mean total tokens per question.
        answer_tokens: The mean total tokens of one independent answer (the debate's
            round-1 calls: round 1 is independent answers).

    Returns:
        ``round(debate_tokens / answer_tokens)``, at least :data:`MIN_VOTERS`.
    """
    if answer_tokens <= 0:
        return MIN_VOTERS
    return max(MIN_VOTERS, round(debate_tokens / answer_tokens))


def within_budget(debate_tokens: float, vote_tokens: float) -> bool:
    """Whether a vote's mean tokens per question are within 10% of its debate's.

    Args:
        debate_tokens: The debate's mean total tokens per question.
        vote_tokens: The vote's.

    Returns:
        ``|vote - debate| <= debate / 10``.
    """
    return abs(vote_tokens - debate_tokens) <= float(BUDGET_TOLERANCE) * debate_tokens


def adjusted_k(k: int, debate_tokens: float, vote_tokens: float) -> int:
    """``k`` adjusted once by the measured ratio of the debate's tokens to the vote's.

    Args:
        k: The vote's solvers.
        debate_tokens: The debate's mean total tokens per question.
        vote_tokens: The vote of ``k`` solvers' mean total tokens per question.

    Returns:
        ``round(k * debate_tokens / vote_tokens)``, at least :data:`MIN_VOTERS`.
    """
    if vote_tokens <= 0:
        return k
    return max(MIN_VOTERS, round(k * debate_tokens / vote_tokens))


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
            :func:`within_budget`).
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
    names = [name for match in matched for name in (match.mode, match.vote_mode)]
    rows = grouped([o for o in outcomes if o.decision == PLURALITY], names)
    results = []
    for match in matched:
        if match.mode not in rows or match.vote_mode not in rows:
            continue
        debate, vote = rows[match.mode], rows[match.vote_mode]
        shared, a_only, b_only = paired(debate, vote)
        if not shared:
            continue
        n = len(shared)
        spent, vote_spent = debate.tokens(shared), vote.tokens(shared)
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
