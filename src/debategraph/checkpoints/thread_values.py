"""Reading the parts of a thread's values that every pattern's state shares.

Every pattern's state extends :class:`~debategraph.state.base.RunState`: a transcript of
:class:`~debategraph.state.records.Turn` records, the ``round`` counter, ``usage`` and
``termination_reason``. The archive and the Markdown export read only these; whatever
else a thread holds is its pattern's business, asked of what the pattern is (its
:class:`~debategraph.described.Described`, which the registry loads).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from debategraph.state.base import termination_word
from debategraph.state.records import Turn, Usage


def jsonable(value: Any) -> Any:
    """Convert a state value to plain JSON-able data.

    Args:
        value: A state value: pydantic models, mappings, lists and tuples are converted
            recursively; anything else is returned as is.

    Returns:
        ``model_dump(mode="json")`` for models, a ``dict`` with ``str`` keys for mappings,
        a ``list`` for lists and tuples.
    """
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def json_text(value: Any, *, compact: bool = False) -> str:
    """A value as JSON text, keys sorted (anything JSON cannot hold as its ``str``).

    Args:
        value: Any state value (converted with :func:`jsonable`).
        compact: Leave out the spaces after ``,`` and ``:``.

    Returns:
        The JSON text.
    """
    separators = (",", ":") if compact else None
    return json.dumps(jsonable(value), sort_keys=True, default=str, separators=separators)


def turns(values: Mapping[str, Any]) -> list[Turn]:
    """A thread's transcript as :class:`Turn` objects (dicts, as JSON clients write, accepted).

    Args:
        values: The thread's state values.

    Returns:
        The transcript, in order; empty if the thread has none yet.
    """
    raw: Iterable[Any] = values.get("transcript") or ()
    return [t if isinstance(t, Turn) else Turn.model_validate(t) for t in raw]


def total_usage(values: Mapping[str, Any], transcript: Sequence[Turn]) -> Usage:
    """A thread's total usage: its ``usage`` value if it has one, else the transcript's sum.

    Args:
        values: The thread's state values.
        transcript: Its transcript (see :func:`turns`).

    Returns:
        The usage.
    """
    raw = values.get("usage")
    if isinstance(raw, Usage | Mapping):
        return Usage.coerce(raw)
    return Usage.total(t.usage for t in transcript)


def usage_by(transcript: Iterable[Turn], key: str) -> dict[str, Usage]:
    """Sum turn usage by agent, by model or by round (``key``).

    Args:
        transcript: The turns.
        key: ``agent``, ``model`` (turns of no model: ``""``) or ``round``.

    Returns:
        Agent name (model, round number as text) -> usage, in order of first appearance.
    """
    out: dict[str, Usage] = {}
    for turn in transcript:
        if key == "model" and turn.role == "tool":
            continue  # a tool's time is its agent's, not a model's
        name = {"agent": turn.agent, "model": turn.model or "", "round": str(turn.round)}[key]
        out[name] = out.get(name, Usage()) + turn.usage
    return out


def rounds_reached(values: Mapping[str, Any], transcript: Sequence[Turn]) -> int:
    """The last round a thread reached: the transcript's highest, else its ``round``.

    Args:
        values: The thread's state values.
        transcript: Its transcript (see :func:`turns`).

    Returns:
        The round number; 0 before the first round.
    """
    if transcript:
        return max(t.round for t in transcript)
    counter = values.get("round")
    return counter if isinstance(counter, int) else 0


def termination(values: Mapping[str, Any]) -> str | None:
    """Why a thread ended, in today's vocabulary.

    Words older versions wrote read as today's (``max_iterations`` is
    ``rounds_completed``); a word no version knows is returned as stored.

    Args:
        values: The thread's state values.

    Returns:
        The reason, or ``None`` while the run goes on.
    """
    raw = values.get("termination_reason")
    if raw is None or raw == "":
        return None
    try:
        return termination_word(raw)
    except (ValueError, TypeError):  # TypeError: an unhashable value
        return str(raw)
