"""How text reads in what the CLI prints: counts (``1 round``, ``2 rounds``), one-line errors."""

from __future__ import annotations

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
