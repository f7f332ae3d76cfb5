"""The solver debate's end: the decision protocol applied to each solver's latest answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from debategraph.nodes.agent import agent_of
from debategraph.nodes.dual import agent_node
from debategraph.nodes.solver_debate.judge import decide_steps, decision_key
from debategraph.nodes.solver_debate.setup import AGGREGATE_NODE, JUDGE
from debategraph.nodes.solver_debate.views import latest_turns
from debategraph.state.base import turn_update
from debategraph.state.solver_debate import SolverDebateState
from debategraph.strategies.decisions import DecisionProtocol
from debategraph.words import plural

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable
    from langgraph.runtime import Runtime

    from debategraph.models import ModelBinding, Steps
    from debategraph.models.context import Context
    from debategraph.nodes.messages import Outcome
    from debategraph.state.records import AgentSpec


def make_aggregate(
    protocol: DecisionProtocol, judge: AgentSpec | None, model: ModelBinding | None
) -> Runnable[Any, Any]:
    """Node that decides the answer from each solver's latest answer and confidence.

    It applies ``protocol`` (:func:`~debategraph.nodes.solver_debate.judge.decide_steps`)
    and writes the decision's answer, votes, agreement and tie-break, the decision itself
    and ``decisions`` (by :func:`~debategraph.nodes.solver_debate.judge.decision_key`);
    when the judge was called, its turn and its usage. The call is bounded by the run's
    deadline (past it, plurality decides and says why).

    Args:
        protocol: The decision protocol.
        judge: The judge official's record (its own model, tools or agent), or ``None``
            (the judge calls ``model``).
        model: The graph's model (``None``: the run's context).

    Returns:
        The node.

    Raises:
        ValueError: If the judge's record is not valid (one line).
    """
    agent = agent_of(judge, model, JUDGE) if protocol.may_judge else None

    def aggregate(state: SolverDebateState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        finals = latest_turns(state.get("transcript", []))
        decision, records = yield from decide_steps(
            protocol,
            agent,
            runtime,
            state["question"],
            state.get("choices"),
            finals,
            state.get("answer_kind") or "number",
        )
        update: dict[str, Any] = {
            "answer": decision.answer,
            "votes": decision.votes,
            "agreement": decision.agreement,
            "tie_break": decision.tie_break,
            "decision": decision,
            "decisions": {decision_key(decision): decision},
        }
        if records:
            update.update(turn_update(*records, so_far=state.get("transcript")))
        return update

    return agent_node(aggregate, AGGREGATE_NODE)


def outcome(state: Mapping[str, Any]) -> Outcome:
    """The solver debate's outcome message: the decided answer and how it was reached.

    Args:
        state: The finished run's state.

    Returns:
        ``(AGGREGATE_NODE, text)``, e.g. ``The answer is 72: 3 of 4 solvers gave it
        (plurality).``
    """
    decision = state.get("decision")
    answer = state.get("answer")
    votes: Mapping[str, int] = state.get("votes") or {}
    solvers = sum(votes.values()) + (decision.abstentions if decision is not None else 0)
    protocol = decision.protocol if decision is not None else "plurality"
    if answer is None:
        why = decision.reason if decision is not None and decision.reason else None
        return AGGREGATE_NODE, f"No answer was decided ({why or 'every solver abstained'})."
    text = (
        f"The answer is {answer}: {votes.get(answer, 0)} of {plural(solvers, 'solver')} gave it "
        f"({protocol})."
    )
    if decision is not None and decision.reason:
        text += f" {decision.reason}"
    return AGGREGATE_NODE, text
