"""What a discussion agent reads: state readers and the text of its prompts.

Each node reads its view from state: the document, the latest insight set of every agent,
this iteration's questions and answers, and what a human interjected, never the whole
history, so prompts stay bounded however many iterations run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import SystemMessage

from debategraph.documents import Document, Section
from debategraph.nodes.discussion.prompts import (
    DISCUSSION_ANALYSE,
    DISCUSSION_EXCHANGE_VIEW,
    DISCUSSION_INSIGHT_VIEW,
    DISCUSSION_INSIGHTS_OF,
    DISCUSSION_NO_EXCHANGE,
    DISCUSSION_OUTLINE,
    DISCUSSION_QUESTION_VIEW,
    DISCUSSION_READ_SECTION,
    DISCUSSION_SECTION_LINE,
    DISCUSSION_SYSTEM,
    DISCUSSION_YOU,
)
from debategraph.nodes.discussion.setup import DiscussionSetup
from debategraph.nodes.rounds import interjection_prompt, interjections
from debategraph.state.discussion import Insight, Question, Response

# -- state readers ----------------------------------------------------------------------------


def iteration_of(state: Mapping[str, Any]) -> int:
    """The current iteration: the base ``round``, else the ``iteration`` of older threads.

    Args:
        state: The discussion state.

    Returns:
        The iteration (0 before the first).
    """
    value = state.get("round")
    if value is None:
        value = state.get("iteration")
    return int(value or 0)


def paper_of(state: Mapping[str, Any]) -> Document:
    """The parsed document (a dict from a strict checkpoint read is validated back).

    Args:
        state: The discussion state.

    Returns:
        The document.
    """
    value: Any = state["paper"]
    return value if isinstance(value, Document) else Document.model_validate(value)


def insights_of(state: Mapping[str, Any]) -> dict[str, list[Insight]]:
    """Each agent's latest insight set.

    Args:
        state: The discussion state.

    Returns:
        Agent -> insights.
    """
    return {
        agent: [i if isinstance(i, Insight) else Insight.model_validate(i) for i in items]
        for agent, items in (state.get("insights") or {}).items()
    }


def this_iteration(items: Sequence[Any], iteration: int) -> list[Any]:
    """Records (questions, responses) of ``iteration``.

    Args:
        items: Records with an ``iteration`` field.
        iteration: The iteration.

    Returns:
        Those of the iteration, in order.
    """
    return [i for i in items if i.iteration == iteration]


def human_of(state: Mapping[str, Any]) -> str:
    """The paragraph of every interjection so far (``""`` when there is none).

    Args:
        state: The discussion state.

    Returns:
        The paragraph for the ``{human}`` slot of a prompt.
    """
    return interjection_prompt(interjections(state.get("transcript") or []))


# -- prompt text -------------------------------------------------------------------------------


def system_message(setup: DiscussionSetup, name: str) -> SystemMessage:
    """The persona's system prompt.

    Args:
        setup: The discussion's settings.
        name: The persona.

    Returns:
        The message.
    """
    p = setup.persona(name)
    return SystemMessage(
        DISCUSSION_SYSTEM.format(
            name=p.name, roster=setup.roster, focus=p.focus, description=p.description
        ).replace("  ", " ")
    )


def outline(paper: Document) -> str:
    """Title, abstract and section list, as every agent first sees the document.

    Args:
        paper: The document.

    Returns:
        The text.
    """
    lines = "\n".join(
        DISCUSSION_SECTION_LINE.format(id=s.id, title=s.title, words=s.words)
        for s in paper.sections
    )
    return DISCUSSION_OUTLINE.format(title=paper.title, abstract=paper.abstract, sections=lines)


def analysis_prompt(paper: Document, read: Sequence[Section]) -> str:
    """The analysis task: the document's title and abstract and the chosen sections' text.

    Args:
        paper: The document.
        read: The sections the agent chose.

    Returns:
        The prompt text.
    """
    sections = "\n\n".join(
        DISCUSSION_READ_SECTION.format(id=s.id, title=s.title, text=s.text) for s in read
    )
    return DISCUSSION_ANALYSE.format(title=paper.title, abstract=paper.abstract, sections=sections)


def render_insights(insights: Sequence[Insight]) -> str:
    """One line per insight.

    Args:
        insights: An agent's insights.

    Returns:
        The text.
    """
    return "\n".join(
        DISCUSSION_INSIGHT_VIEW.format(
            id=i.id, content=i.content, importance=i.importance, confidence=i.confidence
        )
        for i in insights
    )


def render_all_insights(
    insights: Mapping[str, Sequence[Insight]], names: Sequence[str], reader: str | None = None
) -> str:
    """Every agent's latest insights, the reader's marked.

    Args:
        insights: Agent -> insights.
        names: Agents in order.
        reader: Who reads it.

    Returns:
        The text.
    """
    return "\n\n".join(
        DISCUSSION_INSIGHTS_OF.format(
            agent=name,
            you=DISCUSSION_YOU if name == reader else "",
            insights=render_insights(insights.get(name, [])) or "(none)",
        )
        for name in names
    )


def render_question(question: Question) -> str:
    """One line for a question.

    Args:
        question: The question.

    Returns:
        The text.
    """
    return DISCUSSION_QUESTION_VIEW.format(
        id=question.id,
        asker=question.asker,
        type=question.type,
        priority=question.priority,
        target=question.target_insight,
        text=question.text,
    )


def render_exchange(questions: Sequence[Question], responses: Sequence[Response]) -> str:
    """An iteration's questions, each with its answer if any.

    Args:
        questions: The iteration's questions.
        responses: The iteration's responses.

    Returns:
        The text.
    """
    answers = {r.question_id: r for r in responses}
    blocks = []
    for q in questions:
        r = answers.get(q.id)
        line = render_question(q)
        if r is not None:
            line = DISCUSSION_EXCHANGE_VIEW.format(
                question=line, agent=r.agent, stance=r.stance, answer=r.answer
            )
        blocks.append(line)
    return "\n".join(blocks) or DISCUSSION_NO_EXCHANGE


def exchange_of(state: Mapping[str, Any], iteration: int) -> str:
    """The questions and answers of ``iteration``, rendered.

    Args:
        state: The discussion state.
        iteration: The iteration.

    Returns:
        The text.
    """
    return render_exchange(
        this_iteration(state.get("questions") or [], iteration),
        this_iteration(state.get("responses") or [], iteration),
    )


def prompt_slots(
    state: Mapping[str, Any], setup: DiscussionSetup, reader: str | None = None
) -> dict[str, Any]:
    """What the prompts of phases 2-5 read from state, by their slots' names.

    Each prompt fills the slots it has (``str.format`` ignores the others).

    Args:
        state: The discussion state.
        setup: The discussion's settings.
        reader: Who reads it (its own insights are marked); ``None``: no one's are.

    Returns:
        ``title``, ``iteration``, ``insights`` (every agent's latest), ``exchange`` (this
        iteration's questions and answers) and ``human`` (the interjections so far).
    """
    iteration = iteration_of(state)
    return {
        "title": paper_of(state).title,
        "iteration": iteration,
        "insights": render_all_insights(insights_of(state), setup.names, reader),
        "exchange": exchange_of(state, iteration),
        "human": human_of(state),
    }
