"""The eval's debate dynamics: per round and per protocol, over each debate mode's rows.

A debate mode's plurality rows give its per-round figures (agent and decision accuracy,
flips, conformity, the oracle and the loss:
:func:`~debategraph.strategies.dynamics.summarize_dynamics`); each of its labels (the
plurality row, then each protocol row) gets its final accuracy and loss against the
same oracle.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from debategraph.eval.paired import Rows, grouped
from debategraph.eval.records import Outcome
from debategraph.strategies.decisions import PLURALITY
from debategraph.strategies.dynamics import (
    Dynamics,
    DynamicsSummary,
    summarize_dynamics,
    thread_dynamics,
)
from debategraph.strategies.intervals import wilson_interval


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


def _written_golds(outcomes: Sequence[Outcome]) -> dict[int, str]:
    r"""Each question's gold as the answers write it, where its checker is no text match.

    A math gold (``\frac{1}{2}``) is checked by equivalence, while the rounds' answers are
    compared by text: where every answer a row was found right with is one text (``0.5``),
    that text stands for the gold. A question checked by text match keeps its gold.
    """
    right: dict[int, set[str]] = {}
    for row in outcomes:
        if row.correct and row.answer is not None and row.answer != row.gold:
            right.setdefault(row.line, set()).add(row.answer)
    return {line: texts.pop() for line, texts in right.items() if len(texts) == 1}


def _threads(rows: Rows, golds: dict[int, str]) -> list[Dynamics]:
    """The dynamics of a label's rows that recorded their rounds, each against its gold.

    Each thread's final is the row's answer, ``None`` included (a protocol that
    abstained decided nothing, which is never right).
    """
    return [
        thread_dynamics(rounds, gold=golds.get(row.line, row.gold), final=row.answer)
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
        labels: The labels (or modes) wanted, in order (as for
            :func:`~debategraph.eval.stats.summarize`).

    Returns:
        One entry per debate mode, in label order: :func:`summarize_dynamics` of its
        plurality rows (per-round agent and decision accuracy, flips, conformity, the
        oracle and the loss) and each of its labels' final accuracy and loss.

    Raises:
        ValueError: When a label has two outcomes for the same line, or a row's
            ``rounds`` is not a JSON list of rounds.
    """
    labelled = grouped(outcomes, labels)
    golds = _written_golds(outcomes)
    found = []
    for mode, rows in labelled.items():
        if rows.decision != PLURALITY:
            continue
        threads = _threads(rows, golds)
        if not any(len(thread.rounds) >= 2 for thread in threads):
            continue
        summary = summarize_dynamics(threads)
        decisions = [_decision_result(mode, PLURALITY, summary)]
        for label, others in labelled.items():
            if others.mode == mode and others.decision != PLURALITY:
                measured = _threads(others, golds)
                if measured:
                    result = _decision_result(label, others.decision, summarize_dynamics(measured))
                    decisions.append(result)
        found.append(ModeDynamics(mode, summary, tuple(decisions)))
    return found
