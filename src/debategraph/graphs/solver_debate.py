"""Solver debate: N solvers on a sparse topology refine their answers, then vote.

After "Improving Multi-Agent Debate with Sparse Communication Topology": round 1 each
solver answers alone; in rounds 2..R each reads only its neighbours' latest answers (and
its own) and refines; an aggregator takes a majority vote of the final answers.

Graph: ``START -> open_round -> <one node per solver> -> close_round``, then back to
``open_round`` (through the review point ``human`` when pausing) or on to
``aggregate -> END``. The solver nodes of a round run in one step, concurrently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from debategraph.errors import UsageError
from debategraph.graphs.pattern import Launch, Pattern, Values, pausing, time_limit_option
from debategraph.strategies.topology import SINGLE, TOPOLOGY_NAMES, Topology, make_topology

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langgraph.graph import StateGraph

    from debategraph.context import Context
    from debategraph.models import ModelBinding, ModelSpec
    from debategraph.state.solver_debate import SolverDebateInput, SolverDebateOutput

GRAPH_NAME = "solver_debate"
STEPS_PER_ROUND = 3
MIN_VIEW_CHARS = 40
#: Characters of each neighbour's reasoning a solver reads: its start and its end.
DEFAULT_VIEW_CHARS = 340


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
    view_chars: int | None = DEFAULT_VIEW_CHARS,
    time_limit_s: float | None = None,
    state_schema: type[Any] | None = None,
) -> StateGraph[Any, Context, SolverDebateInput, SolverDebateOutput]:
    """Build the solver debate graph (uncompiled).

    Args:
        model: Chat model, binding or spec the solvers call. ``None`` reads the model
            from the run's :class:`~debategraph.context.Context` (embedded model by default).
        agents: Number of solvers (>= 2). Ignored when ``topology`` is a mapping or
            :class:`Topology`, which name their own solvers.
        rounds: Rounds of answering (>= 1); round 1 is independent answers.
        topology: ``ring``, ``full``, ``star``, ``single`` (one solver alone: ``agents``
            is ignored), an adjacency mapping ``{solver: [solvers it hears]}``, or a
            :class:`Topology`.
        neighbours: For ``ring``: how many nearest solvers each hears (1..agents-1);
            default 2 (1 with two solvers).
        token_budget: Stop after the round in which this many tokens were used.
        stop_when_unanimous: Stop after a round in which every solver gave the same answer.
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
        state_schema: State schema; may extend
            :class:`~debategraph.state.SolverDebateState` (the default).

    Returns:
        The uncompiled graph; ``compile(checkpointer=..., name=...)`` it.

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    from langgraph.graph import END, START, StateGraph

    from debategraph.context import Context
    from debategraph.nodes import rounds as loop
    from debategraph.nodes import solver as nodes
    from debategraph.nodes.agent import bind
    from debategraph.nodes.dual import loop_node
    from debategraph.state.solver_debate import (
        SolverDebateInput,
        SolverDebateOutput,
        SolverDebateState,
    )

    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    if token_budget is not None and token_budget < 1:
        raise ValueError(f"token budget must be a positive number of tokens, got {token_budget}")
    if view_chars is not None and view_chars < MIN_VIEW_CHARS:
        raise ValueError(
            f"view_chars must be at least {MIN_VIEW_CHARS} (or None for all), got {view_chars}"
        )
    loop.check_time_limit(time_limit_s)
    if isinstance(topology, str) and topology != SINGLE and agents < 2:
        raise ValueError(f"agents must be at least 2, got {agents}")
    k = min(2, agents - 1) if neighbours is None else neighbours
    topo = make_topology(topology, agents, k)
    own_nodes = {nodes.CLOSE_ROUND_NODE, nodes.AGGREGATE_NODE, *loop.BOUNDARY_NODES}
    reserved = sorted(own_nodes & set(topo.solvers))
    if reserved or any(name.startswith("__") for name in topo.solvers):
        raise ValueError(
            f"solver name(s) {', '.join(reserved) or 'starting with __'} are reserved node names"
        )
    binding = bind(model)

    builder: StateGraph[Any, Context, SolverDebateInput, SolverDebateOutput] = StateGraph(
        state_schema or SolverDebateState,
        context_schema=Context,
        input_schema=SolverDebateInput,
        output_schema=SolverDebateOutput,
    )
    builder.add_node(
        loop.OPEN_ROUND_NODE,
        loop.open_round_node(nodes.check_question, time_limit_s=time_limit_s),
    )
    for solver in topo.solvers:
        builder.add_node(solver, nodes.make_solver(solver, topo, binding, view_chars))
        builder.add_edge(loop.OPEN_ROUND_NODE, solver)
    conditions = nodes.termination_conditions(rounds, token_budget, stop_when_unanimous)
    builder.add_node(nodes.CLOSE_ROUND_NODE, loop_node(nodes.make_close_round(conditions)))
    builder.add_node(nodes.AGGREGATE_NODE, loop_node(nodes.aggregate))
    builder.add_edge(START, loop.OPEN_ROUND_NODE)
    builder.add_edge(topo.solvers, nodes.CLOSE_ROUND_NODE)  # waits for every solver
    route, targets = loop.round_router(nodes.AGGREGATE_NODE, pause_after_round=pause_after_round)
    builder.add_conditional_edges(nodes.CLOSE_ROUND_NODE, loop_node(route), targets)
    if pause_after_round:
        loop.add_review(builder, nodes.round_review(rounds))
    builder.add_edge(nodes.AGGREGATE_NODE, END)
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


