"""Termination conditions: composable, and each says when it fired.

A pattern checks its conditions after every round, in the order it lists them, and ends
with the first that fires; its ``termination_reason`` is that condition's ``reason``. Every
loop also has a :class:`MaxRounds` cap, so it always ends (DESIGN.md principle 3).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from debategraph.state.base import TerminationReason
from debategraph.state.records import Usage


@dataclass(frozen=True)
class RoundOutcome:
    """What the termination conditions look at after a round.

    Attributes:
        round: The round just finished (1-based).
        usage: Tokens used so far by the whole run.
        elapsed_s: Seconds since the run started.
        answers: Each agent's answer this round (``None``: it abstained), if the
            pattern has answers.
        score: The convergence score (0-1), if the pattern measures one.
        changed: How many positions changed this round, if the pattern counts them.
        settled: Whether a moderator judged the matter settled.
    """

    round: int
    usage: Usage = field(default_factory=Usage)
    elapsed_s: float = 0.0
    answers: Sequence[str | None] = ()
    score: float | None = None
    changed: int | None = None
    settled: bool = False


class Condition(Protocol):
    """A termination condition: ``fired(outcome)`` says whether the run ends now."""

    @property
    def reason(self) -> TerminationReason:
        """The ``termination_reason`` recorded when it fires."""
        ...

    def fired(self, outcome: RoundOutcome) -> bool:
        """Whether the run ends after this round.

        Args:
            outcome: The round's outcome.
        """
        ...


@dataclass(frozen=True)
class MaxRounds:
    """Ends once ``limit`` rounds are done."""

    limit: int
    reason: TerminationReason = "rounds_completed"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        return outcome.round >= self.limit


@dataclass(frozen=True)
class TokenBudget:
    """Ends after the round in which ``tokens`` tokens were used in all."""

    tokens: int
    reason: TerminationReason = "budget"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        return outcome.usage.total_tokens >= self.tokens


@dataclass(frozen=True)
class TimeLimit:
    """Ends after the round that finishes ``seconds`` or more after the run started."""

    seconds: float
    reason: TerminationReason = "time_limit"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        return outcome.elapsed_s >= self.seconds


@dataclass(frozen=True)
class Unanimity:
    """Ends when every agent gave the same answer (and none abstained)."""

    reason: TerminationReason = "unanimous"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        answers = list(outcome.answers)
        return bool(answers) and None not in answers and len(set(answers)) == 1


@dataclass(frozen=True)
class Convergence:
    """Ends when the convergence score reaches ``threshold``."""

    threshold: float
    reason: TerminationReason = "converged"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        return outcome.score is not None and outcome.score >= self.threshold


@dataclass(frozen=True)
class Stall:
    """Ends when a round changed no position."""

    reason: TerminationReason = "stalled"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        return outcome.changed == 0


@dataclass(frozen=True)
class Settled:
    """Ends when a moderator judged the matter settled."""

    reason: TerminationReason = "settled"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        return outcome.settled


@dataclass(frozen=True)
class Silence:
    """Ends (with ``error``) after a round in which every agent said nothing.

    The model is not answering: going on would only spend calls. Reads the round's
    contents as :attr:`RoundOutcome.answers`, ``None`` for an empty one.
    """

    reason: TerminationReason = "error"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        answers = list(outcome.answers)
        return bool(answers) and all(a is None for a in answers)


@dataclass(frozen=True)
class ExternalStop:
    """Ends when ``requested()`` says so (a flag, a file, a signal handler...)."""

    requested: Callable[[], bool]
    reason: TerminationReason = "stopped"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        return self.requested()


def first_fired(conditions: Sequence[Condition], outcome: RoundOutcome) -> TerminationReason | None:
    """The reason of the first condition that fires, in the order given.

    Args:
        conditions: The pattern's conditions, highest precedence first.
        outcome: The round's outcome.

    Returns:
        The termination reason, or ``None`` to go on.
    """
    for condition in conditions:
        if condition.fired(outcome):
            return condition.reason
    return None
