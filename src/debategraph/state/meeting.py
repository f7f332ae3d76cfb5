"""State schemas and records of the staged meeting graph.

The state is the base run state (:mod:`debategraph.state.base`: transcript, round, usage
added up by reducers, one ``termination_reason`` vocabulary, notes) plus the meeting's own
fields: the stage now running and its stage-local round, the round controller's decisions
and the final decision. Every participant's message, a human's interjections, the
controller's calls and the chair's decision are :class:`~debategraph.state.records.Turn`
records in the one transcript; the records below are the typed results kept beside it
(and the output schemas the controller and the chair fill in).
"""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from debategraph.state.base import MessagesInput, RunOutput, RunState, Schemas
from debategraph.state.records import Participant
from debategraph.state.reducers import append_only

#: What the round controller may decide after a round of a stage.
StageAction = Literal["continue", "next_stage"]


class Stage(BaseModel):
    """One stage of a meeting: who speaks in it, to what end, for how many rounds.

    A stage lives in a graph's settings, never in its state: its participants may hold
    Python objects (a chat model, tools, an agent of their own) that no checkpoint could
    store; the transcript records each speaker's name and the label of its model.

    Attributes:
        name: Unique name (case-insensitively), recorded as the ``stage`` of its messages.
        participants: Who speaks, in order, once per round (each may have a model, tools
            or an agent of its own).
        max_rounds: Round cap of the stage (``None``: the meeting's default cap).
        goal: What the stage is for, shown to its speakers and the controller.
    """

    model_config = ConfigDict(frozen=True, str_strip_whitespace=True)

    name: str = Field(min_length=1)
    participants: tuple[Participant, ...]
    max_rounds: int | None = None
    goal: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        """Participant names in speaking order."""
        return tuple(p.name for p in self.participants)


class RoundDecision(BaseModel):
    """The round controller's call after a round of a stage: one more round, or move on.

    ``action`` and ``reason`` are what the controller model fills in; the other fields are
    recorded by the graph (hidden from the model's schema). ``forced`` says the graph moved
    on without a call (the stage's round cap); ``fallback`` says why the controller's
    output was unusable (the meeting then moves on).
    """

    model_config = ConfigDict(frozen=True)

    action: StageAction = Field(
        description="'continue' for another round of this stage, 'next_stage' to move on."
    )
    reason: str = Field(description="One sentence explaining the decision.")
    stage: SkipJsonSchema[str] = ""
    stage_round: SkipJsonSchema[int] = 0
    max_rounds: SkipJsonSchema[int] = 0
    round: SkipJsonSchema[int] = 0
    forced: SkipJsonSchema[bool] = False
    fallback: SkipJsonSchema[str | None] = None


#: Most dissenting views and next steps a decision lists (a longer list is cut, not refused).
MAX_ITEMS = 8


class FinalDecision(BaseModel):
    """The meeting's outcome, decided by the chair over the whole conversation."""

    model_config = ConfigDict(frozen=True)

    decision: str = Field(description="The decision the meeting reached, in one or two sentences.")
    rationale: str = Field(description="Why, in a few sentences, from what was said.")
    dissent: list[str] = Field(
        max_length=MAX_ITEMS, description="Objections or minority views that remain."
    )
    next_steps: list[str] = Field(
        max_length=MAX_ITEMS, description="Concrete next steps, each one short line."
    )


class MeetingInput(MessagesInput):
    """What a caller passes in: the topic, or ``messages`` whose last human message is it.

    Attributes:
        topic: What the meeting is to decide, e.g. "Should we move the launch to May?".
    """

    topic: NotRequired[str]


class MeetingOutput(RunOutput):
    """What the graph returns to a caller or a parent graph.

    Besides the base outputs (``termination_reason``: ``completed`` when every stage ran,
    ``stopped`` when a stop was requested, ``error`` when a whole round came back empty;
    ``usage``, ``usage_by_agent``, ``usage_by_model``, ``notes``): the topic, the final
    decision (``None`` when the chair gave nothing usable, with a note), the
    controller's decisions, and the stage and stage-local round reached.

    Attributes:
        topic: The topic the meeting decided.
        decision: The chair's final decision: decision, rationale, dissent, next steps
            (``None``: nothing usable).
        controller_decisions: The round controller's call after each round of a stage.
        stage: The stage reached.
        stage_round: The round reached within that stage.
    """

    topic: str
    decision: FinalDecision | None
    controller_decisions: Annotated[list[RoundDecision], append_only()]
    stage: str
    stage_round: int


class MeetingState(MeetingOutput, RunState):
    """Full state: the output fields plus the base state's transcript and round counter.

    ``round`` counts every round of every stage (the shared loop's counter, on each
    message); ``stage`` and ``stage_round`` name the stage running (or next to run) and
    its own round. ``transcript`` and ``controller_decisions`` are append-only delta
    channels (DESIGN.md principle 5).
    """


#: Record types of this graph that checkpoints may deserialize (``registry.record_types``).
RECORD_TYPES: tuple[type[BaseModel], ...] = (Stage, RoundDecision, FinalDecision)

#: The state, input and output schemas of the graph.
SCHEMAS = Schemas(MeetingState, MeetingInput, MeetingOutput, text="topic")
