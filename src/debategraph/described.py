"""What a pattern is, for everything that reads its threads: its :class:`Described` record.

A pattern's description is written once, in its ``nodes/<p>/described.py`` (``DESCRIBED``),
and its registry line (:class:`debategraph.registry.Entry`) names it as a
``"module:attribute"`` string; :func:`debategraph.registry.described` loads it. The
thread tools, the runs, the eval, the archive, the Markdown export and a thread's page
read a pattern through this record, never through the CLI, whose declaration of a pattern
(``cli/patterns/<p>.py``) holds only its command's options and its terminal rendering.

This module is the bottom layer: it imports nothing of the package.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Described", "Report", "max_rounds", "pausing"]

Values = Mapping[str, Any]


@dataclass(frozen=True)
class Report:
    """A file a finished run writes beside its result (the CLI's ``--report``).

    Attributes:
        default_name: File name when ``--report`` is not given; ``{thread_id}`` is filled in.
        render: ``render(values, title)``: the file's text, or ``None`` if the run has
            nothing to report.
    """

    default_name: str
    render: Callable[[Values, str], str | None]


def max_rounds(settings: Values) -> int | None:
    """A run's ``max_rounds`` setting, the default :attr:`Described.last_round`.

    Args:
        settings: The run's settings.

    Returns:
        The setting when it is an integer, else ``None``.
    """
    value = settings.get("max_rounds")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def pausing(settings: Values) -> str:
    """``, pausing after each round`` when a run pauses, for :attr:`Described.describe`.

    Args:
        settings: The run's settings.

    Returns:
        The phrase, or ``""``.
    """
    return ", pausing after each round" if settings.get("pause_after_round") else ""


@dataclass(frozen=True)
class Described:
    """One pattern as every reader of its threads sees it, below the CLI.

    Everything ``threads``, ``show``, ``resume``, ``interject``, ``fork``, ``export``,
    ``view``, the archive, the runs and the eval need from a pattern is asked of this
    record; none of them names a pattern's nodes or state keys. The graph itself comes
    from the registry line.

    Attributes:
        name: The pattern's name (its registry line's).
        title: What names a thread (its question, topic, paper title), from its values.
        summary: The pattern's own result fields (``--json``), from a thread's values.
        describe: A one-line description of a run's settings.
        agents_per_round: How many agents one round (or phase) runs: the default
            maximum concurrency, and the embedded model's parallel slots.
        report: The file a finished run writes, if any.
        result_markdown: The result section of ``export --format md`` (default: the
            summary's fields).
        explain: The result told in sentences, for a thread's page (the answer and
            why: how it was decided, the votes, who changed their mind and when, the
            officials' reasons, the stances), each piece of text the pattern did not
            write isolated (:func:`debategraph.words.quoted`); ``None``: the summary's
            fields alone. The page shows the summary's fields after the sentences, folded.
        turn_fields: What a thread's page (``debategraph view``) shows under a turn
            besides its text, by turn id: fields rendered as the summary's are (a
            persona's stances and revised insights); ``None``: nothing.
        boundary_nodes: Nodes a thread waits at between rounds (interjections go
            there); empty: the shared round loop's (``open_round``, ``human``).
        round_word: What the pattern calls a round (``turn``), in progress lines.
        last_round: The most rounds a run's settings allow (default: its
            ``max_rounds``; ``None``: no cap known): once that round has opened, no
            round reads an interjection.
    """

    name: str
    title: Callable[[Values], str]
    summary: Callable[[Values], dict[str, Any]]
    describe: Callable[[Values], str]
    agents_per_round: Callable[[Values], int]
    report: Report | None = None
    result_markdown: Callable[[Values], list[str]] | None = None
    explain: Callable[[Values], list[str]] | None = None
    turn_fields: Callable[[Values], dict[str, dict[str, Any]]] | None = None
    boundary_nodes: frozenset[str] = field(default_factory=lambda: frozenset())
    round_word: str = "round"
    last_round: Callable[[Values], int | None] = max_rounds
