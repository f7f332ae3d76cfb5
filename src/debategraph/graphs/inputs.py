"""A run's input, checked before the run starts: the one check the CLI and the server share.

A graph's input is a record users fill in, so it refuses fields it does not know (LangGraph
itself drops them silently), fields of the wrong type, and what the pattern's own input
check refuses (its registry line's ``input_check``, which the graph also runs when it
starts: an empty question, say). A ``messages`` input is read as the graph reads it
(:func:`~debategraph.nodes.messages.read_messages`: its last human message fills the
pattern's field) before the pattern's check. Every refusal is one ``ValueError`` line
naming the bad value and what is allowed; the CLI prints it as its error, and
``debategraph serve`` answers it with a 422 before the server creates the run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, get_type_hints

from debategraph import registry
from debategraph.nodes.messages import as_messages, read_messages


@functools.cache
def _adapter(name: str) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(registry.entry(name).input_schema())


def input_fields(name: str) -> list[str]:
    """The fields a pattern's graph takes.

    Args:
        name: The pattern (its registry name).

    Returns:
        The input schema's keys: the pattern's own in declaration order, then
        ``messages`` (which every pattern takes).

    Raises:
        UsageError: If no pattern has that name.
    """
    fields = list(get_type_hints(registry.entry(name).input_schema()))
    return sorted(fields, key=lambda field: field == "messages")


def check_input(name: str, values: Any, *, first: bool = True) -> None:
    """Refuse a pattern's input that its graph cannot start from.

    Args:
        name: The pattern (its registry name).
        values: The input, as a caller sends it.
        first: Whether it starts a thread (else it goes on with one: the pattern's own
            check of a first input does not apply, a group chat's next message say).

    Raises:
        ValueError: One line naming the bad value and what is allowed.
        UsageError: If no pattern has that name.
    """
    entry = registry.entry(name)
    fields = input_fields(name)
    if not isinstance(values, Mapping):
        raise ValueError(
            f"{name}'s input must be an object with {', '.join(fields)}, "
            f"got {type(values).__name__} {values!r}"[:300]
        )
    unknown = [key for key in values if key not in fields]
    if unknown:
        raise ValueError(
            f"unknown input field {unknown[0]!r} for {name}: it takes {', '.join(fields)}"
        )
    if values.get("messages") is not None:
        as_messages(values["messages"])
    filled = read_messages(values, entry.schemas(), first=first)
    filled.pop("notes", None)
    if entry.input_check and first:
        check: Callable[[Mapping[str, Any]], None] = registry.load(entry.input_check)
        check({**values, **filled})
    from pydantic import ValidationError

    typed = {key: value for key, value in values.items() if key != "messages"}
    try:
        _adapter(name).validate_python(typed, strict=True)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "input"
        got = "" if error["type"] == "missing" else f", got {error['input']!r}"[:200]
        raise ValueError(f"input field {where!r} of {name}: {error['msg']}{got}") from None
