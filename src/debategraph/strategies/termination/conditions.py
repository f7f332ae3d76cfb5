"""The conditions checked without a model call, and their combinations ``|`` and ``&``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, TypeVar

from debategraph.state.base import TerminationReason
from debategraph.state.records import Turn, Usage
from debategraph.strategies.decisions import UNANIMITY, DecisionProtocol, agreed, agreement_text
from debategraph.words import plural


@dataclass(frozen=True)
class RoundOutcome:
    """What the termination conditions look at after a round.

    Attributes:
        round: The round just finished (1-based).
        usage: Tokens used so far by the whole run.
        elapsed_s: Seconds since the run started.
        answers: Each agent's answer this round (``None``: it abstained), if the
            pattern has answers.
        confidences: Each agent's stated confidence in it, in the same order (``None``:
            not stated), if the pattern has them.
        score: The convergence score (0-1), if the pattern measures one.
        changed: How many positions changed this round, if the pattern counts them.
        settled: Whether a moderator judged the matter settled.
        turns: A chat's messages so far (oldest first), for conditions that read them.
        stale: How many of a chat's latest turns added nothing new in a row.
        stop_requested: Whether a stop was asked for from outside (the thread's inbox).
    """

    round: int
    usage: Usage = field(default_factory=Usage)
    elapsed_s: float = 0.0
    answers: Sequence[str | None] = ()
    confidences: Sequence[float | None] = ()
    score: float | None = None
    changed: int | None = None
    settled: bool = False
    turns: Sequence[Turn] = ()
    stale: int = 0
    stop_requested: bool = False

    @property
    def last(self) -> Turn | None:
        """The latest message of a chat, if any."""
        return self.turns[-1] if self.turns else None


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


class Combinable:
    """Mixin of every condition here: ``a | b`` is :class:`AnyOf`, ``a & b`` :class:`AllOf`."""

    def __or__(self, other: Condition) -> AnyOf:
        return combine(AnyOf, (self, other))  # type: ignore[arg-type]

    def __and__(self, other: Condition) -> AllOf:
        return combine(AllOf, (self, other))  # type: ignore[arg-type]

    def describe(self) -> str:
        """What the condition checks, in words (for ``termination_detail``)."""
        return str(getattr(self, "reason", type(self).__name__))


C = TypeVar("C", "AnyOf", "AllOf")


def at_least_one(value: int, what: str) -> int:
    """``value``, checked to be a count of at least 1 (a cap, a budget, a window).

    Args:
        value: The count.
        what: What it counts, for the error (``max_turns``, ``token budget``).

    Returns:
        ``value``.

    Raises:
        ValueError: If ``value`` is below 1 (``what must be at least 1, got 0``).
    """
    if value < 1:
        raise ValueError(f"{what} must be at least 1, got {value}")
    return value


def combine(kind: type[C], conditions: Sequence[Condition]) -> C:
    """``kind`` of ``conditions``, flattened: ``(a | b) | c`` is ``any_of(a, b, c)``.

    Args:
        kind: :class:`AnyOf` or :class:`AllOf`.
        conditions: The conditions, in order.

    Returns:
        The combination.

    Raises:
        ValueError: If none is given.
    """
    if not conditions:
        raise ValueError(f"{kind.__name__} needs at least one condition")
    parts = (p for c in conditions for p in (c.conditions if isinstance(c, kind) else (c,)))
    return kind(tuple(parts))


@dataclass(frozen=True)
class MaxRounds(Combinable):
    """Ends once ``limit`` rounds are done."""

    limit: int
    reason: TerminationReason = "rounds_completed"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        return outcome.round >= self.limit

    def describe(self) -> str:  # noqa: D102
        word = "turns" if self.reason == "max_turns" else "rounds"
        return f"{self.limit} {word} done (the hard cap)"


@dataclass(frozen=True)
class TokenBudget(Combinable):
    """Ends after the round in which ``tokens`` tokens were used in all."""

    tokens: int
    reason: TerminationReason = "budget"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        return outcome.usage.total_tokens >= self.tokens

    def describe(self) -> str:  # noqa: D102
        return f"token budget of {self.tokens} spent"


@dataclass(frozen=True)
class TimeLimit(Combinable):
    """Ends once ``seconds`` have passed since the run started (``time_limit``).

    Checked when a round (or a chat's turn) closes. The pattern's time limit also sets the
    run's deadline (:func:`debategraph.nodes.rounds.start_clock`): calls in flight then are
    cancelled and none starts after it, so the round closes at once and this fires.
    """

    seconds: float
    reason: TerminationReason = "time_limit"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        return outcome.elapsed_s >= self.seconds

    def describe(self) -> str:  # noqa: D102
        return f"time limit of {self.seconds:g} s passed"


@dataclass(frozen=True)
class Unanimity(Combinable):
    """Ends when every agent gave the same answer (and none abstained)."""

    reason: TerminationReason = "unanimous"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        answers = list(outcome.answers)
        return bool(answers) and None not in answers and len(set(answers)) == 1


@dataclass(frozen=True)
class Agreement(Combinable):
    """Ends when the answers agree by a decision protocol that can fall short.

    ``unanimity`` (reason ``unanimous``), ``supermajority:THRESHOLD`` or
    ``confidence:THRESHOLD`` (reason ``converged``): the protocol is reached, as
    :func:`~debategraph.strategies.decisions.agreed` says.

    Attributes:
        protocol: The agreement (:func:`~debategraph.strategies.decisions.parse_agreement`).
    """

    protocol: DecisionProtocol

    @property
    def reason(self) -> TerminationReason:
        """``unanimous`` for unanimity, else ``converged``."""
        return "unanimous" if self.protocol.name == UNANIMITY else "converged"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        names = [str(index) for index in range(len(outcome.answers))]
        answers = dict(zip(names, outcome.answers, strict=True))
        confidences = dict(zip(names, outcome.confidences, strict=False))
        return agreed(self.protocol, answers, confidences)

    def describe(self) -> str:  # noqa: D102
        return f"the answers agree by {agreement_text(self.protocol)}"


@dataclass(frozen=True)
class Convergence(Combinable):
    """Ends when the convergence score reaches ``threshold``."""

    threshold: float
    reason: TerminationReason = "converged"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        return outcome.score is not None and outcome.score >= self.threshold


@dataclass(frozen=True)
class Stall(Combinable):
    """Ends when a round changed no position, or (``turns``) a chat said nothing new.

    Attributes:
        turns: For a chat: end once this many turns in a row added no new content
            (:attr:`RoundOutcome.stale`). ``None``: a round that changed no position.
    """

    turns: int | None = None
    reason: TerminationReason = "stalled"

    def __post_init__(self) -> None:
        if self.turns is not None:
            at_least_one(self.turns, "stall turns")

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        if self.turns is not None:
            return outcome.stale >= self.turns
        return outcome.changed == 0

    def describe(self) -> str:  # noqa: D102
        if self.turns is not None:
            return f"no new content for {plural(self.turns, 'turn')}"
        return "a round changed no position"


@dataclass(frozen=True)
class Settled(Combinable):
    """Ends when a moderator judged the matter settled."""

    reason: TerminationReason = "settled"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        return outcome.settled


@dataclass(frozen=True)
class Silence(Combinable):
    """Ends (with ``error``) after a round in which every agent said nothing.

    The model is not answering: going on would only spend calls. Reads the round's
    contents as :attr:`RoundOutcome.answers`, ``None`` for an empty one.
    """

    reason: TerminationReason = "error"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        answers = list(outcome.answers)
        return bool(answers) and all(a is None for a in answers)


@dataclass(frozen=True)
class ExternalStop(Combinable):
    """Ends when a stop was asked for: in the thread's inbox, or ``requested()`` says so.

    ``requested`` is for in-process use (a flag, a signal handler...); ``debategraph stop``
    reaches a running thread through its inbox (:attr:`RoundOutcome.stop_requested`).
    """

    requested: Callable[[], bool] = lambda: False
    reason: TerminationReason = "stopped"

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        return outcome.stop_requested or self.requested()

    def describe(self) -> str:  # noqa: D102
        return "a stop was requested"


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


@dataclass(frozen=True)
class _Joined(Combinable):
    """Conditions joined by ``|`` (:class:`AnyOf`) or ``&`` (:class:`AllOf`).

    The first condition gives the reason (the one that fired is told by
    :func:`check_steps`); ``every`` says whether all must fire at once or any one will,
    ``word`` joins their descriptions.
    """

    conditions: tuple[Condition, ...]
    every: ClassVar[bool]
    word: ClassVar[str]

    @property
    def reason(self) -> TerminationReason:
        """The first condition's reason."""
        return self.conditions[0].reason

    def fired(self, outcome: RoundOutcome) -> bool:
        verdicts = (c.fired(outcome) for c in self.conditions)
        return all(verdicts) if self.every else any(verdicts)

    def describe(self) -> str:
        return f" {self.word} ".join(describe_condition(c) for c in self.conditions)


@dataclass(frozen=True)
class AnyOf(_Joined):
    """Fires when any of its conditions fires (the first, in order, gives the reason)."""

    every = False
    word = "or"


@dataclass(frozen=True)
class AllOf(_Joined):
    """Fires when all of its conditions fire at once (the first gives the reason)."""

    every = True
    word = "and"


def describe_condition(condition: Condition) -> str:
    """A condition in words: its ``describe()``, else its reason.

    Args:
        condition: The condition.

    Returns:
        The words.
    """
    describe = getattr(condition, "describe", None)
    return str(describe()) if callable(describe) else str(condition.reason)
