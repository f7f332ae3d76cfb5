"""The registry of patterns: one line per pattern, loaded on first use.

The CLI lists commands from these lines without importing any pattern (``--help`` stays
quick); a pattern's module is imported when a command or a thread needs it. Patterns from
elsewhere join with :func:`register` (in-process) or the ``DEBATEGRAPH_PATTERNS``
environment variable (``module:attribute`` entries separated by commas), so a new pattern
touches neither the CLI nor the thread tools.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from debategraph.errors import UsageError

if TYPE_CHECKING:
    from debategraph.graphs.pattern import Pattern

#: Environment variable naming extra patterns: ``pkg.module:PATTERN,other:THING``.
PLUGINS_ENV = "DEBATEGRAPH_PATTERNS"


@dataclass(frozen=True)
class Entry:
    """A registry line.

    Attributes:
        name: The pattern's name (stored with each thread).
        command: Its CLI command.
        help: The command's one-line help.
        target: ``module:attribute`` of its :class:`~debategraph.graphs.pattern.Pattern`.
    """

    name: str
    command: str
    help: str
    target: str

    def load(self) -> Pattern:
        """Import the pattern.

        Returns:
            The pattern's declaration.
        """
        module, _, attribute = self.target.partition(":")
        pattern: Pattern = getattr(importlib.import_module(module), attribute or "PATTERN")
        return pattern


BUILTIN: tuple[Entry, ...] = (
    Entry(
        "solver_debate",
        "solve",
        "Solvers debate a math question on a communication topology, then vote.",
        "debategraph.graphs.solver_debate:PATTERN",
    ),
    Entry(
        "debate",
        "debate",
        "Named debaters argue a motion turn by turn; optional moderator and judge.",
        "debategraph.graphs.debate:PATTERN",
    ),
    Entry(
        "discussion",
        "discuss",
        "Four personas analyse a paper, question each other and write a consensus report.",
        "debategraph.graphs.discussion:PATTERN",
    ),
    Entry(
        "group_chat",
        "chat",
        "Agents share one conversation; a strategy picks each speaker until a condition ends it.",
        "debategraph.graphs.group_chat:PATTERN",
    ),
    Entry(
        "meeting",
        "meeting",
        "A staged meeting (presenter, discussion, summary) with a round controller and a decision.",
        "debategraph.graphs.meeting:PATTERN",
    ),
)

_registered: dict[str, tuple[Entry, Pattern]] = {}


def register(pattern: Pattern, *, command: str, help: str) -> None:
    """Add a pattern at run time (a plugin, or a test's own pattern).

    Args:
        pattern: Its declaration.
        command: Its CLI command.
        help: The command's one-line help.

    Raises:
        ValueError: If the name or the command is taken by another pattern.
    """
    for entry in entries():
        if pattern.name in (entry.name, entry.command) or command in (entry.name, entry.command):
            if entry.name == pattern.name and entry.name in _registered:
                continue  # registering the same pattern again replaces it
            raise ValueError(
                f"pattern {pattern.name!r} / command {command!r} is taken by {entry.name!r}"
            )
    _registered[pattern.name] = (Entry(pattern.name, command, help, ""), pattern)


def unregister(name: str) -> None:
    """Remove a pattern added with :func:`register` (no-op if absent).

    Args:
        name: The pattern's name.
    """
    _registered.pop(name, None)


def _plugins() -> list[Entry]:
    out = []
    for target in filter(None, (t.strip() for t in os.environ.get(PLUGINS_ENV, "").split(","))):
        try:
            pattern = Entry("", "", "", target).load()
        except (ImportError, AttributeError) as exc:
            raise UsageError(f"{PLUGINS_ENV} entry {target!r} cannot be loaded: {exc}") from exc
        summary = (pattern.command.__doc__ or pattern.name).strip().splitlines()[0]
        command = pattern.name.replace("_", "-")
        out.append(Entry(pattern.name, command, summary, target))
    return out


def entries() -> list[Entry]:
    """Every pattern this process knows: built in, registered, then from the environment.

    Returns:
        The registry lines.
    """
    return [*BUILTIN, *(entry for entry, _ in _registered.values()), *_plugins()]


def names() -> list[str]:
    """The name of every known pattern.

    Returns:
        The names.
    """
    return [entry.name for entry in entries()]


def get_pattern(name: str) -> Pattern:
    """The pattern called ``name`` (imported on first use).

    Args:
        name: A pattern name, e.g. from a thread's metadata.

    Returns:
        The pattern.

    Raises:
        UsageError: If this version does not know it.
    """
    if name in _registered:
        return _registered[name][1]
    for entry in entries():
        if entry.name == name:
            return entry.load()
    known = ", ".join(names())
    raise UsageError(f"unknown pattern {name!r}: this version runs {known}")
