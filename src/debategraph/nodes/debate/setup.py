"""The debate's settings checks, input check, fixed settings, node names and stages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from debategraph.nodes.agent import OfficialLike, officials_of
from debategraph.nodes.messages import RESPOND_NODE
from debategraph.nodes.roster import Roster, parse_member
from debategraph.nodes.rounds import OPEN_ROUND_NODE, REVIEW_NODE, check_max_rounds, require_text
from debategraph.state.debate import TIE, Debater, HistoryMode
from debategraph.state.records import USER, AgentSpec

DebaterLike = Debater | Mapping[str, Any] | str

#: A run's input check: refuses an empty motion (the first thing a round does).
check_input = require_text("topic", 'give the motion, e.g. "Cats beat dogs"')

HISTORY_MODES: tuple[str, ...] = ("full", "window")
MIN_WORDS = 10
#: What a valid debater dict holds (for errors).
DEBATER_FIELDS = (
    "a non-empty 'name' and 'side', and optionally 'persona', 'model', 'tools', 'agent' "
    "and 'max_tool_calls'"
)
#: The factory's defaults (``build_debate``'s, which the CLI's options read).
DEFAULT_MAX_ROUNDS = 3
DEFAULT_WORDS = 80
DEFAULT_HISTORY: HistoryMode = "full"
DEFAULT_KEEP_LAST = 4
#: The debaters when none are given.
DEFAULT_DEBATERS: tuple[str, ...] = ("Affirmative:for the motion", "Negative:against the motion")

#: Stages of the transcript records.
ARGUE_STAGE = "argue"
MODERATE_STAGE = "moderate"
SUMMARY_STAGE = "summarize"
JUDGE_STAGE = "judge"

#: Node names (also the agent names the moderator, summarizer and judge record turns as).
#: ``open_round``, ``close_round`` and ``human`` are the shared round loop's names: the
#: thread tools know a round boundary by them, and threads of older versions resume.
CLOSE_ROUND_NODE = "close_round"
MODERATOR_NODE = "moderator"
SUMMARIZER_NODE = "summarizer"
JUDGE_NODE = "judge"

#: The debate's officials (agents that are not debaters), by their node names, with the
#: setting that turns each on: an official's record gives it a model, tools or an agent.
OFFICIALS: dict[str, str] = {
    MODERATOR_NODE: "moderator=True (--moderator)",
    SUMMARIZER_NODE: "history='window' (--history window)",
    JUDGE_NODE: "judge=True (--judge)",
}

#: Names a debater may not take: the graph's other nodes, the human, and the tie verdict.
RESERVED_NAMES = frozenset(
    {
        OPEN_ROUND_NODE,
        CLOSE_ROUND_NODE,
        REVIEW_NODE,
        MODERATOR_NODE,
        SUMMARIZER_NODE,
        JUDGE_NODE,
        USER,
        TIE,
    }
)

#: Words the moderator or judge may use for "nobody".
TIE_WORDS = frozenset({TIE, "draw"})


@dataclass(frozen=True)
class DebateSetup:
    """A debate's fixed settings, shared by its nodes (validated by ``build_debate``).

    Attributes:
        debaters: The debaters in speaking order (the first speaker first).
        max_rounds: Round cap.
        words: Soft word limit of each argument.
        history: ``full`` (every relevant argument verbatim) or ``window``.
        keep_last: With ``window``: arguments a debater reads verbatim.
        moderator: Whether a moderator may stop the debate after a round.
        judge: Whether a judge gives a verdict at the end.
        pause_after_round: Whether a human reviews each round.
        time_limit_s: Seconds the debate may take (``None``: no limit).
        officials: The records of the officials that have a model, tools or an agent of
            their own, by node name (``moderator``, ``summarizer``, ``judge``).
    """

    debaters: tuple[Debater, ...]
    max_rounds: int
    words: int
    history: HistoryMode
    keep_last: int
    moderator: bool
    judge: bool
    pause_after_round: bool
    time_limit_s: float | None = None
    officials: Mapping[str, AgentSpec] = field(default_factory=dict)

    @property
    def round_cap(self) -> int:
        """The most rounds a run takes: the round cap."""
        return self.max_rounds

    @property
    def names(self) -> tuple[str, ...]:
        """Debater names in speaking order."""
        return tuple(d.name for d in self.debaters)

    @property
    def roster(self) -> str:
        """``A (side), B (side)`` for prompts."""
        return ", ".join(d.label for d in self.debaters)

    @property
    def summary_words(self) -> int:
        """Word limit of the running summary: one argument's worth per debater."""
        return self.words * len(self.debaters)

    @property
    def keep_after_summary(self) -> int:
        """Public arguments left out of the summary after a round.

        The next round adds ``n - 1`` arguments before its last speaker talks, so leaving
        ``keep_last - (n - 1)`` keeps every prompt at ``keep_last`` verbatim arguments at
        most; at least one stays, so the first speaker reads the argument it answers.
        """
        return max(1, self.keep_last - (len(self.debaters) - 1))

    @property
    def finish(self) -> str:
        """Where the debate goes once it ends: the judge, or the graph's end."""
        return JUDGE_NODE if self.judge else RESPOND_NODE

    def debater(self, name: str) -> Debater | None:
        """The debater called ``name``, if any."""
        return next((d for d in self.debaters if d.name == name), None)

    def others(self, name: str) -> tuple[str, ...]:
        """Every debater but ``name``, in speaking order."""
        return tuple(n for n in self.names if n != name)

    def next_step(self, after: str) -> str:
        """The node that follows ``after`` in a round's tail when the debate goes on.

        The tail is ``close_round -> [moderator] -> [summarizer] -> [human] -> open_round``.

        Args:
            after: ``close_round``, ``moderator`` or ``summarizer``.

        Returns:
            The next node's name.
        """
        tail = [CLOSE_ROUND_NODE]
        if self.moderator:
            tail.append(MODERATOR_NODE)
        if self.history == "window":
            tail.append(SUMMARIZER_NODE)
        if self.pause_after_round:
            tail.append(REVIEW_NODE)
        tail.append(OPEN_ROUND_NODE)
        return tail[tail.index(after) + 1]


