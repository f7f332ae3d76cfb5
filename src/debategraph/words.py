"""How text reads: counts (``1 round``), one-line errors, text for a Markdown line or table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Plurals that are not the word plus ``s``.
_IRREGULAR = {"reply": "replies", "entry": "entries", "is": "are", "was": "were"}


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


#: Unicode's first-strong isolate and its pop: what lies between them keeps its direction
#: (a right-to-left override included) to itself. A page shows such a stretch as ``<bdi>``.
ISOLATE, POP_ISOLATE = "\u2068", "\u2069"


def quoted(text: object) -> str:
    """Someone's text (a model's reason, an agent's name) inside a sentence, isolated.

    A sentence a pattern writes about its result wraps every piece of text it did not
    write in :data:`ISOLATE` ... :data:`POP_ISOLATE`, so a right-to-left override in it
    reorders nothing after it; isolate characters inside the text are dropped.

    Args:
        text: The text (its ``str``).

    Returns:
        The text between the isolate marks, on one line.
    """
    inner = " ".join(str(text).split()).replace(ISOLATE, "").replace(POP_ISOLATE, "")
    return f"{ISOLATE}{inner}{POP_ISOLATE}"


def share(part: int, whole: int) -> str:
    """``part`` of ``whole`` and its percentage: ``4 of 6 (67%)``.

    Args:
        part: How many.
        whole: Out of how many (0: no percentage).

    Returns:
        The text.
    """
    percent = f" ({round(100 * part / whole)}%)" if whole else ""
    return f"{part} of {whole}{percent}"


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
