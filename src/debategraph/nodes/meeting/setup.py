"""The meeting's settings checks, default agenda, fixed settings, node names and stages.

Stages come as :class:`~debategraph.state.meeting.Stage` records or as plain data (a
stages file): ``{name, participants: ["Name: instructions" | {name, instructions}],
max_rounds?, goal?}``. Each participant speaks from one graph node named by the slug of
its name; a participant of several stages is one agent (one node) that speaks in each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel

from debategraph.nodes.conversation import DEFAULT_KEEP_LAST as DEFAULT_KEEP_LAST
from debategraph.nodes.roster import Roster, parse_participant, slug
from debategraph.nodes.rounds import OPEN_ROUND_NODE, REVIEW_NODE, check_time_limit
from debategraph.state.meeting import MeetingState, Stage
from debategraph.state.records import USER, Participant

#: A stage as given: a record, or its data (``{name, participants, max_rounds?, goal?}``).
StageLike = Stage | Mapping[str, Any]

#: Node names besides the participants'.
CONTROLLER_NODE = "controller"
DECIDE_NODE = "decide"
#: The agent the controller's and the final decision's calls are recorded as.
CONTROLLER_AGENT = "controller"
CHAIR_AGENT = "chair"
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
        value = value.model_dump()
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


@dataclass(frozen=True)
class MeetingSetup:
    """A meeting's fixed settings, shared by its nodes (checked by :func:`meeting_setup`).

    Attributes:
        stages: The stages in order, each with its round cap.
        keep_last: Messages a speaker or the controller reads (0: all).
        pause_after_round: Whether a human reviews each round.
        time_limit_s: Seconds the meeting may take (``None``: no limit): at its deadline
            the call in flight is cancelled and the meeting ends ``time_limit``.
    """

    stages: tuple[Stage, ...]
    keep_last: int
    pause_after_round: bool
    time_limit_s: float | None = None

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
    return MeetingSetup(
        stages=parse_stages(stages, max_rounds),
        keep_last=keep_last,
        pause_after_round=pause_after_round,
        time_limit_s=time_limit_s,
    )
