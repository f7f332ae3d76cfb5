"""The solver debate's settings checks, input check, fixed settings, node names and stages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from debategraph.nodes.agent import OfficialLike, officials_of
from debategraph.nodes.roster import Roster, parse_member
from debategraph.nodes.rounds import OPEN_ROUND_NODE, REVIEW_NODE, check_max_rounds, require_text
from debategraph.state.records import AgentSpec, Participant
from debategraph.strategies.answers import ANSWER_KINDS, CHOICES_RULE, valid_choices
from debategraph.strategies.decisions import (
    PLURALITY,
    UNANIMITY,
    DecisionProtocol,
    agreement_names,
    agreement_rule,
    parse_agreement,
    parse_protocol,
    protocol_rule,
)
from debategraph.strategies.topology import (
    DEFAULT_NEIGHBOURS,
    SINGLE,
    Topology,
    make_topology,
    solver_names,
)

#: One solver as given: its name, or its record (a :class:`Participant` or its dict:
#: ``name`` and optionally ``model``, ``tools``, ``agent``, ``max_tool_calls``,
#: ``instructions``).
SolverLike = str | AgentSpec | Mapping[str, Any]
#: The solvers as given: how many (named ``solver_1..n``), or each one's name or record.
AgentsLike = int | Sequence[SolverLike]
#: What a solver record holds (for errors).
SOLVER_FIELDS = (
    "a non-empty 'name' and optionally 'model', 'tools', 'agent', 'max_tool_calls', 'instructions'"
)
#: The topology as given: a name, an adjacency mapping, or a topology.
TopologyLike = str | Mapping[str, Sequence[str]] | Topology

#: The factory's defaults (``build_solver_debate``'s, which the CLI's options read):
#: solvers, rounds and topology.
DEFAULT_AGENTS = 4
DEFAULT_MAX_ROUNDS = 3
DEFAULT_TOPOLOGY = "ring"

MIN_VIEW_CHARS = 40
#: Characters of each neighbour's reasoning a solver reads: its start and its end.
DEFAULT_VIEW_CHARS = 340

#: The stage of every solver's answer.
SOLVE_STAGE = "solve"
#: The stage of the judge's pick (the decision protocol ``judge``, or a fallback to it).
JUDGE_STAGE = "judge"
#: The judge's name: the agent its turn and usage are recorded under.
JUDGE = "judge"

#: The solver debate's officials (agents that are not solvers), with what turns each on:
#: an official's record gives it a model, tools or an agent of its own.
OFFICIALS: dict[str, str] = {
    JUDGE: "decision='judge' (--decision judge), or a supermajority or unanimity that "
    "falls back to judge",
}

#: What ``decision`` may be: a protocol's text (``supermajority:3/4:judge``) or a protocol.
DecisionLike = str | DecisionProtocol
#: What ``stop_when`` may be: an agreement's text (``supermajority:2/3``), a protocol, or none.
StopWhenLike = str | DecisionProtocol | None

#: Node names. ``open_round``, ``close_round`` and ``human`` are the shared round loop's
#: names: the thread tools know a round boundary by them, and older threads resume.
CLOSE_ROUND_NODE = "close_round"
AGGREGATE_NODE = "aggregate"

#: Names a solver may not take: the graph's other nodes.
RESERVED_NAMES = frozenset({OPEN_ROUND_NODE, CLOSE_ROUND_NODE, AGGREGATE_NODE, REVIEW_NODE})


def no_description(schema: dict[str, Any]) -> None:
    """Drop a reply schema's description (its class docstring) from its JSON schema.

    The ``json_schema_extra`` of the solvers' and the judge's reply schemas: the tool's
    name says what the reply is, and every call sends the schema.

    Args:
        schema: The JSON schema pydantic made, changed in place.
    """
    schema.pop("description", None)


_require_question = require_text("question", 'give the problem text, e.g. "2+3?"')


def check_input(state: Mapping[str, Any]) -> None:
    """A run's input check: an empty question, choices that are not 2 to 26 texts, a bad kind.

    The first thing a round does.

    Args:
        state: The input.

    Raises:
        ValueError: One line naming the bad value and what is allowed.
    """
    _require_question(state)
    choices = state.get("choices")
    if choices is not None and not valid_choices(choices):
        raise ValueError(f"choices must be {CHOICES_RULE}, got {choices!r}")
    kind = state.get("answer_kind")
    if kind is not None and kind not in ANSWER_KINDS:
        raise ValueError(f"answer_kind must be one of {', '.join(ANSWER_KINDS)}, got {kind!r}")
    if kind == "expression" and choices:
        raise ValueError("answer_kind 'expression' is for a question without choices")


@dataclass(frozen=True)
class SolverDebateSetup:
    """A solver debate's fixed settings, shared by its nodes (validated by the factory).

    Attributes:
        topology: Who hears whom; its solvers, in order, name the solver nodes.
        max_rounds: Round cap.
        token_budget: Stop after the round in which this many tokens were used.
        stop_when_unanimous: Whether ``stop_when`` came from ``stop_when_unanimous=True``
            (or is unanimity).
        view_chars: How much of each neighbour's reasoning a solver reads (``None``: all).
        pause_after_round: Whether a human reviews each round.
        time_limit_s: Seconds the debate may take (``None``: no limit).
        members: The solvers given as records, by name (a solver given by count or
            name alone has none: it is a plain agent on the graph's model).
        tools: The tools of every solver that has no tools (nor agent) of its own.
        protocol: How the final answers become one (a decision protocol).
        officials: The officials given records (the judge), by name.
        stop_when: Stop after a round whose answers agree by this protocol (``None``:
            never early).
    """

    topology: Topology
    max_rounds: int
    token_budget: int | None
    stop_when_unanimous: bool
    view_chars: int | None
    pause_after_round: bool
    time_limit_s: float | None = None
    members: Mapping[str, AgentSpec] = field(default_factory=dict)
    tools: tuple[Any, ...] = ()
    protocol: DecisionProtocol = field(default_factory=lambda: DecisionProtocol(PLURALITY))
    officials: Mapping[str, AgentSpec] = field(default_factory=dict)
    stop_when: DecisionProtocol | None = None

    @property
    def round_cap(self) -> int:
        """The most rounds a run takes: the round cap."""
        return self.max_rounds

    @property
    def solvers(self) -> list[str]:
        """The solvers' names, in order."""
        return self.topology.solvers

    def record(self, solver: str) -> AgentSpec:
        """The record a solver's agent is made from: its own, with the shared tools.

        Args:
            solver: The solver's name.

        Returns:
            Its record (a plain one for a solver given by count or name); without tools
            or an agent of its own, it has :attr:`tools`.
        """
        member = self.members.get(solver) or Participant(name=solver)
        if self.tools and not member.tools and member.agent is None:
            member = member.model_copy(update={"tools": self.tools})
        return member


def _solver(value: object) -> AgentSpec:
    if isinstance(value, AgentSpec):
        return value
    if isinstance(value, Mapping):
        return parse_member(value, Participant, "solver", SOLVER_FIELDS)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"solver name {value!r} must be a non-empty string")
    return Participant(name=value)  # a named agent: its name stripped


