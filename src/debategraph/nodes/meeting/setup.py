"""The meeting's settings checks, default agenda, fixed settings, node names and stages.

Stages come as :class:`~debategraph.state.meeting.Stage` records or as plain data (a
stages file): ``{name, participants: ["Name: instructions" | {name, instructions}],
max_rounds?, goal?}``. Each participant speaks from one graph node named by the slug of
its name; a participant of several stages is one agent (one node) that speaks in each, on
one model (its own, if it has one: see :func:`stage_agents`). The round controller and
the chair are the meeting's officials (:data:`OFFICIALS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel

from debategraph.nodes.agent import OfficialLike, officials_of
from debategraph.nodes.conversation import DEFAULT_KEEP_LAST as DEFAULT_KEEP_LAST
from debategraph.nodes.roster import Roster, parse_member, parse_participant, slug
from debategraph.nodes.rounds import OPEN_ROUND_NODE, REVIEW_NODE, check_time_limit, require_text
from debategraph.state.meeting import MeetingState, Stage
from debategraph.state.records import USER, AgentSpec, Participant

#: A stage as given: a record, or its data (``{name, participants, max_rounds?, goal?}``).
StageLike = Stage | Mapping[str, Any]
#: An agent as given to ``agents=``: a record, or its data (``{name, model?, tools?,
#: agent?, max_tool_calls?, instructions?}``).
AgentLike = Participant | Mapping[str, Any]

#: A run's input check: refuses an empty topic (the first thing a round does).
check_input = require_text("topic", 'give what to decide, e.g. "Adopt a 4-day week?"')

#: Node names besides the participants'.
CONTROLLER_NODE = "controller"
DECIDE_NODE = "decide"
#: The agent the controller's and the final decision's calls are recorded as.
CONTROLLER_AGENT = "controller"
CHAIR_AGENT = "chair"
#: The meeting's officials (``officials=``, an agents file's entries so named): name ->
#: what it does.
OFFICIALS: Mapping[str, str] = {
    CONTROLLER_AGENT: "decides after each round whether the stage goes on",
    CHAIR_AGENT: "gives the final decision",
}
#: What of an agent's record makes its agent (the rest is a stage's: name, instructions).
AGENT_FIELDS = ("model", "tools", "agent", "max_tool_calls")
#: The stage of the chair's final decision in the transcript.
DECISION_STAGE = "decision"

#: Names a participant may not take (compared as slugs): the graph's other nodes and
#: agents, the human, and the state's keys (LangGraph forbids a node named like a key).
RESERVED_NAMES = frozenset(
    {
        OPEN_ROUND_NODE,
        REVIEW_NODE,
        CONTROLLER_NODE,
        DECIDE_NODE,
        CHAIR_AGENT,
        USER,
        *MeetingState.__required_keys__,
        *MeetingState.__optional_keys__,
    }
)

#: The keys a stage given as data may have.
STAGE_FIELDS = ("name", "participants", "max_rounds", "goal")

#: The default agenda, as plain data (what a ``--stages`` file holds).
#: The round cap of a stage that sets none, when none is given.
DEFAULT_MAX_ROUNDS = 2

DEFAULT_STAGES: tuple[Mapping[str, Any], ...] = (
    {
        "name": "presentation",
        "participants": (
            "Presenter: presents the topic clearly and neutrally: the background, the "
            "options and the open questions",
        ),
        "max_rounds": 1,
        "goal": "Lay out the topic: the facts, the options and what needs deciding.",
    },
    {
        "name": "discussion",
        "participants": (
            "Advocate: argues for the opportunities: what could go right and why it is worth doing",
            "Skeptic: probes the risks: what could go wrong, the costs and the hidden assumptions",
        ),
        "goal": "Weigh the opportunities against the risks; answer each other's points.",
    },
    {
        "name": "summary",
        "participants": (
            "Summarizer: summarises the discussion faithfully: where the participants "
            "agree, where they differ, and what they could decide",
        ),
        "max_rounds": 1,
        "goal": "Sum up the meeting and propose a decision.",
    },
)


def _participant(value: Any) -> Participant:
    return parse_participant(value, "participant")


#: How a stage's participants are checked (the group is named per stage).
PARTICIPANTS = Roster(
    "participant",
    "a stage",
    _participant,
    key=slug,
    reserved=RESERVED_NAMES,
    minimum=1,
    node_names=False,
)


def _check_cap(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a whole number of at least 1, got {value!r}")
    return value


def parse_stage(value: Any, position: int) -> Stage:
    """A :class:`Stage` from one or from its data, with its participants checked.

    Args:
        value: The stage as given.
        position: Its 1-based place in the list (for errors).

    Returns:
        The stage (its ``max_rounds`` as given, possibly ``None``).

    Raises:
        ValueError: One line naming the bad value and what is allowed.
    """
    if isinstance(value, BaseModel):
        # its fields as they are: a participant's own chat model, tools or agent are
        # Python objects that a dump would turn into data
        value = {k: getattr(value, k) for k in type(value).model_fields}
    if not isinstance(value, Mapping):
        raise ValueError(
            f"stage {position} must be a Stage or a mapping with 'name' and 'participants', "
            f"got {value!r}"
        )
    unknown = sorted(str(k) for k in value if k not in STAGE_FIELDS)
    if unknown:
        raise ValueError(
            f"stage {position} has unknown field {unknown[0]!r}: a stage has "
            f"{', '.join(STAGE_FIELDS)}"
        )
    name = value.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"stage {position} has no name: give every stage a non-empty 'name'")
    name = name.strip()
    participants = value.get("participants")
    if participants is None or (isinstance(participants, Sequence) and not participants):
        raise ValueError(
            f"stage {name!r} has no participants: give at least one, as 'Name: instructions' "
            "or {name, instructions}"
        )
    try:
        parsed = replace(PARTICIPANTS, group=f"stage {name!r}").check(participants)
    except ValueError as exc:
        raise ValueError(f"stage {name!r}: {exc}") from None
    cap = value.get("max_rounds")
    if cap is not None:
        _check_cap(cap, f"stage {name!r}: max_rounds")
    goal = value.get("goal") or ""
    if not isinstance(goal, str):
        raise ValueError(f"stage {name!r}: goal must be text, got {goal!r}")
    return Stage(name=name, participants=tuple(parsed), max_rounds=cap, goal=goal)


def parse_stages(stages: Any, max_rounds: int) -> tuple[Stage, ...]:
    """Every stage, checked, with its round cap filled in.

    Args:
        stages: The stages as given (a list).
        max_rounds: The cap of a stage that names none.

    Returns:
        The stages, each with an ``int`` ``max_rounds``.

    Raises:
        ValueError: One line naming the bad value and what is allowed.
    """
    _check_cap(max_rounds, "max_rounds")
    if isinstance(stages, str | Mapping | BaseModel) or not isinstance(stages, Sequence):
        raise ValueError(f"stages must be a list of stages, got {stages!r}")
    if not stages:
        raise ValueError("stages is empty: give at least one stage with its participants")
    parsed = [parse_stage(value, i) for i, value in enumerate(stages, start=1)]
    seen: dict[str, str] = {}
    nodes: dict[str, tuple[str, str]] = {}
    for stage in parsed:
        key = stage.name.lower()
        if key in seen:
            raise ValueError(
                f"duplicate stage name {stage.name!r}: {seen[key]!r} is the same name; "
                "give every stage a different name"
            )
        seen[key] = stage.name
        for name in stage.names:
            node = slug(name)
            first = nodes.setdefault(node, (name, stage.name))
            if first[0] != name:
                raise ValueError(
                    f"participant {name!r} of stage {stage.name!r} and {first[0]!r} of stage "
                    f"{first[1]!r} read as the same name {node!r}: spell one agent the same "
                    "way in every stage, or give them different names"
                )
    return tuple(
        s if s.max_rounds is not None else s.model_copy(update={"max_rounds": max_rounds})
        for s in parsed
    )


def stage_agents(
    stages: Sequence[Stage], agents: Sequence[AgentLike] = ()
) -> tuple[tuple[Stage, ...], dict[str, Participant]]:
    """Each participant's agent: its model, tools or agent, from the stages and ``agents``.

    A participant of several stages is one agent: what makes its agent (``model``,
    ``tools``, ``agent``, ``max_tool_calls``) may be given in any of its stages or in its
    ``agents`` record, but never two different ways (a field left at its default is not
    given). An ``agents`` record names a participant of some stage (case-insensitively);
    its ``instructions``, if it gives any, are the participant's in every stage it
    speaks in.

    Args:
        stages: The checked stages (:func:`parse_stages`).
        agents: Per-name records (:class:`~debategraph.state.records.Participant` or
            dicts).

    Returns:
        ``(stages, members)``: the stages with each participant's record completed, and
        node -> the participant's record (what its agent is made from).

    Raises:
        ValueError: One line naming the bad value and what is allowed.
    """
    if isinstance(agents, str | Mapping | BaseModel) or not isinstance(agents, Sequence):
        raise ValueError(f"agents must be a list of agent records, got {agents!r}")
    names = {n.lower(): n for s in stages for n in s.names}
    given: dict[str, Participant] = {}
    for value in agents:
        record = parse_member(
            value,
            Participant,
            "agent",
            "a participant's 'name' and its 'model', 'tools', 'agent' or 'instructions'",
        )
        key = record.name.lower()
        if key not in names:
            hint = (
                f"; give the {key} in officials="
                if key in OFFICIALS
                else f": the participants are {', '.join(names.values())}"
            )
            raise ValueError(f"agents: no stage has a participant {record.name!r}{hint}")
        if key in given:
            raise ValueError(f"agents: {record.name!r} is given twice: give each participant once")
        given[key] = record
    merged: dict[str, dict[str, Any]] = {}
    where: dict[tuple[str, str], str] = {}
    sources = [(f"stage {s.name!r}", p) for s in stages for p in s.participants]
    sources += [("agents", r) for r in given.values()]
    for origin, record in sources:
        key = record.name.lower()
        fields = merged.setdefault(key, {})
        for attr in AGENT_FIELDS:
            value = getattr(record, attr)
            if _same(value, Participant.model_fields[attr].get_default()):
                continue  # not given
            if attr in fields and not _same(fields[attr], value):
                raise ValueError(
                    f"participant {names[key]!r} has one {attr} in {where[key, attr]} and "
                    f"another in {origin}: a participant is one agent, give its {attr} once"
                )
            fields.setdefault(attr, value)
            where.setdefault((key, attr), origin)
    out_stages = []
    for stage in stages:
        participants = []
        for participant in stage.participants:
            key = participant.name.lower()
            update: dict[str, Any] = dict(merged.get(key, {}))
            own = given.get(key)
            if own is not None and own.instructions:
                update["instructions"] = own.instructions
            participants.append(participant.model_copy(update=update))
        out_stages.append(stage.model_copy(update={"participants": tuple(participants)}))
    members: dict[str, Participant] = {}
    for stage in out_stages:
        for participant in stage.participants:
            members.setdefault(slug(participant.name), participant)
    return tuple(out_stages), members


def _same(a: Any, b: Any) -> bool:
    """Whether two values of an agent's field are one (the same object, or equal)."""
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - a user's object whose == fails is another one
        return False


