"""What a run's custom stream tells someone who asked for it: its progress, and its account.

Every pattern's graph writes custom events (:func:`debategraph.nodes.messages.emit`): a
round opening, a solver round's votes, an official's decision, the outcome. A door that
runs a pattern for a caller (an MCP tool, over stdio or on ``serve``) reads them here,
whichever way they reach it (a :class:`~debategraph.runs.thread.Run` streamed with the
``custom`` mode, or the Agent Protocol's ``custom`` events): :meth:`Account.read` takes
each event and returns the progress it makes (``round 2 of 3: votes 18 x3``), and
:meth:`Account.answered` the result: the answer, how it was reached and the thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from debategraph import registry
from debategraph.words import one_line

#: The events a graph writes (:func:`debategraph.nodes.messages.emit`).
ROUND, VOTES, DECISION, OUTCOME = "round", "votes", "decision", "outcome"


class Answered(BaseModel):
    """A pattern's run as a door returns it: the answer, how it was reached, the thread.

    Attributes:
        thread_id: The thread the run made (``debategraph show THREAD`` reads it).
        pattern: The pattern that ran.
        answer: The outcome: the decided answer, the verdict, the report, the chat's last
            word, the meeting's decision.
        answered_by: Who stated it (an agent, an official, or the pattern).
        rounds: Rounds run (a chat's turns, a discussion's iterations).
        max_rounds: The most rounds the run could take (``None``: not known).
        termination_reason: Why it ended.
        votes: The last round's votes, answer -> solvers (a solver debate's; else ``None``).
        agreement: The share of the votes the leading answer had (with ``votes``).
        account: How it was reached, in one line.
    """

    model_config = ConfigDict(extra="forbid")

    thread_id: str = Field(description="The thread the run made (debategraph show reads it).")
    pattern: str = Field(description="The pattern that ran.")
    answer: str = Field(description="The outcome: answer, verdict, report or decision.")
    answered_by: str = Field(description="Who stated the outcome.")
    rounds: int = Field(description="Rounds run (a chat's turns, a discussion's iterations).")
    max_rounds: int | None = Field(description="The most rounds the run could take.")
    termination_reason: str = Field(description="Why the run ended.")
    votes: dict[str, int] | None = Field(description="The last round's votes, if it voted.")
    agreement: float | None = Field(description="The leading answer's share of the votes.")
    account: str = Field(description="How the answer was reached, in one line.")


@dataclass(frozen=True)
class Step:
    """One notification of progress: how far the run is, of how far it may go.

    Attributes:
        progress: Rounds done (rising with each step).
        total: The most rounds (``None``: not known).
        message: What happened, in one line.
    """

    progress: float
    total: float | None
    message: str


@dataclass
class Account:
    """A run's custom events, read as they come.

    Args:
        pattern: The pattern's name.
        max_rounds: The most rounds its settings allow (``None``: not known).

    Attributes:
        rounds: Rounds opened so far.
        votes: The latest votes (a solver debate's).
        outcome: The outcome event, once it came.
    """

    pattern: str
    max_rounds: int | None = None
    rounds: int = 0
    votes: dict[str, int] | None = None
    outcome: dict[str, Any] | None = None
    _last: float = field(default=-1.0, repr=False)

    @property
    def word(self) -> str:
        """What the pattern calls a round."""
        return registry.described(self.pattern).round_word

    def _where(self) -> str:
        of = f" of {self.max_rounds}" if self.max_rounds else ""
        return f"{self.word} {self.rounds}{of}"

    def read(self, event: Any) -> Step | None:
        """Take one custom event; the progress it makes, if any.

        Args:
            event: The event (``{"event": ..., ...}``; anything else is ignored).

        Returns:
            The step to report, or ``None`` (an event that tells nothing new).
        """
        if not isinstance(event, Mapping):
            return None
        kind = event.get("event")
        if kind == ROUND:
            # The event's own number where it has one: a stream that starts on a resumed
            # thread (A2A's next message) sees round 2 first.
            told = event.get("round")
            self.rounds = told if isinstance(told, int) and told > 0 else self.rounds + 1
            return self._step(self.rounds - 1, f"{self._where()} opened")
        if kind == VOTES and isinstance(event.get("votes"), Mapping):
            self.votes = {str(k): int(v) for k, v in event["votes"].items()}
            return self._step(self.rounds - 0.5, f"{self._where()}: votes {self._tally()}")
        if kind == DECISION and event.get("reason"):
            who = event.get("agent") or "decision"
            return self._step(self.rounds - 0.25, f"{self._where()}: {who}: {event['reason']}")
        if kind == OUTCOME:
            self.outcome = dict(event)
            done = max(float(self.max_rounds or 0), float(self.rounds))
            return self._step(done, f"done: {self._reason()}")
        return None

    def _step(self, progress: float, message: str) -> Step | None:
        if progress <= self._last:
            return None
        self._last = progress
        return Step(progress, self.max_rounds, one_line(message))

    def _tally(self) -> str:
        votes = self.votes or {}
        ranked = sorted(votes.items(), key=lambda kv: -kv[1])
        return ", ".join(f"{answer} x{count}" for answer, count in ranked) or "none"

    def _agreement(self) -> float | None:
        if not self.votes:
            return None
        return round(max(self.votes.values()) / sum(self.votes.values()), 3)

    def _reason(self) -> str:
        return str((self.outcome or {}).get("termination_reason") or "unknown")

    def answered(self, thread_id: str) -> Answered:
        """The run's result, once its outcome came (or what is known without it).

        Args:
            thread_id: The thread.

        Returns:
            The result.
        """
        outcome = self.outcome or {}
        parts = [f"{self.rounds} {self.word}{'' if self.rounds == 1 else 's'}"]
        if self.max_rounds:
            parts[0] += f" of at most {self.max_rounds}"
        if self.votes:
            parts.append(f"votes {self._tally()} (agreement {self._agreement():.2f})")
        parts.append(f"ended: {self._reason()}")
        return Answered(
            thread_id=thread_id,
            pattern=self.pattern,
            answer=str(outcome.get("text") or ""),
            answered_by=str(outcome.get("agent") or self.pattern),
            rounds=self.rounds,
            max_rounds=self.max_rounds,
            termination_reason=self._reason(),
            votes=self.votes,
            agreement=self._agreement(),
            account="; ".join(parts),
        )
