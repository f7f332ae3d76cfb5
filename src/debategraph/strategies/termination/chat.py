"""Conditions that read a chat's messages: a regex, a model judge; checking combinations.

:func:`check_steps` checks any condition (a combination, model judges included) as a
node's steps and says what fired; :func:`has_hard_cap` tells whether a condition is sure
to end a chat, :func:`has_judge` whether it asks a model.

A chat's conditions read its conversation: agents' and a human's messages. Tool-call
records (``role="tool"``) are no messages: the latest message is the latest such, and a
judge reads none of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from debategraph.state.base import TerminationReason
from debategraph.state.records import Turn
from debategraph.strategies.termination.conditions import (
    AllOf,
    AnyOf,
    Combinable,
    Condition,
    MaxRounds,
    RoundOutcome,
    TimeLimit,
    at_least_one,
    describe_condition,
)

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage


@dataclass(frozen=True)
class Regex(Combinable):
    """Ends when a chat's latest message matches ``pattern`` (optionally only some agents').

    Attributes:
        pattern: A regular expression, searched in the message (``re.search``).
        agents: Only messages of these agents count (empty: anyone's but a human's).
    """

    pattern: str
    agents: tuple[str, ...] = ()
    reason: TerminationReason = "matched"
    _compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            compiled = re.compile(self.pattern)
        except re.error as exc:
            raise ValueError(
                f"termination regex {self.pattern!r} does not compile: {exc}"
            ) from None
        object.__setattr__(self, "_compiled", compiled)
        object.__setattr__(self, "agents", tuple(self.agents))

    def fired(self, outcome: RoundOutcome) -> bool:  # noqa: D102
        last = last_message(outcome.turns)
        if last is None or last.role != "agent" or not _by(last, self.agents):
            return False
        return self._compiled.search(last.content) is not None

    def describe(self) -> str:  # noqa: D102
        return f"regex '{self.pattern}' matched a message{_of(self.agents)}"


class Judgement(BaseModel):
    """What a termination judge answers about a chat."""

    done: bool = Field(description="Whether the chat has reached its goal and should end.")
    reason: str = Field(description="One sentence saying why.")


#: Messages a model-judged condition reads by default.
JUDGE_KEEP_LAST = 6

#: A structured call for a condition: ``ask(schema, messages)`` -> steps of a
#: :class:`~debategraph.models.CallResult` (a chat's node supplies it).
Ask = Callable[[type[Any], list["BaseMessage"]], Generator[Any, Any, Any]]


@dataclass(frozen=True)
class LLMJudge(Combinable):
    """Ends when a model, shown the latest messages, judges the chat done.

    Checked only after a message of one of ``agents`` (every message when empty), so a
    judge of a writer-and-reviewer chat is asked only after the reviewer spoke.

    Attributes:
        prompt: What the judge decides, e.g. ``Has the reviewer approved the draft?``.
        agents: Judge only after these agents' messages.
        keep_last: Messages the judge reads (a reduced history).
    """

    prompt: str
    agents: tuple[str, ...] = ()
    keep_last: int = JUDGE_KEEP_LAST
    reason: TerminationReason = "judged"

    def __post_init__(self) -> None:
        if not self.prompt.strip():
            raise ValueError("an llm termination needs a question, e.g. llm:Is it approved?")
        at_least_one(self.keep_last, "judge keep_last")
        object.__setattr__(self, "agents", tuple(self.agents))

    def fired(self, outcome: RoundOutcome) -> bool:
        """A model-judged condition cannot be checked without a call: see :func:`check_steps`.

        Raises:
            TypeError: Always.
        """
        raise TypeError("an llm termination makes a model call: check it with check_steps")

    def applies(self, outcome: RoundOutcome) -> bool:
        """Whether the judge is asked after this turn (the last message is one it judges).

        Args:
            outcome: The turn's outcome.

        Returns:
            True if it should be asked.
        """
        last = last_message(outcome.turns)
        return last is not None and last.role == "agent" and _by(last, self.agents)

    def judge_steps(self, outcome: RoundOutcome, ask: Ask) -> Generator[Any, Any, str | None]:
        """Ask the judge; the steps return its reason when it says done, else ``None``.

        Args:
            outcome: The turn's outcome.
            ask: Makes a structured call (see :data:`Ask`).

        Returns:
            The steps.
        """
        from langchain_core.messages import HumanMessage, SystemMessage

        from debategraph.prompts import JUDGE_SYSTEM, JUDGE_TASK

        said = messages_of(outcome.turns)[-self.keep_last :]
        lines = "\n".join(f"{t.agent}: {t.content}" for t in said)
        messages = [
            SystemMessage(content=JUDGE_SYSTEM),
            HumanMessage(content=JUDGE_TASK.format(conversation=lines, question=self.prompt)),
        ]
        result = yield from ask(Judgement, messages)
        verdict = result.value
        if verdict is None or not verdict.done:
            return None
        return verdict.reason.strip() or "the judge said done"

    def describe(self) -> str:  # noqa: D102
        return f"a model judged {self.prompt!r}{_of(self.agents, 'after')}"


def messages_of(turns: Sequence[Turn]) -> list[Turn]:
    """A chat's messages among ``turns``: its tool-call records left out.

    Args:
        turns: Transcript records, oldest first.

    Returns:
        The messages (agents' and a human's), oldest first.
    """
    return [t for t in turns if t.role != "tool"]


def last_message(turns: Sequence[Turn]) -> Turn | None:
    """The latest message among ``turns`` (a tool-call record is none), if any.

    Args:
        turns: Transcript records, oldest first.

    Returns:
        The message, or ``None``.
    """
    for turn in reversed(turns):
        if turn.role != "tool":
            return turn
    return None


def _by(turn: Turn, agents: Sequence[str]) -> bool:
    return not agents or turn.agent.lower() in {a.lower() for a in agents}


def _of(agents: Sequence[str], word: str = "of") -> str:
    return f" {word} {', '.join(agents)}" if agents else ""


@dataclass(frozen=True)
class Fired:
    """Which condition ended a run.

    Attributes:
        reason: The ``termination_reason``.
        detail: What fired, in words (``termination_detail``).
    """

    reason: TerminationReason
    detail: str


def check_steps(
    condition: Condition, outcome: RoundOutcome, ask: Ask | None = None
) -> Generator[Any, Any, Fired | None]:
    """Check a condition (a combination, model judges included) as a node's steps.

    :class:`AnyOf` checks its conditions in order and stops at the first that fires, so a
    cheap cap before a judge saves the judge's call; :class:`AllOf` stops at the first
    that does not fire.

    Args:
        condition: The condition.
        outcome: The turn's (or round's) outcome.
        ask: Makes a structured call, for model judges (``None``: judges never fire).

    Returns:
        The steps; they return what fired, or ``None`` to go on.
    """
    if isinstance(condition, AnyOf):
        for part in condition.conditions:
            fired = yield from check_steps(part, outcome, ask)
            if fired is not None:
                return fired
        return None
    if isinstance(condition, AllOf):
        details = []
        for part in condition.conditions:
            fired = yield from check_steps(part, outcome, ask)
            if fired is None:
                return None
            details.append(fired.detail)
        return Fired(condition.reason, " and ".join(details))
    if isinstance(condition, LLMJudge):
        if ask is None or not condition.applies(outcome):
            return None
        why = yield from condition.judge_steps(outcome, ask)
        return None if why is None else Fired(condition.reason, f"{condition.describe()}: {why}")
    if condition.fired(outcome):
        return Fired(condition.reason, describe_condition(condition))
    return None


def _bound(condition: Condition, leaf: Callable[[Condition], float | None]) -> float | None:
    """The bound that alone ends ``condition``, given what each leaf guarantees.

    ``a | b`` ends by the smaller of its known bounds; ``a & b`` only by the larger, and
    only if every part has one (a part without one may never fire).

    Args:
        condition: The condition.
        leaf: A leaf condition's own bound (``None``: none).

    Returns:
        The bound, or ``None`` when nothing guarantees the end.
    """
    if isinstance(condition, AnyOf | AllOf):
        bounds = [_bound(c, leaf) for c in condition.conditions]
        known = [b for b in bounds if b is not None]
        if isinstance(condition, AnyOf):
            return min(known) if known else None
        return max(known) if len(known) == len(bounds) else None
    return leaf(condition)


def hard_cap(condition: Condition) -> int | None:
    """The turn (or round) cap that alone ends a condition, if it has one.

    ``a | max_turns(20)`` ends by 20 turns; ``a & max_turns(20)`` has no cap (``a`` may
    never fire); ``max_turns(5) & max_turns(9)`` ends by 9.

    Args:
        condition: The condition.

    Returns:
        The cap, or ``None`` when nothing guarantees the end.
    """
    cap = _bound(condition, lambda c: c.limit if isinstance(c, MaxRounds) else None)
    return None if cap is None else int(cap)


def time_limit(condition: Condition) -> float | None:
    """The time limit (seconds) that alone ends a condition, if it has one.

    As :func:`hard_cap` for turns: ``a | timeout(60)`` ends by 60 s, ``a & timeout(60)``
    has no time limit (``a`` may never fire). A chat's deadline comes from it.

    Args:
        condition: The condition.

    Returns:
        The seconds, or ``None``.
    """
    return _bound(condition, lambda c: c.seconds if isinstance(c, TimeLimit) else None)


def has_hard_cap(condition: Condition) -> bool:
    """Whether a cap alone is sure to end ``condition`` (see :func:`hard_cap`).

    Args:
        condition: The condition.

    Returns:
        True if it has one.
    """
    return hard_cap(condition) is not None


def has_judge(condition: Condition) -> bool:
    """Whether a condition (or a part of a combination) asks a model judge.

    Args:
        condition: The condition.

    Returns:
        True if an :class:`LLMJudge` is part of it.
    """
    if isinstance(condition, AnyOf | AllOf):
        return any(has_judge(c) for c in condition.conditions)
    return isinstance(condition, LLMJudge)