@dataclass(frozen=True)
class MeetingSetup:
    """A meeting's fixed settings, shared by its nodes (checked by :func:`meeting_setup`).

    Attributes:
        stages: The stages in order, each with its round cap.
        keep_last: Messages a speaker or the controller reads (0: all).
        pause_after_round: Whether a human reviews each round.
        time_limit_s: Seconds the meeting may take (``None``: no limit): at its deadline
            the call in flight is cancelled and the meeting ends ``time_limit``.
        members: Node -> the participant's record (its model, tools or agent, if any),
            see :func:`stage_agents`.
        officials: The officials with a model, tools or agent of their own
            (:data:`CONTROLLER_AGENT`, :data:`CHAIR_AGENT`) -> their records.
    """

    stages: tuple[Stage, ...]
    keep_last: int
    pause_after_round: bool
    time_limit_s: float | None = None
    members: Mapping[str, Participant] = field(default_factory=dict)
    officials: Mapping[str, AgentSpec] = field(default_factory=dict)

    def member(self, node: str) -> AgentSpec | str:
        """The record an agent node's agent is made from (its name alone if it has none).

        Args:
            node: A participant's node, :data:`CONTROLLER_AGENT` or :data:`CHAIR_AGENT`.

        Returns:
            The record (see :func:`~debategraph.nodes.agent.agent_of`).
        """
        found: AgentSpec | None = self.members.get(node)
        if found is None:
            found = self.officials.get(node)
        return node if found is None else found

    @property
    def nodes(self) -> tuple[str, ...]:
        """The participants' node names, in order of first appearance."""
        return tuple(dict.fromkeys(slug(n) for s in self.stages for n in s.names))

    @property
    def round_cap(self) -> int:
        """The most rounds a run takes: :attr:`total_rounds`.

        The chair's decision after the last one fits in the skeleton's slack steps.
        """
        return self.total_rounds

    @property
    def total_rounds(self) -> int:
        """The most rounds the meeting may run (every stage to its cap)."""
        return sum(self.cap(s) for s in self.stages)

    @staticmethod
    def cap(stage: Stage) -> int:
        """A stage's round cap (filled in by :func:`parse_stages`)."""
        return stage.max_rounds or 1

    def stage(self, name: str) -> Stage:
        """The stage called ``name`` (the first one for an unknown name, e.g. unset).

        Args:
            name: The stage's name.

        Returns:
            The stage.
        """
        return next((s for s in self.stages if s.name == name), self.stages[0])

    def next_stage(self, name: str) -> Stage | None:
        """The stage after ``name``, or ``None`` after the last."""
        index = self.stages.index(self.stage(name))
        return self.stages[index + 1] if index + 1 < len(self.stages) else None

    def speaker(self, stage: Stage, node: str) -> Participant | None:
        """The participant of ``stage`` who speaks from ``node``, if any."""
        return next((p for p in stage.participants if slug(p.name) == node), None)

    @staticmethod
    def after_open(stage: Stage) -> str:
        """The node that speaks first in a round of ``stage``."""
        return slug(stage.names[0])

    def after(self, stage: Stage, node: str) -> str:
        """The node after ``node`` in a round of ``stage``: the next speaker, or the controller.

        Args:
            stage: The stage running.
            node: A speaker's node.

        Returns:
            The next node's name.
        """
        order = [slug(n) for n in stage.names]
        index = order.index(node)
        return order[index + 1] if index + 1 < len(order) else CONTROLLER_NODE

    def successors(self, node: str) -> list[str]:
        """Every node that may follow ``node`` (in any stage), for the drawn graph."""
        found = [self.after(s, node) for s in self.stages if node in map(slug, s.names)]
        return list(dict.fromkeys(found))


def meeting_setup(
    *,
    stages: Sequence[StageLike],
    max_rounds: int,
    keep_last: int,
    pause_after_round: bool,
    time_limit_s: float | None,
    agents: Sequence[AgentLike] = (),
    officials: Sequence[OfficialLike] = (),
) -> MeetingSetup:
    """Check a meeting's settings.

    The settings are :func:`~debategraph.graphs.meeting.build_meeting`'s, documented there.

    Returns:
        The settings, every stage with its round cap.

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    if isinstance(keep_last, bool) or not isinstance(keep_last, int) or keep_last < 0:
        raise ValueError(f"keep_last must be 0 (all) or more, got {keep_last!r}")
    check_time_limit(time_limit_s)
    parsed, members = stage_agents(parse_stages(stages, max_rounds), agents)
    return MeetingSetup(
        stages=parsed,
        keep_last=keep_last,
        pause_after_round=pause_after_round,
        time_limit_s=time_limit_s,
        members=members,
        officials=officials_of(officials, OFFICIALS, "a meeting"),
    )
