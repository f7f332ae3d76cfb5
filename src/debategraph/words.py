"""How text reads: counts (``1 round``), one-line errors, text for a Markdown line or table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Plurals that are not the word plus ``s``.
_IRREGULAR = {"reply": "replies", "is": "are", "was": "were"}


def plural(count: float, word: str) -> str:
    """``count`` and ``word``, the word plural unless the count is exactly one.

    The one helper for a count in printed text: ``plural(1, "round")`` is ``1 round``,
    ``plural(2, "vote")`` is ``2 votes``, ``plural(1.0, "vote")`` is ``1 vote``.

    Args:
        count: How many.
        word: The singular.

    Returns:
        The count (integral floats without ``.0``) and the word.
    """
    shown = int(count) if float(count).is_integer() else count
    if shown == 1:
        return f"{shown} {word}"
    return f"{shown} {_IRREGULAR.get(word, word + 's')}"


def one_line(text: str) -> str:
    """``text`` on one line (whitespace runs collapsed), at most 400 characters."""
    return " ".join(text.split())[:400]


def inline(text: str) -> str:
    """Flatten text to one line for a heading or a table cell (``|`` escaped).

    Args:
        text: Any text.

    Returns:
        The line.
    """
    return " ".join(text.split()).replace("|", "\\|")


def ranked_table(counts: Mapping[Any, Any], header: tuple[str, str]) -> list[str]:
    """Counts as a two-column table, highest first (ties in key order).

    Args:
        counts: Key -> count (non-numbers count as 0 for the order).
        header: The two column headings.

    Returns:
        The table's lines (none for no counts).
    """
    if not counts:
        return []
    ranked = sorted(counts.items(), key=lambda kv: (-_number(kv[1]), str(kv[0])))
    return [
        f"| {inline(header[0])} | {inline(header[1])} |",
        "| --- | ---: |",
        *(f"| {inline(str(k))} | {n} |" for k, n in ranked),
    ]


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0
