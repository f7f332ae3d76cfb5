r"""Expression answers: a MATH answer read whole and written in one canonical form.

A solver asked for an expression (``\sqrt{2}``, ``[1, 3)``, ``x^2+1``) is read by
:func:`read_expression`: its marked or whole answer, kept whole and written by
:func:`canonical_expression` so that answers math-verify parses to the same object
(``\frac{\sqrt{2}}{2}``, ``\sqrt{2}/2`` and ``\frac{1}{\sqrt{2}}``) are one text, and so one
answer in a vote, an agreement or a flip.

Solvers answer on worker threads, where math-verify has no timer, so nothing here may let
sympy compute without end on what a model wrote: a tower of powers, a huge power or
factorial is never evaluated (:func:`~debategraph.strategies.math_answers.too_large`), and
anything sympy fails on is kept as text.
"""

from __future__ import annotations

import re
from typing import Any

from debategraph.strategies.math_answers import has_math_verify, last_boxed, parse_math
from debategraph.strategies.numbers import FRACTION, NUMBER, normalize_number, normalize_value

#: The longest expression math-verify is given to parse (a longer one is compared as text).
MAX_EXPRESSION_CHARS = 200
# Marks before an answer, as the numeric extractor reads them (the rest of the line).
_LINE_MARKS = (
    re.compile(r"####[ \t*_]*([^\n]*)"),
    re.compile(r"(?i)\banswer\s*(?:is\b\s*:?|:|=)[ \t*_]*([^\n]*)"),
)
_WRAPPERS = re.compile(r"^(?:\$+|\\\(|\\\[)\s*(.*?)\s*(?:\$+|\\\)|\\\])$", re.DOTALL)
_SPACING = re.compile(r"\\[,;:! ]|\\(?:left|right)\b|\s+")
# One number alone (thousands grouped as ``1,000``) or a fraction: never a list ``1, 2``.
_ONE_NUMBER = re.compile(rf"\s*(?:{FRACTION}|{NUMBER})\s*")
# A word of prose: two letters or more, not a command (``\in``) and not inside one.
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")
# Words math is written in without a backslash (``sin(x)``, ``sqrt 2``, ``inf``).
_MATH_WORDS = frozenset(
    {"sin", "cos", "tan", "cot", "sec", "csc", "log", "ln", "exp", "sqrt", "pi", "inf", "infty"}
)
# A function written without its backslash (``sin(x)``), given one before parsing.
_BARE_FUNCTION = re.compile(
    r"(?<![\\A-Za-z])(sin|cos|tan|cot|sec|csc|log|ln|exp|sqrt|pi|infty|inf)(?![A-Za-z])"
)
_BARE_SQRT = re.compile(r"(?<![\\A-Za-z])sqrt\s*\(([^()]*)\)")
# Words alone are a text answer (``east``, ``Monday``), never a product of letters.
_WORDS = re.compile(r"[A-Za-z]{2,}(?:\s+[A-Za-z]{2,})*")
_TEXT_COMMAND = re.compile(r"\\(?:text|mathrm|textbf|mbox)\{[^{}]*\}")
# What makes sympy's LaTeX unreadable back as the same object: kept as text instead.
_UNSTABLE = ("\\tilde", "\\bar", "\\overline", "NaN", "\\wedge", "\\vee")
# What sympy may raise on an expression a model wrote (it is never trusted to parse).
_SYMPY_FAILURES = (
    ValueError,
    TypeError,
    ArithmeticError,
    AttributeError,
    LookupError,
    NotImplementedError,
    RecursionError,
)


