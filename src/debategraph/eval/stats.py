"""The eval's statistics: Wilson intervals, exact McNemar tests, per-mode summaries.

Pure Python (no scipy or numpy): the sums are exact integer arithmetic, so the p-values
stay right for counts far beyond what a float binomial coefficient could hold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from itertools import combinations

from debategraph.eval.records import Comparison, ModeSummary, Outcome
from debategraph.strategies.intervals import Z_95, wilson_interval  # noqa: F401 (Z_95 re-exported)


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


def _by_mode(outcomes: Sequence[Outcome], modes: Sequence[str]) -> dict[str, dict[int, Outcome]]:
    """Group the outcomes of the given modes by mode, then by question line.

    Modes without outcomes are left out; the others keep the order of ``modes``.

    Raises:
        ValueError: When a mode has two outcomes for the same line.
    """
    wanted = set(modes)
    grouped: dict[str, dict[int, Outcome]] = {}
    for outcome in outcomes:
        if outcome.mode not in wanted:
            continue
        lines = grouped.setdefault(outcome.mode, {})
        if outcome.line in lines:
            raise ValueError(f"two outcomes for mode {outcome.mode!r}, line {outcome.line}")
        lines[outcome.line] = outcome
    return {mode: grouped[mode] for mode in dict.fromkeys(modes) if mode in grouped}


def summarize(outcomes: Sequence[Outcome], modes: Sequence[str]) -> list[ModeSummary]:
    """Summarise each mode over the questions it answered.

    Args:
        outcomes: Outcomes of any modes; those of modes not in ``modes`` are ignored.
        modes: The modes to summarise, in the order wanted.

    Returns:
        One summary per mode of ``modes`` that has outcomes, in that order: accuracy with
        its 95% Wilson interval, abstention rate (share of ``answer is None``), and the
        mean prompt tokens, completion tokens, calls and wall time per question.

    Raises:
        ValueError: When a mode has two outcomes for the same line.
    """
    summaries = []
    for mode, by_line in _by_mode(outcomes, modes).items():
        rows = list(by_line.values())
        n = len(rows)
        correct = sum(row.correct for row in rows)
        low, high = wilson_interval(correct, n)
        summaries.append(
            ModeSummary(
                mode=mode,
                n=n,
                correct=correct,
                accuracy=correct / n,
                ci_low=low,
                ci_high=high,
                abstention_rate=sum(row.answer is None for row in rows) / n,
                prompt_tokens=sum(row.prompt_tokens for row in rows) / n,
                completion_tokens=sum(row.completion_tokens for row in rows) / n,
                calls=sum(row.calls for row in rows) / n,
                wall_s=math.fsum(row.wall_s for row in rows) / n,
            )
        )
    return summaries


def compare(outcomes: Sequence[Outcome], modes: Sequence[str]) -> list[Comparison]:
    """Compare every pair of modes with an exact McNemar test, paired on the question.

    Args:
        outcomes: Outcomes of any modes; those of modes not in ``modes`` are ignored.
        modes: The modes to compare, in the order wanted.

    Returns:
        One comparison per pair ``(a, b)`` of the modes that have outcomes, ``a`` before
        ``b`` in ``modes``, over the question lines both answered.

    Raises:
        ValueError: When a mode has two outcomes for the same line.
    """
    grouped = _by_mode(outcomes, modes)
    comparisons = []
    for a, b in combinations(grouped, 2):
        shared = grouped[a].keys() & grouped[b].keys()
        a_only = sum(grouped[a][line].correct and not grouped[b][line].correct for line in shared)
        b_only = sum(grouped[b][line].correct and not grouped[a][line].correct for line in shared)
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
