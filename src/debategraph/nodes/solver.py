"""Nodes of the solver debate: solve, close a round, aggregate.

The round loop (``open_round``, the review point) is the shared one in
:mod:`debategraph.nodes.rounds`; solvers call the model through
:class:`~debategraph.nodes.agent.Agent`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field

from debategraph.nodes.agent import Agent
from debategraph.nodes.dual import agent_node
from debategraph.nodes.rounds import (
    ended,
    interjection_prompt,
    interjections,
    require_text,
    review_payload,
)
from debategraph.prompts import (
    CHOICE_LINE,
    CHOICE_QUESTION,
    NO_ANSWER,
    SOLUTION_VIEW,
    SOLVER_FIRST_ROUND,
    SOLVER_REFINE,
    SOLVER_SYSTEM,
    SOLVER_SYSTEM_CHOICE,
)
from debategraph.state.base import charge_update
from debategraph.state.records import RoundRecord, Turn, Usage
from debategraph.state.solver_debate import SolverDebateState, SolverView
from debategraph.strategies import Topology, extract_answer, majority_vote
from debategraph.strategies.answers import CHOICES_RULE, choice_letter, valid_choices
from debategraph.strategies.termination import (
    Condition,
    MaxRounds,
    RoundOutcome,
    TokenBudget,
    Unanimity,
    first_fired,
)

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable
    from langgraph.runtime import Runtime

    from debategraph.context import Context
    from debategraph.models import ModelBinding, Steps

SOLVE_STAGE = "solve"
CLOSE_ROUND_NODE = "close_round"
AGGREGATE_NODE = "aggregate"


#: A hint in the JSON schema only (not validated): grammar-constrained endpoints such as
#: llama.cpp turn it into a grammar, so even a small model writes a number; the answer
#: extractor still reads whatever a model returns. (No ``maxLength`` on the reasoning:
#: llama.cpp expands it into a grammar so deeply nested that its server crashes.)
NUMBER_PATTERN = r"^-?[0-9][0-9,]*([.][0-9]+)?$"
#: The same hint for a multiple-choice question: one letter.
LETTER_PATTERN = r"^[A-Z]$"


def _no_description(schema: dict[str, Any]) -> None:
    schema.pop("description", None)  # the tool's name says it; every call sends the schema


class SolverReply(BaseModel):
    """A solver's answer."""

    model_config = ConfigDict(coerce_numbers_to_str=True, json_schema_extra=_no_description)

    reasoning: str = Field(description="Brief step-by-step reasoning.")
    answer: str = Field(
        description="Only the final number.", json_schema_extra={"pattern": NUMBER_PATTERN}
    )
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)


class ChoiceReply(BaseModel):
    """A solver's answer to a multiple-choice question."""

    model_config = ConfigDict(json_schema_extra=_no_description)

    reasoning: str = Field(description="Brief step-by-step reasoning.")
    answer: str = Field(
        description="Only the letter of the chosen choice.",
        json_schema_extra={"pattern": LETTER_PATTERN},
    )
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)


def question_text(question: str, choices: Sequence[str]) -> str:
    """The question as the solvers read it: with its lettered choices, if it has any.

    Args:
        question: The question.
        choices: Its choices, in letter order (empty: a numeric question).

    Returns:
        The text.
    """
    if not choices:
        return question
    lines = "\n".join(
        CHOICE_LINE.format(letter=choice_letter(i), text=text) for i, text in enumerate(choices)
    )
    return CHOICE_QUESTION.format(question=question, choices=lines)


def latest_turns(transcript: Sequence[Turn], stage: str = SOLVE_STAGE) -> dict[str, Turn]:
    """Each agent's latest record of ``stage``.

    Args:
        transcript: The transcript.
        stage: Which stage's records to look at.

    Returns:
        Agent -> its latest record.
    """
    out: dict[str, Turn] = {}
    for turn in transcript:
        if turn.stage == stage:
            out[turn.agent] = turn
    return out


_require_question = require_text("question")


