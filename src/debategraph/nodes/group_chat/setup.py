"""The group chat's settings, validated once: the agents, the selector, the termination."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from debategraph.nodes.conversation import DEFAULT_KEEP_LAST
from debategraph.nodes.roster import check_roster, parse_participant, slug
from debategraph.nodes.rounds import OPEN_ROUND_NODE, REVIEW_NODE
from debategraph.state.records import Participant
from debategraph.strategies.selection import Selector, make_selector
from debategraph.strategies.termination import (
    Condition,
    any_of,
    describe_condition,
    hard_cap,
    max_turns,
    parse_until,
)

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

#: Node names and accounting names no agent may take.
RESERVED_NAMES = frozenset(
    {BEGIN_NODE, SELECT_NODE, CLOSE_TURN_NODE, OPEN_ROUND_NODE, REVIEW_NODE, SELECTOR, JUDGE}
)
#: The hard cap when none is given.
DEFAULT_MAX_TURNS = 10


@dataclass(frozen=True)
class ChatSetup:
    """A group chat's validated settings.

    Attributes:
        agents: The participants, in roster order.
        selector: Picks each turn's speaker.
        termination: When the chat ends (it has a hard cap).
        cap: The turn cap that alone ends it.
        keep_last: Messages a speaker reads (0: all).
        pause_after_round: Pause after every turn for a human.
    """

    agents: tuple[Participant, ...]
    selector: Selector
    termination: Condition
    cap: int
    keep_last: int
    pause_after_round: bool

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


def chat_setup(
    agents: Sequence[Any],
    *,
    selection: str | Selector,
    first: str | None,
    termination: Condition | None,
    until: Sequence[str | Condition],
    max_turns_: int | None,
    max_in_a_row: int | None,
    keep_last: int,
    pause_after_round: bool,
) -> ChatSetup:
    """Validate a group chat's settings (see ``build_group_chat`` for each).

    Returns:
        The settings.

    Raises:
        ValueError: One line naming the bad value and what is allowed.
    """
    parsed = check_roster(
        agents,
        parse_participant,
        what="agent",
        group="a group chat",
        name_of=lambda a: a.name,
        key=slug,
        reserved=RESERVED_NAMES,
        node_names=True,
    )
    names = [a.name for a in parsed]
    if keep_last < 0:
        raise ValueError(f"keep_last must be 0 (all) or more, got {keep_last}")
    parts: list[Condition] = [parse_until(u, names) if isinstance(u, str) else u for u in until]
    if termination is not None:
        parts.append(termination)
    if max_turns_ is not None:
        parts.append(max_turns(max_turns_))
    elif not parts:
        parts.append(max_turns(DEFAULT_MAX_TURNS))
    condition = parts[0] if len(parts) == 1 else any_of(*parts)
    cap = hard_cap(condition)
    if cap is None:
        raise ValueError(
            f"termination ({describe_condition(condition)}) has no hard cap: every chat needs one; "
            "add max_turns(N) with | (CLI: --max-turns N)"
        )
    selector = make_selector(selection, names, first, max_in_a_row)
    return ChatSetup(
        agents=tuple(parsed),
        selector=selector,
        termination=condition,
        cap=cap,
        keep_last=keep_last,
        pause_after_round=pause_after_round,
    )


__all__ = [
    "BEGIN_NODE",
    "CHAT_STAGE",
    "CLOSE_TURN_NODE",
    "DEFAULT_KEEP_LAST",
    "DEFAULT_MAX_TURNS",
    "JUDGE",
    "RESERVED_NAMES",
    "SELECTOR",
    "SELECT_NODE",
    "TASK_STAGE",
    "ChatSetup",
    "chat_setup",
]
