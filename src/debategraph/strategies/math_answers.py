r"""Checking an answer against its gold: exact match, or mathematical equivalence.

A choice letter or a yes/no answer (read by :func:`~debategraph.strategies.answers.
extract_answer`) is right when it is the gold's letter. A math answer (MATH, GSM-Hard) is
right when ``math-verify`` finds it equivalent to the gold (``0.5`` and ``\frac{1}{2}``
are one answer), never by comparing LaTeX strings. ``math-verify`` is in the ``eval``
extra; :func:`require` says which extra to install when a module is missing.

A solver asked for an expression (a MATH answer: ``\sqrt{2}``, ``[1, 3)``, ``x^2+1``) is
read by :func:`read_expression`: its marked or whole answer, kept whole and written in one
canonical form (:func:`canonical_expression`), so that answers math-verify parses to the
same object (``\frac{\sqrt{2}}{2}`` and ``\sqrt{2}/2``) are one answer in a vote.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import re
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

from debategraph.errors import UsageError
from debategraph.strategies.numbers import normalize_number, normalize_value

#: How answers are checked: ``exact`` (the same normalised text) or ``math``.
Checker = Literal["exact", "math"]

#: The extra that holds the eval's optional readers and checkers.
EVAL_EXTRA = "eval"
_BOXED = "\\boxed{"
_DELIMITED = re.compile(r"\\boxed\{|\$|\\\(|\\\[")
#: The longest expression math-verify is given to parse (a longer one is compared as text).
MAX_EXPRESSION_CHARS = 200
# What sympy would compute in full while parsing, past any timer (a solver's answer is
# read on a worker thread, where math-verify has none): a tower of powers, a power of
# four digits or more, and any factorial but that of a number of one or two digits.
_POWERS = re.compile(r"\^\s*\{[^{}]*\^|\^\s*\{?\s*\d{4,}")
_FACTORIAL = re.compile(r"(?<!\\)!")  # not ``\!``, a negative thin space
_SMALL_FACTORIAL = re.compile(r"(?<![\d\\])\d{1,2}\s*!")
# Marks before an answer, as the numeric extractor reads them (the rest of the line).
_LINE_MARKS = (
    re.compile(r"####[ \t*_]*([^\n]*)"),
    re.compile(r"(?i)\banswer\s*(?:is\b\s*:?|:|=)[ \t*_]*([^\n]*)"),
)
_WRAPPERS = re.compile(r"^(?:\$+|\\\(|\\\[)\s*(.*?)\s*(?:\$+|\\\)|\\\])$", re.DOTALL)
_SPACING = re.compile(r"\\[,;:! ]|\\(?:left|right)\b|\s+")
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")
# Words alone are a text answer (``east``, ``Monday``), never a product of letters.
_WORDS = re.compile(r"[A-Za-z]{2,}(?:\s+[A-Za-z]{2,})*")
_TEXT_COMMAND = re.compile(r"\\(?:text|mathrm|textbf|mbox)\{[^{}]*\}")
#: Seconds math-verify may spend on one parse or comparison (its timer works only on the
#: main thread; elsewhere it runs without one).
_TIMEOUT_S = 5


@dataclass(frozen=True)
class Checked:
    """Whether an answer is right, and why not where it could not be checked.

    Attributes:
        correct: The answer is the gold's.
        reason: Why it counts as wrong without being compared (no answer, an answer
            the checker cannot parse); empty where it was compared.
    """

    correct: bool
    reason: str = ""


def require(module: str, what: str) -> ModuleType:
    """Import an optional module of the ``eval`` extra, or say in one line how to get it.

    Args:
        module: The module (``math_verify``, ``pyarrow.parquet``, ``datasets``).
        what: What needs it, for the error (``the math checker``).

    Returns:
        The module.

    Raises:
        UsageError: If it is not installed, naming the extra to install.
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UsageError(
            f"{what} needs {module.split('.')[0]}: pip install 'debategraph[{EVAL_EXTRA}]'"
        ) from None


def last_boxed(text: str) -> str | None:
    r"""The content of the last ``\boxed{...}`` of a text, its braces balanced.

    Args:
        text: A solution such as ``... so $x = \boxed{\frac{1}{2}}$.``

    Returns:
        ``\frac{1}{2}``; ``None`` where there is no complete ``\boxed{``.
    """
    start = text.rfind(_BOXED)
    while start >= 0:
        depth, at = 1, start + len(_BOXED)
        for index in range(at, len(text)):
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            if depth == 0:
                return text[at:index].strip()
        start = text.rfind(_BOXED, 0, start)
    return None


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> tuple[Any, ...]:
    """``math_verify.parse`` of an answer, boxed first where it has no delimiters.

    Empty where it found no mathematical object (only its fallback, the text itself).
    Kept per text: a question's gold is checked once per mode and protocol, and answers
    repeat (the parse is most of a check's few milliseconds).
    """
    math_verify = require("math_verify", "the math checker")
    source = text if _DELIMITED.search(text) else f"{_BOXED}{text}}}"
    parsed = tuple(math_verify.parse(source, parsing_timeout=_timeout()))
    return parsed if any(not isinstance(found, str) for found in parsed) else ()


