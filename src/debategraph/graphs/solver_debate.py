"""Solver debate: N solvers on a sparse topology refine their answers, then decide.

After "Improving Multi-Agent Debate with Sparse Communication Topology": round 1 each
solver answers alone; in rounds 2..R each reads only its neighbours' latest answers (and
its own) and refines; an aggregator applies a decision protocol to the final answers
(a majority vote by default; a judge where the protocol asks for one).

Graph: ``START -> open_round -> <one node per solver> -> close_round``, then back to
``open_round`` (through the review point ``human`` when pausing) or on to
``aggregate -> END``. The solver nodes of a round run in one step, concurrently.
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
from debategraph.nodes import solver_debate as nodes
from debategraph.nodes.agent import OfficialLike
from debategraph.nodes.dual import loop_node
from debategraph.nodes.messages import RESPOND_NODE
from debategraph.nodes.review import add_review
from debategraph.nodes.rounds import OPEN_ROUND_NODE, round_router
from debategraph.nodes.solver_debate.setup import (
    DEFAULT_AGENTS,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_TOPOLOGY,
    DEFAULT_VIEW_CHARS,
    JUDGE,
    AgentsLike,
    DecisionLike,
    StopWhenLike,
    TopologyLike,
    solver_debate_setup,
)
from debategraph.state.solver_debate import SCHEMAS, SolverDebateInput, SolverDebateOutput

GRAPH_NAME = "solver_debate"


@renamed_settings(GRAPH_NAME)
def build_solver_debate(
    model: ModelLike = None,
    *,
    agents: AgentsLike = DEFAULT_AGENTS,
    tools: Sequence[Any] = (),
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    topology: TopologyLike = DEFAULT_TOPOLOGY,
    neighbours: int | None = None,
    token_budget: int | None = None,
    stop_when_unanimous: bool = False,
    stop_when: StopWhenLike = None,
    pause_after_round: bool = False,
    view_chars: int | None = DEFAULT_VIEW_CHARS,
    time_limit_s: float | None = None,
    decision: DecisionLike = "plurality",
    officials: Sequence[OfficialLike] = (),
    state_schema: type[Any] | None = None,
) -> PatternGraph[SolverDebateInput, SolverDebateOutput]:
    """Build the solver debate graph (uncompiled).

    Example:
        ```python
        from debategraph import ModelSpec, Participant, build_solver_debate

        # Any OpenAI-compatible endpoint (base_url: OPENAI_BASE_URL or OpenAI's).
        spec = ModelSpec(model="gpt-4o-mini", timeout_s=60, temperature=0.7)
        solvers = [
            "ann",  # a name alone: the graph's model
            Participant(name="bob", model="gpt-4o"),  # a model of its own (NAME@BASE_URL too)
            {"name": "cy", "tools": ["calculator"]},  # a tool loop before each answer
        ]
        graph = build_solver_debate(spec, agents=solvers, max_rounds=2).compile(
            name="solver_debate"
        )
        result = graph.invoke(
            {"question": "Natalia sold 48 clips in April and half as many in May. How many?"}
        )
        print(result["answer"], result["votes"], result["agreement"])

        # A judge on a model of its own picks among differing final answers:
        judged = build_solver_debate(
            spec, decision="judge", officials=[{"name": "judge", "model": "gpt-4o"}]
        )
        ```

    Args:
        model: Chat model, binding or spec the solvers call. ``None`` reads the model
            from the run's :class:`~debategraph.models.context.Context` (embedded model by default).
        agents: The solvers: how many (>= 2; named ``solver_1..n``), or a list of two or
            more solvers, each its name or its record, mixed: a
            :class:`~debategraph.state.records.Participant` (any
            :class:`~debategraph.state.records.AgentSpec`) or its dict ``{"name": ...,
            "model": ..., "tools": [...], "agent": ..., "max_tool_calls": ...,
            "instructions": ...}`` (all but ``name`` optional). ``model`` is the solver's
            own model (a spec string such as ``local`` or ``NAME@BASE_URL``, a mapping
            with ``api_key_env``, a ``ModelSpec`` or a LangChain chat model; default:
            ``model`` below); ``tools`` LangChain tools or built-in tool names
            (``calculator``): the solver runs a tool loop of at most ``max_tool_calls``
            calls before each answer, each call recorded before its turn; ``agent`` a
            Runnable or compiled graph of its own (messages in, messages out) whose
            answer is read with one structured call; ``instructions`` are added to its
            system prompt. Names are unique and non-empty, none a node name of the
            graph: ``open_round``, ``close_round``, ``aggregate``, ``human``, nor
            ``user`` (nor ``judge`` when the decision may consult the judge); each names
            its solver's node, and the topology is over the names.
            A count is ignored when ``topology`` is a mapping or
            :class:`~debategraph.strategies.topology.Topology`, which name their own
            solvers; names must then be the same solvers. Records given as dicts keep
            the settings JSON-serialisable (stored with a thread, so ``resume`` and
            ``fork`` use each solver's model; keys only by ``api_key_env``).
        tools: Tools of every solver that has no tools nor agent of its own (LangChain
            tools or built-in tool names, e.g. ``["calculator"]``). Tools need a model
            with tool calls: the embedded model has none (a run on it stops at the
            first call, with one line).
        max_rounds: Round cap (>= 1): rounds of answering; round 1 is independent
            answers. ``rounds`` is its deprecated old name.
        topology: ``ring``, ``full``, ``star``, ``single`` (one solver alone: a count
            in ``agents`` is ignored, names must be one), an adjacency mapping
            ``{solver: [solvers it hears]}``, or a
            :class:`~debategraph.strategies.topology.Topology`.
        neighbours: For ``ring``: how many nearest solvers each hears (1..agents-1);
            default 2 (1 with two solvers).
        token_budget: Stop after the round in which this many tokens were used.
        stop_when_unanimous: Stop after a round in which every solver gave the same answer:
            ``stop_when="unanimity"`` (kept as its alias).
        stop_when: Stop after a round whose answers agree by this protocol, checked as
            each round closes (round 1 included): ``unanimity`` (every solver gave the same
            answer; reason ``unanimous``), ``supermajority[:THRESHOLD]`` (the top answer's
            share of the solvers reaches THRESHOLD in (0.5, 1], default 2/3) or
            ``confidence[:THRESHOLD]`` (the top answer's backers' summed confidence over
            all solvers reaches THRESHOLD in (0, 1], default 0.8); reason ``converged``.
            The same notion of agreement as the decision protocols of those names
            (:func:`~debategraph.strategies.decisions.agreed`); a parsed protocol works
            too. ``None``: only the other conditions end the debate early.
        pause_after_round: After each round that does not end the debate, ``interrupt()``
            with the round's answers; resume with ``Command(resume={"approve": True})`` or
            ``Command(resume={"interject": "text"})`` (the text is shown to every solver
            next round). Needs a checkpointer.
        view_chars: How much of each neighbour's reasoning a solver reads after round 1:
            the first and last ``view_chars / 2`` characters (>= 40); ``None``: all of it.
            A solver reads its own previous answer, and of each neighbour the answer and
            this gist, so prompts stay the same size however long replies grow.
        time_limit_s: Seconds the debate may take (``None``: no limit). At the deadline
            the calls in flight are cancelled (recorded as abstentions with the reason),
            none starts after it, and the debate ends ``time_limit``.
        decision: How the final answers become one: a decision protocol's text
            (:mod:`debategraph.strategies.decisions`): ``plurality`` (the default: most
            votes, ties reported), ``weighted`` (highest summed confidence),
            ``supermajority[:THRESHOLD[:FALLBACK]]``, ``unanimity[:FALLBACK]`` or
            ``judge`` (an agent reads the final answers and reasons and picks one; it is
            called only when the answers differ); or a parsed
            :class:`~debategraph.strategies.decisions.DecisionProtocol`. The result's
            ``answer``, ``votes``, ``agreement`` and ``tie_break`` are the decision's;
            ``decision`` is the whole :class:`~debategraph.state.solver_debate.Decision`
            (its fallback, reason and judge's model), also kept in ``decisions`` by key.
        officials: The judge's record (an :class:`~debategraph.state.records.AgentSpec`
            or a dict ``{"name": "judge", "model": ..., "tools": [...], "agent": ...}``),
            giving it a model, tools or an agent of its own; without one the judge calls
            ``model``. Only for a decision that may consult a judge. Its turn (stage
            ``judge``, agent ``judge``) is in the transcript and its usage is charged
            to ``judge`` and its model.
        state_schema: State schema; may extend
            :class:`~debategraph.state.solver_debate.SolverDebateState` (the default).

    Returns:
        The uncompiled graph; ``compile(checkpointer=..., name=...)`` it.

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    setup = solver_debate_setup(**settings_of(locals()))
    builder, binding = skeleton(model, SCHEMAS, state_schema, setup, nodes.outcome, GRAPH_NAME)
    builder.add_node(OPEN_ROUND_NODE, nodes.make_open_round(setup))
    for solver in setup.solvers:
        record = setup.record(solver)
        builder.add_node(
            solver, nodes.make_solver(record, setup.topology, binding, setup.view_chars)
        )
        builder.add_edge(OPEN_ROUND_NODE, solver)
    builder.add_node(nodes.CLOSE_ROUND_NODE, nodes.make_close_round(setup, binding))
    builder.add_node(
        nodes.AGGREGATE_NODE,
        nodes.make_aggregate(setup.protocol, setup.officials.get(JUDGE), binding),
    )
    builder.start_at(OPEN_ROUND_NODE)
    builder.add_edge(setup.solvers, nodes.CLOSE_ROUND_NODE)  # waits for every solver
    route, targets = round_router(nodes.AGGREGATE_NODE, pause_after_round=pause_after_round)
    builder.add_conditional_edges(nodes.CLOSE_ROUND_NODE, loop_node(route), targets)
    if setup.pause_after_round:
        add_review(builder, nodes.round_review(setup), finish=nodes.AGGREGATE_NODE)
    builder.add_edge(nodes.AGGREGATE_NODE, RESPOND_NODE)
    return builder
