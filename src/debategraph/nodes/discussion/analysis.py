"""Phase 1, the initial analysis: parse the document, then each persona chooses and reads.

``prepare`` parses the document and starts the clock; each persona then sees the title,
abstract and section list, chooses sections (one call), reads them and gives two or
three insights (one call). What a model gets wrong (an unknown section, too many
insights, an invented quote) is dropped or read as what it meant, each with a note.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from debategraph.documents import Document, parse_document
from debategraph.nodes.discussion.personas import Speaker
from debategraph.nodes.discussion.prompts import DISCUSSION_CHOOSE
from debategraph.nodes.discussion.setup import INITIAL_STAGE, DiscussionSetup
from debategraph.nodes.discussion.views import (
    analysis_prompt,
    outline,
    paper_of,
    render_insights,
)
from debategraph.nodes.dual import loop_node
from debategraph.nodes.roster import slug
from debategraph.nodes.rounds import start_clock
from debategraph.state.discussion import Analysis, DiscussionState, Insight, SectionChoice
from debategraph.state.records import Turn
from debategraph.words import plural

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable

    from debategraph.models import Steps

MIN_INSIGHTS = 2
MAX_INSIGHTS = 3


def prepare(state: DiscussionState) -> dict[str, Any]:
    """Parse the document and set the outputs' starting values.

    The time limit counts from here, so the initial analysis counts towards it.

    Args:
        state: The discussion state.

    Returns:
        The parsed document, its parser notes and the start time.

    Raises:
        ValueError: If the document is empty (as
            :func:`~debategraph.nodes.discussion.setup.check_input` says).
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


def make_prepare(setup: DiscussionSetup) -> Runnable[Any, Any]:
    """The ``prepare`` node of a discussion with its time limit: it also sets the deadline.

    Every model call of the run is bounded by the deadline (``started_at`` plus
    ``setup.time_limit_s``): see :func:`~debategraph.nodes.rounds.start_clock`.

    Args:
        setup: The discussion's settings.

    Returns:
        The node runnable: it writes what :func:`prepare` does, and ``deadline``.
    """

    def prepare_run(state: DiscussionState) -> dict[str, Any]:
        update = prepare(state)
        return {**update, **start_clock(setup.time_limit_s, update["started_at"])}

    return loop_node(prepare_run)


def analyse(me: Speaker, state: DiscussionState) -> Steps[dict[str, Any]]:
    """Phase 1 body: the persona chooses sections (one call), reads them and analyses (one).

    Args:
        me: The persona.
        state: The discussion state.

    Returns:
        The steps; they return its turn, section choice, insights and notes.
    """
    paper = paper_of(state)
    cap = me.setup.max_sections
    chosen = yield from me.ask(
        SectionChoice, DISCUSSION_CHOOSE.format(outline=outline(paper), max_sections=cap)
    )
    choice = normalise_choice(chosen.value, chosen.reason, paper, cap, me.name)
    read = [s for s in (paper.section(i) for i in choice.section_ids) if s is not None]
    result = yield from me.ask(Analysis, analysis_prompt(paper, read))
    insights, notes = normalise_insights(result.value, me.name, "\n".join(s.text for s in read))
    reason = result.reason
    if result.value is None and chosen.value is None and chosen.reason not in (None, reason):
        reason = f"section choice: {chosen.reason}; analysis: {result.reason}"
    turn = Turn(
        agent=me.name,
        content=render_insights(insights),
        stage=INITIAL_STAGE,
        round=0,
        usage=chosen.usage + result.usage,
        reason=reason,
    )
    return {
        **me.turn_update(turn, chosen, result),
        "section_choices": [choice],
        "insights": {me.name: insights},
        "notes": [*choice.notes, *notes],
    }


def normalise_choice(
    choice: SectionChoice | None, fallback: str | None, paper: Document, cap: int, agent: str
) -> SectionChoice:
    """The sections an agent reads: known ids, no repeats, at most ``cap``.

    Unknown ids are dropped and repeats ignored, each with a note; with none left (or no
    usable reply) the agent reads the first ``cap`` sections.

    Args:
        choice: What the model chose (``None`` if it gave nothing usable).
        fallback: Why it gave nothing usable.
        paper: The document.
        cap: Sections an agent may read.
        agent: Who chose.

    Returns:
        The choice to record.
    """
    notes: list[str] = []
    ids: list[str] = []
    for raw in choice.section_ids if choice else []:
        section = paper.section(raw)
        if section is None:
            notes.append(f"{agent}: unknown section id {raw!r} dropped")
        elif section.id not in ids:
            ids.append(section.id)
    if len(ids) > cap:
        notes.append(f"{agent}: chose {len(ids)} sections, only the first {cap} are read")
        ids = ids[:cap]
    reason = choice.reason if choice else ""
    if not ids:
        why = fallback if choice is None else "no known section chosen"
        notes.append(f"{agent}: {why}; reads the first {plural(cap, 'section')}")
        ids = [s.id for s in paper.sections[:cap]]
    return SectionChoice(section_ids=ids, reason=reason, agent=agent, notes=tuple(notes))


def _squash(text: str) -> str:
    return " ".join(text.lower().strip().strip("\"'\u201c\u201d\u2018\u2019").split())


def normalise_insights(
    analysis: Analysis | None, agent: str, read_text: str
) -> tuple[list[Insight], list[str]]:
    """An agent's initial insights: at most three, ids assigned, evidence checked.

    Insights with no content are dropped; beyond three are dropped; evidence quotes not
    found in the sections the agent read are dropped; each with a note. (Scores outside
    0-1 were already clamped by :func:`~debategraph.models.structured_call`'s repair.)

    Args:
        analysis: What the model returned (``None`` if nothing usable).
        agent: Whose insights.
        read_text: The text of the sections the agent read.

    Returns:
        The insights and the notes.
    """
    notes: list[str] = []
    given = [i for i in (analysis.insights if analysis else []) if i.content.strip()]
    if analysis and len(given) < len(analysis.insights):
        notes.append(
            f"{agent}: {plural(len(analysis.insights) - len(given), 'empty insight')} dropped"
        )
    if len(given) > MAX_INSIGHTS:
        notes.append(f"{agent}: gave {len(given)} insights, only the first {MAX_INSIGHTS} kept")
        given = given[:MAX_INSIGHTS]
    if analysis and len(given) < MIN_INSIGHTS:
        notes.append(
            f"{agent}: gave {plural(len(given), 'insight')}, {MIN_INSIGHTS} were asked for"
        )
    haystack = _squash(read_text)
    out = []
    for n, insight in enumerate(given, 1):
        iid = f"{slug(agent)}-{n}"
        evidence = [e for e in insight.evidence if _squash(e) and _squash(e) in haystack]
        if len(evidence) < len(insight.evidence):
            dropped = len(insight.evidence) - len(evidence)
            notes.append(
                f"{iid}: {plural(dropped, 'evidence quote')} not found in the sections read"
            )
        out.append(
            insight.model_copy(
                update={"id": iid, "agent": agent, "evidence": evidence, "version": 1}
            )
        )
    return out, notes