def check_question(state: Mapping[str, Any]) -> None:
    """Refuse an empty question, or choices that are not 2 to 26 non-empty texts.

    The first thing a round does.

    Args:
        state: The input.

    Raises:
        ValueError: One line naming the bad value and what is allowed.
    """
    _require_question(state)
    choices = state.get("choices")
    if choices is not None and not valid_choices(choices):
        raise ValueError(f"choices must be {CHOICES_RULE}, got {choices!r}")


def solver_view(state: SolverDebateState, solver: str, topology: Topology) -> SolverView:
    """What one solver may read this round.

    Its own latest answer, its neighbours' latest answers, and what a human interjected
    since the last round (every solver sees those).

    Args:
        state: The debate state.
        solver: The solver.
        topology: Who hears whom.

    Returns:
        The view.
    """
    transcript = state.get("transcript", [])
    latest = latest_turns(transcript)
    rnd = state["round"]
    return SolverView(
        question=state["question"],
        choices=list(state.get("choices") or []),
        solver=solver,
        round=rnd,
        own=latest.get(solver),
        peers=[latest[p] for p in topology.neighbours[solver] if p in latest],
        interjections=interjections(transcript, after_round=rnd - 1),
    )


def solver_prompt(task: SolverView, n_solvers: int, view_chars: int | None) -> list[BaseMessage]:
    """The messages a solver sees: the question, and after round 1 the answers so far.

    After round 1 a solver reads its own previous answer and, of each neighbour, the
    answer and the gist of its reasoning (see :func:`gist`): a prompt's size stays the
    same however long the replies grow.

    Args:
        task: The solver's view.
        n_solvers: How many solvers debate.
        view_chars: How much of each neighbour's reasoning to show (``None``: all).

    Returns:
        The prompt.
    """
    template = SOLVER_SYSTEM_CHOICE if task["choices"] else SOLVER_SYSTEM
    system = SystemMessage(template.format(solver=task["solver"], n_solvers=n_solvers))
    human = interjection_prompt(task["interjections"])
    question = question_text(task["question"], task["choices"])
    own = task["own"]
    if own is None:
        text = SOLVER_FIRST_ROUND.format(question=question, human=human)
        return [system, HumanMessage(text)]
    peers = "\n\n".join(_view(t, view_chars) for t in task["peers"]) or NO_ANSWER
    own_answer = own.answer or NO_ANSWER
    text = SOLVER_REFINE.format(question=question, own=own_answer, peers=peers, human=human)
    return [system, HumanMessage(text)]


def _view(turn: Turn, view_chars: int | None) -> str:
    return SOLUTION_VIEW.format(
        agent=turn.agent, content=gist(turn.content, view_chars), answer=turn.answer or NO_ANSWER
    )


