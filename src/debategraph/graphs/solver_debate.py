"""Solver debate: N solvers on a sparse topology refine their answers, then vote.

After "Improving Multi-Agent Debate with Sparse Communication Topology": round 1 each
solver answers alone; in rounds 2..R each reads only its neighbours' latest answers (and
its own) and refines; an aggregator takes a majority vote of the final answers.

Graph: ``START -> open_round -> <one node per solver> -> close_round``, then back to
``open_round`` or on to ``aggregate -> END``. The solver nodes of a round run in one
step, concurrently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph

from debategraph.context import Context
from debategraph.models import ModelBinding, ModelSpec, bind_model
from debategraph.nodes.human import make_round_review, review_payload
from debategraph.nodes.solver import (
    AGGREGATE_NODE,
    CLOSE_ROUND_NODE,
    HUMAN_NODE,
    OPEN_ROUND_NODE,
    aggregate,
    make_after_close_round,
    make_close_round,
    make_solver,
    open_round,
)
from debategraph.state import (
    SolverDebateInput,
    SolverDebateOutput,
    SolverDebateState,
)
from debategraph.strategies import Topology, make_topology

GRAPH_NAME = "solver_debate"
STEPS_PER_ROUND = 3


def build_solver_debate(
    model: BaseChatModel | ModelBinding | ModelSpec | None = None,
    *,
    agents: int = 4,
    rounds: int = 3,
    topology: str | Mapping[str, Sequence[str]] | Topology = "ring",
    neighbours: int | None = None,
    token_budget: int | None = None,
    stop_when_unanimous: bool = False,
    pause_after_round: bool = False,
    state_schema: type[Any] = SolverDebateState,
) -> StateGraph[Any, Context, SolverDebateInput, SolverDebateOutput]:
    """Build the solver debate graph (uncompiled).

    Args:
        model: Chat model, binding or spec the solvers call. ``None`` reads the model
            from the run's :class:`~debategraph.context.Context` (embedded model by default).
        agents: Number of solvers (>= 2). Ignored when ``topology`` is a mapping or
            :class:`Topology`, which name their own solvers.
        rounds: Rounds of answering (>= 1); round 1 is independent answers.
        topology: ``ring``, ``full``, ``star``, an adjacency mapping
            ``{solver: [solvers it hears]}``, or a :class:`Topology`.
        neighbours: For ``ring``: how many nearest solvers each hears (1..agents-1);
            default 2 (1 with two solvers).
        token_budget: Stop after the round in which this many tokens were used.
        stop_when_unanimous: Stop after a round in which every solver gave the same answer.
        pause_after_round: After each round that does not end the debate, ``interrupt()``
            with the round's answers; resume with ``Command(resume={"approve": True})`` or
            ``Command(resume={"interject": "text"})`` (the text is shown to every solver
            next round). Needs a checkpointer.
        state_schema: State schema; may extend :class:`SolverDebateState`.

    Returns:
        The uncompiled graph; ``compile(checkpointer=..., name=...)`` it.

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    if token_budget is not None and token_budget < 1:
        raise ValueError(f"token budget must be a positive number of tokens, got {token_budget}")
    if isinstance(topology, str) and agents < 2:
        raise ValueError(f"agents must be at least 2, got {agents}")
    k = min(2, agents - 1) if neighbours is None else neighbours
    topo = make_topology(topology, agents, k)
    reserved = sorted(
        {OPEN_ROUND_NODE, CLOSE_ROUND_NODE, AGGREGATE_NODE, HUMAN_NODE} & set(topo.solvers)
    )
    if reserved or any(name.startswith("__") for name in topo.solvers):
        raise ValueError(
            f"solver name(s) {', '.join(reserved) or 'starting with __'} are reserved node names"
        )
    binding = None if model is None else bind_model(model)

    builder: StateGraph[Any, Context, SolverDebateInput, SolverDebateOutput] = StateGraph(
        state_schema,
        context_schema=Context,
        input_schema=SolverDebateInput,
        output_schema=SolverDebateOutput,
    )
    builder.add_node(OPEN_ROUND_NODE, open_round)
    for solver in topo.solvers:
        builder.add_node(solver, make_solver(solver, topo, binding))
        builder.add_edge(OPEN_ROUND_NODE, solver)
    builder.add_node(CLOSE_ROUND_NODE, make_close_round(rounds, token_budget, stop_when_unanimous))
    builder.add_node(AGGREGATE_NODE, aggregate)
    builder.add_edge(START, OPEN_ROUND_NODE)
    builder.add_edge(topo.solvers, CLOSE_ROUND_NODE)  # waits for every solver
    after_round = [HUMAN_NODE if pause_after_round else OPEN_ROUND_NODE, AGGREGATE_NODE]
    builder.add_conditional_edges(
        CLOSE_ROUND_NODE, make_after_close_round(pause_after_round), after_round
    )
    if pause_after_round:
        builder.add_node(
            HUMAN_NODE,
            make_round_review(lambda state: review_payload(state["rounds"][-1], rounds)),
        )
        builder.add_edge(HUMAN_NODE, OPEN_ROUND_NODE)
    builder.add_edge(AGGREGATE_NODE, END)
    return builder


def recursion_limit(rounds: int) -> int:
    """A recursion limit just above what ``rounds`` rounds need.

    The loop ends on its own round cap; this limit is a backstop, set deliberately
    instead of LangGraph's effectively unbounded default.

    Args:
        rounds: The debate's round cap.

    Returns:
        Supersteps allowed.
    """
    return (STEPS_PER_ROUND + 1) * rounds + 5  # + 1: the human review step, if any


#: Compiled without a checkpointer, for ``langgraph.json`` / LangGraph Studio (which
#: provides its own persistence). The model comes from the run's context.
graph = build_solver_debate().compile(name=GRAPH_NAME)
