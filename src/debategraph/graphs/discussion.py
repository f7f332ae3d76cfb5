"""Discussion: persona agents analyse a document, question each other, converge, report.

Phase 1: each persona sees the title, abstract and section list, chooses sections, reads
them and gives two or three insights. Then, per iteration: phase 2, each reviews the
others' latest insights and asks questions or skips; phase 3, each answers the questions
addressed to it (a ``revise`` stance rewrites its insight); phase 4, each scores the
convergence, which is combined with measured consistency, completeness, resolution and
stability. The loop ends converged, stalled, at the time limit or after ``max_rounds``
iterations (``rounds_completed``); phase 5 writes the consensus report.

Graph: ``START -> prepare -> analyse_<p>... -> open_iteration -> ask_<p>... ->
questions_done -> answer_<p>... -> responses_done -> assess_<p>... -> check_convergence``,
then back to ``open_iteration`` (through the review point ``human`` when pausing) or on
to ``consensus -> END``. The agent nodes of a phase start in the same step, so their
calls run concurrently (bounded by the run config's ``max_concurrency``).

A human's interjection (at the pause, or a ``user`` record added with ``update_state``
between iterations) reaches every later prompt of every persona and the consensus.

Agents are open: each persona may have its own model, tools or agent (its record's
``model``, ``tools``, ``agent``), and so may the consensus writer (``officials=``); a
tool call is a transcript record (``role`` ``tool``) just before the turn it served, and
usage is counted per agent and per model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from debategraph.graphs.skeleton import (
    ModelLike,
    PatternGraph,
    renamed_settings,
    settings_of,
    skeleton,
)
from debategraph.nodes import discussion as nodes
from debategraph.nodes.agent import OfficialLike
from debategraph.nodes.discussion.setup import (
    CHECK_NODE,
    CONSENSUS_NODE,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_THRESHOLD,
    DEFAULT_TIME_LIMIT_S,
    OPEN_ITERATION_NODE,
    PHASES,
    PREPARE_NODE,
    QUESTIONS_DONE_NODE,
    RESPONSES_DONE_NODE,
    PersonaLike,
    discussion_setup,
)
from debategraph.nodes.dual import loop_node
from debategraph.nodes.messages import RESPOND_NODE
from debategraph.nodes.review import add_review
from debategraph.nodes.rounds import round_router
from debategraph.state.discussion import SCHEMAS, DiscussionInput, DiscussionOutput

GRAPH_NAME = "discussion"


@renamed_settings(GRAPH_NAME)
def build_discussion(
    model: ModelLike = None,
    *,
    personas: Sequence[PersonaLike] | None = None,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    threshold: float = DEFAULT_THRESHOLD,
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
    max_sections: int = 3,
    pause_after_round: bool = False,
    officials: Sequence[OfficialLike] = (),
    state_schema: type[Any] | None = None,
) -> PatternGraph[DiscussionInput, DiscussionOutput]:
    """Build the discussion graph (uncompiled).

    Example:
        ```python
        from debategraph import Context, Persona, build_discussion

        personas = [
            Persona(name="Critic", focus="methods and limitations"),
            # Its own model (a spec string, a mapping or any LangChain chat model).
            Persona(name="Builder", focus="applications", model="gpt-4o"),
        ]
        # No model here: each run's context names it (as LangGraph Studio's run form does).
        graph = build_discussion(personas=personas, max_rounds=1).compile(name="discussion")
        paper = '''# Sparse debate

        ## Abstract

        Ring topologies cut the cost of multi-agent debate.

        ## Method

        Each agent reads only its two neighbours.
        '''
        result = graph.invoke(
            {"document": paper}, context=Context(model="gpt-4o-mini", timeout_s=60)
        )
        print(result["termination_reason"], result["report"].overall_confidence)
        ```

    Args:
        model: Chat model, binding or spec every agent calls unless it has its own.
            ``None`` reads the model from the run's
            :class:`~debategraph.models.context.Context` (embedded model by default).
        personas: Two or more :class:`~debategraph.state.discussion.Persona` objects or
            dicts (``name``, ``focus``, optional ``description``); default
            :data:`~debategraph.nodes.discussion.setup.DEFAULT_PERSONAS`. Names are unique
            ignoring case and punctuation. Each may also have what every agent may
            (:class:`~debategraph.state.records.AgentSpec`): ``model`` (its own model for
            every call it makes: section choice, analysis, questions, answers and its
            convergence vote), ``tools`` (a bounded tool loop before each of those calls,
            at most ``max_tool_calls``) or ``agent`` (a Runnable or compiled graph, messages
            in and out, whose reply's fields are read with a structured call).
        max_rounds: Cap on rounds: a round is one iteration of questions, answers and
            revisions (>= 1). Formerly ``max_iterations`` (still accepted, deprecated).
        threshold: Convergence score (0-1) that ends the discussion as ``converged``.
        time_limit_s: Seconds the run may take: at the deadline the calls in flight are
            cancelled (recorded as fallbacks with the reason), none starts after it, and
            the discussion ends ``time_limit`` with its report built without a call.
        max_sections: Sections each agent may choose to read (>= 1).
        pause_after_round: After each iteration that does not end the discussion,
            ``interrupt()`` with its convergence; resume with
            ``Command(resume={"approve": True})`` or ``Command(resume={"interject": "text"})``
            (the text reaches every later prompt of every persona). Needs a checkpointer.
        officials: Records (:class:`~debategraph.state.records.AgentSpec` objects or
            dicts) giving the discussion's officials a model, tools or agent of their
            own, by name: its one official is ``consensus``, which writes the report
            (:data:`~debategraph.nodes.discussion.setup.OFFICIALS`). Default: the graph's
            model.
        state_schema: State schema; may extend
            :class:`~debategraph.state.discussion.DiscussionState` (the default).

    Returns:
        The uncompiled graph; ``compile(checkpointer=..., name=...)`` it.

    Raises:
        ValueError: On any bad setting (an unknown official, a persona's or official's
            bad model, unknown tool or agent that is no Runnable included), naming the
            value and what is allowed.
    """
    setup = discussion_setup(**settings_of(locals()))
    builder, binding = skeleton(model, SCHEMAS, state_schema, setup, nodes.outcome, GRAPH_NAME)
    builder.add_node(PREPARE_NODE, nodes.make_prepare(setup))
    builder.add_node(OPEN_ITERATION_NODE, nodes.make_open_round(setup))
    builder.add_node(QUESTIONS_DONE_NODE, loop_node(nodes.join))
    builder.add_node(RESPONSES_DONE_NODE, loop_node(nodes.join))
    builder.add_node(CHECK_NODE, nodes.make_close_round(setup, binding))
    builder.add_node(CONSENSUS_NODE, nodes.make_consensus(setup, binding))
    builder.start_at(PREPARE_NODE)
    # Each phase's persona nodes start after one of these nodes and join at the next.
    stops = [
        PREPARE_NODE,
        OPEN_ITERATION_NODE,
        QUESTIONS_DONE_NODE,
        RESPONSES_DONE_NODE,
        CHECK_NODE,
    ]
    bodies = (nodes.analyse, nodes.ask, nodes.answer, nodes.assess)
    for phase, body, before, after in zip(PHASES, bodies, stops[:-1], stops[1:], strict=True):
        phase_nodes = [nodes.node_name(phase, name) for name in setup.names]
        for name, node in zip(setup.names, phase_nodes, strict=True):
            builder.add_node(node, nodes.persona_node(body, name, setup, binding))
            builder.add_edge(before, node)
        builder.add_edge(phase_nodes, after)  # waits for every agent of the phase
    route, targets = round_router(
        CONSENSUS_NODE, pause_after_round=pause_after_round, next_node=OPEN_ITERATION_NODE
    )
    builder.add_conditional_edges(CHECK_NODE, loop_node(route), targets)
    if pause_after_round:
        add_review(
            builder, nodes.round_review(setup), open_node=OPEN_ITERATION_NODE, finish=CONSENSUS_NODE
        )
    builder.add_edge(CONSENSUS_NODE, RESPOND_NODE)
    return builder
