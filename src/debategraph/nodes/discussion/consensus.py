"""Phase 5: one call writes the consensus report from the final state.

The report's agent names are read as real personas (one fuzzy matcher,
:func:`~debategraph.strategies.names.read_name`); with no usable reply the report is built
from state, so a discussion always ends with one, marked as not written by a model. A
discussion whose scores said ``converged`` but whose report has no consensus point did not
converge: its ending is corrected here, with a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from debategraph.nodes.agent import agent_of, recorded
from debategraph.nodes.discussion.analysis import MAX_INSIGHTS
from debategraph.nodes.discussion.convergence import ending_without_consensus
from debategraph.nodes.discussion.markdown import NOT_CONVERGED, NOT_WRITTEN
from debategraph.nodes.discussion.prompts import CONSENSUS_SYSTEM, CONSENSUS_TASK
from debategraph.nodes.discussion.setup import CONSENSUS_NODE, CONSENSUS_STAGE, DiscussionSetup
from debategraph.nodes.discussion.views import (
    insights_of,
    iteration_of,
    paper_of,
    prompt_slots,
)
from debategraph.nodes.dual import agent_node
from debategraph.state.base import TerminationReason, termination_word, turn_update
from debategraph.state.discussion import ConsensusReport, DiscussionState
from debategraph.state.records import Turn
from debategraph.strategies.names import read_name

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable
    from langgraph.runtime import Runtime

    from debategraph.models import ModelBinding, Steps
    from debategraph.models.context import Context
    from debategraph.nodes.messages import Outcome

CONSENSUS_FAILED = "the consensus call gave no usable report"
CONSENSUS_FALLBACK = f"{CONSENSUS_FAILED}; this one is built from state"


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
    notes: list[str] = []

    def read(value: str, where: str) -> str | None:
        found = read_name(value, names, where, notes)
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
    answered with disagreement (or not answered); the confidence is the insights' mean.
    What only the model could write (consensus points, divergent views, the overview,
    the assessment, the significance) is left empty: nothing stands in for a synthesis
    (the overview is not the document's abstract passed off as one).

    Args:
        state: The discussion state.
        reason: Why the consensus call gave nothing usable.

    Returns:
        The report, with ``fallback`` set.
    """
    every = [i for items in insights_of(state).values() for i in items]
    top = sorted(every, key=lambda i: i.importance, reverse=True)[:MAX_INSIGHTS]
    answers = {r.question_id: r for r in state.get("responses") or []}
    contested = [
        q.text
        for q in state.get("questions") or []
        if q.type == "challenge" and (q.id not in answers or answers[q.id].stance == "disagree")
    ]
    confidence = sum(i.confidence for i in every) / len(every) if every else 0.0
    return ConsensusReport(
        consensus_points=[],
        divergent_views=[],
        overview="",
        main_contributions=[i.content for i in top],
        consensus_assessment="",
        contested_points=contested,
        significance="",
        overall_confidence=round(confidence, 4),
        fallback=f"{CONSENSUS_FAILED} ({reason}); this one is built from state"
        if reason
        else CONSENSUS_FALLBACK,
    )


def consensus_messages(setup: DiscussionSetup, state: DiscussionState) -> list[BaseMessage]:
    """The consensus prompt: the final insights, the last exchange, every interjection.

    Args:
        setup: The discussion's settings.
        state: The discussion state.

    Returns:
        The messages.
    """
    slots = prompt_slots(state, setup)
    task = CONSENSUS_TASK.format(
        **slots,
        abstract=paper_of(state).abstract,
        iterations=state.get("iterations_completed", slots["iteration"]),
        reason=termination_word(state.get("termination_reason")) or "rounds_completed",
    )
    return [SystemMessage(CONSENSUS_SYSTEM.format(roster=setup.roster)), HumanMessage(task)]


def make_consensus(setup: DiscussionSetup, model: ModelBinding | None) -> Runnable[Any, Any]:
    """Phase 5 node: one call writes the consensus report from the final state.

    The writer is the discussion's official ``consensus``: its record in
    ``setup.officials`` (if given) gives it a model, tools or agent of its own; its tool
    calls are recorded before its turn.

    Args:
        setup: The discussion's settings.
        model: The graph's model; ``None`` reads it from the run's context.

    Returns:
        The node function.
    """
    agent = agent_of(setup.official(CONSENSUS_NODE), model, CONSENSUS_NODE)

    def consensus(state: DiscussionState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        result = yield from agent.ask_steps(
            runtime, ConsensusReport, consensus_messages(setup, state)
        )
        report = normalise_report(result.value, result.reason, state, setup.names)
        ending = _ending(setup, state, report)
        turn = Turn(
            agent=CONSENSUS_NODE,
            content=NOT_WRITTEN
            if report.fallback
            else report.consensus_assessment or report.overview,
            stage=CONSENSUS_STAGE,
            round=iteration_of(state),
            usage=result.usage,
            confidence=None if report.fallback else report.overall_confidence,
            reason=report.fallback,
        )
        update = {
            **turn_update(*recorded(result, turn), so_far=state.get("transcript")),
            "report": report,
            "notes": list(report.notes),
        }
        if ending is not None:
            update["termination_reason"] = ending
            update["notes"] = [*update["notes"], f"ended {ending}, {NOT_CONVERGED}"]
        return update

    return agent_node(consensus, CONSENSUS_NODE)


def _ending(
    setup: DiscussionSetup, state: DiscussionState, report: ConsensusReport
) -> TerminationReason | None:
    """The discussion's true ending when it may not stay ``converged``, else ``None``.

    A discussion cannot end ``converged`` without a consensus point: if its last check
    said so and the report has none (the model found none, or gave no usable report),
    it ends as :func:`~debategraph.nodes.discussion.convergence.ending_without_consensus`
    says.
    """
    records = state.get("convergence") or []
    if state.get("termination_reason") != "converged" or report.consensus_points or not records:
        return None
    return ending_without_consensus(setup, records[-1])


def outcome(state: Mapping[str, Any]) -> Outcome:
    """The discussion's outcome message: the consensus report's overview and assessment.

    Args:
        state: The finished run's state.

    Returns:
        ``(consensus, text)``.
    """
    report: ConsensusReport | None = state.get("report")
    if report is None:
        reason = state.get("termination_reason") or "rounds_completed"
        return CONSENSUS_STAGE, f"The discussion ended ({reason}) with no consensus report."
    return CONSENSUS_STAGE, f"{report.overview} {report.consensus_assessment}".strip()
