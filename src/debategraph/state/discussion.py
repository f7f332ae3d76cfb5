"""State schemas and records of the document discussion graph.

Every agent message (initial insights, questions or a skip, responses, convergence
votes, the consensus report) is a :class:`~debategraph.state.records.Turn` in the one
transcript; the typed records below are kept beside it. Fields hidden from the JSON
schema (``SkipJsonSchema``) are filled in by the graph, not by the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, NotRequired

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from debategraph.documents import Document, Section
from debategraph.state.base import (
    MessagesInput,
    RunOutput,
    RunState,
    Schemas,
    TerminationReason,
    termination_word,
)
from debategraph.state.records import AgentSpec
from debategraph.state.reducers import append_only

QuestionType = Literal["clarification", "challenge", "extension"]
Stance = Literal["agree", "disagree", "clarify", "revise"]


class Persona(AgentSpec):
    """A discussion agent's character.

    Attributes:
        name: Unique name (also part of its graph nodes' names).
        focus: What it looks at, e.g. ``methodology, experimental design``.
        description: One or two sentences of character for its system prompt.
    """

    focus: str = Field(min_length=1)
    description: str = ""


class SectionChoice(BaseModel):
    """Which sections an agent reads, and why."""

    model_config = ConfigDict(frozen=True)

    section_ids: list[str] = Field(description="Ids of the sections to read, e.g. ['S2', 'S4'].")
    reason: str = Field(description="Why these sections matter for your focus, briefly.")
    agent: SkipJsonSchema[str] = ""
    notes: SkipJsonSchema[tuple[str, ...]] = ()


class Insight(BaseModel):
    """One insight of an agent about the document."""

    model_config = ConfigDict(frozen=True)

    content: str = Field(description="The insight, in one to three sentences.")
    importance: float = Field(ge=0.0, le=1.0, description="0 (minor) to 1 (central).")
    confidence: float = Field(ge=0.0, le=1.0, description="0 (unsure) to 1 (certain).")
    evidence: list[str] = Field(
        default_factory=list, description="Short quotes from the sections you read."
    )
    questions: list[str] = Field(
        default_factory=list, description="Open questions this insight raises."
    )
    id: SkipJsonSchema[str] = ""
    agent: SkipJsonSchema[str] = ""
    version: SkipJsonSchema[int] = 1
    revised_in: SkipJsonSchema[int] = 0


class Analysis(BaseModel):
    """An agent's initial insights (two or three)."""

    insights: list[Insight] = Field(description="Two or three insights.")


class Question(BaseModel):
    """A question one agent asks another about one of its insights."""

    model_config = ConfigDict(frozen=True)

    target_agent: str = Field(description="Name of the agent whose insight you question.")
    target_insight: str = Field(description="Id of that insight, e.g. 'critical_evaluator-2'.")
    type: QuestionType = Field(description="clarification, challenge or extension.")
    priority: float = Field(ge=0.0, le=1.0, description="0 (nice to know) to 1 (crucial).")
    text: str = Field(description="The question.")
    id: SkipJsonSchema[str] = ""
    asker: SkipJsonSchema[str] = ""
    iteration: SkipJsonSchema[int] = 0


class Inquiry(BaseModel):
    """An agent's questions this iteration, or a skip with its reason."""

    questions: list[Question] = Field(
        default_factory=list, description="Your questions (empty if you skip)."
    )
    skip_reason: str | None = Field(
        default=None, description="If you ask nothing: why (e.g. the insights are clear)."
    )


class Response(BaseModel):
    """An agent's answer to one question about its insight."""

    model_config = ConfigDict(frozen=True)

    question_id: str = Field(description="Id of the question you answer, e.g. 'Q1-3'.")
    answer: str = Field(description="Your answer.")
    stance: Stance = Field(description="agree, disagree, clarify or revise.")
    revised_insight: str | None = Field(
        default=None, description="With stance 'revise': the new text of your insight."
    )
    confidence: float = Field(ge=0.0, le=1.0, description="0 to 1.")
    agent: SkipJsonSchema[str] = ""
    iteration: SkipJsonSchema[int] = 0


class ResponseSet(BaseModel):
    """An agent's answers to the questions addressed to it."""

    responses: list[Response] = Field(description="One response per question.")


class ConvergenceVote(BaseModel):
    """An agent's own view of how far the discussion has converged."""

    score: float = Field(ge=0.0, le=1.0, description="0 (far apart) to 1 (fully agreed).")
    reason: str = Field(description="Why, in one sentence.")


class ConvergenceRecord(BaseModel):
    """The convergence check after one iteration (see ``convergence_score``).

    A component is ``None`` (shown ``n/a``) when the iteration gave it nothing to measure:
    no response, no question, no challenge. ``score`` is ``None`` when nothing was
    measured and no agent gave a usable self-score. ``agent_scores`` holds the self-scores
    of the agents whose convergence reply was usable.
    """

    model_config = ConfigDict(frozen=True)

    iteration: int
    consistency: float | None
    completeness: float | None
    resolution: float | None
    stability: float | None
    agent_scores: dict[str, float]
    score: float | None
    changed: int
    termination_reason: TerminationReason | None = None

    @field_validator("termination_reason", mode="before")
    @classmethod
    def _today_word(cls, value: Any) -> TerminationReason | None:
        """Read the words older versions stored (``max_iterations``) as today's."""
        return termination_word(value)


class ConsensusPoint(BaseModel):
    """A point the agents agree on."""

    model_config = ConfigDict(frozen=True)

    statement: str = Field(description="The point agreed on.")
    supporting: list[str] = Field(description="Names of agents supporting it.")
    opposing: list[str] = Field(default_factory=list, description="Names of agents opposing it.")
    strength: float = Field(ge=0.0, le=1.0, description="0 (weak) to 1 (unanimous, firm).")


class Position(BaseModel):
    """One agent's position on a contested topic."""

    model_config = ConfigDict(frozen=True)

    agent: str = Field(description="The agent's name.")
    position: str = Field(description="Its position.")
    reasons: list[str] = Field(default_factory=list, description="Its reasons.")


class DivergentView(BaseModel):
    """A topic the agents still disagree on."""

    model_config = ConfigDict(frozen=True)

    topic: str = Field(description="What they disagree about.")
    positions: list[Position] = Field(description="Each agent's position.")


class ConsensusReport(BaseModel):
    """The discussion's final report."""

    model_config = ConfigDict(frozen=True)

    consensus_points: list[ConsensusPoint] = Field(description="Points the agents agree on.")
    divergent_views: list[DivergentView] = Field(description="Topics still disputed.")
    overview: str = Field(description="What the document is about, in a few sentences.")
    main_contributions: list[str] = Field(description="Its main contributions.")
    consensus_assessment: str = Field(description="The agents' shared assessment.")
    contested_points: list[str] = Field(description="Points still contested.")
    significance: str = Field(description="Why the document matters (or does not).")
    overall_confidence: float = Field(ge=0.0, le=1.0, description="0 to 1.")
    notes: SkipJsonSchema[tuple[str, ...]] = ()
    fallback: SkipJsonSchema[str | None] = None


def merge_insights(
    current: Mapping[str, list[Insight]], update: Mapping[str, list[Insight]]
) -> dict[str, list[Insight]]:
    """Reducer of ``insights``: each agent's latest set replaces its previous one.

    Several agents write in one step (one key each), so the channel merges by agent.

    Args:
        current: Agent -> its insights so far.
        update: Agent -> its new insight set.

    Returns:
        The merged mapping.
    """
    return {**current, **update}


class DiscussionInput(MessagesInput):
    """What a caller passes in: the document's text (Markdown or plain), or ``messages``.

    The last human message of ``messages`` is the document when ``document`` is not given.

    Attributes:
        document: The document to discuss: Markdown or plain text, its sections headed.
    """

    document: NotRequired[str]


class DiscussionOutput(RunOutput):
    """What the graph returns to a caller or a parent graph.

    Besides the base outputs (``termination_reason``, ``usage``, ``usage_by_agent``,
    ``notes``): the parsed document, each agent's section choice and latest insights, the
    questions and responses of every iteration, the convergence record of each iteration,
    the consensus report and the number of iterations completed.

    Attributes:
        paper: The document as read: its title and sections.
        section_choices: The section each persona chose to analyse.
        insights: Each persona's latest insights, by persona.
        questions: The questions the personas asked each other, every iteration.
        responses: Their responses: stance and revised insight.
        convergence: The convergence record of each iteration.
        report: The consensus report (``None``: none was written).
        iterations_completed: The iterations done.
    """

    paper: Document
    section_choices: Annotated[list[SectionChoice], append_only()]
    insights: Annotated[dict[str, list[Insight]], merge_insights]
    questions: Annotated[list[Question], append_only()]
    responses: Annotated[list[Response], append_only()]
    convergence: Annotated[list[ConvergenceRecord], append_only()]
    report: ConsensusReport | None
    iterations_completed: int


class DiscussionState(DiscussionOutput, RunState):
    """Full state: the output fields plus the document text and the base state's fields.

    The base ``round`` counts iterations. The lists are append-only delta channels
    (DESIGN.md principle 5). ``notes`` records what the graph dropped or assumed (unknown
    section ids, questions about unknown agents or insights, responses to unknown
    questions).

    ``iteration`` is the counter threads written by earlier versions kept instead of
    ``round``; it is only read (see ``nodes.discussion.views.iteration_of``), so that
    such threads still resume.
    """

    document: str
    iteration: int


#: Record types of this graph that checkpoints may deserialize (``registry.record_types``).
RECORD_TYPES: tuple[type[BaseModel], ...] = (
    Document,
    Section,
    Persona,
    SectionChoice,
    Insight,
    Question,
    Response,
    ConvergenceRecord,
    ConsensusPoint,
    Position,
    DivergentView,
    ConsensusReport,
)

#: The state, input and output schemas of the graph.
SCHEMAS = Schemas(DiscussionState, DiscussionInput, DiscussionOutput, text="document")
