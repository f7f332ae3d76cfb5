"""Phase 4, convergence: each persona scores it, then the check node measures and decides.

Each persona votes how far the discussion has converged; the check node measures the
iteration's components, combines them with the votes into the score, records it, and
ends the discussion with the first termination condition that fires
(:mod:`debategraph.strategies.termination`); between iterations the shared review point
shows a human the score when the discussion pauses.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from debategraph.nodes.discussion.markdown import COMPONENTS, shown_share
from debategraph.nodes.discussion.personas import Speaker
from debategraph.nodes.discussion.prompts import DISCUSSION_ASSESS
from debategraph.nodes.discussion.setup import CONVERGENCE_STAGE, DiscussionSetup
from debategraph.nodes.discussion.views import (
    insights_of,
    iteration_of,
    prompt_slots,
    this_iteration,
)
from debategraph.nodes.dual import loop_node
from debategraph.nodes.messages import emit
from debategraph.nodes.review import review_payload
from debategraph.nodes.rounds import ended
from debategraph.state.base import TerminationReason
from debategraph.state.discussion import (
    ConvergenceRecord,
    ConvergenceVote,
    DiscussionState,
    Insight,
    Question,
    Response,
)
from debategraph.state.records import Turn, Usage
from debategraph.strategies.termination import (
    Condition,
    Convergence,
    MaxRounds,
    RoundOutcome,
    Stall,
    TimeLimit,
    first_fired,
)

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable

    from debategraph.models import ModelBinding, Steps


def assess(me: Speaker, state: DiscussionState) -> Steps[dict[str, Any]]:
    """Phase 4 body: the persona scores how far the discussion has converged.

    Args:
        me: The persona.
        state: The discussion state.

    Returns:
        The steps; they return its turn, whose ``confidence`` is its vote.
    """
    task = DISCUSSION_ASSESS.format(**prompt_slots(state, me.setup, me.name))
    result = yield from me.ask(ConvergenceVote, task)
    vote = result.value
    turn = Turn(
        agent=me.name,
        content=vote.reason if vote else "",
        stage=CONVERGENCE_STAGE,
        round=iteration_of(state),
        usage=result.usage,
        confidence=vote.score if vote else None,
        reason=result.reason,
    )
    return me.turn_update(turn, result)


@dataclass(frozen=True)
class ConvergenceMetrics:
    """The four measured components of convergence after an iteration (each 0-1).

    A component is ``None`` (unmeasured, shown ``n/a``) when the iteration gave it
    nothing to measure: the absence of questions, answers or revisions is no agreement.

    Attributes:
        consistency: Share of responses that do not disagree (``None``: no response).
        completeness: Share of accepted questions that got a response (``None``: no
            question).
        resolution: Share of challenges answered with agree or revise (``None``: no
            challenge).
        stability: Share of insights not revised this iteration (``None``: no question
            was asked, so nothing could revise them).
        changed: Insights revised this iteration.
    """

    consistency: float | None
    completeness: float | None
    resolution: float | None
    stability: float | None
    changed: int

    @property
    def measured(self) -> list[float]:
        """The components that were measured, in order."""
        parts = (self.consistency, self.completeness, self.resolution, self.stability)
        return [p for p in parts if p is not None]


def _share(part: int, whole: int) -> float | None:
    return None if whole == 0 else part / whole


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
        The metrics; an iteration with no question measures nothing (every component
        ``None``).
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
        stability=_share(len(every) - changed, len(every)) if questions else None,
        changed=changed,
    )


def convergence_score(
    metrics: ConvergenceMetrics, agent_scores: Mapping[str, float]
) -> float | None:
    """The discussion's convergence score (pure).

    The measured score is the mean of the components that were measured. Each agent's
    combined score is the mean of the measured score and its own vote (clamped to 0-1);
    the result is the mean over agents. With nothing measured (no question was asked)
    the votes decide alone; with no vote, the measured score alone; with neither there
    is no score.

    Args:
        metrics: The iteration's metrics.
        agent_scores: Agent -> its own convergence vote (0-1).

    Returns:
        The score, 0-1, or ``None`` when there was nothing to score.
    """
    parts = metrics.measured
    measured = sum(parts) / len(parts) if parts else None
    votes = [min(1.0, max(0.0, v)) for v in agent_scores.values()]
    if not votes:
        return measured
    if measured is None:
        return sum(votes) / len(votes)
    combined = [(measured + v) / 2 for v in votes]
    return sum(combined) / len(combined)


def termination_conditions(setup: DiscussionSetup) -> list[Condition]:
    """The discussion's termination conditions, highest precedence first.

    ``converged`` (score >= threshold), ``stalled`` (no insight changed this iteration),
    ``time_limit`` (elapsed >= the limit), ``rounds_completed`` (the iteration cap).

    Args:
        setup: The discussion's settings.

    Returns:
        The conditions.
    """
    return [
        Convergence(setup.threshold),
        Stall(),
        TimeLimit(setup.time_limit_s),
        MaxRounds(setup.max_rounds),
    ]


def ending_without_consensus(
    setup: DiscussionSetup, record: ConvergenceRecord
) -> TerminationReason:
    """How a discussion ends whose scores said converged but whose consensus has no point.

    A discussion without a consensus point did not converge, whatever its scores said.
    Its ending is the next condition that held at its last check: ``stalled`` when that
    iteration changed no insight, ``rounds_completed`` when it was the last one. When
    neither held, the scores stopped it early with no agreement reached, and nothing
    moved it towards one after: it stalled short of a consensus (``stalled``).

    Args:
        setup: The discussion's settings.
        record: The convergence record of the last iteration.

    Returns:
        ``stalled`` or ``rounds_completed``.
    """
    outcome = RoundOutcome(round=record.iteration, changed=record.changed)
    fired = first_fired([Stall(), MaxRounds(setup.max_rounds)], outcome)
    return fired or Stall().reason


def make_close_round(setup: DiscussionSetup, model: ModelBinding | None) -> Runnable[Any, Any]:
    """Node that scores convergence after an iteration and decides whether to go on.

    The discussion's round close, the node ``check_convergence``.

    Args:
        setup: The discussion's settings (its :func:`termination_conditions`).
        model: The graph's model: not called (the personas scored the iteration in
            their ``assess`` nodes).

    Returns:
        The node runnable.
    """
    conditions = termination_conditions(setup)

    def check(state: DiscussionState) -> dict[str, Any]:
        iteration = iteration_of(state)
        transcript = state.get("transcript") or []
        metrics = convergence_metrics(
            this_iteration(state.get("questions") or [], iteration),
            this_iteration(state.get("responses") or [], iteration),
            insights_of(state),
            iteration,
        )
        votes = {
            t.agent: t.confidence
            for t in transcript
            if t.role == "agent"
            and t.stage == CONVERGENCE_STAGE
            and t.round == iteration
            and t.confidence is not None
        }
        score = convergence_score(metrics, votes)
        outcome = RoundOutcome(
            round=iteration,
            usage=Usage.coerce(state.get("usage")),
            elapsed_s=time.time() - (state.get("started_at") or time.time()),
            score=score,
            changed=metrics.changed,
        )
        reason = ended(state, first_fired(conditions, outcome))
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
        update: dict[str, Any] = {"convergence": [record], "iterations_completed": iteration}
        emit("decision", agent="convergence", **record.model_dump(mode="json"))
        if reason is not None:
            update["termination_reason"] = reason
        return update

    return loop_node(check)


def round_review(setup: DiscussionSetup) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The payload of the pause after an iteration: its convergence and its exchange.

    The score and each component are numbers, or ``"n/a"`` where the iteration gave
    nothing to measure (see :class:`ConvergenceMetrics`).

    Args:
        setup: The discussion's settings.

    Returns:
        Builds the payload from the state.
    """

    def payload(state: Mapping[str, Any]) -> dict[str, Any]:
        record: ConvergenceRecord = state["convergence"][-1]
        iteration = record.iteration
        return review_payload(
            iteration,
            setup.max_rounds,
            "persona",
            word="iteration",
            convergence=shown_share(record.score, 4),
            **{name: shown_share(getattr(record, name), 4) for name in COMPONENTS},
            threshold=setup.threshold,
            agent_scores=dict(record.agent_scores),
            insights_revised=record.changed,
            questions=len(this_iteration(state.get("questions") or [], iteration)),
            responses=len(this_iteration(state.get("responses") or [], iteration)),
        )

    return payload
