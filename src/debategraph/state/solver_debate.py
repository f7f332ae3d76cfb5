"""State schemas of the solver debate graph: the base run state plus answers and decisions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, NotRequired

from pydantic import BaseModel
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12 (Studio schemas)

from debategraph.state.base import MessagesInput, RunOutput, RunState, Schemas

# The answer kinds, still importable from here (their first home): this state holds one.
from debategraph.state.records import ANSWER_KINDS as ANSWER_KINDS
from debategraph.state.records import AnswerKind as AnswerKind
from debategraph.state.records import Decided, RoundRecord, Turn
from debategraph.state.reducers import append_only


class Decision(Decided):
    """What a decision protocol decided from the solvers' final answers, as kept here.

    The fields are those of every protocol's result (:class:`~debategraph.state.records.
    Decided`, made by :mod:`debategraph.strategies.decisions`); the solver debate's
    ``aggregate`` node converts a result into this record, which the solver debate's state
    holds (``decision``, ``decisions``) and its checkpoints store under this name.
    """


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
    by the answer extractor's choice mode; without, with a number, or with an expression
    where ``answer_kind`` is ``expression`` (a MATH answer in LaTeX, kept whole; answers
    math-verify reads as one object are one answer). Without ``question``, the last human
    message of ``messages`` is the question.

    Attributes:
        question: The math question to solve, e.g. "What is 17 * 23?".
        choices: The answer choices of a multiple-choice question (2 to 26 texts); the
            solvers answer with a letter.
        answer_kind: What an answer is: ``number`` (the default without choices),
            ``choice`` or ``expression`` (a LaTeX answer kept whole).
    """

    question: NotRequired[str]
    choices: NotRequired[list[str]]
    answer_kind: NotRequired[AnswerKind]


class SolverDebateOutput(RunOutput):
    """What the graph returns to a caller or a parent graph.

    Besides the base outputs (``termination_reason``, ``usage``, ``usage_by_agent``,
    ``usage_by_model``, ``notes``): the question (its choices, its answer kind), the decided answer,
    the vote table, the agreement ratio, the tie-break (all four the decision's), each
    round's answers, the graph's protocol's :class:`Decision` and every decision of the
    thread by key (:func:`~debategraph.nodes.solver_debate.judge.decision_key`: the
    graph's own, and any the eval added).

    Attributes:
        question: The question the solvers answered.
        choices: Its answer choices (empty: not multiple choice).
        answer_kind: What an answer is: ``number``, ``choice`` or ``expression``.
        answer: The decided answer (``None``: no answer was decided).
        votes: The final answers counted: answer -> solvers that gave it.
        agreement: The share of solvers that gave the decided answer (0 to 1).
        tie_break: How a tie among the top answers was broken (``None``: no tie).
        rounds: Each round's answers, one record per round.
        decision: The decision of the graph's protocol: answer, votes and reason.
        decisions: Every decision of the thread, by protocol key.
    """

    question: str
    choices: list[str]
    answer_kind: AnswerKind
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
    answer_kind: AnswerKind
    solver: str
    round: int
    own: Turn | None
    peers: list[Turn]
    interjections: list[Turn]


#: Record types of this graph that checkpoints may deserialize (``registry.record_types``).
RECORD_TYPES: tuple[type[BaseModel], ...] = (Decision,)

#: The state, input and output schemas of the graph.
SCHEMAS = Schemas(SolverDebateState, SolverDebateInput, SolverDebateOutput, text="question")
