"""Discussion: persona agents analyse a document, question each other, converge, report.

Phase 1: each persona sees the title, abstract and section list, chooses sections, reads
them and gives two or three insights. Then, per iteration: phase 2, each reviews the
others' latest insights and asks questions or skips; phase 3, each answers the questions
addressed to it (a ``revise`` stance rewrites its insight); phase 4, each scores the
convergence, which is combined with measured consistency, completeness, resolution and
stability. The loop ends converged, stalled, at the time limit or the iteration cap;
phase 5 writes the consensus report.

Graph: ``START -> prepare -> analyse_<p>... -> open_iteration -> ask_<p>... ->
questions_done -> answer_<p>... -> responses_done -> assess_<p>... -> check_convergence``,
then back to ``open_iteration`` or on to ``consensus -> END``. The agent nodes of a phase
start in the same step, so their calls run concurrently (bounded by the run config's
``max_concurrency``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from pydantic import ValidationError

from debategraph.context import Context
from debategraph.models import ModelBinding, ModelSpec, bind_model
from debategraph.nodes.discussion import (
    CHECK_NODE,
    CONSENSUS_NODE,
    JOIN_NODES,
    OPEN_ITERATION_NODE,
    PREPARE_NODE,
    QUESTIONS_DONE_NODE,
    RESPONSES_DONE_NODE,
    DiscussionSetup,
    after_check,
    join,
    make_analyst,
    make_answerer,
    make_asker,
    make_assessor,
    make_check,
    make_consensus,
    node_name,
    open_iteration,
    prepare,
    render_report_markdown,
    slug,
)
from debategraph.state import DiscussionInput, DiscussionOutput, DiscussionState, Persona

GRAPH_NAME = "discussion"
#: Steps of an iteration: open_iteration, ask, questions_done, answer, responses_done,
#: assess, check_convergence.
STEPS_PER_ITERATION = 7

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

__all__ = [
    "DEFAULT_PERSONAS",
    "GRAPH_NAME",
    "build_discussion",
    "discussion_setup",
    "graph",
    "parse_persona",
    "recursion_limit",
    "render_report_markdown",
]


def parse_persona(value: PersonaLike) -> Persona:
    """A :class:`Persona` from one or from a dict (``name``, ``focus``, ``description``).

    Args:
        value: The persona as given.

    Returns:
        The persona.

    Raises:
        ValueError: If it is neither, or lacks a name or a focus.
    """
    if isinstance(value, Persona):
        return value
    if isinstance(value, Mapping):
        try:
            return Persona.model_validate(dict(value))
        except ValidationError as exc:
            fields = ", ".join(".".join(map(str, e["loc"])) or "?" for e in exc.errors())
            raise ValueError(
                f"persona {dict(value)!r} is not valid (bad or missing: {fields}): give a "
                "non-empty 'name' and 'focus', and optionally 'description'"
            ) from None
    raise ValueError(f"persona {value!r} must be a Persona or a dict")


def discussion_setup(
    personas: Sequence[PersonaLike] | None,
    *,
    max_iterations: int,
    threshold: float,
    time_limit_s: float,
    max_sections: int,
) -> DiscussionSetup:
    """Validate a discussion's settings.

    Args:
        personas: As for :func:`build_discussion`.
        max_iterations: As for :func:`build_discussion`.
        threshold: As for :func:`build_discussion`.
        time_limit_s: As for :func:`build_discussion`.
        max_sections: As for :func:`build_discussion`.

    Returns:
        The settings.

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between 0 and 1, got {threshold}")
    if time_limit_s <= 0:
        raise ValueError(f"time_limit_s must be a positive number of seconds, got {time_limit_s}")
    if max_sections < 1:
        raise ValueError(f"max_sections must be at least 1, got {max_sections}")
    if personas is None:
        parsed = list(DEFAULT_PERSONAS)
    elif isinstance(personas, str | Mapping | Persona):
        raise ValueError(f"personas must be a list of two or more personas, got {personas!r}")
    else:
        parsed = [parse_persona(p) for p in personas]
    if len(parsed) < 2:
        raise ValueError(f"a discussion needs at least 2 personas, got {len(parsed)}")
    seen: dict[str, str] = {}
    reserved = {slug(n) for n in JOIN_NODES}
    for persona in parsed:
        key = slug(persona.name)
        if not key:
            raise ValueError(f"persona name {persona.name!r} needs at least one letter or digit")
        if key in seen:
            raise ValueError(
                f"duplicate persona name {persona.name!r} (same as {seen[key]!r} once case "
                "and punctuation are ignored)"
            )
        if persona.name.lower() in reserved or persona.name.lower() == "user":
            raise ValueError(f"persona name {persona.name!r} is reserved")
        seen[key] = persona.name
    return DiscussionSetup(
        personas=tuple(parsed),
        max_iterations=max_iterations,
        threshold=threshold,
        time_limit_s=time_limit_s,
        max_sections=max_sections,
    )


