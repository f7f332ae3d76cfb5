"""Rosters: parse the agents a pattern is given and validate their names.

One place for what every pattern with named agents needs: turning a dict (or a string) into
the pattern's agent record with a one-line error, and checking a roster (enough agents,
unique names, none reserved). Reading the agent a model meant by a misspelt name is
:mod:`debategraph.strategies.names`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from debategraph.state.records import Participant

M = TypeVar("M", bound=BaseModel)


class Named(Protocol):
    """A roster member: a record with a name."""

    @property
    def name(self) -> str:
        """The member's name."""


N = TypeVar("N", bound=Named)

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


@dataclass(frozen=True)
class Roster(Generic[N]):
    """How a pattern's roster is checked: a list of at least ``minimum`` named members.

    Each pattern declares its rule once (``Roster("debater", "a debate", parse_debater,
    reserved=RESERVED_NAMES)``) and checks what it is given with :meth:`check`.

    Attributes:
        what: What a member is called in errors (``debater``).
        group: What the roster makes, in errors (``a debate``).
        parse: Parses one member (e.g. with :func:`parse_member`).
        key: The form in which two names count as the same (default: case-insensitive).
        reserved: Names (compared by ``key``) no member may take, besides ``user`` and
            names starting with ``__``.
        minimum: Fewest members.
        node_names: The names name graph nodes as they are: LangGraph's reserved
            characters (``:``, ``|``) are refused (``False`` where ``key`` makes the
            node names).
    """

    what: str
    group: str
    parse: Callable[[Any], N]
    key: Callable[[str], str] = str.lower
    reserved: Collection[str] = ()
    minimum: int = 2
    node_names: bool = True

    def check(self, members: Any) -> list[N]:
        """Parse and validate a roster.

        Args:
            members: The members as given (a list).

        Returns:
            The parsed members, in order.

        Raises:
            ValueError: One line naming the bad value and what is allowed.
        """
        what, minimum = self.what, self.minimum
        if isinstance(members, str | Mapping | BaseModel) or not isinstance(members, Sequence):
            count = "two" if minimum == 2 else str(minimum)
            raise ValueError(f"{what}s must be a list of {count} or more {what}s, got {members!r}")
        parsed = [self.parse(m) for m in members]
        if len(parsed) < minimum:
            raise ValueError(f"{self.group} needs at least {minimum} {what}s, got {len(parsed)}")
        seen: dict[str, str] = {}
        for member in parsed:
            self._check_name(member.name, seen)
        return parsed

    def _check_name(self, name: str, seen: dict[str, str]) -> None:
        what, k = self.what, self.key(name)
        if not k:
            raise ValueError(f"{what} name {name!r} needs at least one letter or digit")
        if k in {self.key(n) for n in (*self.reserved, *ALWAYS_RESERVED)} or name.startswith("__"):
            names = ", ".join(sorted({*self.reserved, *ALWAYS_RESERVED}))
            raise ValueError(
                f"{what} name {name!r} is reserved: names may not be {names} or start with __"
            )
        if k in seen:
            raise ValueError(
                f"duplicate {what} name {name!r}: {seen[k]!r} is the same name (both read as "
                f"{k!r}); give every {what} a different name"
            )
        seen[k] = name
        bad = [c for c in NODE_NAME_RESERVED if c in name] if self.node_names else []
        if bad:
            raise ValueError(
                f"{what} name {name!r} contains {bad[0]!r}: ':' and '|' are not allowed"
            )


#: What a valid participant dict holds (for errors).
PARTICIPANT_FIELDS = "a non-empty 'name' and optionally 'instructions'"


def parse_participant(value: Any, what: str = "agent") -> Participant:
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
