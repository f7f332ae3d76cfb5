"""The offline arithmetic task: its form, exact answers, determinism and bad settings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from debategraph.errors import UsageError
from debategraph.eval.arithmetic import (
    check_arithmetic,
    expression,
    form,
    generate_arithmetic,
    value_of,
    write_questions,
)


def test_forms_follow_du_et_al() -> None:
    assert [form(n) for n in range(2, 7)] == [
        "a+b",
        "a+b*c",
        "a+b*c+d",
        "a+b*c+d-e",
        "a+b*c+d-e*f",
    ]


@pytest.mark.parametrize(
    ("numbers", "value"),
    [
        ([3, 4], 7),
        ([3, 4, 5], 23),
        ([3, 4, 5, 6], 29),
        ([3, 4, 5, 6, 7], 22),
        ([3, 4, 5, 6, 7, 8], -27),
        ([0, 29, 29, 0, 29, 29], 0),
        ([29, 29, 29, 29, 0, 0], 899),
    ],
)
def test_values_are_exact_with_precedence(numbers: list[int], value: int) -> None:
    assert value_of(numbers) == value
    # The same as Python's own arithmetic on the shown expression (checked, not used).
    assert value == _python_value(expression(numbers))


def _python_value(text: str) -> int:
    """The value of ``a + b * c ...`` by splitting on + and - (test-only reference)."""
    total = 0
    for sign, term in re.findall(r"([+-]?)\s*(\d+(?:\s*\*\s*\d+)*)", text.replace(" ", "")):
        product = 1
        for factor in term.split("*"):
            product *= int(factor)
        total += -product if sign == "-" else product
    return total


def test_questions_are_deterministic_and_in_range() -> None:
    first = generate_arithmetic(50, operands=3, max_operand=9, seed=7)
    again = generate_arithmetic(50, operands=3, max_operand=9, seed=7)
    other = generate_arithmetic(50, operands=3, max_operand=9, seed=8)
    assert first == again
    assert first != other
    assert [item.line for item in first] == list(range(1, 51))
    for item in first:
        numbers = [int(n) for n in re.findall(r"\d+", item.question)]
        assert len(numbers) == 3 and all(0 <= n <= 9 for n in numbers)
        assert item.question == f"What is {expression(numbers)}?"
        assert item.gold == str(value_of(numbers))


def test_questions_file_round_trips(tmp_path: Path) -> None:
    items = generate_arithmetic(5, operands=6, max_operand=29, seed=0)
    path = write_questions(tmp_path / "questions.jsonl", items)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert rows == [{"line": i.line, "question": i.question, "answer": int(i.gold)} for i in items]
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize(
    ("count", "operands", "max_operand", "message"),
    [
        (10, 1, 9, "--operands 1: must be 2 to 6 (the form a+b*c+d-e*f has 6; 2 is a+b)"),
        (10, 7, 9, "--operands 7: must be 2 to 6"),
        (10, 2, 0, "--max-operand 0: must be 1 to 9999"),
        (0, 2, 9, "--count 0: must be 1 to 100,000"),
    ],
)
def test_bad_settings_are_one_line(
    count: int, operands: int, max_operand: int, message: str
) -> None:
    with pytest.raises(UsageError) as info:
        check_arithmetic(count, operands, max_operand)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)
