"""``vote-then-debate``'s figures: how many questions went on to debate, and what it saved.

The mode answers each question once (round 1, independent answers, a vote's cost) and
debates only where that round does not agree (``--agree``). Its results say how many
questions went on to debate, its tokens per question, the tokens saved against debating
every question, and its paired tests (exact McNemar) against ``vote``, against the
debate of every question and against the vote run at its own budget (``vote@K``).

"Debating every question" is measured against the mode it debates as: where the run has
that debate's row (``debate-full``, the same settings without the early stop) on the
same questions; otherwise it is estimated from this mode's own threads: each question's
round-1 tokens plus the round cap's later rounds, each at the mean cost of a later round
of the questions that were debated. A ``debate-ring`` row is never the measure: its
solvers hear fewer of each other, so its rounds cost less than this mode's. The figures
say which.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from debategraph.eval.modes import DEBATE_FULL, VOTE, VOTE_THEN_DEBATE
from debategraph.eval.paired import Rows, grouped
from debategraph.eval.records import Comparison, Matched, Outcome
from debategraph.strategies.decisions import PLURALITY

#: The row "debating every question" is measured against: the mode it debates as.
DEBATE_ROW = DEBATE_FULL
#: How the tokens of debating every question were found.
MEASURED, ESTIMATED = "measured", "estimated"


@dataclass(frozen=True)
class Escalation:
    """``vote-then-debate``'s figures (an entry of ``results.json``'s ``vote_then_debate``).

    Attributes:
        mode: The mode (``vote-then-debate``).
        agree: The agreement it stops on (``--agree``, e.g. ``unanimity``).
        n: Questions it answered.
        debated: Questions that went on past round 1 (their first round did not agree).
        debated_share: ``debated / n``.
        tokens: Its mean total tokens per question.
        against: What its tokens are set against: the debate row's label
            (``debate-full``), or ``estimated`` where the run has none.
        how: ``measured`` or ``estimated``.
        basis: One line on what ``every_tokens`` is.
        every_tokens: Mean total tokens per question of debating every question (on the
            ``n_against`` questions); ``None`` when it cannot be estimated (no question
            went on to debate, and no debate row).
        saved_tokens: ``every_tokens`` less this mode's tokens on the same questions.
        saved_share: ``saved_tokens / every_tokens``.
        n_against: The questions the saving is measured on.
        tests: Its paired tests (exact McNemar): against ``vote``, against the debate
            row, and against the vote at its budget (each where the run has it).
    """

    mode: str
    agree: str
    n: int
    debated: int
    debated_share: float
    tokens: float
    against: str
    how: str
    basis: str
    every_tokens: float | None
    saved_tokens: float | None
    saved_share: float | None
    n_against: int
    tests: tuple[Comparison, ...]


def _measured(mode: Rows, debate: Rows, label: str) -> tuple[float, float, int, str]:
    """Debating every question, by the debate row: its tokens and ours per shared question."""
    shared = sorted(mode.lines.keys() & debate.lines.keys())
    n = len(shared)
    basis = f"{label}'s own threads on the same {n} questions (every question debated)"
    return debate.tokens(shared) / n, mode.tokens(shared) / n, n, basis


def _estimated(mode: Rows, round_cap: int) -> tuple[float | None, str]:
    """Debating every question, estimated from this mode's debated threads.

    Each question's round-1 tokens plus ``round_cap - 1`` later rounds, each at the mean
    cost of a later round of the questions that went on to debate.
    """
    rows = list(mode.lines.values())
    later_rounds = later_tokens = 0
    for row in rows:
        if row.debated:
            later_rounds += len(json.loads(row.rounds)) - 1
            later_tokens += row.prompt_tokens + row.completion_tokens - row.first_round_tokens
    if not later_rounds:
        return None, "no question went on to debate, so no later round's cost is known"
    per_round = later_tokens / later_rounds
    first = sum(row.first_round_tokens for row in rows) / len(rows)
    basis = (
        f"estimated: each question's round-1 tokens (mean {first:,.1f}) plus {round_cap - 1} "
        f"later rounds at {per_round:,.1f} tokens each (the mean of the {later_rounds} later "
        f"rounds debated here); the run has no {DEBATE_ROW} row (the mode it debates as)"
    )
    return first + (round_cap - 1) * per_round, basis


def escalations(
    outcomes: Sequence[Outcome],
    comparisons: Sequence[Comparison],
    matched: Sequence[Matched],
    *,
    agree: str,
    round_cap: int | None = None,
) -> list[Escalation]:
    """``vote-then-debate``'s figures, where the run has that mode.

    Args:
        outcomes: Every outcome of the run.
        comparisons: The run's paired tests (:func:`~debategraph.eval.stats.compare`):
            those of the mode against ``vote``, the debate row and its matched vote are
            taken from them.
        matched: The matched-budget votes.
        agree: The agreement the mode stopped on.
        round_cap: ``--rounds`` (for the estimate; default: the most rounds a thread of
            the mode took).

    Returns:
        One entry, or none when the run has no ``vote-then-debate`` row.
    """
    rows = grouped([o for o in outcomes if o.decision == PLURALITY], [VOTE_THEN_DEBATE, DEBATE_ROW])
    mode = rows.get(VOTE_THEN_DEBATE)
    if mode is None:
        return []
    values = list(mode.lines.values())
    n = len(values)
    debated = sum(row.debated for row in values)
    tokens = mode.tokens(sorted(mode.lines)) / n
    debate = rows.get(DEBATE_ROW)
    every: float | None
    if debate is not None and debate.lines.keys() & mode.lines:
        every, ours, n_against, basis = _measured(mode, debate, DEBATE_ROW)
        against, how = DEBATE_ROW, MEASURED
    else:
        cap = round_cap or max(len(json.loads(row.rounds)) for row in values)
        estimate, basis = _estimated(mode, cap)
        every, ours, n_against, against, how = estimate, tokens, n, ESTIMATED, ESTIMATED
    saved = None if every is None else every - ours
    votes = {m.vote_mode for m in matched if m.mode == VOTE_THEN_DEBATE}
    others = {VOTE, DEBATE_ROW, *votes}
    tests = tuple(
        c
        for c in comparisons
        if VOTE_THEN_DEBATE in (c.a, c.b) and ({c.a, c.b} - {VOTE_THEN_DEBATE}) & others
    )
    share = saved / every if saved is not None and every else None
    figures = (n, debated, debated / n, tokens, against, how, basis, every, saved, share)
    return [Escalation(VOTE_THEN_DEBATE, agree, *figures, n_against, tests)]