def _debater_from_text(value: str) -> Debater:
    name, colon, side = value.partition(":")
    if not colon or not name.strip() or not side.strip():
        raise ValueError(f"debater {value!r} must be 'Name:side', e.g. 'Alice:for the motion'")
    return Debater(name=name, side=side)


def parse_debater(value: DebaterLike) -> Debater:
    """A :class:`~debategraph.state.debate.Debater` from one, a dict, or a ``"Name:side"`` string.

    Args:
        value: The debater as given.

    Returns:
        The debater.

    Raises:
        ValueError: If it is none of those, or lacks a name or a side.
    """
    if not isinstance(value, Debater | str | Mapping):
        raise ValueError(f"debater {value!r} must be a Debater, a dict or a 'Name:side' string")
    return parse_member(value, Debater, "debater", DEBATER_FIELDS, from_text=_debater_from_text)


#: How a debate's debaters are checked.
DEBATERS = Roster("debater", "a debate", parse_debater, reserved=RESERVED_NAMES)


def debate_setup(
    *,
    debaters: Sequence[DebaterLike],
    max_rounds: int,
    first_speaker: str | None,
    words: int,
    moderator: bool,
    judge: bool,
    history: str,
    keep_last: int,
    pause_after_round: bool,
    time_limit_s: float | None,
    officials: Sequence[OfficialLike] = (),
) -> DebateSetup:
    """Check a debate's settings and fix the speaking order.

    The settings are :func:`~debategraph.graphs.debate.build_debate`'s, documented there.

    Returns:
        The settings, debaters in speaking order (``first_speaker`` first, then the
        others in list order, wrapping around).

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    check_max_rounds(max_rounds)
    if words < MIN_WORDS:
        raise ValueError(f"words must be at least {MIN_WORDS}, got {words}")
    if history not in HISTORY_MODES:
        raise ValueError(f"history must be 'full' or 'window', got {history!r}")
    if keep_last < 1:
        raise ValueError(f"keep_last must be at least 1, got {keep_last}")
    parsed = DEBATERS.check(debaters)
    start = 0
    if first_speaker is not None:
        lowered = [d.name.lower() for d in parsed]
        key = first_speaker.strip().lower()
        if key not in lowered:
            raise ValueError(
                f"first speaker {first_speaker!r} is not a debater: use one of "
                f"{', '.join(d.name for d in parsed)}"
            )
        start = lowered.index(key)
    records = officials_of(officials, OFFICIALS, "a debate")
    on = {MODERATOR_NODE: moderator, SUMMARIZER_NODE: history == "window", JUDGE_NODE: judge}
    for name in records:
        if not on[name]:
            raise ValueError(
                f"official {name!r} is given a record, but this debate has no {name}: "
                f"set {OFFICIALS[name]}, or drop the {name}'s record"
            )
    return DebateSetup(
        debaters=tuple(parsed[start:] + parsed[:start]),
        max_rounds=max_rounds,
        words=words,
        history="window" if history == "window" else "full",
        keep_last=keep_last,
        moderator=moderator,
        judge=judge,
        pause_after_round=pause_after_round,
        time_limit_s=time_limit_s,
        officials=records,
    )