def build_discussion(
    model: BaseChatModel | ModelBinding | ModelSpec | None = None,
    *,
    personas: Sequence[PersonaLike] | None = None,
    max_iterations: int = 5,
    threshold: float = 0.75,
    time_limit_s: float = 1800,
    max_sections: int = 3,
    state_schema: type[Any] = DiscussionState,
) -> StateGraph[Any, Context, DiscussionInput, DiscussionOutput]:
    """Build the discussion graph (uncompiled).

    Args:
        model: Chat model, binding or spec every agent calls. ``None`` reads the model
            from the run's :class:`~debategraph.context.Context` (embedded model by default).
        personas: Two or more :class:`~debategraph.state.Persona` objects or dicts
            (``name``, ``focus``, optional ``description``); default
            :data:`DEFAULT_PERSONAS`. Names are unique ignoring case and punctuation.
        max_iterations: Cap on question/answer iterations (>= 1).
        threshold: Convergence score (0-1) that ends the discussion as ``converged``.
        time_limit_s: Seconds after which no new iteration starts (``time_limit``).
        max_sections: Sections each agent may choose to read (>= 1).
        state_schema: State schema; may extend :class:`~debategraph.state.DiscussionState`.

    Returns:
        The uncompiled graph; ``compile(checkpointer=..., name=...)`` it.

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    setup = discussion_setup(
        personas,
        max_iterations=max_iterations,
        threshold=threshold,
        time_limit_s=time_limit_s,
        max_sections=max_sections,
    )
    binding = None if model is None else bind_model(model)

    builder: StateGraph[Any, Context, DiscussionInput, DiscussionOutput] = StateGraph(
        state_schema,
        context_schema=Context,
        input_schema=DiscussionInput,
        output_schema=DiscussionOutput,
    )
    builder.add_node(PREPARE_NODE, prepare)
    builder.add_node(OPEN_ITERATION_NODE, open_iteration)
    builder.add_node(QUESTIONS_DONE_NODE, join)
    builder.add_node(RESPONSES_DONE_NODE, join)
    builder.add_node(CHECK_NODE, make_check(setup))
    builder.add_node(CONSENSUS_NODE, make_consensus(setup, binding))
    builder.add_edge(START, PREPARE_NODE)
    phases = [
        ("analyse", make_analyst, PREPARE_NODE, OPEN_ITERATION_NODE),
        ("ask", make_asker, OPEN_ITERATION_NODE, QUESTIONS_DONE_NODE),
        ("answer", make_answerer, QUESTIONS_DONE_NODE, RESPONSES_DONE_NODE),
        ("assess", make_assessor, RESPONSES_DONE_NODE, CHECK_NODE),
    ]
    for phase, factory, before, after in phases:
        nodes = [node_name(phase, p.name) for p in setup.personas]
        for persona, node in zip(setup.personas, nodes, strict=True):
            builder.add_node(node, factory(persona.name, setup, binding))
            builder.add_edge(before, node)
        builder.add_edge(nodes, after)  # waits for every agent of the phase
    builder.add_conditional_edges(CHECK_NODE, after_check, [OPEN_ITERATION_NODE, CONSENSUS_NODE])
    builder.add_edge(CONSENSUS_NODE, END)
    return builder


def recursion_limit(iterations: int) -> int:
    """A recursion limit just above what ``iterations`` iterations need.

    The loop ends on its own iteration cap; this limit is a backstop, set deliberately
    instead of LangGraph's effectively unbounded default.

    Args:
        iterations: The discussion's iteration cap.

    Returns:
        Supersteps allowed.
    """
    return STEPS_PER_ITERATION * iterations + 5  # + 5: prepare, analyse, consensus, slack


#: Compiled without a checkpointer, for ``langgraph.json`` / LangGraph Studio (which
#: provides its own persistence). The model comes from the run's context.
graph = build_discussion().compile(name=GRAPH_NAME)
