"""The answer extractor: turns what a solver wrote into a comparable numeric answer."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_MINUS = "\u2212"  # the Unicode minus sign some models write
_NUMBER = (
    r"[-\u2212]?\s*\$?\s*(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
    r"|[-\u2212]?\s*\$?\s*\.\d+"
)
_MARKED = [
    re.compile(rf"####\s*({_NUMBER})"),
    re.compile(rf"\{{\{{\s*({_NUMBER})\s*\}}\}}"),
    re.compile(rf"\\boxed\{{\s*({_NUMBER})\s*\}}"),
    re.compile(rf"(?i)\banswer\s*(?:is|:|=)\s*\**\s*({_NUMBER})"),
]
_ANY_NUMBER = re.compile(_NUMBER)


def normalize_number(raw: str) -> str | None:
    """Canonical text of a number: no ``$``, no thousands commas, no trailing zeros.

    Args:
        raw: Text such as ``$1,234.50``, ``-3``, ``18.0``.

    Returns:
        ``"1234.5"``, ``"-3"``, ``"18"``; ``None`` if ``raw`` is not a number.
    """
    text = raw.replace(_MINUS, "-").replace("$", "").replace(",", "").replace(" ", "").strip()
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def extract_answer(text: str | None, *, loose: bool = False) -> str | None:
    r"""Extract the final numeric answer from a solver's text.

    Marked answers win, last one first: ``#### 18``, ``{{18}}``, ``\boxed{18}``,
    ``Answer: 18``. With ``loose=True`` (for a field that should hold only the answer)
    the last number in the text is taken when nothing is marked.

    Args:
        text: The text to read.
        loose: Accept an unmarked number.

    Returns:
        The normalised number, or ``None`` (an abstention, never a vote).
    """
    if not text:
        return None
    for pattern in _MARKED:
        found = pattern.findall(text)
        if found:
            return normalize_number(found[-1])
    if loose:
        found = _ANY_NUMBER.findall(text)
        if found:
            return normalize_number(found[-1])
    return None