def _timeout() -> int | None:
    """math-verify's timer: only the main thread may set one (it uses ``SIGALRM``)."""
    return _TIMEOUT_S if threading.current_thread() is threading.main_thread() else None


@functools.lru_cache(maxsize=4096)
def math_equal(answer: str, gold: str) -> Checked:
    r"""Whether an answer is mathematically equivalent to the gold (by ``math-verify``).

    Args:
        answer: The answer (``0.5``).
        gold: The gold (``\frac{1}{2}``), in LaTeX or plain.

    Returns:
        The check (kept per pair: a question's modes and protocols often repeat one); an
        answer or gold math-verify cannot parse is wrong, with the reason.

    Raises:
        UsageError: If math-verify is not installed (which extra to install).
    """
    math_verify = require("math_verify", "the math checker")
    parsed_gold = _parsed(gold)
    if not parsed_gold:
        return Checked(False, f"math-verify cannot parse the gold {gold[:60]!r}")
    parsed = _parsed(answer)
    if not parsed:
        return Checked(False, f"math-verify cannot parse the answer {answer[:60]!r}")
    verdict = math_verify.verify(list(parsed_gold), list(parsed), timeout_seconds=_timeout())
    return Checked(bool(verdict))


def check_answer(answer: str | None, gold: str, checker: Checker = "exact") -> Checked:
    """Whether an answer is the gold, by the task's checker.

    Args:
        answer: The answer read from the model (``None``: none could be read).
        gold: The gold answer.
        checker: ``exact`` (the same normalised text: a number, a choice letter) or
            ``math`` (:func:`math_equal`).

    Returns:
        The check; no answer is wrong, with the reason.
    """
    if answer is None:
        return Checked(False, "no answer could be read")
    if checker == "math":
        return math_equal(answer, gold)
    return Checked(answer == gold)


def read_expression(text: str, *, loose: bool = False) -> str | None:
    r"""The final answer of a solver asked for an expression, in its canonical form.

    Marked answers win, the last one first: ``\boxed{...}`` (its braces balanced), then
    ``#### ...`` and ``Answer: ...`` (the rest of the line). With ``loose=True`` (a field
    that should hold only the answer) the whole text is the answer when nothing is
    marked, unless it reads as prose (three words or more outside ``\text{}``).

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
    if found is None and loose and len(_PROSE_WORD.findall(_TEXT_COMMAND.sub("", text))) < 3:
        found = text
    if found is None:
        return None
    found = last_boxed(found) or found
    answer = found.strip().rstrip(".").strip("*_ \t\n")
    unwrapped = _WRAPPERS.fullmatch(answer)
    answer = (unwrapped.group(1) if unwrapped else answer).rstrip(".").strip()
    return canonical_expression(answer) if answer else None


def canonical_expression(text: str) -> str:
    r"""One text for each mathematical object, so that equivalent answers vote together.

    A number or a fraction of whole numbers is :func:`~debategraph.strategies.numbers.
    normalize_value`'s (``\frac{1}{2}`` -> ``0.5``). Anything else math-verify parses is
    sympy's LaTeX of it (``\sqrt{2}/2`` -> ``\frac{\sqrt{2}}{2}``, ``2x+x^2`` -> ``x^{2}
    + 2 x``, ``[1,3)`` -> ``\left[1, 3\right)``); an equation ``x = 5`` is its right
    side; a rational value is a number again. Without math-verify (the ``eval`` extra),
    or for what it cannot parse, is too long, or would make sympy compute without end (a
    tower of powers), the text is kept with its spacing and ``\left``/``\right`` taken
    out.

    Args:
        text: An answer, unwrapped (no ``$``, no ``\boxed``).

    Returns:
        Its canonical text; math-verify reads it back as the same object.
    """
    number = normalize_value(text)
    if number is not None:
        return number
    tidy = _SPACING.sub("", text).replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    if len(text) > MAX_EXPRESSION_CHARS or _risky(text) or not _has_math_verify():
        return tidy
    parsed = _parsed(rf"\text{{{text}}}" if _WORDS.fullmatch(text) else text)
    if not parsed:
        return tidy
    import sympy  # type: ignore[import-untyped]  # math-verify needs it: present with it

    value = parsed[0]
    if isinstance(value, sympy.Equality) and isinstance(value.lhs, sympy.Symbol):
        value = value.rhs
    unbounded = (sympy.Integral, sympy.Sum, sympy.Product, sympy.Limit)
    if isinstance(value, sympy.Basic) and not value.has(*unbounded):
        value = value.doit()  # 2\cdot 3 is 6, \frac12+\frac14 is 0.75; never an integral
    if isinstance(value, sympy.Rational):
        return normalize_value(f"{value.p}/{value.q}") or tidy
    if isinstance(value, sympy.Float):
        return normalize_number(str(value)) or tidy
    return str(sympy.latex(value))


def _risky(text: str) -> bool:
    """Whether sympy might compute without end on parsing ``text`` (see ``_POWERS``)."""
    factorials = len(_FACTORIAL.findall(text))
    return bool(_POWERS.search(text)) or factorials > len(_SMALL_FACTORIAL.findall(text))


@functools.cache
def _has_math_verify() -> bool:
    return importlib.util.find_spec("math_verify") is not None
