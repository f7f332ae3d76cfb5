"""The discussion's settings checks, fixed settings, personas, node names and stages.

A discussion's personas are parsed and checked with the shared roster helpers
(:mod:`debategraph.nodes.roster`); each may have a model, tools or an agent of its own
(:class:`~debategraph.state.records.AgentSpec`). Its one official, the consensus writer
(:data:`OFFICIALS`), may too. Its fixed settings travel to every node in one
:class:`DiscussionSetup`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from debategraph.documents import parse_document
from debategraph.nodes.agent import OfficialLike, officials_of
from debategraph.nodes.roster import Roster, parse_member, slug
from debategraph.nodes.rounds import check_max_rounds, check_time_limit
from debategraph.state.discussion import Persona
from debategraph.state.records import AgentSpec

PREPARE_NODE = "prepare"
#: The node that opens an iteration (the shared ``open_round``, under the name threads
#: written by earlier versions may be stopped at).
OPEN_ITERATION_NODE = "open_iteration"
QUESTIONS_DONE_NODE = "questions_done"
RESPONSES_DONE_NODE = "responses_done"
CHECK_NODE = "check_convergence"
CONSENSUS_NODE = "consensus"
JOIN_NODES = (
    PREPARE_NODE,
    OPEN_ITERATION_NODE,
    QUESTIONS_DONE_NODE,
    RESPONSES_DONE_NODE,
    CHECK_NODE,
    CONSENSUS_NODE,
)
#: The discussion's officials (model-calling agents that are not personas), by name: an
#: official's record (``officials=`` of the factory, or an ``--agents-file`` entry so
#: named) gives it a model, tools or an agent of its own.
OFFICIALS: Mapping[str, str] = {CONSENSUS_NODE: "writes the consensus report"}
#: The parallel phases, in order: each persona has one node per phase.
PHASES = ("analyse", "ask", "answer", "assess")

#: Stages of the transcript records.
INITIAL_STAGE = "initial"
QUESTION_STAGE = "question"
SKIP_STAGE = "skip"
RESPONSE_STAGE = "response"
CONVERGENCE_STAGE = "convergence"
CONSENSUS_STAGE = "consensus"

#: Seconds a discussion may take when no time limit is given (30 minutes).
DEFAULT_TIME_LIMIT_S = 1800.0
#: Iterations of questions, answers and revisions at most, when none is given.
DEFAULT_MAX_ROUNDS = 5
#: The convergence (0-1) that ends a discussion, when none is given.
DEFAULT_THRESHOLD = 0.75

PersonaLike = Persona | Mapping[str, Any]

DEFAULT_PERSONAS: tuple[Persona, ...] = (
    Persona(
        name="Critical Evaluator",
        focus="methodology, experimental design, limitations",
        description="You test whether the claims follow from the evidence.",
    ),
    Persona(
        name="Innovative Insighter",
        focus="novelty, contributions, future directions",
        description="You look for what is new and where it could lead.",
    ),
    Persona(
        name="Practical Applicator",
        focus="applicability, feasibility, industry impact",
        description="You ask what it takes to use this in practice.",
    ),
    Persona(
        name="Theoretical Integrator",
        focus="frameworks, conceptual coherence, place in the literature",
        description="You place the work among the theories it builds on.",
    ),
)


def check_input(state: Mapping[str, Any]) -> None:
    """A run's input check: refuse a document that is empty (what ``prepare`` refuses).

    Args:
        state: The input.

    Raises:
        ValueError: One line naming what to give.
    """
    parse_document(str(state.get("document") or ""), source="document")


def node_name(phase: str, name: str) -> str:
    """The node of ``name``'s ``phase`` (``analyse``, ``ask``, ``answer``, ``assess``).

    Args:
        phase: The phase.
        name: The persona's name.

    Returns:
        The node name.
    """
    return f"{phase}_{slug(name)}"


@dataclass(frozen=True)
class DiscussionSetup:
    """A discussion's fixed settings, shared by its nodes (see :func:`discussion_setup`).

    Attributes:
        personas: The agents.
        max_rounds: Cap on rounds (iterations of questions, answers and revisions).
        threshold: Convergence score that ends the discussion.
        time_limit_s: Wall-clock seconds the run may take (its deadline: calls in flight
            then are cancelled, and the run ends ``time_limit``).
        max_sections: Sections each agent may read.
        pause_after_round: Whether a human reviews each iteration.
        officials: The officials given a record of their own, by name (lower case, see
            :data:`OFFICIALS`).
    """

    personas: tuple[Persona, ...]
    max_rounds: int
    threshold: float
    time_limit_s: float
    max_sections: int
    pause_after_round: bool = False
    officials: Mapping[str, AgentSpec] = field(default_factory=dict)

    @property
    def round_cap(self) -> int:
        """The most rounds a run takes: the cap, and the analysis before the first."""
        return self.max_rounds + 1

    @property
    def names(self) -> tuple[str, ...]:
        """Persona names."""
        return tuple(p.name for p in self.personas)

    @property
    def roster(self) -> str:
        """``Name (focus); ...`` for prompts."""
        return "; ".join(f"{p.name} ({p.focus})" for p in self.personas)

    def persona(self, name: str) -> Persona:
        """The persona called ``name``."""
        return next(p for p in self.personas if p.name == name)

    def official(self, name: str) -> AgentSpec | None:
        """The record given for the official ``name`` (``None``: the graph's model alone)."""
        return self.officials.get(name.lower())


def parse_persona(value: PersonaLike) -> Persona:
    """A :class:`Persona` from one or from a dict.

    A dict holds ``name``, ``focus`` and optionally ``description``, and what every
    agent may have: ``model``, ``tools``, ``agent``, ``max_tool_calls``.

    Args:
        value: The persona as given.

    Returns:
        The persona.

    Raises:
        ValueError: If it is neither, or lacks a name or a focus.
    """
    return parse_member(
        value,
        Persona,
        "persona",
        "a non-empty 'name' and 'focus', and optionally 'description', 'model', 'tools', "
        "'agent' and 'max_tool_calls'",
    )


#: How a discussion's personas are checked (their slugs name their nodes).
PERSONAS = Roster(
    "persona", "a discussion", parse_persona, key=slug, reserved=JOIN_NODES, node_names=False
)


def discussion_setup(
    *,
    personas: Sequence[PersonaLike] | None,
    max_rounds: int,
    threshold: float,
    time_limit_s: float,
    max_sections: int,
    pause_after_round: bool,
    officials: Sequence[OfficialLike] = (),
) -> DiscussionSetup:
    """Check a discussion's settings.

    The settings are :func:`~debategraph.graphs.discussion.build_discussion`'s,
    documented there.

    Persona names are unique ignoring case and punctuation (they name the personas'
    nodes); the graph's own node names and ``user`` are reserved. The officials are
    checked here (:func:`~debategraph.nodes.agent.officials_of`), the personas' models,
    tools and agents when their nodes are made
    (:func:`~debategraph.nodes.discussion.personas.persona_node`): both before a run.

    Returns:
        The settings.

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    check_max_rounds(max_rounds)
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between 0 and 1, got {threshold}")
    check_time_limit(time_limit_s)
    if max_sections < 1:
        raise ValueError(f"max_sections must be at least 1, got {max_sections}")
    parsed = list(DEFAULT_PERSONAS)
    if personas is not None:
        parsed = PERSONAS.check(personas)
    given = officials_of(officials, OFFICIALS, "a discussion")
    return DiscussionSetup(
        personas=tuple(parsed),
        max_rounds=max_rounds,
        threshold=threshold,
        time_limit_s=time_limit_s,
        max_sections=max_sections,
        pause_after_round=pause_after_round,
        officials=given,
    )
