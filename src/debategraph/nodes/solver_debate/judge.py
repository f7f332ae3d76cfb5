"""The solver debate's decision: a protocol applied to the final answers, and its judge.

:func:`decide_steps` applies a decision protocol
(:mod:`debategraph.strategies.decisions`) to each solver's final answer and confidence,
and calls the judge (an official: an agent with a model, tools or agent of its own, or
the graph's model) only when the protocol needs its pick
(:func:`~debategraph.strategies.decisions.judge_needed`). The ``aggregate`` node runs it
at the end of a debate; the eval runs it on a finished thread, outside any graph, with
no runtime::

    from debategraph.models.steps import arun_steps
    from debategraph.nodes.agent import agent_of
    from debategraph.nodes.solver_debate.judge import decide_steps, decision_key
    from debategraph.strategies.decisions import parse_protocol

    judge = agent_of("judge", binding)  # or agent_of(AgentSpec(name="judge", model=...), binding)
    decision, records = await arun_steps(
        decide_steps(parse_protocol("judge"), judge, None, question, choices, finals)
    )
    # finals: latest_turns(values["transcript"]); records: the judge's turn (and tool calls),
    # to store with turn_update(*records) and {"decisions": {decision_key(decision): decision}}.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field

from debategraph.nodes.agent import Agent, recorded
from debategraph.nodes.solver_debate.prompts import (
    JUDGE_SYSTEMS,
    JUDGE_TASK,
    NO_ANSWER,
)
from debategraph.nodes.solver_debate.setup import (
    DEFAULT_VIEW_CHARS,
    JUDGE,
    JUDGE_STAGE,
    no_description,
)
from debategraph.nodes.solver_debate.views import question_text, solution_view
from debategraph.state.records import Turn
from debategraph.state.solver_debate import Decision
from debategraph.strategies.answers import AnswerKind, answer_form, extract_answer
from debategraph.strategies.decisions import Decided, DecisionProtocol, decide, judge_needed

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from debategraph.models import Steps
    from debategraph.models.context import Context


class JudgeReply(BaseModel):
    """The judge's pick among the solvers' final answers."""

    model_config = ConfigDict(coerce_numbers_to_str=True, json_schema_extra=no_description)

    reasoning: str = Field(description="Brief step-by-step check of the solutions.")
    answer: str = Field(
        description="The correct final answer, as one of the agents gave it: only the "
        "number or expression, or only the letter of the choice."
    )


def judge_prompt(
    question: str,
    choices: Sequence[str] | None,
    finals: Mapping[str, Turn],
    kind: AnswerKind = "number",
) -> list[BaseMessage]:
    """The judge's prompt: the question, then each solver's final answer and its gist.

    Args:
        question: The question.
        choices: Its choices, in letter order (``None`` or empty: a numeric question).
        finals: Solver -> its final turn (:func:`~debategraph.nodes.solver_debate.views.
            latest_turns`), in solver order.
        kind: How a question without choices is answered.

    Returns:
        The messages.
    """
    template = JUDGE_SYSTEMS[answer_form(choices, kind)]
    solutions = "\n\n".join(solution_view(t, DEFAULT_VIEW_CHARS) for t in finals.values())
    task = JUDGE_TASK.format(
        question=question_text(question, list(choices or ())), finals=solutions or NO_ANSWER
    )
    return [SystemMessage(template.format(n_solvers=len(finals))), HumanMessage(task)]


def decide_steps(
    protocol: DecisionProtocol,
    judge: Agent | None,
    runtime: Runtime[Context] | None,
    question: str,
    choices: Sequence[str] | None,
    finals: Mapping[str, Turn],
    kind: AnswerKind = "number",
) -> Steps[tuple[Decision, list[Turn]]]:
    """The steps of deciding the final answer: the protocol, and the judge where needed.

    The judge is called (``judge.ask_steps``) only when
    :func:`~debategraph.strategies.decisions.judge_needed` says so; its pick is read with
    :func:`~debategraph.strategies.answers.extract_answer` (choices-aware) and taken only
    if some solver gave it (else plurality decides, and the decision says why). Run the
    steps in a node body (``yield from``), or outside a graph with
    :func:`~debategraph.models.steps.arun_steps` / :func:`~debategraph.models.steps.
    run_steps` (``runtime=None``: the judge's own model, else the model it was made with,
    else the default).

    Args:
        protocol: The decision protocol.
        judge: The judge (:func:`~debategraph.nodes.agent.agent_of`); ``None`` only for
            a protocol that never consults one.
        runtime: The node's runtime, or ``None`` outside a graph.
        question: The question.
        choices: Its choices (``None`` or empty: a numeric question).
        finals: Solver -> its final turn, in solver order.
        kind: How a question without choices is answered (its judge's pick is read so).

    Returns:
        The steps; they return the decision and the judge's records (its tool calls and
        its turn, stage ``judge``, agent ``judge``, with the call's usage and model; empty
        when no judge was called): store them and charge their usage
        (:func:`~debategraph.state.base.turn_update`).

    Raises:
        ValueError: If the judge is needed and ``judge`` is ``None``.
        ModelUnavailableError: If the judge's endpoint fails (the line names the judge).
    """
    answers = {solver: turn.answer for solver, turn in finals.items()}
    confidences = {solver: turn.confidence for solver, turn in finals.items()}
    if not judge_needed(protocol, answers):
        return decision_of(decide(protocol, answers, confidences)), []
    if judge is None:
        raise ValueError(f"decision {protocol.spec!r} needs a judge here: give the judge agent")
    result = yield from judge.ask_steps(
        runtime, JudgeReply, judge_prompt(question, choices, finals, kind)
    )
    reply = result.value
    pick = (
        None
        if reply is None
        else extract_answer(reply.answer, loose=True, choices=choices, kind=kind)
    )
    reason = result.reason
    if reply is not None and pick is None:
        reason = f"no {answer_form(choices, kind)} in the judge's answer {reply.answer[:80]!r}"
    turn = Turn(
        agent=JUDGE,
        content="" if reply is None else reply.reasoning,
        stage=JUDGE_STAGE,
        round=max((t.round for t in finals.values()), default=0),
        reply_to=tuple(t.id for t in finals.values()),
        usage=result.usage,
        answer=pick,
        reason=reason,
    )
    decided = decide(
        protocol,
        answers,
        confidences,
        judged=pick,
        judge_reason=reason,
        judge_model=result.model,
    )
    return decision_of(decided), recorded(result, turn)


def decision_of(decided: Decided) -> Decision:
    """A protocol's result as the solver debate's record (what its state and checkpoints hold).

    Args:
        decided: What :func:`~debategraph.strategies.decisions.decide` decided.

    Returns:
        The :class:`~debategraph.state.solver_debate.Decision`, field for field.
    """
    return Decision(**decided.model_dump())


def decision_key(decision: Decision) -> str:
    """Where a decision is kept in ``decisions``: its protocol's spec, and its judge's model.

    Args:
        decision: The decision.

    Returns:
        ``plurality``, ``supermajority:2/3:plurality``..., or ``judge@MODEL`` (any spec
        followed by ``@`` and the judge's model label) where a judge's model is recorded.
    """
    if decision.judge_model:
        return f"{decision.protocol}@{decision.judge_model}"
    return decision.protocol