def check_solvers(agents: Sequence[Any], *, minimum: int = 2) -> list[AgentSpec]:
    """Check solvers given by name or record: names unique, none a reserved node name.

    Args:
        agents: Each solver's name, or its record (an ``AgentSpec`` such as a
            :class:`~debategraph.state.records.Participant`, or its dict).
        minimum: Fewest solvers.

    Returns:
        Their records, in order (a name alone makes a plain record).

    Raises:
        ValueError: One line naming the bad value and what is allowed.
    """
    rule = Roster("solver", "a solver debate", _solver, reserved=RESERVED_NAMES, minimum=minimum)
    return rule.check(agents)


def check_solver_names(names: Sequence[str], *, minimum: int = 2) -> list[str]:
    """Check solver names: non-empty strings, unique, none a reserved node name.

    Args:
        names: The names (each names a graph node).
        minimum: Fewest solvers.

    Returns:
        The names, stripped, in order.

    Raises:
        ValueError: One line naming the bad value and what is allowed.
    """
    return [solver.name for solver in check_solvers(names, minimum=minimum)]


def _named(topology: Topology, names: Sequence[str]) -> Topology:
    """``topology``, built over ``solver_1..n``, over ``names`` instead."""
    rename = dict(zip(solver_names(len(names)), names, strict=True))
    return Topology(
        topology.name,
        {rename[s]: tuple(rename[p] for p in heard) for s, heard in topology.neighbours.items()},
    )


