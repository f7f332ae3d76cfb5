"""The solver debate's round: open it, let each solver answer, close it, review it.

The loop itself (``open_round``, the review point ``human``, the routing) is the shared
one in :mod:`debategraph.nodes.rounds`; this module adds what is the solver debate's own,
under the names every pattern gives them (``make_open_round``,
``termination_conditions``, ``make_close_round``, ``round_review``, each built from the
setup record): the solver nodes and their reply schemas, the termination conditions of
``close_round`` and the payload a human reviews.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from debategraph.nodes.agent import agent_of, recorded
from debategraph.nodes.dual import agent_node, loop_node
from debategraph.nodes.messages import emit
from debategraph.nodes.review import review_payload
from debategraph.nodes.rounds import ended, open_round_node
from debategraph.nodes.solver_debate.setup import (
    SOLVE_STAGE,
    SolverDebateSetup,
    check_input,
    no_description,
)
from debategraph.nodes.solver_debate.views import solver_prompt, solver_view
from debategraph.state.base import charge_update
from debategraph.state.records import (
    TOOL_STAGE,
    AgentSpec,
    RoundRecord,
    Turn,
    Usage,
    stored_once,
)
from debategraph.state.solver_debate import SolverDebateState
from debategraph.strategies import Topology, extract_answer
from debategraph.strategies.answers import answer_form
from debategraph.strategies.termination import (
    Agreement,
    Condition,
    MaxRounds,
    RoundOutcome,
    TokenBudget,
    first_fired,
)
from debategraph.strategies.voting import majority_vote

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable
    from langgraph.runtime import Runtime

    from debategraph.models import ModelBinding, Steps
    from debategraph.models.context import Context

#: A hint in the JSON schema only (not validated): grammar-constrained endpoints such as
#: llama.cpp turn it into a grammar, so even a small model writes a number; the answer
#: extractor still reads whatever a model returns. (No ``maxLength`` on the reasoning:
#: llama.cpp expands it into a grammar so deeply nested that its server crashes.)
NUMBER_PATTERN = r"^-?[0-9][0-9,]*([.][0-9]+)?$"
#: The same hint for a multiple-choice question: one letter.
LETTER_PATTERN = r"^[A-Z]$"


class SolverReply(BaseModel):
    """A solver's answer."""

    model_config = ConfigDict(coerce_numbers_to_str=True, json_schema_extra=no_description)

    reasoning: str = Field(description="Brief step-by-step reasoning.")
    answer: str = Field(
        description="Only the final number.", json_schema_extra={"pattern": NUMBER_PATTERN}
    )
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)


class ExpressionReply(BaseModel):
    """A solver's answer to a question whose answer is an expression (no grammar hint)."""

    model_config = ConfigDict(coerce_numbers_to_str=True, json_schema_extra=no_description)

    reasoning: str = Field(description="Brief step-by-step reasoning.")
    answer: str = Field(description="Only the final answer, in LaTeX.")
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)


class ChoiceReply(BaseModel):
    """A solver's answer to a multiple-choice question."""

    model_config = ConfigDict(json_schema_extra=no_description)

    reasoning: str = Field(description="Brief step-by-step reasoning.")
    answer: str = Field(
        description="Only the letter of the chosen choice.",
        json_schema_extra={"pattern": LETTER_PATTERN},
    )
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)


#: The reply schema of each kind of answer.
_REPLIES: dict[str, type[SolverReply | ExpressionReply | ChoiceReply]] = {
    "number": SolverReply,
    "expression": ExpressionReply,
    "choice": ChoiceReply,
}


def make_open_round(setup: SolverDebateSetup) -> Runnable[Any, Any]:
    """The node that starts each round: the shared one, with the solver debate's check.

    It writes the new ``round``; in round 1 also ``started_at`` (and the ``deadline`` of
    the debate's time limit, if it has one); and it drains the thread's inbox (see
    :func:`~debategraph.nodes.rounds.open_round_node`). It raises ``ValueError`` on a
    question it cannot start from (:func:`check_input`).

    Args:
        setup: The solver debate's settings.

    Returns:
        The node runnable.
    """
    return open_round_node(check_input, time_limit_s=setup.time_limit_s)


