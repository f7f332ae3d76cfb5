"""Nodes of the document discussion: analyse, ask, answer, assess, check, report.

Every persona has one node per parallel phase (``analyse_<slug>``, ``ask_<slug>``,
``answer_<slug>``, ``assess_<slug>``); the nodes of a phase start in the same step, so
their calls run concurrently (bounded by ``max_concurrency``). Each node reads its view
from state: the document, the latest insight set of every agent and this iteration's
questions and answers, never the whole history, so prompts stay bounded however many
iterations run. Every agent message is a :class:`~debategraph.state.Turn`.
"""

from __future__ import annotations

import difflib
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from debategraph.context import Context
from debategraph.documents import Document, Section, parse_document
from debategraph.models import ModelBinding, bind_model, structured_call
from debategraph.prompts import (
    CONSENSUS_SYSTEM,
    CONSENSUS_TASK,
    DISCUSSION_ANALYSE,
    DISCUSSION_ANSWER,
    DISCUSSION_ASK,
    DISCUSSION_ASSESS,
    DISCUSSION_CHOOSE,
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
from debategraph.state import (
    Analysis,
    ConsensusReport,
    ConvergenceRecord,
    ConvergenceVote,
    DiscussionState,
    DiscussionTerminationReason,
    Inquiry,
    Insight,
    Persona,
    Question,
    Response,
    ResponseSet,
    SectionChoice,
    Turn,
    Usage,
)

INITIAL_STAGE = "initial"
QUESTION_STAGE = "question"
SKIP_STAGE = "skip"
RESPONSE_STAGE = "response"
CONVERGENCE_STAGE = "convergence"
CONSENSUS_STAGE = "consensus"

PREPARE_NODE = "prepare"
OPEN_ITERATION_NODE = "open_iteration"
QUESTIONS_DONE_NODE = "questions_done"
RESPONSES_DONE_NODE = "responses_done"
CHECK_NODE = "check_convergence"
CONSENSUS_NODE = "consensus"
JOIN_NODES = (
    PREPARE_NODE,
    OPEN_ITERATION_NODE,
    QUESTIONS_DONE_NODE,
    RESPONSES_DONE_NODE,
    CHECK_NODE,
    CONSENSUS_NODE,
)
PHASES = ("analyse", "ask", "answer", "assess")

MIN_INSIGHTS = 2
MAX_INSIGHTS = 3
#: How close a misspelt agent name must be to a real one to be read as it (difflib ratio).
FUZZY_CUTOFF = 0.6
NO_SKIP_REASON = "no questions and no reason given"
CONSENSUS_FALLBACK = "the consensus call gave no usable report; this one is built from state"


def slug(name: str) -> str:
    """A node-name-safe form of a persona name: ``Critical Evaluator`` -> ``critical_evaluator``.

    Args:
        name: The persona's name.

    Returns:
        Lower-case letters, digits and underscores.
    """
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def node_name(phase: str, name: str) -> str:
    """The node of ``name``'s ``phase`` (``analyse``, ``ask``, ``answer``, ``assess``).

    Args:
        phase: The phase.
        name: The persona's name.

    Returns:
        The node name.
    """
    return f"{phase}_{slug(name)}"


@dataclass(frozen=True)
class DiscussionSetup:
    """A discussion's fixed settings, shared by its nodes (validated by the builder).

    Attributes:
        personas: The agents.
        max_iterations: Cap on question/answer iterations.
        threshold: Mean convergence score that ends the discussion.
        time_limit_s: Wall-clock seconds after which no new iteration starts.
        max_sections: Sections each agent may read.
    """

    personas: tuple[Persona, ...]
    max_iterations: int
    threshold: float
    time_limit_s: float
    max_sections: int

    @property
    def names(self) -> tuple[str, ...]:
        """Persona names."""
        return tuple(p.name for p in self.personas)

    @property
    def roster(self) -> str:
        """``Name (focus); ...`` for prompts."""
        return "; ".join(f"{p.name} ({p.focus})" for p in self.personas)

    def persona(self, name: str) -> Persona:
        """The persona called ``name``."""
        return next(p for p in self.personas if p.name == name)

    def match(self, value: str) -> str | None:
        """The persona a model meant by ``value``: exact, case-insensitive, then closest."""
        lowered = {n.lower(): n for n in self.names}
        key = value.strip().lower()
        if key in lowered:
            return lowered[key]
        close = difflib.get_close_matches(key, list(lowered), n=1, cutoff=FUZZY_CUTOFF)
        return lowered[close[0]] if close else None


# -- state readers ----------------------------------------------------------------------------


def paper_of(state: DiscussionState) -> Document:
    """The parsed document (a dict from a strict checkpoint read is validated back).

    Args:
        state: The discussion state.

    Returns:
        The document.
    """
    value: Any = state["paper"]
    return value if isinstance(value, Document) else Document.model_validate(value)


def insights_of(state: DiscussionState) -> dict[str, list[Insight]]:
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


# -- views -------------------------------------------------------------------------------------


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


# -- normalisation of what the model returned ---------------------------------------------------


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
    setup: DiscussionSetup,
    iteration: int,
) -> tuple[list[Question], list[str]]:
    """An agent's questions with their targets checked.

    A question about an unknown agent, an unknown insight of that agent, or the asker's
    own insight is dropped with a note; a misspelt agent name is read as the closest one.

    Args:
        inquiry: What the model returned (``None`` if nothing usable).
        asker: Who asks.
        insights: Agent -> its latest insights.
        setup: The discussion's settings.
        iteration: The current iteration.

    Returns:
        The accepted questions (ids assigned) and the notes.
    """
    notes: list[str] = []
    out: list[Question] = []
    for q in inquiry.questions if inquiry else []:
        target = setup.match(q.target_agent)
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


