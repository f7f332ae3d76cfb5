"""Human-in-the-loop nodes: pause at a round boundary and take an interjection."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langgraph.types import interrupt

from debategraph.prompts import ROUND_REVIEW
from debategraph.state import RoundRecord, interjection

#: What a resume value may carry; anything else approves without interjecting.
APPROVE = "approve"
INTERJECT = "interject"


def interjection_text(reply: Any) -> str | None:
    """The text a resume value interjects, if any.

    Accepts ``{"interject": "text"}`` or a plain non-empty string; ``{"approve": true}``,
    ``True`` or ``None`` approve.

    Args:
        reply: The value given to ``Command(resume=...)``.

    Returns:
        The stripped text, or ``None`` to continue without interjecting.
    """
    if isinstance(reply, str):
        return reply.strip() or None
    if isinstance(reply, Mapping):
        text = reply.get(INTERJECT)
        if isinstance(text, str) and text.strip():
            return text.strip()
    return None


def review_payload(record: RoundRecord, rounds: int) -> dict[str, Any]:
    """The JSON payload a solver debate's round-boundary interrupt shows a human.

    Args:
        record: The round that just finished.
        rounds: The round cap.

    Returns:
        Round, answers, tally and what is expected back.
    """
    tally: dict[str, int] = {}
    for answer in record.answers.values():
        if answer is not None:
            tally[answer] = tally.get(answer, 0) + 1
    return {
        "kind": "round_review",
        "round": record.round,
        "rounds": rounds,
        "answers": dict(record.answers),
        "tally": tally,
        "tokens_this_round": record.usage.total_tokens,
        "message": ROUND_REVIEW.format(round=record.round, rounds=rounds),
        "expects": {APPROVE: True, INTERJECT: "text shown to every agent next round"},
    }


def make_round_review(
    payload: Callable[[Mapping[str, Any]], dict[str, Any]],
) -> Callable[..., dict[str, Any]]:
    """Node that pauses after a round until a human approves or interjects.

    Shared by every graph that pauses between rounds; each gives its own payload. On
    resume LangGraph re-runs the node from its start and ``interrupt`` returns the resume
    value, so the node is idempotent. An interjection is a ``user`` turn that every agent
    reads next round.

    Args:
        payload: Builds the interrupt's JSON payload from the state (its ``round``).

    Returns:
        The node function.
    """

    def round_review(state: Mapping[str, Any]) -> dict[str, Any]:
        text = interjection_text(interrupt(payload(state)))
        if text is None:
            return {}
        return {"transcript": [interjection(text, after_round=state["round"])]}

    return round_review
