"""The persona nodes of phases 1-4 and the nodes around them: prepare, open an iteration, join.

Every persona has one node per parallel phase (``analyse_<slug>``, ``ask_<slug>``,
``answer_<slug>``, ``assess_<slug>``); the nodes of a phase start in the same step, so
their calls run concurrently (bounded by ``max_concurrency``). Each calls the model
through an :class:`~debategraph.nodes.agent.Agent` and records one
:class:`~debategraph.state.records.Turn` with
:func:`~debategraph.state.base.turn_update`, which charges its usage. Every prompt of an
iteration carries what a human interjected so far.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

from langchain_core.messages import HumanMessage

from debategraph.documents import parse_document
from debategraph.nodes.agent import Agent
from debategraph.nodes.discussion.prompts import (
    DISCUSSION_ANSWER,
    DISCUSSION_ASK,
    DISCUSSION_ASSESS,
    DISCUSSION_CHOOSE,
)
from debategraph.nodes.discussion.replies import (
    apply_responses,
    normalise_choice,
    normalise_insights,
    normalise_questions,
)
from debategraph.nodes.discussion.setup import OPEN_ITERATION_NODE, DiscussionSetup
from debategraph.nodes.discussion.views import (
    analysis_prompt,
    exchange_of,
    human_of,
    insights_of,
    iteration_of,
    outline,
    paper_of,
    render_all_insights,
    render_insights,
    render_question,
    system_message,
    this_iteration,
)
from debategraph.nodes.dual import agent_node
from debategraph.nodes.rounds import make_open_round, open_round_node, start_clock
from debategraph.state.base import turn_update
from debategraph.state.discussion import (
    Analysis,
    ConvergenceVote,
    DiscussionState,
    Inquiry,
    ResponseSet,
    SectionChoice,
)
from debategraph.state.records import Turn

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable
    from langgraph.runtime import Runtime

    from debategraph.context import Context
    from debategraph.models import ModelBinding, Steps

    AgentNode: TypeAlias = Runnable[Any, Any]

INITIAL_STAGE = "initial"
QUESTION_STAGE = "question"
SKIP_STAGE = "skip"
RESPONSE_STAGE = "response"
CONVERGENCE_STAGE = "convergence"
NO_SKIP_REASON = "no questions and no reason given"

Node = Callable[..., dict[str, Any]]


def prepare(state: DiscussionState) -> dict[str, Any]:
    """Parse the document and set the outputs' starting values.

    The time limit counts from here, so the initial analysis counts towards it.

    Args:
        state: The discussion state.

    Returns:
        The parsed document, its parser notes and the start time.

    Raises:
        ValueError: If the document is empty.
    """
    paper = parse_document(state.get("document") or "", source="document")
    return {
        "paper": paper,
        "notes": [f"document: {n}" for n in paper.notes],
        "round": 0,
        "iterations_completed": 0,
        "started_at": time.time(),
        "report": None,
    }


def make_prepare(setup: DiscussionSetup) -> Node:
    """The ``prepare`` node of a discussion with its time limit: it also sets the deadline.

    Every model call of the run is bounded by the deadline (``started_at`` plus
    ``setup.time_limit_s``): see :func:`~debategraph.nodes.rounds.start_clock`.

    Args:
        setup: The discussion's settings.

    Returns:
        The node function: what :func:`prepare` writes, and ``deadline``.
    """

    def prepare_run(state: DiscussionState) -> dict[str, Any]:
        update = prepare(state)
        return {**update, **start_clock(setup.time_limit_s, update["started_at"])}

    return prepare_run


def make_open_iteration() -> Node:
    """The function that opens the next iteration: the shared round opener's.

    Threads written by earlier versions count iterations in ``iteration``, not ``round``;
    their count is read as the round so far.

    Returns:
        The function: it writes the new ``round``.
    """
    return make_open_round(current_round=iteration_of)


def open_iteration_node() -> AgentNode:
    """The node that opens the next iteration: the shared one, which drains the inbox.

    It writes what :func:`make_open_iteration` does, and records what the thread's inbox
    holds (see :func:`~debategraph.nodes.rounds.open_round_node`).

    Returns:
        The node runnable.
    """
    return open_round_node(current_round=iteration_of, name=OPEN_ITERATION_NODE)


def make_analyst(name: str, setup: DiscussionSetup, model: ModelBinding | None) -> AgentNode:
    """Phase 1 node: the persona chooses sections (one call), reads them and analyses (one call).

    Args:
        name: The persona.
        setup: The discussion's settings.
        model: The model to call; ``None`` reads it from the run's context (Studio).

    Returns:
        The node function.
    """
    agent = Agent(name, model)

    def analyse(state: DiscussionState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        paper = paper_of(state)
        system = system_message(setup, name)
        task = DISCUSSION_CHOOSE.format(outline=outline(paper), max_sections=setup.max_sections)
        chosen = yield from agent.ask_steps(runtime, SectionChoice, [system, HumanMessage(task)])
        choice = normalise_choice(chosen.value, chosen.reason, paper, setup.max_sections, name)
        read = [s for s in (paper.section(i) for i in choice.section_ids) if s is not None]
        text = analysis_prompt(paper, read)
        result = yield from agent.ask_steps(runtime, Analysis, [system, HumanMessage(text)])
        insights, notes = normalise_insights(result.value, name, "\n".join(s.text for s in read))
        reason = result.reason
        if result.value is None and chosen.value is None and chosen.reason not in (None, reason):
            reason = f"section choice: {chosen.reason}; analysis: {result.reason}"
        turn = Turn(
            agent=name,
            content=render_insights(insights),
            stage=INITIAL_STAGE,
            round=0,
            usage=chosen.usage + result.usage,
            reason=reason,
        )
        return {
            **turn_update(turn),
            "section_choices": [choice],
            "insights": {name: insights},
            "notes": [*choice.notes, *notes],
        }

    return agent_node(analyse)


def make_asker(name: str, setup: DiscussionSetup, model: ModelBinding | None) -> AgentNode:
    """Phase 2 node: the persona reviews the others' insights and asks or skips.

    Args:
        name: The persona.
        setup: The discussion's settings.
        model: The model to call; ``None`` reads it from the run's context.

    Returns:
        The node function.
    """
    agent = Agent(name, model)

    def ask(state: DiscussionState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        iteration = iteration_of(state)
        insights = insights_of(state)
        task = DISCUSSION_ASK.format(
            title=paper_of(state).title,
            iteration=iteration,
            insights=render_all_insights(insights, setup.names, name),
            human=human_of(state),
        )
        result = yield from agent.ask_steps(
            runtime, Inquiry, [system_message(setup, name), HumanMessage(task)]
        )
        questions, notes = normalise_questions(result.value, name, insights, setup.names, iteration)
        if questions:
            turn = Turn(
                agent=name,
                content="\n".join(render_question(q) for q in questions),
                stage=QUESTION_STAGE,
                round=iteration,
                recipients=tuple(dict.fromkeys(q.target_agent for q in questions)),
                usage=result.usage,
            )
        else:
            skip = result.value.skip_reason if result.value else None
            turn = Turn(
                agent=name,
                content=(skip or "").strip() or NO_SKIP_REASON,
                stage=SKIP_STAGE,
                round=iteration,
                usage=result.usage,
                reason=result.reason,
            )
        return {**turn_update(turn), "questions": questions, "notes": notes}

    return agent_node(ask)


def make_answerer(name: str, setup: DiscussionSetup, model: ModelBinding | None) -> AgentNode:
    """Phase 3 node: the persona answers the questions addressed to it (no call if none).

    A ``revise`` stance replaces the questioned insight's text in the persona's set.

    Args:
        name: The persona.
        setup: The discussion's settings.
        model: The model to call; ``None`` reads it from the run's context.

    Returns:
        The node function.
    """
    agent = Agent(name, model)

    def answer(state: DiscussionState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        iteration = iteration_of(state)
        mine = [
            q
            for q in this_iteration(state.get("questions") or [], iteration)
            if q.target_agent == name
        ]
        if not mine:
            return {}
        own = insights_of(state).get(name, [])
        task = DISCUSSION_ANSWER.format(
            title=paper_of(state).title,
            insights=render_insights(own) or "(none)",
            iteration=iteration,
            questions="\n".join(render_question(q) for q in mine),
            human=human_of(state),
        )
        messages = [system_message(setup, name), HumanMessage(task)]
        result = yield from agent.ask_steps(runtime, ResponseSet, messages)
        responses, revised, notes = apply_responses(result.value, mine, own, name, iteration)
        turn = Turn(
            agent=name,
            content="\n".join(f"[{r.question_id}] ({r.stance}) {r.answer}" for r in responses),
            stage=RESPONSE_STAGE,
            round=iteration,
            reply_to=tuple(q.id for q in mine),
            recipients=tuple(dict.fromkeys(q.asker for q in mine)),
            usage=result.usage,
            reason=result.reason,
        )
        update: dict[str, Any] = {**turn_update(turn), "responses": responses, "notes": notes}
        if revised != own:
            update["insights"] = {name: revised}
        return update

    return agent_node(answer)


def make_assessor(name: str, setup: DiscussionSetup, model: ModelBinding | None) -> AgentNode:
    """Phase 4 node: the persona scores how far the discussion has converged.

    Args:
        name: The persona.
        setup: The discussion's settings.
        model: The model to call; ``None`` reads it from the run's context.

    Returns:
        The node function.
    """
    agent = Agent(name, model)

    def assess(state: DiscussionState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        iteration = iteration_of(state)
        task = DISCUSSION_ASSESS.format(
            title=paper_of(state).title,
            iteration=iteration,
            insights=render_all_insights(insights_of(state), setup.names, name),
            exchange=exchange_of(state, iteration),
            human=human_of(state),
        )
        messages = [system_message(setup, name), HumanMessage(task)]
        result = yield from agent.ask_steps(runtime, ConvergenceVote, messages)
        vote = result.value
        turn = Turn(
            agent=name,
            content=vote.reason if vote else "",
            stage=CONVERGENCE_STAGE,
            round=iteration,
            usage=result.usage,
            confidence=vote.score if vote else None,
            reason=result.reason,
        )
        return turn_update(turn)

    return agent_node(assess)


def join(state: DiscussionState) -> dict[str, Any]:
    """A barrier between parallel phases: waits for every agent node, changes nothing.

    Args:
        state: The discussion state.

    Returns:
        No update.
    """
    return {}


#: Each phase's node factory, by phase name (see ``setup.PHASES``).
PERSONA_NODES: dict[
    str, Callable[[str, DiscussionSetup, ModelBinding | None], Runnable[Any, Any]]
] = {
    "analyse": make_analyst,
    "ask": make_asker,
    "answer": make_answerer,
    "assess": make_assessor,
}
