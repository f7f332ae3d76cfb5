"""Phase 2, questioning: open the iteration, then each persona asks or skips.

``open_iteration`` (the shared round opener, made by :func:`make_open_round` as in every
pattern) starts each iteration; each persona then
reviews the others' latest insights and asks questions about them or skips. A question
about an unknown agent or insight, or about the asker's own insight, is dropped with a
note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from debategraph.nodes.discussion.personas import Speaker
from debategraph.nodes.discussion.prompts import DISCUSSION_ASK
from debategraph.nodes.discussion.setup import (
    OPEN_ITERATION_NODE,
    QUESTION_STAGE,
    SKIP_STAGE,
    DiscussionSetup,
)
from debategraph.nodes.discussion.views import (
    insights_of,
    iteration_of,
    prompt_slots,
    render_question,
)
from debategraph.nodes.roster import slug
from debategraph.nodes.rounds import open_round_node
from debategraph.state.discussion import DiscussionState, Inquiry, Insight, Question
from debategraph.state.records import Turn
from debategraph.strategies.names import read_name

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable

    from debategraph.models import Steps

NO_SKIP_REASON = "no questions and no reason given"


def make_open_round(setup: DiscussionSetup) -> Runnable[Any, Any]:
    """The node that opens the next iteration: the shared one, which drains the inbox.

    It writes the new ``round`` and records what the thread's inbox holds (see
    :func:`~debategraph.nodes.rounds.open_round_node`). Threads written by earlier
    versions count iterations in ``iteration``, not ``round``; their count is read as
    the round so far. The input check and the clock are ``prepare``'s, which runs once
    before the first iteration (:func:`~debategraph.nodes.discussion.analysis.make_prepare`).

    Args:
        setup: The discussion's settings.

    Returns:
        The node runnable.
    """
    return open_round_node(current_round=iteration_of, name=OPEN_ITERATION_NODE)


def ask(me: Speaker, state: DiscussionState) -> Steps[dict[str, Any]]:
    """Phase 2 body: the persona reviews the others' insights and asks or skips.

    Args:
        me: The persona.
        state: The discussion state.

    Returns:
        The steps; they return its turn (questions, or why it skipped) and questions.
    """
    iteration = iteration_of(state)
    task = DISCUSSION_ASK.format(**prompt_slots(state, me.setup, me.name))
    result = yield from me.ask(Inquiry, task)
    questions, notes = normalise_questions(
        result.value, me.name, insights_of(state), me.setup.names, iteration
    )
    if questions:
        turn = Turn(
            agent=me.name,
            content="\n".join(render_question(q) for q in questions),
            stage=QUESTION_STAGE,
            round=iteration,
            recipients=tuple(dict.fromkeys(q.target_agent for q in questions)),
            usage=result.usage,
        )
    else:
        skip = result.value.skip_reason if result.value else None
        turn = Turn(
            agent=me.name,
            content=(skip or "").strip() or NO_SKIP_REASON,
            stage=SKIP_STAGE,
            round=iteration,
            usage=result.usage,
            reason=result.reason,
        )
    return {**me.turn_update(turn, result), "questions": questions, "notes": notes}


def normalise_questions(
    inquiry: Inquiry | None,
    asker: str,
    insights: Mapping[str, Sequence[Insight]],
    names: Sequence[str],
    iteration: int,
) -> tuple[list[Question], list[str]]:
    """An agent's questions with their targets checked.

    A question about an unknown agent, an unknown insight of that agent, or the asker's
    own insight is dropped with a note; a misspelt agent name is read as the closest one
    (:func:`~debategraph.strategies.names.read_name`, noted).

    Args:
        inquiry: What the model returned (``None`` if nothing usable).
        asker: Who asks.
        insights: Agent -> its latest insights.
        names: Every persona's name.
        iteration: The current iteration.

    Returns:
        The accepted questions (ids assigned) and the notes.
    """
    notes: list[str] = []
    out: list[Question] = []
    for q in inquiry.questions if inquiry else []:
        target = read_name(q.target_agent, names, f"{asker}: question target", notes)
        ids = {i.id for i in insights.get(target or "", [])}
        if target is None:
            notes.append(f"{asker}: question to unknown agent {q.target_agent!r} dropped")
        elif target == asker:
            notes.append(f"{asker}: question about its own insight {q.target_insight!r} dropped")
        elif q.target_insight.strip() not in ids:
            notes.append(
                f"{asker}: question about unknown insight {q.target_insight!r} of {target} dropped"
            )
        elif not q.text.strip():
            notes.append(f"{asker}: empty question dropped")
        else:
            qid = f"Q{iteration}-{slug(asker)}-{len(out) + 1}"
            out.append(
                q.model_copy(
                    update={
                        "id": qid,
                        "asker": asker,
                        "iteration": iteration,
                        "target_agent": target,
                        "target_insight": q.target_insight.strip(),
                    }
                )
            )
    return out, notes
