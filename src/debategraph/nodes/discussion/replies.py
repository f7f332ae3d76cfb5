"""Normalisation of what the models returned in phases 1-3: choices, insights, questions, answers.

Whatever a model gets wrong (an unknown section or agent, too many insights, an invented
quote, a response to no question) is dropped or read as what it meant, each with a note,
so the discussion goes on with well-formed records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from debategraph.documents import Document
from debategraph.nodes.roster import read_name, slug
from debategraph.state.discussion import (
    Analysis,
    Inquiry,
    Insight,
    Question,
    Response,
    ResponseSet,
    SectionChoice,
)

MIN_INSIGHTS = 2
MAX_INSIGHTS = 3


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
        notes.append(f"{agent}: {why}; reads the first {cap} section(s)")
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
        notes.append(f"{agent}: {len(analysis.insights) - len(given)} empty insight(s) dropped")
    if len(given) > MAX_INSIGHTS:
        notes.append(f"{agent}: gave {len(given)} insights, only the first {MAX_INSIGHTS} kept")
        given = given[:MAX_INSIGHTS]
    if analysis and len(given) < MIN_INSIGHTS:
        notes.append(f"{agent}: gave {len(given)} insight(s), {MIN_INSIGHTS} were asked for")
    haystack = _squash(read_text)
    out = []
    for n, insight in enumerate(given, 1):
        iid = f"{slug(agent)}-{n}"
        evidence = [e for e in insight.evidence if _squash(e) and _squash(e) in haystack]
        if len(evidence) < len(insight.evidence):
            dropped = len(insight.evidence) - len(evidence)
            notes.append(f"{iid}: {dropped} evidence quote(s) not found in the sections read")
        out.append(
            insight.model_copy(
                update={"id": iid, "agent": agent, "evidence": evidence, "version": 1}
            )
        )
    return out, notes


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
    (:func:`~debategraph.nodes.roster.read_name`, noted).

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
