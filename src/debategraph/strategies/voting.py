"""Aggregators: turn the solvers' final answers into one answer."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from debategraph.words import plural


class Vote(BaseModel):
    """Result of a vote over the solvers' final answers.

    Attributes:
        answer: The winning answer, ``None`` when every solver abstained.
        votes: Answer -> number of solvers that gave it.
        agreement: Votes for the winner divided by the number of solvers.
        abstentions: Solvers with no extractable answer.
        tie_break: How a tie was broken, ``None`` when there was no tie.
    """

    model_config = ConfigDict(frozen=True)

    answer: str | None
    votes: dict[str, int]
    agreement: float
    abstentions: int
    tie_break: str | None


def majority_vote(
    answers: Mapping[str, str | None], confidences: Mapping[str, float | None] | None = None
) -> Vote:
    """Majority vote with a deterministic, reported tie-break.

    Ties go to the answer with the highest summed confidence; if still tied, to the
    answer of the earliest solver (in the mapping's order) that gave one of them.

    Args:
        answers: Solver -> its final answer (``None`` abstains).
        confidences: Solver -> its confidence, used only to break ties.

    Returns:
        The vote.
    """
    confidences = confidences or {}
    given = {s: a for s, a in answers.items() if a is not None}
    votes = Counter(given.values())
    table = dict(sorted(votes.items(), key=lambda kv: (-kv[1], list(given.values()).index(kv[0]))))
    abstentions = len(answers) - len(given)
    if not votes:
        return Vote(answer=None, votes={}, agreement=0.0, abstentions=abstentions, tie_break=None)
    top = max(votes.values())
    tied = [a for a, c in table.items() if c == top]
    tie_break: str | None = None
    winner = tied[0]
    if len(tied) > 1:
        weight = {
            a: sum((confidences.get(s) or 0.0) for s, x in given.items() if x == a) for a in tied
        }
        best = max(weight.values())
        leaders = [a for a in tied if weight[a] == best]
        if len(leaders) == 1:
            winner = leaders[0]
            tie_break = (
                f"tie between {', '.join(tied)} ({plural(top, 'vote')} each) "
                "broken by summed confidence"
            )
        else:
            winner = next(a for a in given.values() if a in leaders)
            tie_break = (
                f"tie between {', '.join(tied)} ({plural(top, 'vote')} each) "
                "broken by the earliest solver"
            )
    agreement = round(top / len(answers), 4) if answers else 0.0
    return Vote(
        answer=winner,
        votes=table,
        agreement=agreement,
        abstentions=abstentions,
        tie_break=tie_break,
    )