def read_expression(text: str, *, loose: bool = False) -> str | None:
    r"""The final answer of a solver asked for an expression, in its canonical form.

    Marked answers win, the last one first: ``\boxed{...}`` (its braces balanced), then
    ``#### ...`` and ``Answer: ...`` (the rest of the line). With ``loose=True`` (a field
    that should hold only the answer) the whole text is the answer when nothing is
    marked, unless it is prose: three words or more, or a word (outside ``\text{}``, not
    a function such as ``sin``) beside math (``Therefore 5``). Words alone are a text
    answer (``east``).

    Args:
        text: What the solver wrote (``The answer is $\frac{\sqrt{2}}{2}$.``).
        loose: Take the whole text when nothing is marked.

    Returns:
        :func:`canonical_expression` of the answer (``\frac{\sqrt{2}}{2}``); ``None``
        when there is none.
    """
    found = last_boxed(text)
    if found is None:
        for mark in _LINE_MARKS:
            lines = [line for line in mark.findall(text) if line.strip()]
            if lines:
                found = lines[-1]
                break
    if found is None and loose and not _prose(text):
        found = text
    if found is None:
        return None
    found = last_boxed(found) or found
    answer = found.strip().rstrip(".").strip("*_ \t\n")
    unwrapped = _WRAPPERS.fullmatch(answer)
    answer = (unwrapped.group(1) if unwrapped else answer).rstrip(".").strip()
    return canonical_expression(answer) if answer else None


def _prose(text: str) -> bool:
    """Whether a whole answer field is prose rather than an expression or a text answer."""
    plain = _TEXT_COMMAND.sub("", text).strip()
    words = [w for w in _PROSE_WORD.findall(plain) if w.casefold() not in _MATH_WORDS]
    return len(words) >= 3 or (bool(words) and _WORDS.fullmatch(plain) is None)


def canonical_expression(text: str) -> str:
    r"""One text for each mathematical object, so that equivalent answers vote together.

    One number (``1,000`` is a thousand; ``1, 2`` is a list) or a fraction of whole
    numbers is :func:`~debategraph.strategies.numbers.normalize_value`'s (``\frac{1}{2}``
    -> ``0.5``). Anything else math-verify parses is sympy's LaTeX of it, evaluated
    (``\sqrt{2}/2`` -> ``\frac{\sqrt{2}}{2}``, ``2\cdot 3`` -> ``6``, ``[1,3)`` ->
    ``\left[1, 3\right)``); an equation ``x = 5`` is its right side; a rational value is
    a number again. The text is kept, its spacing, ``\left``/``\right`` and ``\$`` taken
    out, without math-verify (the ``eval`` extra) and for what it cannot parse, what is
    too long or too large to evaluate (a tower of powers), and where sympy's LaTeX would
    not read back as the same text.

    Args:
        text: An answer, unwrapped (no ``$``, no ``\boxed``).

    Returns:
        Its canonical text: reading it again gives the same text.
    """
    text = text.replace("\\$", "")
    if _ONE_NUMBER.fullmatch(text):
        number = normalize_value(text)
        if number is not None:
            return number
    tidy = _SPACING.sub("", text).replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    once = _canonical_once(text)
    if once is None or once == tidy:
        return tidy
    return once if _canonical_once(once) == once else tidy


def _canonical_once(text: str) -> str | None:
    """Sympy's text of what math-verify parses ``text`` as (``None``: keep the text)."""
    if len(text) > MAX_EXPRESSION_CHARS or not has_math_verify():
        return None
    if _WORDS.fullmatch(text):
        text = rf"\text{{{text}}}"
    else:
        text = _BARE_FUNCTION.sub(_with_backslash, _BARE_SQRT.sub(r"sqrt{\1}", text))
    parsed = parse_math(text)
    if not parsed:  # nothing parsed, or too large to evaluate
        return None
    import sympy  # type: ignore[import-untyped]  # math-verify needs it: present with it

    value: Any = parsed[0]
    try:
        if isinstance(value, sympy.Equality) and isinstance(value.lhs, sympy.Symbol):
            value = value.rhs
        unbounded = (sympy.Integral, sympy.Sum, sympy.Product, sympy.Limit)
        if isinstance(value, sympy.Basic) and not value.has(*unbounded):
            value = value.doit()  # 2\cdot 3 is 6, \frac12+\frac14 is 0.75; never an integral
        if isinstance(value, sympy.Rational):
            return normalize_value(str(value.p) if value.q == 1 else f"{value.p}/{value.q}")
        if isinstance(value, sympy.Float):
            return normalize_number(str(value))
        written = str(sympy.latex(value))
    except _SYMPY_FAILURES:
        return None
    return None if any(mark in written for mark in _UNSTABLE) else written


def _with_backslash(match: re.Match[str]) -> str:
    r"""``sin`` -> ``\sin``; ``inf`` -> ``\infty``."""
    name = match.group(1)
    return "\\infty" if name == "inf" else f"\\{name}"