def make_solver(
    solver: str | AgentSpec,
    topology: Topology,
    model: ModelBinding | None,
    view_chars: int | None,
) -> Runnable[Any, Any]:
    """Node in which one solver answers for the current round.

    Each solver is its own node, all started by ``open_round`` in the same step, so a
    round's calls run concurrently (bounded by ``max_concurrency``). The node reads its
    view from the transcript in state instead of receiving it in a ``Send`` packet:
    packets are stored in checkpoints (twice), which made storage grow with the number
    of peers each solver hears.

    The solver's agent is made from its record (:func:`~debategraph.nodes.agent.agent_of`,
    checked now): its own model, its tools (a tool loop before each answer, whose calls
    are recorded before its turn) or its own agent. Its turn's usage includes the tool
    loop's model calls.

    Args:
        solver: The solver's record, or its name alone (also the node's name).
        topology: Who hears whom.
        model: The model to call; ``None`` reads it from the run's context (Studio).
        view_chars: How much of each neighbour's reasoning the solver reads.

    Returns:
        The node.

    Raises:
        ValueError: If the record's model, tools or agent are not valid (one line).
    """
    n_solvers = len(topology.solvers)
    agent = agent_of(solver, model)
    instructions = str(getattr(solver, "instructions", "") or "")
    name = agent.name

    def solve(state: SolverDebateState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        task = solver_view(state, name, topology)
        prompt = solver_prompt(task, n_solvers, view_chars, instructions)
        choices, kind = task["choices"] or None, task["answer_kind"]
        schema = _REPLIES[answer_form(choices, kind)]
        result = yield from agent.ask_steps(runtime, schema, prompt)
        reply = result.value
        reply_to = tuple(t.id for t in ([task["own"]] if task["own"] else []) + task["peers"])
        if reply is None:
            turn = Turn(
                agent=name, content="", stage=SOLVE_STAGE, round=task["round"],
                reply_to=reply_to, usage=result.usage, reason=result.reason,
            )  # fmt: skip
            return {
                "transcript": stored_once(recorded(result, turn), state.get("transcript") or ())
            }
        answer = extract_answer(
            reply.answer, loose=True, choices=choices, kind=kind
        ) or extract_answer(reply.reasoning, choices=choices, kind=kind)
        turn = Turn(
            agent=name,
            content=reply.reasoning,
            stage=SOLVE_STAGE,
            round=task["round"],
            reply_to=reply_to,
            usage=result.usage,
            answer=answer,
            confidence=reply.confidence,
            reason=None
            if answer
            else f"no {answer_form(choices, kind)} in answer {reply.answer[:80]!r}",
        )
        # its tool calls, then its turn; their usage is charged by close_round
        return {"transcript": stored_once(recorded(result, turn), state.get("transcript") or ())}

    return agent_node(solve, name)


def termination_conditions(setup: SolverDebateSetup) -> list[Condition]:
    """The conditions ``close_round`` checks, highest precedence first.

    Args:
        setup: The solver debate's settings.

    Returns:
        The round cap (``max_rounds``), then the agreement (with ``stop_when``, or
        ``stop_when_unanimous``), then the token budget (with a ``token_budget``).
    """
    conditions: list[Condition] = [MaxRounds(setup.max_rounds)]
    if setup.stop_when is not None:
        conditions.append(Agreement(setup.stop_when))
    if setup.token_budget is not None:
        conditions.append(TokenBudget(setup.token_budget))
    return conditions


def make_close_round(setup: SolverDebateSetup, model: ModelBinding | None) -> Runnable[Any, Any]:
    """Node that records the round, charges its turns' usage and decides whether to end.

    Only the solvers' turns (stage ``solve``) are answers: the tool calls recorded
    before them (stage ``tool``) count in no tally, answer or unanimity; their usage
    (a tool's time, no model call) is charged with their solver's turn.

    Args:
        setup: The solver debate's settings (its :func:`termination_conditions`).
        model: The graph's model: not called (a round closes on its conditions alone).

    Returns:
        The node runnable.
    """
    conditions = termination_conditions(setup)

    def close_round(state: SolverDebateState) -> dict[str, Any]:
        rnd = state["round"]
        transcript = state.get("transcript", [])
        solved = [t for t in transcript if t.stage == SOLVE_STAGE]
        this_round = [t for t in solved if t.round == rnd]
        tools = [t for t in transcript if t.stage == TOOL_STAGE and t.round == rnd]
        uncharged = _uncharged(this_round, solved, state.get("usage_by_agent"))
        charging = {t.agent for t in uncharged}
        charge = charge_update([*(t for t in tools if t.agent in charging), *uncharged])
        record = RoundRecord(
            round=rnd,
            answers={t.agent: t.answer for t in this_round},
            usage=Usage.total(t.usage for t in [*tools, *this_round]),
        )
        outcome = RoundOutcome(
            round=rnd,
            usage=Usage.coerce(state.get("usage")) + charge["usage"],
            answers=[t.answer for t in this_round],
            confidences=[t.confidence for t in this_round],
        )
        update: dict[str, Any] = {"rounds": [record], **charge}
        reason = ended(state, first_fired(conditions, outcome))
        if reason is not None:
            update["termination_reason"] = reason
        vote = majority_vote(record.answers)
        emit("votes", round=rnd, answers=record.answers, votes=vote.votes, leader=vote.answer)
        return update

    return loop_node(close_round)


def _uncharged(
    this_round: Sequence[Turn], solved: Sequence[Turn], charged: Mapping[str, Any] | None
) -> list[Turn]:
    """The round's turns whose usage is not in ``usage_by_agent`` yet.

    ``this_round`` and ``solved`` are solver turns only (no tool-call records). Solvers
    of this version write only their turn, so that is all of them. A solver of
    the previous version charged its own usage; a thread it left in the middle of a round
    and this version resumes has such turns, which must not be charged twice. A turn is
    charged when its solver's charged calls already cover every call of its turns.
    """
    calls: dict[str, int] = {}
    for turn in solved:
        calls[turn.agent] = calls.get(turn.agent, 0) + turn.usage.calls
    have = {agent: Usage.coerce(usage).calls for agent, usage in (charged or {}).items()}
    return [t for t in this_round if have.get(t.agent, 0) < calls[t.agent]]


def round_review(setup: SolverDebateSetup) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The payload of the pause after a round: its answers, their tally and its tokens.

    Args:
        setup: The solver debate's settings.

    Returns:
        Builds the payload from the state.
    """

    def payload(state: Mapping[str, Any]) -> dict[str, Any]:
        record: RoundRecord = state["rounds"][-1]
        tally: dict[str, int] = {}
        for answer in record.answers.values():
            if answer is not None:
                tally[answer] = tally.get(answer, 0) + 1
        return review_payload(
            record.round,
            setup.max_rounds,
            "solver",
            answers=dict(record.answers),
            tally=tally,
            tokens_this_round=record.usage.total_tokens,
        )

    return payload
