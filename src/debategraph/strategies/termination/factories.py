"""The termination vocabulary as users write it: small factories and the CLI's ``--until``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from debategraph.strategies.termination.chat import JUDGE_KEEP_LAST, LLMJudge, Regex
from debategraph.strategies.termination.conditions import (
    AllOf,
    AnyOf,
    Condition,
    ExternalStop,
    MaxRounds,
    Stall,
    TimeLimit,
    TokenBudget,
    at_least_one,
    combine,
)

# -- the chat vocabulary: small factories, as the strategies' users write them -------------


def max_turns(limit: int) -> MaxRounds:
    """The hard cap of a chat: end after ``limit`` turns.

    Args:
        limit: Turns (>= 1).

    Returns:
        The condition (reason ``max_turns``).

    Raises:
        ValueError: If ``limit`` is below 1.
    """
    return MaxRounds(at_least_one(limit, "max_turns"), reason="max_turns")


def regex(pattern: str, *agents: str) -> Regex:
    """End when the latest message (of ``agents``, if given) matches ``pattern``.

    Args:
        pattern: A regular expression.
        *agents: Only these agents' messages count.

    Returns:
        The condition (reason ``matched``).
    """
    return Regex(pattern, tuple(agents))


def llm(prompt: str, *agents: str, keep_last: int = JUDGE_KEEP_LAST) -> LLMJudge:
    """End when a model judges the chat done (asked after ``agents``' messages, if given).

    Args:
        prompt: The judge's question.
        *agents: Judge only after these agents' messages.
        keep_last: Messages the judge reads.

    Returns:
        The condition (reason ``judged``).
    """
    return LLMJudge(prompt, tuple(agents), keep_last)


def token_budget(tokens: int) -> TokenBudget:
    """End once ``tokens`` tokens were used.

    Args:
        tokens: The budget (>= 1).

    Returns:
        The condition (reason ``budget``).

    Raises:
        ValueError: If ``tokens`` is below 1.
    """
    return TokenBudget(at_least_one(tokens, "token budget"))


def timeout(seconds: float) -> TimeLimit:
    """End the chat ``seconds`` after it started: its deadline.

    Combined with ``|`` (or alone) it bounds the chat's wall time: a call in flight at
    the deadline is cancelled, none starts after it, and the chat ends ``time_limit``
    (see :func:`~debategraph.strategies.termination.chat.time_limit`). Under ``&`` it
    is only checked after each turn, with the others.

    Args:
        seconds: Wall time (> 0).

    Returns:
        The condition (reason ``time_limit``).

    Raises:
        ValueError: If ``seconds`` is not a positive number.
    """
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise ValueError(f"timeout must be a number of seconds, got {seconds!r}")
    if not 0 < seconds < float("inf"):
        raise ValueError(f"timeout must be more than 0 seconds, got {seconds}")
    return TimeLimit(seconds)


#: What a duration may end with, and the seconds each stands for.
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}
DURATION_FORM = "a duration such as 90s, 30m, 1h or a number of seconds"


def parse_duration(value: str) -> float:
    """A duration as users write it (``90s``, ``30m``, ``1.5h``, ``120``) in seconds.

    Args:
        value: The text.

    Returns:
        The seconds (> 0, finite).

    Raises:
        ValueError: One line naming the value and the allowed form.
    """
    text = value.strip().lower()
    scale = _UNITS.get(text[-1:])
    number = text[:-1] if scale else text
    try:
        seconds = float(number) * (scale or 1.0)
    except ValueError:
        raise ValueError(f"{value!r} is not a duration: use {DURATION_FORM}") from None
    if not seconds > 0:
        raise ValueError(f"{value!r} must be positive: use {DURATION_FORM}")
    if seconds == float("inf"):
        raise ValueError(f"{value!r} must be finite: use {DURATION_FORM}")
    return seconds


def stall(turns: int) -> Stall:
    """End once ``turns`` turns in a row said nothing new.

    Args:
        turns: Turns (>= 1).

    Returns:
        The condition (reason ``stalled``).
    """
    return Stall(turns=turns)


def external(requested: Callable[[], bool] = lambda: False) -> ExternalStop:
    """End when a stop was asked for (``debategraph stop``, or ``requested()`` in-process).

    Args:
        requested: An in-process flag.

    Returns:
        The condition (reason ``stopped``).
    """
    return ExternalStop(requested)


def any_of(*conditions: Condition) -> AnyOf:
    """``a | b | ...``: end when any fires.

    Args:
        *conditions: The conditions, checked in order.

    Returns:
        The combination.

    Raises:
        ValueError: If none is given.
    """
    return combine(AnyOf, conditions)


def all_of(*conditions: Condition) -> AllOf:
    """``a & b & ...``: end when all fire at once.

    Args:
        *conditions: The conditions.

    Returns:
        The combination.

    Raises:
        ValueError: If none is given.
    """
    return combine(AllOf, conditions)


def parse_until(spec: str, agents: Sequence[str]) -> Condition:
    """A condition from the CLI's ``--until``: a regex, a model judge or a time limit.

    ``regex:PATTERN[@Agent]``, ``llm:PROMPT[@Agent]`` or ``timeout:DURATION``
    (``timeout:90s``: the chat's time limit). The text after the last ``@`` names the
    agent whose messages count; a pattern that holds ``@`` itself ends with a bare ``@``
    (``regex:a@b@``: anyone's message).

    Args:
        spec: The option's value.
        agents: The chat's agents.

    Returns:
        The condition.

    Raises:
        ValueError: One line naming the bad value and what is allowed.
    """
    kind, colon, rest = spec.partition(":")
    kind = kind.strip().lower()
    if not colon or kind not in ("regex", "llm", "timeout"):
        raise ValueError(
            f"--until {spec!r} must be regex:PATTERN[@Agent], llm:QUESTION[@Agent] "
            "or timeout:DURATION (e.g. timeout:90s)"
        )
    if kind == "timeout":
        try:
            return timeout(parse_duration(rest))
        except ValueError as exc:
            raise ValueError(f"--until {spec!r}: {exc}") from None
    body, at, who = rest.rpartition("@") if "@" in rest else (rest, "", "")
    names: tuple[str, ...] = ()
    if at and who.strip():
        lowered = {a.lower(): a for a in agents}
        if who.strip().lower() not in lowered:
            raise ValueError(
                f"--until {spec!r}: {who.strip()!r} is not an agent (agents: "
                f"{', '.join(agents)}); end a pattern holding '@' with a bare '@'"
            )
        names = (lowered[who.strip().lower()],)
    if not body.strip():
        raise ValueError(f"--until {spec!r} has an empty {kind} part")
    return regex(body, *names) if kind == "regex" else llm(body.strip(), *names)
