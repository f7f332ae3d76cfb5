"""What a pattern declares for the CLI and the thread tools: its :class:`Pattern`.

A pattern's ``cli/patterns/<p>.py`` defines ``PATTERN``, a :class:`Pattern`, and its
registry line (:class:`debategraph.registry.Entry`) names it as a ``"module:attribute"``
string, so declaring a pattern in the registry loads no CLI. The command returns a
:class:`Launch`; a pattern that writes a file beside its result gives a :class:`Report`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from debategraph.registry import Values

__all__ = ["Launch", "Pattern", "Report", "Values"]


@dataclass(frozen=True)
class Launch:
    """What a pattern's CLI command hands the runner.

    Attributes:
        settings: The graph factory's keyword arguments (stored with the thread).
        input: The graph's input.
        notes: Lines to show the user before the run (e.g. what a parser noticed).
    """

    settings: dict[str, Any]
    input: dict[str, Any]
    notes: tuple[str, ...] = ()


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


def _nothing(node: str, update: Values) -> list[str]:
    return []


def _max_rounds(settings: Values) -> int | None:
    value = settings.get("max_rounds")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Pattern:
    """One pattern as the CLI and the thread tools see it (its ``cli/patterns`` module).

    Everything ``threads``, ``show``, ``resume``, ``interject``, ``fork``, ``export`` and
    the archive need from a pattern is asked of this declaration; none of them names a
    pattern's nodes or state keys. The graph itself comes from the registry line.

    Attributes:
        name: The pattern's name (its registry line's).
        command: The CLI command's own options, as a typer-annotated function returning
            a :class:`Launch`; the shared options (model, ``--db``, ``--thread``,
            ``--pause-after-round``...) are added by the CLI.
        title: What names a thread (its question, topic, paper title), from its values.
        summary: The pattern's own result fields (``--json``), from a thread's values.
        describe: A one-line description of a run's settings.
        agents_per_round: How many agents one round (or phase) runs: the default
            maximum concurrency, and the embedded model's parallel slots.
        headline: The result as lines of Rich markup, from :attr:`summary`'s fields.
        progress: Lines of Rich markup to show for one node's update, besides the
            transcript records it wrote (which the CLI prints itself).
        streams: Whether a node's model tokens are prose worth streaming (``None``: no
            node's are).
        streamed_stage: Turns of this stage, written by a node that :attr:`streams`,
            were streamed token by token, so the CLI does not print them again
            (``None``: every agent turn such a node writes was streamed).
        report: The file a finished run writes, if any.
        result_markdown: The result section of ``export --format md`` (default: the
            summary's fields).
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
    command: Callable[..., Launch]
    title: Callable[[Values], str]
    summary: Callable[[Values], dict[str, Any]]
    describe: Callable[[Values], str]
    agents_per_round: Callable[[Values], int]
    headline: Callable[[Values], list[str]]
    progress: Callable[[str, Values], list[str]] = _nothing
    streams: Callable[[str], bool] | None = None
    streamed_stage: str | None = None
    report: Report | None = None
    result_markdown: Callable[[Values], list[str]] | None = None
    turn_fields: Callable[[Values], dict[str, dict[str, Any]]] | None = None
    boundary_nodes: frozenset[str] = field(default_factory=lambda: frozenset())
    round_word: str = "round"
    last_round: Callable[[Values], int | None] = _max_rounds
