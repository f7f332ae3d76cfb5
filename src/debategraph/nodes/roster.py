"""Rosters: parse the agents a pattern is given, validate their names, match names fuzzily.

One place for what every pattern with named agents needs: turning a dict (or a string) into
the pattern's agent record with a one-line error, checking a roster (enough agents, unique
names, none reserved), and reading the agent a model meant by a misspelt name.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)

#: How close a misspelt name must be to a real one to be read as it (difflib ratio).
FUZZY_CUTOFF = 0.6

#: Characters LangGraph reserves in node names.
NODE_NAME_RESERVED = (":", "|")

#: Names no agent may take: the human's, and LangGraph's own prefix.
ALWAYS_RESERVED = frozenset({"user"})


def slug(name: str) -> str:
    """A node-name-safe form of a name: ``Critical Evaluator`` -> ``critical_evaluator``.

    Args:
        name: An agent's name.

    Returns:
        Lower-case letters, digits and underscores.
    """
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def parse_member(
    value: Any,
    record: type[M],
    what: str,
    fields_hint: str,
    from_text: Callable[[str], M] | None = None,
) -> M:
    """One roster member from its record, a dict, or (if the pattern allows) a string.

    Args:
        value: The member as given.
        record: The pattern's record type (``Debater``, ``Persona``...).
        what: What a member is called in errors (``debater``).
        fields_hint: What a valid dict holds, e.g. ``a non-empty 'name' and 'side'``.
        from_text: Parses the string form, if there is one.

    Returns:
        The member.

    Raises:
        ValueError: One line naming the bad value and what is allowed.
    """
    if isinstance(value, record):
        return value
    if isinstance(value, str) and from_text is not None:
        return from_text(value)
    if isinstance(value, Mapping):
        try:
            return record.model_validate(dict(value))
        except ValidationError as exc:
            fields = ", ".join(".".join(map(str, e["loc"])) or "?" for e in exc.errors())
            raise ValueError(
                f"{what} {dict(value)!r} is not valid (bad or missing: {fields}): give "
                f"{fields_hint}"
            ) from None
    kinds = (
        f"a {record.__name__}, a dict or a string"
        if from_text
        else f"a {record.__name__} or a dict"
    )
    raise ValueError(f"{what} {value!r} must be {kinds}")


def check_roster(
    members: Any,
    parse: Callable[[Any], M],
    *,
    what: str,
    group: str,
    name_of: Callable[[M], str],
    key: Callable[[str], str] = str.lower,
    reserved: Collection[str] = (),
    minimum: int = 2,
    node_names: bool = False,
) -> list[M]:
    """Parse and validate a roster: a list of at least ``minimum`` uniquely named members.

    Args:
        members: The members as given (a list).
        parse: Parses one member (e.g. with :func:`parse_member`).
        what: What a member is called in errors (``debater``).
        group: What the roster makes, in errors (``a debate``).
        name_of: A member's name.
        key: The form in which two names count as the same (default: case-insensitive).
        reserved: Names (compared by ``key``) no member may take, besides ``user`` and
            names starting with ``__``.
        minimum: Fewest members.
        node_names: The names name graph nodes: LangGraph's reserved characters
            (``:``, ``|``) are refused.

    Returns:
        The parsed members, in order.

    Raises:
        ValueError: One line naming the bad value and what is allowed.
    """
    if isinstance(members, str | Mapping | BaseModel) or not isinstance(members, Sequence):
        count = "two" if minimum == 2 else str(minimum)
        raise ValueError(f"{what}s must be a list of {count} or more {what}s, got {members!r}")
    parsed = [parse(m) for m in members]
    if len(parsed) < minimum:
        raise ValueError(f"{group} needs at least {minimum} {what}s, got {len(parsed)}")
    blocked = {key(n) for n in (*reserved, *ALWAYS_RESERVED)}
    seen: dict[str, str] = {}
    for member in parsed:
        name = name_of(member)
        k = key(name)
        if not k:
            raise ValueError(f"{what} name {name!r} needs at least one letter or digit")
        if k in blocked or name.startswith("__"):
            names = ", ".join(sorted({*reserved, *ALWAYS_RESERVED}))
            raise ValueError(
                f"{what} name {name!r} is reserved: names may not be {names} or start with __"
            )
        if k in seen:
            raise ValueError(
                f"duplicate {what} name {name!r}: {seen[k]!r} is the same name (both read as "
                f"{k!r}); give every {what} a different name"
            )
        seen[k] = name
        bad = [c for c in NODE_NAME_RESERVED if c in name] if node_names else []
        if bad:
            raise ValueError(
                f"{what} name {name!r} contains {bad[0]!r}: ':' and '|' are not allowed"
            )
    return parsed


def match_name(value: str, names: Sequence[str]) -> str | None:
    """The agent a model meant by ``value``: exact, case-insensitive, then closest.

    Args:
        value: A name as the model wrote it.
        names: Every agent's name.

    Returns:
        The agent's name, or ``None`` if none is close enough.
    """
    key = value.strip().lower()
    lowered = {n.lower(): n for n in names}
    if key in lowered:
        return lowered[key]
    close = difflib.get_close_matches(key, list(lowered), n=1, cutoff=FUZZY_CUTOFF)
    return lowered[close[0]] if close else None


def read_name(value: str, names: Sequence[str], what: str, notes: list[str]) -> str | None:
    """:func:`match_name`, noting in ``notes`` when a name was read as another.

    Args:
        value: A name as the model wrote it.
        names: Every agent's name.
        what: Where the name came from, for the note (``judge winner``).
        notes: Where normalisations are recorded.

    Returns:
        The agent's name, or ``None`` if none is close enough.
    """
    found = match_name(value, names)
    if found is not None and found != value:
        notes.append(f"{what} {value!r} read as {found!r}")
    return found


#: What a valid participant dict holds (for errors).
PARTICIPANT_FIELDS = "a non-empty 'name' and optionally 'instructions'"


def parse_participant(value: Any, what: str = "agent") -> Any:
    """A :class:`~debategraph.state.records.Participant` from one, a dict or a string.

    The string form is ``"Name: instructions"`` (``"Name"`` alone has no instructions); a
    one-key mapping ``{Name: instructions}`` is the same (what YAML makes of an unquoted
    ``- Name: instructions`` line).

    Args:
        value: The participant as given.
        what: What a participant is called in errors (``agent``, ``participant``).

    Returns:
        The participant.

    Raises:
        ValueError: One line naming the bad value and what is allowed.
    """
    from debategraph.state.records import Participant

    def from_text(text: str) -> Participant:
        name, _, instructions = text.partition(":")
        if not name.strip():
            raise ValueError(
                f"{what} {text!r} must be 'Name: instructions', e.g. 'Writer: drafts the text'"
            )
        return Participant(name=name, instructions=instructions)

    if isinstance(value, Mapping) and len(value) == 1:
        ((key, text),) = value.items()
        if key not in Participant.model_fields and isinstance(text, str | None):
            return Participant(name=str(key), instructions=text or "")
    return parse_member(value, Participant, what, PARTICIPANT_FIELDS, from_text=from_text)


def _squash(text: str) -> str:
    """A name without case, spaces or punctuation: ``Code-Reviewer`` -> ``codereviewer``."""
    return re.sub(r"[\W_]+", "", text.lower())


def match_speaker(value: str, names: Sequence[str]) -> str | None:
    """The agent a selector meant: the forgiving reading of a name a model wrote.

    In order: the same name ignoring case, spaces and punctuation; a unique prefix
    (``rev`` for ``Reviewer``); the one name the answer mentions (prose such as ``I think
    the Reviewer should go next.``); a close misspelling.

    Args:
        value: The selector's answer.
        names: The agents it may pick.

    Returns:
        The agent's name, or ``None`` if the answer names none (or several).
    """
    squashed = {_squash(n): n for n in names}
    key = _squash(value)
    if not key:
        return None
    if key in squashed:
        return squashed[key]
    prefixed = [n for k, n in squashed.items() if k.startswith(key)]
    if len(prefixed) == 1:
        return prefixed[0]
    words = _squash(" ".join(re.findall(r"\w+", value)))
    mentioned = [n for k, n in squashed.items() if k and k in words]
    if len(mentioned) == 1:
        return mentioned[0]
    close = difflib.get_close_matches(key, list(squashed), n=1, cutoff=0.8)
    return squashed[close[0]] if close else None
