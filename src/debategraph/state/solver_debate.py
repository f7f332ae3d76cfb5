"""State schemas of the solver debate graph: the base run state plus answers and votes."""

from __future__ import annotations

from typing import Annotated, NotRequired

from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12 (Studio schemas)

from debategraph.state.base import RunOutput, RunState, Schemas
from debategraph.state.records import RoundRecord, Turn
from debategraph.state.reducers import append_only


class SolverDebateInput(TypedDict):
    """What a caller passes in: the question to solve, and its choices if it has any.

    With ``choices`` the solvers answer with a choice letter (``A`` for the first), read
    by the answer extractor's choice mode; without, with a number.
    """

    question: str
    choices: NotRequired[list[str]]


class SolverDebateOutput(RunOutput):
    """What the graph returns to a caller or a parent graph.

    Besides the base outputs (``termination_reason``, ``usage``, ``usage_by_agent``,
    ``notes``): the question (and its choices), the voted answer, the vote table, the
    agreement ratio, the tie-break, and each round's answers.
    """

    question: str
    choices: list[str]
    answer: str | None
    votes: dict[str, int]
    agreement: float
    tie_break: str | None
    rounds: Annotated[list[RoundRecord], append_only()]


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


#: The state, input and output schemas of the graph.
SCHEMAS = Schemas(SolverDebateState, SolverDebateInput, SolverDebateOutput)
