"""The debate's fixed settings, node names and stages, shared by its nodes."""

from __future__ import annotations

from dataclasses import dataclass

from langgraph.graph import END

from debategraph.nodes.rounds import OPEN_ROUND_NODE, REVIEW_NODE
from debategraph.state.debate import TIE, Debater, HistoryMode
from debategraph.state.records import USER

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
    """

    debaters: tuple[Debater, ...]
    max_rounds: int
    words: int
    history: HistoryMode
    keep_last: int
    moderator: bool
    judge: bool
    pause_after_round: bool

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
        return JUDGE_NODE if self.judge else END

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
