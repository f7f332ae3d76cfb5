"""Phase 3, responding: each persona answers the questions addressed to it.

An answer takes a stance (``agree``, ``disagree``, ``clarify``, ``revise``); a ``revise``
stance rewrites the questioned insight in the persona's set. A response to an unknown
question, or a second one to the same question, is dropped with a note.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from debategraph.nodes.discussion.personas import Speaker
from debategraph.nodes.discussion.prompts import DISCUSSION_ANSWER
from debategraph.nodes.discussion.setup import RESPONSE_STAGE
from debategraph.nodes.discussion.views import (
    insights_of,
    iteration_of,
    prompt_slots,
    render_insights,
    render_question,
    this_iteration,
)
from debategraph.state.discussion import (
    DiscussionState,
    Insight,
    Question,
    Response,
    ResponseSet,
)
from debategraph.state.records import Turn

if TYPE_CHECKING:
    from debategraph.models import Steps


def answer(me: Speaker, state: DiscussionState) -> Steps[dict[str, Any]]:
    """Phase 3 body: the persona answers the questions addressed to it (no call if none).

    A ``revise`` stance replaces the questioned insight's text in the persona's set.

    Args:
        me: The persona.
        state: The discussion state.

    Returns:
        The steps; they return its turn, responses and revised insights (nothing when no
        question was addressed to it).
    """
    iteration = iteration_of(state)
    questions = this_iteration(state.get("questions") or [], iteration)
    mine = [q for q in questions if q.target_agent == me.name]
    if not mine:
        return {}
    own = insights_of(state).get(me.name, [])
    task = DISCUSSION_ANSWER.format(
        **{
            **prompt_slots(state, me.setup, me.name),
            "insights": render_insights(own) or "(none)",  # its own only
            "questions": "\n".join(render_question(q) for q in mine),
        }
    )
    result = yield from me.ask(ResponseSet, task)
    responses, revised, notes = apply_responses(result.value, mine, own, me.name, iteration)
    turn = Turn(
        agent=me.name,
        content="\n".join(f"[{r.question_id}] ({r.stance}) {r.answer}" for r in responses),
        stage=RESPONSE_STAGE,
        round=iteration,
        reply_to=tuple(q.id for q in mine),
        recipients=tuple(dict.fromkeys(q.asker for q in mine)),
        usage=result.usage,
        reason=result.reason,
    )
    update: dict[str, Any] = {
        **me.turn_update(turn, result),
        "responses": responses,
        "notes": notes,
    }
    if revised != own:
        update["insights"] = {me.name: revised}
    return update


def apply_responses(
    reply: ResponseSet | None,
    questions: Sequence[Question],
    insights: Sequence[Insight],
    agent: str,
    iteration: int,
) -> tuple[list[Response], list[Insight], list[str]]:
    """Check an agent's responses and apply its revisions to its insight set.

    A response to an unknown question (or a second one to the same question) is dropped;
    ``revise`` without a revised text changes nothing; each with a note.

    Args:
        reply: What the model returned (``None`` if nothing usable).
        questions: The questions addressed to the agent this iteration.
        insights: The agent's latest insights.
        agent: Who answers.
        iteration: The current iteration.

    Returns:
        The accepted responses, the agent's insight set after revisions, and the notes.
    """
    notes: list[str] = []
    by_id = {q.id: q for q in questions}
    current = {i.id: i for i in insights}
    out: list[Response] = []
    for r in reply.responses if reply else []:
        qid = r.question_id.strip()
        if qid not in by_id:
            notes.append(f"{agent}: response to unknown question {r.question_id!r} dropped")
            continue
        if any(o.question_id == qid for o in out):
            notes.append(f"{agent}: second response to {qid} dropped")
            continue
        out.append(
            r.model_copy(update={"question_id": qid, "agent": agent, "iteration": iteration})
        )
        if r.stance != "revise":
            continue
        target = current.get(by_id[qid].target_insight)
        if not r.revised_insight or not r.revised_insight.strip() or target is None:
            notes.append(f"{agent}: 'revise' on {qid} without a revised text: nothing changed")
            continue
        current[target.id] = target.model_copy(
            update={
                "content": r.revised_insight.strip(),
                "confidence": r.confidence,
                "version": target.version + 1,
                "revised_in": iteration,
            }
        )
    return out, [current[i.id] for i in insights], notes
