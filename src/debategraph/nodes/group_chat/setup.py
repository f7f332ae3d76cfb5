"""The group chat's settings checks and defaults: the agents, the selector, the termination.

A participant may have a model, tools or an agent of its own (the
:class:`~debategraph.state.records.AgentSpec` fields of its record); so may the chat's
officials (:data:`OFFICIALS`: the LLM selector and the LLM termination judge), given by
name in ``officials=``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from debategraph.nodes.agent import OfficialLike, officials_of
from debategraph.nodes.conversation import DEFAULT_KEEP_LAST as DEFAULT_KEEP_LAST
from debategraph.nodes.roster import Roster, parse_participant, slug
from debategraph.nodes.rounds import (
    OPEN_ROUND_NODE,
    REVIEW_NODE,
    check_max_rounds,
    check_time_limit,
    require_text,
)
from debategraph.state.records import AgentSpec, Participant
from debategraph.strategies.selection import Selector, make_selector
from debategraph.strategies.termination import (
    Condition,
    any_of,
    describe_condition,
    hard_cap,
    max_turns,
    parse_until,
    timeout,
)
from debategraph.strategies.termination.chat import has_judge

#: An agent as given: a participant, a dict (``name``, ``instructions``, and ``model``,
#: ``tools``, ``agent``, ``max_tool_calls``) or ``"Name: ..."``.
AgentLike = Participant | Mapping[str, Any] | str

#: A run's input check: refuses an empty task (the first thing an invocation does). A
#: later invocation may give none (it goes on with the chat); its ``speaker`` is checked
#: against the chat's agents when the invocation begins.
check_input = require_text("task", "give what the chat is about")

#: The stage of every agent message (a human's are ``interject``/``task``).
CHAT_STAGE = "chat"
#: The stage of the task and of a message given with a later invocation.
TASK_STAGE = "task"

BEGIN_NODE = "begin"
SELECT_NODE = "select"
CLOSE_TURN_NODE = "close_turn"
#: Whom the selector's and the judge's calls are charged to.
SELECTOR = "selector"
JUDGE = "judge"
#: The chat's officials (``officials=``, an agents file's entries so named): name -> what
#: it does.
OFFICIALS: Mapping[str, str] = {
    SELECTOR: "picks each speaker (selection='llm')",
    JUDGE: "judges the llm: termination conditions",
}

#: Node names and accounting names no agent may take.
RESERVED_NAMES = frozenset(
    {BEGIN_NODE, SELECT_NODE, CLOSE_TURN_NODE, OPEN_ROUND_NODE, REVIEW_NODE, SELECTOR, JUDGE}
)
#: The hard cap in turns when none is given.
DEFAULT_MAX_ROUNDS = 10
#: How the next speaker is picked when no selection is given: round-robin.
DEFAULT_SELECTION: Final = "sequential"

#: The chat the CLI runs without ``--agent``: a writer and a reviewer until approval.
DEFAULT_AGENTS: tuple[str, ...] = (
    "Writer: writes and revises the text the task asks for, taking the reviewer's notes.",
    "Reviewer: reviews the latest draft; lists what to fix, or says APPROVED when it is good.",
)
#: When the default chat ends: the reviewer approves (the factory's ``until`` for
#: :data:`DEFAULT_AGENTS` when none is given).
DEFAULT_UNTIL: tuple[str, ...] = (r"regex:\bAPPROVED\b@Reviewer",)
#: The default chat, whole: what the CLI runs without ``--agent`` and the graph Studio
#: serves (``registry.Named`` reads it), its settings written out.
DEFAULT_CHAT: Mapping[str, Any] = {
    "agents": DEFAULT_AGENTS,
    "until": DEFAULT_UNTIL,
    "max_rounds": DEFAULT_MAX_ROUNDS,
}


@dataclass(frozen=True)
class GroupChatSetup:
    """A group chat's validated settings.

    Attributes:
        agents: The participants, in roster order.
        selector: Picks each turn's speaker.
        termination: When the chat ends (it has a hard cap).
        cap: The turn cap that alone ends it.
        keep_last: Messages a speaker reads (0: all).
        pause_after_round: Pause after every turn for a human.
        time_limit_s: Seconds an invocation may take (``None``: no limit; the
            termination holds the same ``timeout``).
        officials: The officials given a model, tools or agent of their own, by name
            (:data:`SELECTOR`, :data:`JUDGE`); the others call the chat's model.
    """

    agents: tuple[Participant, ...]
    selector: Selector
    termination: Condition
    cap: int
    keep_last: int
    pause_after_round: bool
    time_limit_s: float | None = None
    officials: Mapping[str, AgentSpec] = field(default_factory=dict)

    @property
    def round_cap(self) -> int:
        """The most rounds (turns) an invocation takes: the cap."""
        return self.cap

    @property
    def names(self) -> tuple[str, ...]:
        """The agents' names, in roster order."""
        return tuple(a.name for a in self.agents)

    def agent(self, name: str) -> Participant:
        """The participant called ``name``.

        Args:
            name: One of :attr:`names`.

        Returns:
            The participant.
        """
        return self.agents[self.names.index(name)]

    def find(self, name: str) -> str | None:
        """An agent's name as the roster spells it (case-insensitive), if there is one.

        Args:
            name: A name as given.

        Returns:
            The name, or ``None``.
        """
        lowered = {n.lower(): n for n in self.names}
        return lowered.get(name.strip().lower())


