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
_DELIMITED = re.compile(r"\\boxed\{|\$|\\\(|\\\[")
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
