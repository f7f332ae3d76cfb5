r"""Checking an answer against its gold: exact match, or mathematical equivalence.

A choice letter or a yes/no answer (read by :func:`~debategraph.strategies.answers.
extract_answer`) is right when it is the gold's letter. A math answer (MATH, GSM-Hard) is
right when ``math-verify`` finds it equivalent to the gold (``0.5`` and ``\frac{1}{2}``
are one answer), never by comparing LaTeX strings. ``math-verify`` is in the ``eval``
extra; :func:`require` says which extra to install when a module is missing.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import logging
import math
import re
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

from debategraph.errors import UsageError

#: How answers are checked: ``exact`` (the same normalised text) or ``math``.
Checker = Literal["exact", "math"]

#: The extra that holds the eval's optional readers and checkers.
EVAL_EXTRA = "eval"
_BOXED = "\\boxed{"
_DELIMITED = re.compile(r"\\boxed\{|(?<!\\)\$|\\\(|\\\[")
#: The most bits a parsed answer's value may have to be evaluated (about 3,600 digits).
MAX_BITS = 12_000
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
def parse_math(text: str) -> tuple[Any, ...] | None:
    """``math_verify.parse`` of an answer, boxed first where it has no delimiters.

    math-verify parses without evaluating (``2^{99!}`` stays a power); what comes back
    is checked by :func:`too_large` before anything evaluates it.

    Args:
        text: An answer or a gold, in LaTeX or plain.

    Returns:
        The objects found; empty where it found none (only its fallback, the text
        itself); ``None`` where one is too large to evaluate. Kept per text: a
        question's gold is checked once per mode and protocol, and answers repeat.

    Raises:
        UsageError: If math-verify is not installed (which extra to install).
    """
    math_verify = require("math_verify", "the math checker")
    _quiet_timer_warning()
    source = text if _DELIMITED.search(text) else f"{_BOXED}{text}}}"
    parsed = tuple(math_verify.parse(source, parsing_timeout=_timeout()))
    if not any(not isinstance(found, str) for found in parsed):
        return ()
    return None if any(too_large(found) for found in parsed) else parsed


def too_large(value: Any) -> bool:
    """Whether evaluating a parsed answer could take sympy without end (or past its limits).

    An upper bound of the value's size in bits is read from the tree without evaluating
    it: a power's exponent, a factorial's or a binomial's argument must be small numbers,
    and the whole must stay under :data:`MAX_BITS` (Python will not even print an integer
    of more than 4,300 digits).

    Args:
        value: What math-verify parsed (a sympy object, or its fallback text).

    Returns:
        ``True`` where it is too large to evaluate.
    """
    import sympy  # type: ignore[import-untyped]  # math-verify needs it: present with it

    return isinstance(value, sympy.Basic) and _bits(value, sympy) > MAX_BITS


def _bits(node: Any, sympy: Any) -> float:
    """An upper bound of log2 of the size of a sympy tree's value (``inf``: unbounded)."""
    if isinstance(node, sympy.Rational):
        return float(max(abs(node.p).bit_length(), node.q.bit_length(), 1))
    if isinstance(node, sympy.Float):
        return float(max(math.log2(abs(float(node)) + 1), 1)) if node.is_finite else 1.0
    if isinstance(node, sympy.Pow | sympy.factorial | sympy.binomial):
        first = _bits(node.args[0], sympy)
        second = _bits(node.args[1], sympy) if len(node.args) > 1 else 0.0
        if isinstance(node, sympy.factorial):  # n! < n^n
            return first * 2.0**first if first < 32 else math.inf
        if isinstance(node, sympy.binomial):  # C(n, k) < 2^n
            return 2.0**first if first < 32 else math.inf
        if node.args[1].free_symbols:
            return first  # x^n stays a power: nothing to evaluate
        return first * 2.0**second if second < 32 else math.inf
    if not node.args:
        return 2.0  # a symbol, pi, e: small
    parts = [_bits(arg, sympy) for arg in node.args]
    return sum(parts) if isinstance(node, sympy.Mul) else max(parts) + len(parts)


@functools.cache
def _quiet_timer_warning() -> None:
    """Drop math-verify's warning that it runs without a timer (on a worker thread).

    :func:`too_large` is the guard there: the warning would reach a CLI user's terminal
    once per run, telling them to write what is already written.
    """
    for name in ("math_verify.parser", "math_verify.grader"):
        logging.getLogger(name).addFilter(_not_the_timer_warning)


def _not_the_timer_warning(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("Timeout is disabled")


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
    parsed_gold, parsed = parse_math(gold), parse_math(answer)
    if not parsed_gold or not parsed:
        name, text, found = (
            ("gold", gold, parsed_gold) if not parsed_gold else ("answer", answer, parsed)
        )
        why = "is too large to evaluate" if found is None else "cannot be parsed by math-verify"
        return Checked(False, f"the {name} {text[:60]!r} {why}")
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


@functools.cache
def has_math_verify() -> bool:
    """Whether math-verify (the ``eval`` extra) is installed.

    Returns:
        ``True`` where it can be imported.
    """
    return importlib.util.find_spec("math_verify") is not None
