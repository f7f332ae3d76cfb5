"""What the patterns' CLI declarations share: ``--time-limit``, ``--stop-when``, phrases."""

from __future__ import annotations

from typing import Annotated, TypeVar

import typer
from rich.markup import escape

from debategraph.cli.options import seconds_of
from debategraph.errors import UsageError
from debategraph.strategies.decisions import (
    UNANIMITY,
    agreement_rule,
    agreement_text,
    parse_agreement,
)

T = TypeVar("T")

#: ``--time-limit``, as every pattern with a wall-clock limit declares it.
TimeLimit = Annotated[
    str | None,
    typer.Option(
        "--time-limit",
        help="End the run after this long (30m, 90s, 1h): calls in flight are cancelled.",
    ),
]

#: ``--stop-when``: stop after a round whose answers agree (``solve``'s).
StopWhen = Annotated[
    str | None,
    typer.Option(
        "--stop-when",
        help="Stop after a round whose answers agree by this protocol: "
        + agreement_rule().replace("[", "\\[")
        + ".",
    ),
]


def fallback_note(reason: str | None) -> str:
    """`` (fallback: reason)`` after a value that is not the agent's own call, for headlines.

    Every pattern marks a result that the graph filled in (a judge's unknown winner read as
    a tie, a selector's unusable answer replaced by the next speaker, a controller or a
    chair that gave nothing usable) with this one phrase, beside the value it explains,
    so a fallback never reads as a judgement.

    Args:
        reason: Why the value is a fallback; ``None`` or empty when it is not one.

    Returns:
        The phrase as Rich markup (the reason escaped, on one line), or ``""``.
    """
    if not reason:
        return ""
    return f" (fallback: {escape(short(reason, 200))})"


def short(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis.

    Args:
        text: Any text.
        limit: Most characters to keep.

    Returns:
        The shortened line.
    """
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def time_limit_option(value: str | None) -> float | None:
    """``--time-limit`` in seconds: ``30m`` / ``90s`` / ``1h`` / ``120``, or ``None``.

    Args:
        value: The option's value (``None``: not given).

    Returns:
        Seconds (> 0), or ``None``.

    Raises:
        UsageError: One line naming the value and the allowed form.
    """
    return seconds_of("--time-limit", value)


def renamed_option(
    old: str, new: str, given_old: T | None, given_new: T | None, default: T
) -> tuple[T, tuple[str, ...]]:
    """An option's value when it may also come under its old, deprecated name.

    Args:
        old: The old option (``--max-turns``), kept as a hidden alias.
        new: The option now (``--rounds``).
        given_old: What the old option got (``None``: not given).
        given_new: What the new option got (``None``: not given).
        default: The value when neither is given.

    Returns:
        ``(value, notes)``: the value, and a note for the user when it came under the
        old name.

    Raises:
        UsageError: If both are given.
    """
    if given_old is None:
        return (default if given_new is None else given_new), ()
    if given_new is not None:
        raise UsageError(f"{old} is the old name of {new}: give only {new}")
    return given_old, (f"{old} is deprecated: use {new}",)


def stop_when_option(value: str | None, unanimous: bool) -> str | None:
    """``--stop-when``: an agreement, checked before anything runs.

    Args:
        value: The option's value (``None``: not given).
        unanimous: ``--stop-when-unanimous`` (its alias for ``unanimity``).

    Returns:
        The agreement as written without its fallback (``supermajority:2/3``), or
        ``None`` when not given.

    Raises:
        UsageError: One line naming the value and the agreements allowed, or the two
            options disagreeing.
    """
    if value is None:
        return None
    try:
        agreement = parse_agreement(value)
    except ValueError as exc:
        raise UsageError(f"--stop-when {value}: {exc}") from None
    if unanimous and agreement.name != UNANIMITY:
        raise UsageError(
            f"--stop-when-unanimous and --stop-when {value} disagree: give one "
            "(--stop-when-unanimous is --stop-when unanimity)"
        )
    return agreement_text(agreement)
