"""The family of paired tests the plain answer reads: Holm's correction, and how many would tell.

An eval runs many paired tests at once: every pair of its modes, and each debate against
the vote at its budget (``vote@K``). Read one by one at 5%, some of them come out
"significant" by chance alone, the more the more tests there are. :func:`family` is the
tests the plain answer (:mod:`~debategraph.eval.advice`) weighs: those between the
modes' own rows and the matched votes (a decision protocol's row, a variant of its mode,
is no candidate to use). :func:`holm` corrects their p-values together (Holm's step-down
method: it holds the chance of any false "significant" in the family at 5%, and never
finds less than Bonferroni's). :func:`questions_to_tell` estimates from a test's
discordant pairs how many questions would make it significant.

Pure Python: the normal quantiles are :class:`statistics.NormalDist`'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from debategraph.eval.records import Comparison
from debategraph.eval.stats import ALPHA, Report
from debategraph.strategies.decisions import PLURALITY

#: The chance that the questions :func:`questions_to_tell` estimates find the difference.
POWER = 0.8


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given.

    The ``i``-th smallest of ``m`` p-values is multiplied by ``m - i + 1`` (``m`` for
    the smallest), capped at 1, and made no smaller than the adjusted values before it;
    a test is significant at level alpha when its adjusted p-value is below alpha.

    Args:
        p_values: The family's raw p-values.

    Returns:
        The adjusted p-values, one per p-value given, in the same order.

    Raises:
        ValueError: When a p-value is outside [0, 1].
    """
    bad = [p for p in p_values if not 0.0 <= p <= 1.0]
    if bad:
        raise ValueError(f"holm: p-values must be in [0, 1], got {bad[0]!r}")
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


@dataclass(frozen=True)
class Tested:
    """A test of the family with its corrected p-value.

    Attributes:
        test: The paired test.
        adjusted: Its p-value after Holm's correction over the family.
        matched: Whether it is a debate against the vote at its budget (``vote@K``).
    """

    test: Comparison
    adjusted: float
    matched: bool

    @property
    def significant(self) -> bool:
        """Whether it is significant at 5% after the correction."""
        return self.adjusted < ALPHA


def family(report: Report) -> list[Tested]:
    """The tests the plain answer weighs, each with its p-value corrected over them all.

    Every paired test of the report between two plurality rows (the modes and the
    matched votes), in the report's order; a protocol row's test against its mode is
    left out.

    Args:
        report: The eval's report.

    Returns:
        The tests with their Holm-adjusted p-values.
    """
    plain = {s.mode for s in report.summaries if s.decision == PLURALITY}
    matched = {(m.mode, m.vote_mode) for m in report.matched}
    tests = [c for c in report.comparisons if c.a in plain and c.b in plain]
    adjusted = holm([c.p_value for c in tests])
    return [
        Tested(c, p, (c.a, c.b) in matched or (c.b, c.a) in matched)
        for c, p in zip(tests, adjusted, strict=True)
    ]


def questions_to_tell(test: Comparison, alpha: float, power: float = POWER) -> int | None:
    """About how many questions would make a paired test significant: an estimate.

    Connor's (1987) sample size for McNemar's test, taking the shares of questions on
    which only ``a`` and only ``b`` were right as the truth: ``n = (z_a * sqrt(psi) +
    z_b * sqrt(psi - d**2))**2 / d**2``, with ``psi`` the two shares' sum, ``d`` their
    difference, ``z_a`` the two-sided normal quantile of ``alpha`` and ``z_b`` that of
    ``power``.

    Args:
        test: The test (its discordant counts on its ``n`` questions).
        alpha: The level it must reach (for the smallest of a Holm family of ``m``
            tests: ``0.05 / m``).
        power: The chance of reaching it.

    Returns:
        The questions in all (at least one more than the test had), rounded up to ten;
        ``None`` when the test has no questions or the two were right equally often
        (no number of questions is expected to tell them apart).

    Raises:
        ValueError: When ``alpha`` or ``power`` is not strictly between 0 and 1.
    """
    if not (0.0 < alpha < 1.0 and 0.0 < power < 1.0):
        raise ValueError(
            f"questions_to_tell: alpha and power must be in (0, 1), got {alpha}, {power}"
        )
    if not test.n or test.a_only == test.b_only:
        return None
    psi = (test.a_only + test.b_only) / test.n
    d = (test.a_only - test.b_only) / test.n
    normal = NormalDist()
    z_alpha, z_power = normal.inv_cdf(1 - alpha / 2), normal.inv_cdf(power)
    n = (z_alpha * math.sqrt(psi) + z_power * math.sqrt(psi - d * d)) ** 2 / (d * d)
    return 10 * math.ceil(max(n, test.n + 1) / 10)
