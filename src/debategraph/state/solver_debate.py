"""State schemas of the solver debate graph: the base run state plus answers and decisions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, NotRequired

from pydantic import BaseModel, ConfigDict
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12 (Studio schemas)

from debategraph.state.base import MessagesInput, RunOutput, RunState, Schemas
from debategraph.state.records import RoundRecord, Turn
from debategraph.state.reducers import append_only


class Decision(BaseModel):
    """What a decision protocol decided from the solvers' final answers.

    The record of :mod:`debategraph.strategies.decisions` (which makes it): it lives in
    the state layer because the solver debate's state holds it (``decision``,
    ``decisions``) and checkpoints store it.

    Attributes:
        protocol: The protocol's spec.
        answer: The decided answer; ``None`` when every solver abstained, or the
            protocol fell back to ``abstain``.
        votes: Answer -> number of solvers that gave it (most first).
        agreement: Solvers that gave ``answer`` divided by the number of solvers.
        abstentions: Solvers with no answer.
        tie_break: How a tie was broken, ``None`` when there was none.
        fallback: The fallback that decided, ``None`` when the protocol itself did.
        reason: One line on how the answer was reached when it is not the plain
            protocol's (a fallback, a judge that gave no answer), else ``None``.
        judge_model: The judge's model (its label, never a key), where a judge decided.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    protocol: str
    answer: str | None
    votes: dict[str, int]
    agreement: float
    abstentions: int
    tie_break: str | None = None
    fallback: str | None = None
    reason: str | None = None
    judge_model: str | None = None


def merge_decisions(
    current: Mapping[str, Any] | None, update: Mapping[str, Any] | None
) -> dict[str, Decision]:
    """Reducer of ``decisions``: each write adds (or replaces) decisions by key.

    The graph writes its own protocol's decision; the eval adds a protocol's decision
    of a finished thread (a judge's verdict, so a rerun reads it instead of calling).

    Args:
        current: Key -> decision so far.
        update: Key -> decision written (a :class:`Decision` or its dict form).

    Returns:
        The merged mapping.
    """
    merged = {**(current or {}), **(update or {})}
    return {k: Decision.model_validate(v) for k, v in merged.items()}


class SolverDebateInput(MessagesInput):
    """What a caller passes in: the question to solve, and its choices if it has any.

    With ``choices`` the solvers answer with a choice letter (``A`` for the first), read
    by the answer extractor's choice mode; without, with a number. Without ``question``,
    the last human message of ``messages`` is the question.
    """

    question: NotRequired[str]
    choices: NotRequired[list[str]]


class SolverDebateOutput(RunOutput):
    """What the graph returns to a caller or a parent graph.

    Besides the base outputs (``termination_reason``, ``usage``, ``usage_by_agent``,
    ``usage_by_model``, ``notes``): the question (and its choices), the decided answer,
    the vote table, the agreement ratio, the tie-break (all four the decision's), each
    round's answers, the graph's protocol's :class:`Decision` and every decision of the
    thread by key (:func:`~debategraph.nodes.solver_debate.judge.decision_key`: the
    graph's own, and any the eval added).
    """

    question: str
    choices: list[str]
    answer: str | None
    votes: dict[str, int]
    agreement: float
    tie_break: str | None
    rounds: Annotated[list[RoundRecord], append_only()]
    decision: Decision | None
    decisions: Annotated[dict[str, Decision], merge_decisions]


class SolverDebateState(SolverDebateOutput, RunState):
    """Full state: the output fields plus the base state's transcript and round counter.

    ``transcript`` and ``rounds`` are append-only delta channels: a checkpoint stores
    only what a step added, not the whole list again (DESIGN.md principle 5).
    """


class SolverView(TypedDict):
    """What one solver reads in a round: the question, its own and its neighbours' answers."""

    question: str
    choices: list[str]
    solver: str
    round: int
    own: Turn | None
    peers: list[Turn]
    interjections: list[Turn]


#: Record types of this graph that checkpoints may deserialize (``registry.record_types``).
RECORD_TYPES: tuple[type[BaseModel], ...] = (Decision,)

#: The state, input and output schemas of the graph.
SCHEMAS = Schemas(SolverDebateState, SolverDebateInput, SolverDebateOutput, text="question")