def solvers_of(
    agents: AgentsLike, topology: TopologyLike, neighbours: int | None
) -> tuple[Topology, dict[str, AgentSpec]]:
    """The topology over the solvers (counted ``solver_1..n``, or named), and their records.

    Args:
        agents: As for :func:`~debategraph.graphs.solver_debate.build_solver_debate`.
        topology: As for ``build_solver_debate``.
        neighbours: As for ``build_solver_debate``.

    Returns:
        The topology (its solvers name the solver nodes), and the records of the
        solvers given as records (with a model, tools, an agent or instructions), by name.

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    single = isinstance(topology, str) and topology == SINGLE
    names: list[str] | None = None
    members: dict[str, AgentSpec] = {}
    if isinstance(agents, int):
        count = agents
        if isinstance(topology, str) and not single and count < 2:
            raise ValueError(f"agents must be at least 2, got {count}")
    elif isinstance(agents, str | bytes | Mapping | AgentSpec) or not isinstance(agents, Sequence):
        raise ValueError(
            f"agents must be a count or a list of solver names or records, got {agents!r}"
        )
    else:
        records = check_solvers(agents, minimum=1 if single else 2)
        names = [record.name for record in records]
        members = {
            r.name: r
            for r, given in zip(records, agents, strict=True)
            if not isinstance(given, str)
        }
        if single and len(names) != 1:
            raise ValueError(f"topology 'single' has one solver: give one name, got {names!r}")
        count = len(names)
    k = min(DEFAULT_NEIGHBOURS, count - 1) if neighbours is None else neighbours
    topo = make_topology(topology, count, k)
    if names is not None and isinstance(topology, str):
        topo = _named(topo, names)
    elif names is not None and set(names) != set(topo.solvers):
        raise ValueError(
            f"agents {names!r} are not the topology's solvers ({', '.join(topo.solvers)}): "
            "name them in the topology only"
        )
    check_solver_names(topo.solvers, minimum=1)
    return topo, members


def solver_debate_setup(
    *,
    agents: AgentsLike,
    max_rounds: int,
    topology: TopologyLike,
    neighbours: int | None,
    token_budget: int | None,
    stop_when_unanimous: bool,
    pause_after_round: bool,
    view_chars: int | None,
    time_limit_s: float | None,
    tools: Sequence[Any] = (),
    decision: DecisionLike = PLURALITY,
    officials: Sequence[OfficialLike] = (),
    stop_when: StopWhenLike = None,
) -> SolverDebateSetup:
    """Check a solver debate's settings and build its topology.

    The settings are :func:`~debategraph.graphs.solver_debate.build_solver_debate`'s,
    documented there.

    Returns:
        The settings.

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    check_max_rounds(max_rounds)
    if token_budget is not None and token_budget < 1:
        raise ValueError(f"token budget must be a positive number of tokens, got {token_budget}")
    if view_chars is not None and view_chars < MIN_VIEW_CHARS:
        raise ValueError(
            f"view_chars must be at least {MIN_VIEW_CHARS} (or None for all), got {view_chars}"
        )
    if isinstance(tools, str | bytes | Mapping) or not isinstance(tools, Sequence):
        raise ValueError(f"tools must be a list of tools or built-in tool names, got {tools!r}")
    topo, members = solvers_of(agents, topology, neighbours)
    protocol = decision_protocol(decision)
    agreement = stop_protocol(stop_when, stop_when_unanimous)
    records = officials_of(officials, OFFICIALS, "a solver debate")
    if JUDGE in records and not protocol.may_judge:
        raise ValueError(
            f"official {JUDGE!r} is given a record, but decision {protocol.spec!r} never "
            f"consults a judge: set {OFFICIALS[JUDGE]}, or drop the judge's record"
        )
    taken = [s for s in topo.solvers if s.lower() == JUDGE]
    if protocol.may_judge and taken:
        raise ValueError(
            f"solver name {taken[0]!r} is the judge's (decision {protocol.spec!r}): "
            "rename the solver"
        )
    return SolverDebateSetup(
        topology=topo,
        members=members,
        tools=tuple(tools),
        max_rounds=max_rounds,
        token_budget=token_budget,
        stop_when_unanimous=agreement is not None and agreement.name == UNANIMITY,
        stop_when=agreement,
        view_chars=view_chars,
        pause_after_round=pause_after_round,
        time_limit_s=time_limit_s,
        protocol=protocol,
        officials=records,
    )


def decision_protocol(decision: object) -> DecisionProtocol:
    """The ``decision`` setting, parsed: a protocol's text or a protocol.

    Args:
        decision: As for :func:`~debategraph.graphs.solver_debate.build_solver_debate`.

    Returns:
        The protocol.

    Raises:
        ValueError: One line naming the bad value and the protocols allowed.
    """
    if isinstance(decision, DecisionProtocol):
        return decision
    if not isinstance(decision, str):
        raise ValueError(f"decision {decision!r} is not a protocol: use {protocol_rule()}")
    return parse_protocol(decision)


def stop_protocol(stop_when: object, unanimous: bool) -> DecisionProtocol | None:
    """The ``stop_when`` setting, parsed; ``stop_when_unanimous=True`` is ``"unanimity"``.

    Args:
        stop_when: As for :func:`~debategraph.graphs.solver_debate.build_solver_debate`.
        unanimous: ``stop_when_unanimous``.

    Returns:
        The agreement to stop on, or ``None``.

    Raises:
        ValueError: One line naming the bad value and the agreements allowed, or the
            two settings disagreeing.
    """
    if stop_when is None:
        return parse_agreement(UNANIMITY) if unanimous else None
    if isinstance(stop_when, DecisionProtocol):
        if stop_when.name not in agreement_names():
            raise ValueError(
                f"stop_when {stop_when.spec!r} never tells agreement: use {agreement_rule()}"
            )
        protocol = stop_when
    elif isinstance(stop_when, str):
        try:
            protocol = parse_agreement(stop_when)
        except ValueError as exc:
            raise ValueError(f"stop_when {exc}") from None
    else:
        raise ValueError(f"stop_when {stop_when!r} is not a protocol: use {agreement_rule()}")
    if unanimous and protocol.name != UNANIMITY:
        raise ValueError(
            f"stop_when_unanimous=True and stop_when {stop_when!r} disagree: give one "
            "(stop_when_unanimous=True is stop_when='unanimity')"
        )
    return protocol
