"""The eval's rows paired by question, and the exact McNemar test on a pair of labels.

The rows are :class:`~debategraph.eval.records.Outcome` records, one per question, mode
and decision protocol; a row's *label* (``Outcome.label``) names it in every table: the
mode for its default plurality decision, ``mode/decision`` for another protocol applied
to the same threads. :func:`grouped` is the one grouping every figure of
:mod:`~debategraph.eval.stats`, :mod:`~debategraph.eval.budget` and
:mod:`~debategraph.eval.dynamics` starts from.

Pure Python: the McNemar sums are exact integer arithmetic, so the p-values stay right
for counts far beyond what a float binomial coefficient could hold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from debategraph.eval.records import Outcome

#: What pairs rows: a question's line and its epoch (:attr:`Outcome.key`).
Key = tuple[int, int]


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
class Rows:
    """A label's rows by question (line and epoch), with the mode and decision they share.

    Attributes:
        mode: The mode.
        decision: The decision protocol's spec.
        lines: The rows, by question line and epoch (:data:`Key`; with one epoch, a
            line's key is ``(line, 1)``): the scored ones.
        errored: The keys whose calls kept failing (:attr:`Outcome.error`): no
            figure counts them.
    """

    mode: str
    decision: str
    lines: dict[Key, Outcome]
    errored: set[Key] = field(default_factory=set)

    def tokens(self, lines: Sequence[Key]) -> int:
        """Total tokens of the rows on ``lines``.

        Args:
            lines: Keys these rows have.

        Returns:
            Their prompt and completion tokens, summed.
        """
        return sum(
            self.lines[line].prompt_tokens + self.lines[line].completion_tokens for line in lines
        )


def grouped(outcomes: Sequence[Outcome], labels: Sequence[str]) -> dict[str, Rows]:
    """Group the outcomes by label, then by question line, in the order wanted.

    A name in ``labels`` is a label (``vote``, ``debate-full/judge``) or a mode: a mode
    stands for its own rows, then its protocol rows (those not named themselves, in the
    order they first appear in ``outcomes``). Labels named twice count once, where first
    named; labels of neither kind are left out, and so are names without outcomes.
    An errored row (its calls kept failing) is set apart in :attr:`Rows.errored`, so
    every figure reads the scored rows alone.

    Args:
        outcomes: Outcomes of any modes and decision protocols.
        labels: The labels (or modes), in the order wanted.

    Returns:
        Each label's rows, in that order.

    Raises:
        ValueError: When a label has two outcomes for the same line (and epoch).
    """
    found: dict[str, Rows] = {}
    for outcome in outcomes:
        label = outcome.label
        rows = found.get(label)
        if rows is None:
            rows = found[label] = Rows(outcome.mode, outcome.decision, {})
        key = outcome.key
        if key in rows.lines or key in rows.errored:
            epoch = f", epoch {outcome.epoch}" if outcome.epoch != 1 else ""
            raise ValueError(f"two outcomes for {label!r}, line {outcome.line}{epoch}")
        if outcome.error:
            rows.errored.add(key)
        else:
            rows.lines[key] = outcome
    named = set(labels)
    ordered: dict[str, Rows] = {}
    for name in labels:
        if name in found:
            ordered.setdefault(name, found[name])
        for label, rows in found.items():
            if rows.mode == name and label not in named:
                ordered.setdefault(label, rows)
    return ordered


def paired(a: Rows, b: Rows) -> tuple[list[Key], int, int]:
    """The questions (and epochs) both answered, and how many only ``a`` and only ``b`` got right.

    Args:
        a: The first label's rows.
        b: The second's.

    Returns:
        The shared keys (sorted), then the two discordant counts.
    """
    shared = sorted(a.lines.keys() & b.lines.keys())
    a_only = sum(a.lines[line].correct and not b.lines[line].correct for line in shared)
    b_only = sum(b.lines[line].correct and not a.lines[line].correct for line in shared)
    return shared, a_only, b_only