def gist(text: str, limit: int | None) -> str:
    """``text`` on one line; past ``limit`` characters, its start and its end around "…".

    A solution's first steps and its conclusion are what a peer checks; the middle is cut.

    Args:
        text: A solver's reasoning.
        limit: Most characters to keep (``None``: all).

    Returns:
        The gist.
    """
    flat = " ".join(text.split())
    if limit is None or len(flat) <= limit:
        return flat
    half = max(1, (limit - 3) // 2)
    head = flat[: half + 1].rsplit(" ", 1)[0] or flat[:half]  # whole words
    tail = flat[-half - 1 :].split(" ", 1)[-1] or flat[-half:]
    return f"{head} … {tail}"


def make_solver(
    solver: str,
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

    Args:
        solver: The solver's name (also the node's name).
        topology: Who hears whom.
        model: The model to call; ``None`` reads it from the run's context (Studio).
        view_chars: How much of each neighbour's reasoning the solver reads.

    Returns:
        The node.
    """
    n_solvers = len(topology.solvers)
    agent = Agent(solver, model)

    def solve(state: SolverDebateState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        task = solver_view(state, solver, topology)
        prompt = solver_prompt(task, n_solvers, view_chars)
        choices = task["choices"] or None
        schema: type[SolverReply | ChoiceReply] = ChoiceReply if choices else SolverReply
        result = yield from agent.ask_steps(runtime, schema, prompt)
        reply = result.value
        reply_to = tuple(t.id for t in ([task["own"]] if task["own"] else []) + task["peers"])
        if reply is None:
            turn = Turn(
                agent=solver, content="", stage=SOLVE_STAGE, round=task["round"],
                reply_to=reply_to, usage=result.usage, reason=result.reason,
            )  # fmt: skip
            return {"transcript": [turn]}
        answer = extract_answer(reply.answer, loose=True, choices=choices) or extract_answer(
            reply.reasoning, choices=choices
        )
        turn = Turn(
            agent=solver,
            content=reply.reasoning,
            stage=SOLVE_STAGE,
            round=task["round"],
            reply_to=reply_to,
            usage=result.usage,
            answer=answer,
            confidence=reply.confidence,
            reason=None
            if answer
            else f"no {'choice' if choices else 'number'} in answer {reply.answer[:80]!r}",
        )
        return {"transcript": [turn]}  # its usage is charged by close_round

    return agent_node(solve, solver)


def termination_conditions(
    rounds: int, token_budget: int | None, stop_when_unanimous: bool
) -> list[Condition]:
    """The solver debate's termination conditions, highest precedence first.

    Args:
        rounds: Round cap.
        token_budget: Stop once this many tokens were used (``None``: no budget).
        stop_when_unanimous: Stop early when every solver gave the same answer.

    Returns:
        The conditions.
    """
    conditions: list[Condition] = [MaxRounds(rounds)]
    if stop_when_unanimous:
        conditions.append(Unanimity())
    if token_budget is not None:
        conditions.append(TokenBudget(token_budget))
    return conditions


def make_close_round(conditions: Sequence[Condition]) -> Callable[..., dict[str, Any]]:
    """Node that records the round, charges its turns' usage and decides whether to end.

    Args:
        conditions: The termination conditions (see :func:`termination_conditions`).

    Returns:
        The node function.
    """

    def close_round(state: SolverDebateState) -> dict[str, Any]:
        rnd = state["round"]
        solved = [t for t in state.get("transcript", []) if t.stage == SOLVE_STAGE]
        this_round = [t for t in solved if t.round == rnd]
        charge = charge_update(_uncharged(this_round, solved, state.get("usage_by_agent")))
        record = RoundRecord(
            round=rnd,
            answers={t.agent: t.answer for t in this_round},
            usage=Usage.total(t.usage for t in this_round),
        )
        outcome = RoundOutcome(
            round=rnd,
            usage=Usage.coerce(state.get("usage")) + charge["usage"],
            answers=[t.answer for t in this_round],
        )
        update: dict[str, Any] = {"rounds": [record], **charge}
        reason = ended(state, first_fired(conditions, outcome))
        if reason is not None:
            update["termination_reason"] = reason
        return update

    return close_round


def _uncharged(
    this_round: Sequence[Turn], solved: Sequence[Turn], charged: Mapping[str, Any] | None
) -> list[Turn]:
    """The round's turns whose usage is not in ``usage_by_agent`` yet.

    Solvers of this version write only their turn, so that is all of them. A solver of
    the previous version charged its own usage; a thread it left in the middle of a round
    and this version resumes has such turns, which must not be charged twice. A turn is
    charged when its solver's charged calls already cover every call of its turns.
    """
    calls: dict[str, int] = {}
    for turn in solved:
        calls[turn.agent] = calls.get(turn.agent, 0) + turn.usage.calls
    have = {agent: Usage.coerce(usage).calls for agent, usage in (charged or {}).items()}
    return [t for t in this_round if have.get(t.agent, 0) < calls[t.agent]]


def round_review(rounds: int) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The payload of the pause after a round: its answers, their tally and its tokens.

    Args:
        rounds: The round cap.

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
            rounds,
            "solver",
            answers=dict(record.answers),
            tally=tally,
            tokens_this_round=record.usage.total_tokens,
        )

    return payload


def aggregate(state: SolverDebateState) -> dict[str, Any]:
    """Majority vote over each solver's latest answer.

    Args:
        state: The debate state.

    Returns:
        Answer, vote table, agreement ratio and tie-break.
    """
    latest = latest_turns(state.get("transcript", []))
    vote = majority_vote(
        {s: t.answer for s, t in latest.items()}, {s: t.confidence for s, t in latest.items()}
    )
    return {
        "answer": vote.answer,
        "votes": vote.votes,
        "agreement": vote.agreement,
        "tie_break": vote.tie_break,
    }
