"""Confidence intervals of binomial proportions (the Wilson score interval).

Lives in ``strategies`` so that both the debate dynamics and the eval's statistics can use it
(imports point down only).
"""

from __future__ import annotations

import math

Z_95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal distribution."""


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion.

    Unlike the normal ("Wald") interval it stays inside [0, 1] and keeps a sensible width
    at 0/n and n/n, which matter here: a small eval often scores 0% or 100% in a mode.

    Args:
        successes: Successes observed, ``0 <= successes <= n``.
        n: Trials.
        z: Standard normal quantile of the confidence level (1.96 for 95%).

    Returns:
        The interval ``(low, high)``, clamped to [0, 1]; ``(0.0, 1.0)`` when ``n`` is 0.

    Raises:
        ValueError: When ``n`` is negative or ``successes`` is outside ``[0, n]``.
    """
    if not 0 <= successes <= n:
        raise ValueError(f"wilson_interval: need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n)) / denominator
    # At 0/n and n/n the ends are exactly 0 and 1; in floats they can miss by an ulp.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)
