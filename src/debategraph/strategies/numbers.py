r"""Numbers as answers compare them: one canonical text per value.

``1,234.50`` and ``$1234.5`` are ``1234.5``; a fraction of whole numbers whose decimal ends
is that decimal (``\frac{1}{2}`` is ``0.5``), another stays a reduced fraction (``1/3``).
The answer extractor (:mod:`debategraph.strategies.answers`) and the math answers
(:mod:`debategraph.strategies.math_answers`) both read numbers through here.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation, localcontext
from fractions import Fraction

#: The Unicode minus sign some models write.
MINUS = "\u2212"
#: A number: ``-1,234.5``, ``$18``, ``.5``.
NUMBER = (
    r"[-\u2212]?\s*\$?\s*(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
    r"|[-\u2212]?\s*\$?\s*\.\d+"
)
#: A fraction of whole numbers: ``\frac{1}{2}`` (``\dfrac``, ``\tfrac``) or ``1/2``.
FRACTION = (
    r"[-\u2212]?\s*\\[dt]?frac\s*\{\s*\d+\s*\}\s*\{\s*\d+\s*\}"
    r"|[-\u2212]?\s*\d+\s*/\s*\d+(?!\d|\.\d)"
)
_IS_FRACTION = re.compile(FRACTION)
_FRACTION_PARTS = re.compile(r"([-\u2212]?)\D*?(\d+)\D+?(\d+)\D*")


def normalize_number(raw: str) -> str | None:
    """Canonical text of a number: no ``$``, no thousands commas, no trailing zeros.

    Args:
        raw: Text such as ``$1,234.50``, ``-3``, ``18.0``.

    Returns:
        ``"1234.5"``, ``"-3"``, ``"18"``; ``None`` if ``raw`` is not a number.
    """
    text = raw.replace(MINUS, "-").replace("$", "").replace(",", "").replace(" ", "").strip()
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    if value == value.to_integral_value():
        return str(int(value))
    with localcontext() as exact:  # normalize() rounds to the context's precision
        exact.prec = max(len(value.as_tuple().digits), exact.prec)
        return format(value.normalize(), "f")


def normalize_value(raw: str) -> str | None:
    r"""Canonical text of a number or a fraction of whole numbers.

    A fraction whose decimal ends is that number (``\frac{3}{4}`` -> ``"0.75"``,
    ``48/2`` -> ``"24"``); another is kept reduced (``2/6`` -> ``"1/3"``), which math-verify
    reads as the fraction; anything else is :func:`normalize_number`'s.

    Args:
        raw: Text such as ``\frac{1}{2}``, ``-3/4``, ``$1,234.50``.

    Returns:
        ``"0.5"``, ``"-0.75"``, ``"1234.5"``; ``None`` if it is neither (or divides by 0).
    """
    if _IS_FRACTION.fullmatch(raw.strip()) is None:
        return normalize_number(raw)
    parts = _FRACTION_PARTS.fullmatch(raw.strip())
    if parts is None or int(parts.group(3)) == 0:
        return None
    value = Fraction(int(parts.group(2)), int(parts.group(3)))
    sign = "-" if parts.group(1) and value else ""
    rest = value.denominator
    for prime in (2, 5):
        while rest % prime == 0:
            rest //= prime
    if rest == 1:  # a decimal that ends: as many digits as the numerator, and 2-5 factors
        with localcontext() as exact:
            exact.prec = len(str(value.numerator)) + 4 * len(str(value.denominator)) + 2
            decimal = Decimal(value.numerator) / Decimal(value.denominator)
        return normalize_number(f"{sign}{decimal}")
    return f"{sign}{value.numerator}/{value.denominator}"