# -- convergence math (pure) -------------------------------------------------------------------


@dataclass(frozen=True)
class ConvergenceMetrics:
    """The four measured components of convergence after an iteration (each 0-1).

    Attributes:
        consistency: Share of responses that do not disagree (1 with no responses).
        completeness: Share of accepted questions that got a response (1 with none).
        resolution: Share of challenges answered with agree or revise (1 with none).
        stability: Share of insights not revised this iteration (1 with no insights).
        changed: Insights revised this iteration.
    """

    consistency: float
    completeness: float
    resolution: float
    stability: float
    changed: int


def _share(part: int, whole: int) -> float:
    return 1.0 if whole == 0 else part / whole


def convergence_metrics(
    questions: Sequence[Question],
    responses: Sequence[Response],
    insights: Mapping[str, Sequence[Insight]],
    iteration: int,
) -> ConvergenceMetrics:
    """Measure one iteration (pure).

    Args:
        questions: The iteration's accepted questions.
        responses: The iteration's accepted responses.
        insights: Every agent's insights after the iteration.
        iteration: The iteration.

    Returns:
        The metrics.
    """
    answered = {r.question_id: r for r in responses}
    challenges = [q for q in questions if q.type == "challenge"]
    resolved = [
        q for q in challenges if q.id in answered and answered[q.id].stance in ("agree", "revise")
    ]
    every = [i for items in insights.values() for i in items]
    changed = sum(1 for i in every if i.revised_in == iteration)
    return ConvergenceMetrics(
        consistency=_share(sum(1 for r in responses if r.stance != "disagree"), len(responses)),
        completeness=_share(sum(1 for q in questions if q.id in answered), len(questions)),
        resolution=_share(len(resolved), len(challenges)),
        stability=_share(len(every) - changed, len(every)),
        changed=changed,
    )


def convergence_score(metrics: ConvergenceMetrics, agent_scores: Mapping[str, float]) -> float:
    """The discussion's convergence score (pure).

    Each agent's combined score is the mean of the measured score (the mean of
    consistency, completeness, resolution and stability) and its own vote; the result is
    the mean over agents. With no agent votes it is the measured score alone.

    Args:
        metrics: The iteration's metrics.
        agent_scores: Agent -> its own convergence vote (0-1).

    Returns:
        The score, 0-1.
    """
    measured = (
        metrics.consistency + metrics.completeness + metrics.resolution + metrics.stability
    ) / 4
    if not agent_scores:
        return measured
    combined = [(measured + min(1.0, max(0.0, v))) / 2 for v in agent_scores.values()]
    return sum(combined) / len(combined)