#: How a group chat's agents are checked.
AGENTS = Roster("agent", "a group chat", parse_participant, key=slug, reserved=RESERVED_NAMES)


def group_chat_setup(
    *,
    agents: Sequence[AgentLike],
    selection: str | Selector,
    first_speaker: str | None,
    until: Sequence[str | Condition],
    termination: Condition | None,
    max_rounds: int | None,
    max_in_a_row: int | None,
    keep_last: int,
    pause_after_round: bool,
    time_limit_s: float | None,
    officials: Sequence[OfficialLike] = (),
) -> GroupChatSetup:
    """Check a group chat's settings and combine its termination conditions.

    The settings are :func:`~debategraph.graphs.group_chat.build_group_chat`'s,
    documented there.

    Returns:
        The settings.

    Raises:
        ValueError: One line naming the bad value and what is allowed.
    """
    parsed = AGENTS.check(agents)
    names = [a.name for a in parsed]
    if keep_last < 0:
        raise ValueError(f"keep_last must be 0 (all) or more, got {keep_last}")
    check_max_rounds(max_rounds, optional=True)
    check_time_limit(time_limit_s)
    parts: list[Condition] = [parse_until(u, names) if isinstance(u, str) else u for u in until]
    if termination is not None:
        parts.append(termination)
    conditions_given = bool(parts)
    if not conditions_given and tuple(agents) == DEFAULT_AGENTS:
        parts = [parse_until(u, names) for u in DEFAULT_UNTIL]  # the default chat's end
    if time_limit_s is not None:
        parts.append(timeout(time_limit_s))
    if max_rounds is not None:
        parts.append(max_turns(max_rounds))
    elif not conditions_given:
        parts.append(max_turns(DEFAULT_MAX_ROUNDS))
    condition = parts[0] if len(parts) == 1 else any_of(*parts)
    cap = hard_cap(condition)
    if cap is None:
        raise ValueError(
            f"termination ({describe_condition(condition)}) has no hard cap: every chat needs one; "
            "give max_rounds=N or add max_turns(N) with | (CLI: --rounds N)"
        )
    selector = make_selector(selection, names, first_speaker, max_in_a_row)
    given = officials_of(officials, OFFICIALS, "a group chat")
    if SELECTOR in given and selection == "sequential":
        raise ValueError(
            "official 'selector' is given, but selection is 'sequential' (no model picks): "
            "use selection='llm' (CLI: --select llm) or drop the selector"
        )
    if JUDGE in given and not has_judge(condition):
        raise ValueError(
            "official 'judge' is given, but no llm: termination asks a judge: add one "
            "(CLI: --until llm:QUESTION) or drop the judge"
        )
    return GroupChatSetup(
        agents=tuple(parsed),
        selector=selector,
        termination=condition,
        cap=cap,
        keep_last=keep_last,
        pause_after_round=pause_after_round,
        time_limit_s=time_limit_s,
        officials=given,
    )