# -- the pattern's declaration: CLI input, title, summary, rendering ------------------------


def solve_command(
    question: Annotated[str, typer.Argument(help="The problem to solve.")],
    agents: Annotated[int, typer.Option("--agents", help="Number of solvers.")] = 4,
    rounds: Annotated[int, typer.Option("--rounds", help="Rounds of answering.")] = 3,
    topology: Annotated[
        str,
        typer.Option(
            "--topology",
            help="ring, full, star, single (one solver), or a JSON file "
            "{solver: \\[solvers it hears]}.",
        ),
    ] = "ring",
    neighbours: Annotated[
        int | None,
        typer.Option("--neighbours", help="For ring: nearest solvers each hears \\[default: 2]."),
    ] = None,
    token_budget: Annotated[
        int | None, typer.Option("--token-budget", help="Stop after the round reaching this.")
    ] = None,
    unanimous: Annotated[
        bool, typer.Option("--stop-when-unanimous", help="Stop early once all agree.")
    ] = False,
    time_limit: Annotated[
        str | None,
        typer.Option(
            "--time-limit",
            help="End the debate after this long (30m, 90s, 1h): calls in flight are cancelled.",
        ),
    ] = None,
    view_chars: Annotated[
        int,
        typer.Option(
            "--view-chars",
            help="Characters of each neighbour's reasoning a solver reads (0: all of it).",
        ),
    ] = DEFAULT_VIEW_CHARS,
    choices: Annotated[
        list[str] | None,
        typer.Option(
            "--choice",
            help="A choice of a multiple-choice question (repeat, in order A, B, ...): "
            "the solvers answer with its letter.",
        ),
    ] = None,
) -> Launch:
    """Solvers debate a math question on a communication topology, then vote."""
    if not question.strip():
        raise UsageError('question is empty: give the problem text, e.g. debategraph solve "2+3?"')
    settings: dict[str, Any] = {
        "agents": agents,
        "rounds": rounds,
        "topology": parse_topology(topology),
        "neighbours": neighbours,
        "token_budget": token_budget,
        "stop_when_unanimous": unanimous,
        "view_chars": view_chars or None,
    }
    seconds = time_limit_option(time_limit)
    if seconds is not None:
        settings["time_limit_s"] = seconds
    graph_input: dict[str, Any] = {"question": question}
    if choices:
        from debategraph.strategies.answers import CHOICES_RULE, valid_choices

        if not valid_choices(choices):
            raise UsageError(f"--choice: give {CHOICES_RULE}, got {len(choices)}: {choices}")
        graph_input["choices"] = list(choices)
    return Launch(settings, graph_input)