def decide_termination(
    *,
    score: float,
    threshold: float,
    changed: int,
    iteration: int,
    max_iterations: int,
    elapsed_s: float,
    time_limit_s: float,
) -> DiscussionTerminationReason | None:
    """Whether the discussion ends after this iteration, and why (pure).

    In order of precedence: ``converged`` (score >= threshold), ``stalled`` (no insight
    changed this iteration), ``time_limit`` (elapsed >= the limit), ``max_iterations``
    (the cap is reached).

    Args:
        score: The convergence score.
        threshold: The score that ends the discussion.
        changed: Insights revised this iteration.
        iteration: The iteration just finished.
        max_iterations: The iteration cap.
        elapsed_s: Seconds since the discussion started.
        time_limit_s: The time limit.

    Returns:
        The reason, or ``None`` to go on.
    """
    if score >= threshold:
        return "converged"
    if changed == 0:
        return "stalled"
    if elapsed_s >= time_limit_s:
        return "time_limit"
    if iteration >= max_iterations:
        return "max_iterations"
    return None


def _usage_totals(transcript: Sequence[Turn]) -> dict[str, Any]:
    by_agent: dict[str, Usage] = {}
    for t in transcript:
        by_agent[t.agent] = by_agent.get(t.agent, Usage()) + t.usage
    return {"usage": Usage.total(by_agent.values()), "usage_by_agent": by_agent}


# -- nodes ---------------------------------------------------------------------------------------


