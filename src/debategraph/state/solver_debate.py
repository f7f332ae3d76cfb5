"""State schemas of the solver debate graph."""

from __future__ import annotations

from typing import Annotated, Literal

from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12 (Studio schemas)

from debategraph.state.records import RoundRecord, Turn, Usage
from debategraph.state.reducers import append_only, transcript_channel

TerminationReason = Literal["rounds_completed", "unanimous", "budget", "error"]


class SolverDebateInput(TypedDict):
    """What a caller passes in: the question to solve."""

    question: str


class SolverDebateOutput(TypedDict):
    """What the graph returns to a caller or a parent graph."""

    question: str
    answer: str | None
    votes: dict[str, int]
    agreement: float
    tie_break: str | None
    rounds: Annotated[list[RoundRecord], append_only()]
    termination_reason: TerminationReason
    usage: Usage
    usage_by_solver: dict[str, Usage]


class SolverDebateState(SolverDebateOutput):
    """Full state: the output fields plus the transcript and the round counter.

    ``transcript`` and ``rounds`` are append-only delta channels: a checkpoint stores
    only what a step added, not the whole list again (DESIGN.md principle 5).
    """

    transcript: Annotated[list[Turn], transcript_channel()]
    round: int


class SolverView(TypedDict):
    """What one solver reads in a round: the question, its own and its neighbours' answers."""

    question: str
    solver: str
    round: int
    own: Turn | None
    peers: list[Turn]
    interjections: list[Turn]
