"""The offline arithmetic task: questions generated from a seed, exact integer answers.

The form is Du et al. (2023)'s ``a+b*c+d-e*f`` with operands 0-29; ``--operands N`` takes
its first ``N`` operands (``a+b`` ... ``a+b*c+d-e*f``) and ``--max-operand M`` bounds them,
so the easy forms give even a small embedded model something it can score on. Nothing
is downloaded: the same seed, count and form give the same questions on any machine,
and :func:`write_questions` writes them beside the results so anyone can check and
reuse them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

from debategraph.errors import UsageError
from debategraph.eval.records import Item
from debategraph.eval.report import write_out

#: The operators between Du et al.'s six operands, in order: ``a+b*c+d-e*f``.
OPERATORS = ("+", "*", "+", "-", "*")
MIN_OPERANDS = 2
MAX_OPERANDS = len(OPERATORS) + 1
DEFAULT_OPERANDS = MAX_OPERANDS
DEFAULT_MAX_OPERAND = 29
#: The largest ``--max-operand`` allowed (answers stay exact integers at any size; this
#: keeps questions readable).
MAX_MAX_OPERAND = 9999
DEFAULT_COUNT = 100
MAX_COUNT = 100_000
#: A question as the solvers read it.
QUESTION = "What is {expression}?"
#: The file the questions of a run are written to, in ``--out``.
QUESTIONS_FILE = "questions.jsonl"


def check_arithmetic(count: int, operands: int, max_operand: int) -> None:
    """Refuse a question count, form or operand bound the task cannot generate.

    Args:
        count: ``--count``: how many questions.
        operands: ``--operands``: operands per question.
        max_operand: ``--max-operand``: the largest operand.

    Raises:
        UsageError: One line naming the option, its value and what is allowed.
    """
    if not MIN_OPERANDS <= operands <= MAX_OPERANDS:
        raise UsageError(
            f"--operands {operands}: must be {MIN_OPERANDS} to {MAX_OPERANDS} "
            f"(the form {form(MAX_OPERANDS)} has {MAX_OPERANDS}; {MIN_OPERANDS} is {form(2)})"
        )
    if not 1 <= max_operand <= MAX_MAX_OPERAND:
        raise UsageError(f"--max-operand {max_operand}: must be 1 to {MAX_MAX_OPERAND}")
    if not 1 <= count <= MAX_COUNT:
        raise UsageError(f"--count {count}: must be 1 to {MAX_COUNT:,}")


def form(operands: int) -> str:
    """The form of a question with ``operands`` operands: ``a+b*c`` for 3.

    Args:
        operands: Operands, ``2..6``.

    Returns:
        The form, in letters.
    """
    letters = "abcdef"[:operands]
    return letters[0] + "".join(
        op + letter for op, letter in zip(OPERATORS, letters[1:], strict=False)
    )


def value_of(numbers: Sequence[int]) -> int:
    """The exact value of ``numbers`` joined by :data:`OPERATORS` (``*`` before ``+``/``-``).

    Args:
        numbers: The operands, 1 to 6 of them.

    Returns:
        The value.
    """
    total = 0
    sign, term = 1, numbers[0]
    for op, number in zip(OPERATORS, numbers[1:], strict=False):
        if op == "*":
            term *= number
            continue
        total += sign * term
        sign, term = (1 if op == "+" else -1), number
    return total + sign * term


def expression(numbers: Sequence[int]) -> str:
    """``numbers`` joined by :data:`OPERATORS`, spaced: ``3 + 4 * 5``.

    Args:
        numbers: The operands.

    Returns:
        The expression as the question shows it.
    """
    parts = [str(numbers[0])]
    for op, number in zip(OPERATORS, numbers[1:], strict=False):
        parts += [op, str(number)]
    return " ".join(parts)


def generate_arithmetic(count: int, *, operands: int, max_operand: int, seed: int) -> list[Item]:
    """Generate the questions: each operand uniform in ``0..max_operand``.

    Args:
        count: How many questions.
        operands: Operands per question (``2..6``).
        max_operand: The largest operand.
        seed: The generator's seed (the same seed, count and form give the same
            questions).

    Returns:
        The questions, ``line`` numbered from 1 (their line in ``questions.jsonl``).

    Raises:
        UsageError: If a setting is out of range (see :func:`check_arithmetic`).
    """
    check_arithmetic(count, operands, max_operand)
    rng = random.Random(f"debategraph-arithmetic:{seed}:{operands}:{max_operand}")
    items = []
    for line in range(1, count + 1):
        numbers = [rng.randint(0, max_operand) for _ in range(operands)]
        question = QUESTION.format(expression=expression(numbers))
        items.append(Item(line=line, question=question, gold=str(value_of(numbers))))
    return items


def write_questions(path: Path, items: Sequence[Item]) -> Path:
    """Write the questions a run used as JSONL: ``{"line": 1, "question": ..., "answer": 23}``.

    ``line`` is the question's number in the generated sequence: its ``line`` in
    ``results.csv``.

    Written whole or not at all (:func:`~debategraph.eval.report.write_out`).

    Args:
        path: The file (``questions.jsonl`` in ``--out``).
        items: The questions.

    Returns:
        ``path``.

    Raises:
        UsageError: If the file cannot be written.
    """
    lines = [
        json.dumps({"line": item.line, "question": item.question, "answer": int(item.gold)}) + "\n"
        for item in items
    ]
    return write_out(path, "".join(lines))