def prepare(state: DiscussionState) -> dict[str, Any]:
    """Parse the document and set the outputs' starting values.

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
        "iteration": 0,
        "iterations_completed": 0,
        "started_at": time.time(),
        "report": None,
        "usage": Usage(),
        "usage_by_agent": {},
    }


def make_analyst(
    name: str, setup: DiscussionSetup, model: ModelBinding | None
) -> Callable[..., dict[str, Any]]:
    """Phase 1 node: the persona chooses sections (one call), reads them and analyses (one call).

    Args:
        name: The persona.
        setup: The discussion's settings.
        model: The model to call; ``None`` reads it from the run's context (Studio).

    Returns:
        The node function.
    """

    def analyse(state: DiscussionState, *, runtime: Runtime[Context]) -> dict[str, Any]:
        paper = paper_of(state)
        llm = model or bind_model(runtime.context)
        system = system_message(setup, name)
        task = DISCUSSION_CHOOSE.format(outline=outline(paper), max_sections=setup.max_sections)
        chosen = structured_call(llm, SectionChoice, [system, HumanMessage(task)])
        choice = normalise_choice(chosen.value, chosen.reason, paper, setup.max_sections, name)
        read = [s for s in (paper.section(i) for i in choice.section_ids) if s is not None]
        text = analysis_prompt(paper, read)
        result = structured_call(llm, Analysis, [system, HumanMessage(text)])
        insights, notes = normalise_insights(result.value, name, "\n".join(s.text for s in read))
        turn = Turn(
            agent=name,
            content=render_insights(insights),
            stage=INITIAL_STAGE,
            round=0,
            usage=chosen.usage + result.usage,
            reason=result.reason,
        )
        return {
            "section_choices": [choice],
            "insights": {name: insights},
            "transcript": [turn],
            "notes": [*choice.notes, *notes],
        }

    return analyse


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


def open_iteration(state: DiscussionState) -> dict[str, Any]:
    """Start the next question/answer iteration.

    Args:
        state: The discussion state.

    Returns:
        The new iteration number.
    """
    return {"iteration": state.get("iteration", 0) + 1}


def make_asker(
    name: str, setup: DiscussionSetup, model: ModelBinding | None
) -> Callable[..., dict[str, Any]]:
    """Phase 2 node: the persona reviews the others' insights and asks or skips.

    Args:
        name: The persona.
        setup: The discussion's settings.
        model: The model to call; ``None`` reads it from the run's context.

    Returns:
        The node function.
    """

    def ask(state: DiscussionState, *, runtime: Runtime[Context]) -> dict[str, Any]:
        iteration = state["iteration"]
        insights = insights_of(state)
        task = DISCUSSION_ASK.format(
            title=paper_of(state).title,
            iteration=iteration,
            insights=render_all_insights(insights, setup.names, name),
        )
        llm = model or bind_model(runtime.context)
        result = structured_call(llm, Inquiry, [system_message(setup, name), HumanMessage(task)])
        questions, notes = normalise_questions(result.value, name, insights, setup, iteration)
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
        return {"questions": questions, "transcript": [turn], "notes": notes}

    return ask


def make_answerer(
    name: str, setup: DiscussionSetup, model: ModelBinding | None
) -> Callable[..., dict[str, Any]]:
    """Phase 3 node: the persona answers the questions addressed to it (no call if none).

    A ``revise`` stance replaces the questioned insight's text in the persona's set.

    Args:
        name: The persona.
        setup: The discussion's settings.
        model: The model to call; ``None`` reads it from the run's context.

    Returns:
        The node function.
    """

    def answer(state: DiscussionState, *, runtime: Runtime[Context]) -> dict[str, Any]:
        iteration = state["iteration"]
        mine = [
            q
            for q in this_iteration(state.get("questions", []), iteration)
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
        )
        llm = model or bind_model(runtime.context)
        result = structured_call(
            llm, ResponseSet, [system_message(setup, name), HumanMessage(task)]
        )
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
        update: dict[str, Any] = {"responses": responses, "transcript": [turn], "notes": notes}
        if revised != own:
            update["insights"] = {name: revised}
        return update

    return answer


def make_assessor(
    name: str, setup: DiscussionSetup, model: ModelBinding | None
) -> Callable[..., dict[str, Any]]:
    """Phase 4 node: the persona scores how far the discussion has converged.

    Args:
        name: The persona.
        setup: The discussion's settings.
        model: The model to call; ``None`` reads it from the run's context.

    Returns:
        The node function.
    """

    def assess(state: DiscussionState, *, runtime: Runtime[Context]) -> dict[str, Any]:
        iteration = state["iteration"]
        task = DISCUSSION_ASSESS.format(
            title=paper_of(state).title,
            iteration=iteration,
            insights=render_all_insights(insights_of(state), setup.names, name),
            exchange=render_exchange(
                this_iteration(state.get("questions", []), iteration),
                this_iteration(state.get("responses", []), iteration),
            ),
        )
        llm = model or bind_model(runtime.context)
        result = structured_call(
            llm, ConvergenceVote, [system_message(setup, name), HumanMessage(task)]
        )
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
        return {"transcript": [turn]}

    return assess


def join(state: DiscussionState) -> dict[str, Any]:
    """A barrier between parallel phases: waits for every agent node, changes nothing.

    Args:
        state: The discussion state.

    Returns:
        No update.
    """
    return {}


def make_check(setup: DiscussionSetup) -> Callable[..., dict[str, Any]]:
    """Node that scores convergence after an iteration and decides whether to go on.

    Args:
        setup: The discussion's settings.

    Returns:
        The node function.
    """

    def check(state: DiscussionState) -> dict[str, Any]:
        iteration = state["iteration"]
        transcript = state.get("transcript", [])
        metrics = convergence_metrics(
            this_iteration(state.get("questions", []), iteration),
            this_iteration(state.get("responses", []), iteration),
            insights_of(state),
            iteration,
        )
        votes = {
            t.agent: t.confidence
            for t in transcript
            if t.stage == CONVERGENCE_STAGE and t.round == iteration and t.confidence is not None
        }
        score = convergence_score(metrics, votes)
        reason = decide_termination(
            score=score,
            threshold=setup.threshold,
            changed=metrics.changed,
            iteration=iteration,
            max_iterations=setup.max_iterations,
            elapsed_s=time.time() - state.get("started_at", time.time()),
            time_limit_s=setup.time_limit_s,
        )
        record = ConvergenceRecord(
            iteration=iteration,
            consistency=metrics.consistency,
            completeness=metrics.completeness,
            resolution=metrics.resolution,
            stability=metrics.stability,
            agent_scores=votes,
            score=score,
            changed=metrics.changed,
            termination_reason=reason,
        )
        update: dict[str, Any] = {
            "convergence": [record],
            "iterations_completed": iteration,
            **_usage_totals(transcript),
        }
        if reason is not None:
            update["termination_reason"] = reason
        return update

    return check


def after_check(state: DiscussionState) -> str:
    """Edge after the convergence check: the consensus report once ended, else loop.

    Args:
        state: The discussion state.

    Returns:
        The next node.
    """
    return CONSENSUS_NODE if state.get("termination_reason") else OPEN_ITERATION_NODE


def normalise_report(
    report: ConsensusReport | None,
    fallback: str | None,
    state: DiscussionState,
    names: Sequence[str],
) -> ConsensusReport:
    """The consensus report with agent names read as real personas.

    Unknown names in supporting/opposing lists and positions are dropped with a note;
    with no usable reply the report is built from state (see :func:`report_from_state`).

    Args:
        report: What the model returned (``None`` if nothing usable).
        fallback: Why it gave nothing usable.
        state: The discussion state.
        names: Every persona.

    Returns:
        The report to record.
    """
    if report is None:
        return report_from_state(state, fallback)
    lowered = {n.lower(): n for n in names}
    notes: list[str] = []

    def read(value: str, where: str) -> str | None:
        key = value.strip().lower()
        found = lowered.get(key)
        if found is None:
            close = difflib.get_close_matches(key, list(lowered), n=1, cutoff=FUZZY_CUTOFF)
            found = lowered[close[0]] if close else None
        if found is None:
            notes.append(f"{where}: unknown agent {value!r} dropped")
        return found

    points = []
    for p in report.consensus_points:
        supporting = [n for n in (read(v, "supporting") for v in p.supporting) if n]
        opposing = [n for n in (read(v, "opposing") for v in p.opposing) if n]
        points.append(p.model_copy(update={"supporting": supporting, "opposing": opposing}))
    views = []
    for v in report.divergent_views:
        positions = []
        for pos in v.positions:
            agent = read(pos.agent, "position")
            if agent:
                positions.append(pos.model_copy(update={"agent": agent}))
        views.append(v.model_copy(update={"positions": positions}))
    return report.model_copy(
        update={
            "consensus_points": points,
            "divergent_views": views,
            "notes": tuple(notes),
            "fallback": None,
        }
    )


def report_from_state(state: DiscussionState, reason: str | None) -> ConsensusReport:
    """A report built from state alone, when the consensus call gave nothing usable.

    Contributions are the most important insights; contested points are challenges
    answered with disagreement (or not answered).

    Args:
        state: The discussion state.
        reason: Why the consensus call gave nothing usable.

    Returns:
        The report, with ``fallback`` set.
    """
    paper = paper_of(state)
    every = [i for items in insights_of(state).values() for i in items]
    top = sorted(every, key=lambda i: i.importance, reverse=True)[:MAX_INSIGHTS]
    answers = {r.question_id: r for r in state.get("responses", [])}
    contested = [
        q.text
        for q in state.get("questions", [])
        if q.type == "challenge" and (q.id not in answers or answers[q.id].stance == "disagree")
    ]
    confidence = sum(i.confidence for i in every) / len(every) if every else 0.0
    return ConsensusReport(
        consensus_points=[],
        divergent_views=[],
        overview=paper.abstract,
        main_contributions=[i.content for i in top],
        consensus_assessment="",
        contested_points=contested,
        significance="",
        overall_confidence=round(confidence, 4),
        fallback=f"{CONSENSUS_FALLBACK} ({reason})" if reason else CONSENSUS_FALLBACK,
    )


def make_consensus(
    setup: DiscussionSetup, model: ModelBinding | None
) -> Callable[..., dict[str, Any]]:
    """Phase 5 node: one call writes the consensus report from the final state.

    Args:
        setup: The discussion's settings.
        model: The model to call; ``None`` reads it from the run's context.

    Returns:
        The node function.
    """
    system = SystemMessage(CONSENSUS_SYSTEM.format(roster=setup.roster))

    def consensus(state: DiscussionState, *, runtime: Runtime[Context]) -> dict[str, Any]:
        paper = paper_of(state)
        iteration = state.get("iteration", 0)
        task = CONSENSUS_TASK.format(
            title=paper.title,
            abstract=paper.abstract,
            insights=render_all_insights(insights_of(state), setup.names),
            exchange=render_exchange(
                this_iteration(state.get("questions", []), iteration),
                this_iteration(state.get("responses", []), iteration),
            ),
            iterations=state.get("iterations_completed", iteration),
            reason=state.get("termination_reason", "max_iterations"),
        )
        llm = model or bind_model(runtime.context)
        result = structured_call(llm, ConsensusReport, consensus_messages(system, task))
        report = normalise_report(result.value, result.reason, state, setup.names)
        turn = Turn(
            agent=CONSENSUS_NODE,
            content=report.consensus_assessment or report.overview,
            stage=CONSENSUS_STAGE,
            round=iteration,
            usage=result.usage,
            confidence=report.overall_confidence,
            reason=report.fallback,
        )
        transcript = [*state.get("transcript", []), turn]
        return {
            "report": report,
            "transcript": [turn],
            "notes": list(report.notes),
            **_usage_totals(transcript),
        }

    return consensus


def consensus_messages(system: SystemMessage, task: str) -> list[BaseMessage]:
    """The consensus prompt.

    Args:
        system: The system message.
        task: The task text.

    Returns:
        The messages.
    """
    return [system, HumanMessage(task)]


# -- the Markdown report ------------------------------------------------------------------------


def render_report_markdown(
    report: ConsensusReport,
    *,
    title: str | None = None,
    termination_reason: str | None = None,
    convergence: Sequence[ConvergenceRecord] = (),
    insights: Mapping[str, Sequence[Insight]] | None = None,
) -> str:
    """The consensus report as Markdown (pure), for the CLI's ``--report`` file.

    Args:
        report: The report.
        title: The document's title.
        termination_reason: Why the discussion ended.
        convergence: The convergence record of each iteration.
        insights: Each agent's final insights.

    Returns:
        The Markdown text, ending with a newline.
    """
    out = [f"# Discussion report: {title}" if title else "# Discussion report", ""]
    if report.fallback:
        out += [f"> Note: {report.fallback}", ""]
    out += ["## Overview", "", report.overview or "(none)", ""]

    def bullets(items: Sequence[str]) -> list[str]:
        return [f"- {i}" for i in items] or ["(none)"]

    out += ["## Main contributions", "", *bullets(report.main_contributions), ""]
    out += ["## Consensus points", ""]
    for p in report.consensus_points:
        against = f"; opposing: {', '.join(p.opposing)}" if p.opposing else ""
        out.append(
            f"- {p.statement} (strength {p.strength:.2f}; supporting: "
            f"{', '.join(p.supporting) or 'none'}{against})"
        )
    if not report.consensus_points:
        out.append("(none)")
    out += ["", "## Divergent views", ""]
    for v in report.divergent_views:
        out.append(f"### {v.topic}")
        out.append("")
        for pos in v.positions:
            why = f" ({'; '.join(pos.reasons)})" if pos.reasons else ""
            out.append(f"- **{pos.agent}**: {pos.position}{why}")
        out.append("")
    if not report.divergent_views:
        out += ["(none)", ""]
    out += ["## Consensus assessment", "", report.consensus_assessment or "(none)", ""]
    out += ["## Contested points", "", *bullets(report.contested_points), ""]
    out += ["## Significance", "", report.significance or "(none)", ""]
    out += [f"Overall confidence: {report.overall_confidence:.2f}", ""]
    if insights:
        out += ["## Final insights", ""]
        for agent, items in insights.items():
            out.append(f"### {agent}")
            out.append("")
            out += [f"- [{i.id}] {i.content} (importance {i.importance:.2f})" for i in items]
            out.append("")
    if convergence or termination_reason:
        out += ["## Convergence", ""]
        out += [
            f"- iteration {c.iteration}: score {c.score:.2f} (consistency {c.consistency:.2f}, "
            f"completeness {c.completeness:.2f}, resolution {c.resolution:.2f}, "
            f"stability {c.stability:.2f})"
            for c in convergence
        ]
        if termination_reason:
            out.append(f"- ended: {termination_reason}")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