def parse_topology(value: str) -> str | dict[str, list[str]]:
    """``--topology``: a topology name, or a JSON file ``{solver: [solvers it hears]}``.

    Args:
        value: The option's value.

    Returns:
        The name, or the adjacency mapping.

    Raises:
        UsageError: If it is neither, naming the value and what is allowed.
    """
    if value in TOPOLOGY_NAMES:
        return value
    path = Path(value)
    if not path.suffix == ".json" and not path.is_file():
        raise UsageError(
            f"unknown topology {value!r}: use {', '.join(TOPOLOGY_NAMES)} or a JSON file"
        )
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise UsageError(f"--topology {value}: cannot read: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"--topology {value}: not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict) or not all(
        isinstance(v, list) and all(isinstance(x, str) for x in v) for v in data.values()
    ):
        raise UsageError(f"--topology {value}: expected an object {{solver: [solvers it hears]}}")
    return {str(k): list(v) for k, v in data.items()}


def _summary(values: Values) -> dict[str, Any]:
    return {
        "answer": values.get("answer"),
        "votes": values.get("votes", {}),
        "agreement": values.get("agreement", 0.0),
        "tie_break": values.get("tie_break"),
        "rounds": [r.model_dump(include={"round", "answers"}) for r in values.get("rounds", [])],
    }


def _describe(settings: Values) -> str:
    topo = settings["topology"]
    if isinstance(topo, dict):
        shape = f"custom topology of {len(topo)} solvers"
    elif topo == SINGLE:
        shape = "1 solver alone"
    elif topo == "ring":
        k = settings["neighbours"] or min(2, settings["agents"] - 1)
        shape = f"{settings['agents']} solvers, ring k={k}"
    else:
        shape = f"{settings['agents']} solvers, {topo}"
    return f"{shape}, {settings['rounds']} rounds{pausing(settings)}"


def _tally(answers: Mapping[str, str | None]) -> str:
    counts: dict[str, int] = {}
    for answer in answers.values():
        key = answer if answer is not None else "abstain"
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{k} x{v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


def _progress(node: str, update: Values) -> list[str]:
    records = update.get("rounds") if node == "close_round" else None
    if not records:
        return []
    record = records[0]
    return [
        f"  round {record.round} done: {_tally(record.answers)} · "
        f"{record.usage.total_tokens:,} tokens this round"
    ]


def _headline(result: Values) -> list[str]:
    votes = result["votes"]
    winner = result["answer"]
    n = sum(len(r["answers"]) for r in result["rounds"][-1:]) or sum(votes.values())
    shown = escape(str(winner)) if winner is not None else "none (every solver abstained)"
    lines = [
        f"answer [bold]{shown}[/bold]  votes {votes.get(winner, 0)}/{n} · "
        f"agreement {result['agreement']:.2f}"
    ]
    if result.get("tie_break"):
        lines.append(f"  {escape(result['tie_break'])}")
    return lines


def votes_markdown(values: Values) -> list[str]:
    """The voted answer, the vote counts, the agreement and the tie-break, as Markdown.

    The solver debate's section of ``export --format md``.

    Args:
        values: The thread's state values.

    Returns:
        The lines, each paragraph followed by a blank line (none for a field not set).
    """
    from debategraph.checkpoints.markdown import inline, ranked_table

    lines: list[str] = []
    if "answer" in values:
        answer = values.get("answer")
        shown = f"**{inline(str(answer))}**" if answer is not None else "none"
        lines += [f"Answer: {shown}", ""]
    votes = values.get("votes")
    if isinstance(votes, Mapping) and votes:
        lines += [*ranked_table(votes, ("answer", "votes")), ""]
    agreement = values.get("agreement")
    if isinstance(agreement, int | float) and "votes" in values:
        lines += [f"Agreement: {agreement:.2f}", ""]
    if values.get("tie_break"):
        lines += [f"Tie-break: {inline(str(values['tie_break']))}", ""]
    return lines


def _agents(settings: Values) -> int:
    topo = settings["topology"]
    if topo == SINGLE:
        return 1
    return len(topo) if isinstance(topo, dict) else int(settings["agents"])


PATTERN = Pattern(
    name=GRAPH_NAME,
    build=build_solver_debate,
    command=solve_command,
    recursion_limit=lambda s: recursion_limit(int(s["rounds"])),
    title=lambda values: str(values.get("question") or ""),
    summary=_summary,
    describe=_describe,
    agents_per_round=_agents,
    headline=_headline,
    progress=_progress,
    result_markdown=votes_markdown,
)
