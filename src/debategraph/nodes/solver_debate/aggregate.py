"""The solver debate's end: a majority vote over each solver's latest answer."""

from __future__ import annotations

from typing import Any

from debategraph.nodes.solver_debate.views import latest_turns
from debategraph.state.solver_debate import SolverDebateState
from debategraph.strategies import majority_vote


def aggregate(state: SolverDebateState) -> dict[str, Any]:
    """Majority vote over each solver's latest answer.

    Args:
        state: The debate state.

    Returns:
        Answer, vote table, agreement ratio and tie-break.
    """
    latest = latest_turns(state.get("transcript", []))
    vote = majority_vote(
        {s: t.answer for s, t in latest.items()}, {s: t.confidence for s, t in latest.items()}
    )
    return {
        "answer": vote.answer,
        "votes": vote.votes,
        "agreement": vote.agreement,
        "tie_break": vote.tie_break,
    }
