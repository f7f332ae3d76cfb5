"""What a pattern declares so the CLI and the thread tools can run it without knowing it.

A pattern is its graph factory, its nodes, its state and one :class:`Pattern` value (in
its ``graphs/<pattern>.py`` module, as ``PATTERN``), listed in
:mod:`debategraph.graphs.registry`. Everything the CLI, ``threads``, ``show``, ``resume``,
``interject``, ``fork``, ``export`` and the archive need from a pattern is asked of this
declaration; none of them names a pattern's nodes or state keys.

This module imports neither LangGraph nor the model stack: declaring a pattern is cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Values = Mapping[str, Any]


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


@dataclass(frozen=True)
class Pattern:
    """One graph pattern, as the CLI and the thread tools see it.

    Attributes:
        name: The pattern's name (the compiled graph's name, stored with each thread).
        build: ``build(model, **settings)``: the factory of the uncompiled ``StateGraph``.
        command: The CLI command's own options, as a typer-annotated function returning
            a :class:`Launch`; the shared options (model, ``--db``, ``--thread``,
            ``--pause-after-round``...) are added by the CLI.
        recursion_limit: Supersteps a run with these settings may take.
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
        boundary_nodes: Nodes a thread waits at between rounds (interjections go
            there); empty: the shared round loop's (``open_round``, ``human``).
        round_word: What the pattern calls a round (``iteration``), in progress lines.
        record_types: The pydantic record types of the pattern's state besides the
            package's own (``debategraph.state.RECORD_TYPES``): the checkpoint serializer
            revives only the types it is told of (LangGraph does not derive them from
            the state schema unless ``LANGGRAPH_STRICT_MSGPACK`` is set), and reads
            others back as plain dicts.
    """

    name: str
    build: Callable[..., Any]
    command: Callable[..., Launch]
    recursion_limit: Callable[[Values], int]
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
    boundary_nodes: frozenset[str] = field(default_factory=lambda: frozenset())
    round_word: str = "round"
    record_types: tuple[type[Any], ...] = ()


def pausing(settings: Values) -> str:
    """``, pausing after each round`` when a run pauses, for :attr:`Pattern.describe`.

    Args:
        settings: The run's settings.

    Returns:
        The phrase, or ``""``.
    """
    return ", pausing after each round" if settings.get("pause_after_round") else ""


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
    from rich.markup import escape

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


def parse_time_limit(value: str) -> float:
    """``--time-limit``: ``30m`` / ``90s`` / ``1h`` / ``120`` -> seconds.

    Args:
        value: The option's value.

    Returns:
        Seconds (> 0).

    Raises:
        UsageError: One line naming the value and the allowed form.
    """
    from debategraph.errors import UsageError
    from debategraph.strategies.termination.factories import parse_duration

    try:
        return parse_duration(value)
    except ValueError as exc:
        raise UsageError(f"--time-limit {exc}") from None


def time_limit_option(value: str | None) -> float | None:
    """An optional ``--time-limit`` in seconds (see :func:`parse_time_limit`), or ``None``."""
    return None if value is None else parse_time_limit(value)
