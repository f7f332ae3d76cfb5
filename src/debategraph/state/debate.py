"""State schemas and records of the two-or-more-party debate graph.

The state is the base run state (:mod:`debategraph.state.base`: transcript, round, usage
added up by reducers, one ``termination_reason`` vocabulary, notes) plus the debate's own
fields. The debaters' arguments, the moderator's decisions, the judge's verdict and the
summarizer's summaries are all :class:`~debategraph.state.records.Turn` records in the
one transcript; the records below are the typed results kept beside it (and the output
schemas the moderator and the judge fill in).
"""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12 (Studio schemas)

from debategraph.state.base import MessagesInput, RunOutput, RunState, Schemas
from debategraph.state.records import AgentSpec, Turn
from debategraph.state.reducers import append_only

HistoryMode = Literal["full", "window"]

#: What the moderator and the judge say when no debater is ahead.
TIE = "tie"


class Debater(AgentSpec):
    """A named debater and the side it argues.

    Besides these, it may have what every agent may have
    (:class:`~debategraph.state.records.AgentSpec`): its own ``model``, ``tools`` (a
    bounded tool loop before each argument) or ``agent`` (which makes its arguments).

    Attributes:
        name: Unique name (also the name of its graph node).
        side: The stance it argues, e.g. ``for the motion``.
        persona: Optional character notes added to its system prompt.
    """

    side: str = Field(min_length=1)
    persona: str | None = None

    @property
    def label(self) -> str:
        """``Name (side)``, as other agents see it."""
        return f"{self.name} ({self.side})"


class WordCount(BaseModel):
    """How long one argument was, against the soft limit the debater was given.

    Attributes:
        turn_id: The :class:`Turn` it measures.
        debater: Who spoke.
        round: The round of the turn.
        words: Whitespace-separated words in the turn.
        limit: The word limit in the prompt.
    """

    model_config = ConfigDict(frozen=True)

    turn_id: str
    debater: str
    round: int
    words: int
    limit: int

    @property
    def over_limit(self) -> bool:
        """Whether the debater went past its word limit."""
        return self.words > self.limit


class ModeratorDecision(BaseModel):
    """The moderator's call after a round: is the debate settled, and who leads.

    The first three fields are what the moderator model fills in; ``round``, ``notes``
    and ``fallback`` are recorded by the graph (hidden from the model's schema).
    ``fallback`` says why ``leading`` is a tie the moderator did not call: it gave no
    usable output, or it named no debater.
    """

    model_config = ConfigDict(frozen=True)

    settled: bool = Field(
        description="True if one side has clearly won or the debaters only repeat "
        "themselves, so the debate can stop now."
    )
    leading: str = Field(description="Name of the debater who is ahead, or 'tie'.")
    reason: str = Field(description="One or two sentences explaining the decision.")
    round: SkipJsonSchema[int] = 0
    notes: SkipJsonSchema[tuple[str, ...]] = ()
    fallback: SkipJsonSchema[str | None] = None


class Score(BaseModel):
    """One debater's score on one criterion."""

    model_config = ConfigDict(frozen=True)

    debater: str = Field(description="The debater's name.")
    criterion: str = Field(description="What is scored, e.g. logic, evidence, rebuttal.")
    score: int = Field(ge=1, le=10, description="1 (poor) to 10 (excellent).")


class StrongestArgument(BaseModel):
    """The strongest argument one debater made."""

    model_config = ConfigDict(frozen=True)

    debater: str = Field(description="The debater's name.")
    argument: str = Field(description="Their strongest argument, in one sentence.")


class Verdict(BaseModel):
    """The judge's verdict.

    The first four fields are what the judge model fills in. ``notes`` records what the
    graph normalised (a misspelt debater name read as the closest real one, an unknown
    one dropped or read as a tie); ``fallback`` says why the winner is a tie the judge
    did not call: it gave no usable output, or it named no debater (the CLI shows it
    beside the winner). Both are hidden from the model's schema.
    """

    model_config = ConfigDict(frozen=True)

    winner: str = Field(description="Name of the debater who won, or 'tie'.")
    scores: list[Score] = Field(description="A score for each debater on each criterion.")
    rationale: str = Field(description="Why the winner won, in a few sentences.")
    strongest: list[StrongestArgument] = Field(description="Each debater's strongest argument.")
    notes: SkipJsonSchema[tuple[str, ...]] = ()
    fallback: SkipJsonSchema[str | None] = None


class DebateInput(MessagesInput):
    """What a caller passes in: the motion, or ``messages`` whose last human message is it.

    Attributes:
        topic: The motion the debaters argue for and against, e.g. "Cities should ban
            cars downtown".
    """

    topic: NotRequired[str]


class DebateOutput(RunOutput):
    """What the graph returns to a caller or a parent graph.

    Besides the base outputs (``termination_reason``: ``rounds_completed``, ``settled``
    by the moderator, or ``error`` when a whole round came back empty; ``usage``,
    ``usage_by_agent``, ``notes``): the motion, the judge's verdict, the rounds done,
    each argument's length, the moderator's decisions, the running summary and each
    debater's stance.

    Attributes:
        topic: The motion debated.
        verdict: The judge's verdict: winner, scores and rationale (``None``: no judge).
        rounds_completed: The rounds of arguments done.
        word_counts: Each argument's length in words, against the word limit.
        moderator_decisions: The moderator's call after each round (who leads, settled).
        summary: The running summary of the earlier arguments (empty: none was made).
        stances: Each debater's side, by name, in speaking order (written when round 1
            opens).
    """

    topic: str
    verdict: Verdict | None
    rounds_completed: int
    word_counts: Annotated[list[WordCount], append_only()]
    moderator_decisions: Annotated[list[ModeratorDecision], append_only()]
    summary: str
    stances: dict[str, str]


class DebateState(DebateOutput, RunState):
    """Full state: the output fields plus the base state's transcript and round counter.

    ``transcript``, ``word_counts`` and ``moderator_decisions`` are append-only delta
    channels: a checkpoint stores only what a step added (DESIGN.md principle 5).
    ``summarized`` counts the arguments (every debater's, in transcript order) folded
    into ``summary``; it stays 0 with ``history="full"``.
    """

    summarized: int


class DebaterView(TypedDict):
    """What one debater reads before it speaks.

    Attributes:
        topic: The motion.
        debater: Who speaks.
        round: The current round.
        summary: Summary of the arguments folded out of the window ("" if none).
        history: Arguments addressed to it or its own, oldest first, not yet summarised
            (without ``latest``).
        latest: The latest argument addressed to it by another debater, if any.
        interjections: What a human said after the previous round.
    """

    topic: str
    debater: str
    round: int
    summary: str
    history: list[Turn]
    latest: Turn | None
    interjections: list[Turn]


#: Record types of this graph that checkpoints may deserialize (``registry.record_types``).
RECORD_TYPES: tuple[type[BaseModel], ...] = (
    WordCount,
    ModeratorDecision,
    Score,
    StrongestArgument,
    Verdict,
)

#: The state, input and output schemas of the graph.
SCHEMAS = Schemas(DebateState, DebateInput, DebateOutput, text="topic")
