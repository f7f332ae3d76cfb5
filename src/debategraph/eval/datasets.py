"""The eval's datasets: GSM8K and multiple-choice JSONL files read into items, and a selection.

One JSON object per line; blank lines are ignored. A line whose gold answer cannot be
used (a GSM8K answer with no number after ``####``, an MCQ answer that names no choice) is
skipped and counted; anything else wrong with the file is a :class:`UsageError` of one
line that names the file, the line and what is allowed.
"""

from __future__ import annotations

import codecs
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from debategraph.errors import UsageError
from debategraph.eval.records import Item
from debategraph.strategies.answers import (
    CHOICE_LETTERS,
    CHOICES_RULE,
    choice_index,
    choice_letter,
    valid_choices,
)
from debategraph.strategies.numbers import normalize_number
from debategraph.words import plural

_OPTION = "--dataset"
_SHOWN = 40  # characters of a bad value shown in an error


@dataclass(frozen=True)
class Loaded:
    """A dataset file read into items.

    Attributes:
        items: Its usable questions, in file order.
        skipped: How many lines were skipped because their gold answer is unusable.
        skipped_lines: Their line numbers (1-based).
    """

    items: tuple[Item, ...]
    skipped: int
    skipped_lines: tuple[int, ...]


@dataclass(frozen=True)
class _Format:
    needs: str  # the fields each line needs, for errors
    skip_reason: str  # why a line is skipped, for the "no questions" error
    item: Callable[[dict[str, Any], int, str], Item | None]  # None: skipped


def load_gsm8k(path: Path) -> Loaded:
    """Read a GSM8K JSONL file: ``{"question": ..., "answer": "... #### 18"}`` per line.

    The gold is the number after the last ``####`` of the answer, normalised with
    :func:`~debategraph.strategies.answers.normalize_number` (``#### 1,234`` -> ``1234``).

    Args:
        path: The file.

    Returns:
        Its questions; a line whose gold is not a number (or has no ``####``) is skipped.

    Raises:
        UsageError: If the file is missing, unreadable, not UTF-8, has a line that is not a
            JSON object with a non-empty string ``question`` and a string ``answer``, or
            has no usable question.
    """
    return _load(Path(path), _GSM8K)


def load_mcq(path: Path) -> Loaded:
    """Read a multiple-choice JSONL file: ``{"question", "choices", "answer"}`` per line.

    ``choices`` is a list of 2 to 26 non-empty strings (choice ``A`` first). ``answer`` is
    a letter (any case), a 0-based index, or the text of one choice (exactly, else case and
    whitespace ignored); a single letter is read as a letter first. The gold is the letter.

    Args:
        path: The file.

    Returns:
        Its questions; a line whose answer names no choice is skipped.

    Raises:
        UsageError: If the file is missing, unreadable, not UTF-8, has a line that is not a
            JSON object with the three fields well typed, or has no usable question.
    """
    return _load(Path(path), _MCQ)


def select(
    items: Sequence[Item], *, offset: int, limit: int | None, seed: int | None
) -> tuple[list[Item], str | None]:
    """The questions an eval runs: optionally shuffled, then a window of them.

    Args:
        items: The dataset's questions.
        offset: How many to leave out first (after the shuffle).
        limit: How many to take at most; ``None``: all that are left.
        seed: Shuffle a copy with ``random.Random(seed)`` first (the same seed gives the
            same order); ``None``: file order.

    Returns:
        The selection, and a note for the user when ``limit`` was more than what is left
        (the selection is then clamped), else ``None``.

    Raises:
        UsageError: If ``offset`` is negative or not below the number of questions, or
            ``limit`` is below 1.
    """
    if offset < 0:
        raise UsageError(f"--offset {offset}: must be 0 or more")
    if limit is not None and limit < 1:
        raise UsageError(f"--limit {limit}: must be 1 or more (leave it out for every question)")
    if offset >= len(items):
        raise UsageError(f"--offset {offset}: the dataset has {plural(len(items), 'question')}")
    order = list(items)
    if seed is not None:
        random.Random(seed).shuffle(order)
    left = len(order) - offset
    if limit is None:
        return order[offset:], None
    note = None
    if limit > left:
        note = (
            f"--limit {limit} is more than the {plural(left, 'question')} from offset {offset}: "
            f"using {left}"
        )
    return order[offset : offset + limit], note


def show(value: Any) -> str:
    """A bad value as JSON on one line, cut short (for errors).

    Args:
        value: The value.

    Returns:
        Its JSON text, at most 40 characters.
    """
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= _SHOWN else shown[: _SHOWN - 3] + "..."


def read_text(path: Path) -> str:
    """A dataset file's text (UTF-8, a byte-order mark dropped), or a one-line error.

    Args:
        path: The file.

    Returns:
        Its text.

    Raises:
        UsageError: If it is missing, a directory, unreadable or not UTF-8 (the line).
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{_OPTION} {path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{_OPTION} {path}: is a directory, not a JSONL file") from None
    except OSError as exc:
        raise UsageError(f"{_OPTION} {path}: cannot read it ({exc.strerror or exc})") from None
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UsageError(
            f"{_OPTION} {path} line {line}: not UTF-8 (byte 0x{data[exc.start]:02x}); "
            "save the file as UTF-8"
        ) from None


def _load(path: Path, fmt: _Format) -> Loaded:
    items: list[Item] = []
    skipped: list[int] = []
    for number, raw in enumerate(read_text(path).split("\n"), start=1):
        if not raw.strip():
            continue
        where = f"{_OPTION} {path} line {number}"
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise UsageError(
                f"{where}: not a JSON object but {show(record)} (each line needs {fmt.needs})"
            )
        item = fmt.item(record, number, where)
        if item is None:
            skipped.append(number)
        else:
            items.append(item)
    if not items:
        why = f"{len(skipped)} skipped: {fmt.skip_reason}" if skipped else "the file is empty"
        raise UsageError(f"{_OPTION} {path}: no questions ({why})")
    return Loaded(items=tuple(items), skipped=len(skipped), skipped_lines=tuple(skipped))


def _field(record: dict[str, Any], name: str, where: str, needs: str) -> Any:
    if name not in record:
        raise UsageError(f"{where}: missing field {name!r} (each line needs {needs})")
    return record[name]


def _question(record: dict[str, Any], where: str, needs: str) -> str:
    value = _field(record, "question", where, needs)
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{where}: field 'question' must be a non-empty string, not {show(value)}")
    return value.strip()


def _gsm8k_item(record: dict[str, Any], line: int, where: str) -> Item | None:
    needs = _GSM8K.needs
    question = _question(record, where, needs)
    answer = _field(record, "answer", where, needs)
    if not isinstance(answer, str):
        raise UsageError(
            f"{where}: field 'answer' must be a string ending in '#### <number>', "
            f"not {show(answer)}"
        )
    if "####" not in answer:
        return None
    gold = normalize_number(answer.rsplit("####", 1)[1].strip())
    return None if gold is None else Item(line=line, question=question, gold=gold)


def _choices(record: dict[str, Any], where: str) -> tuple[str, ...]:
    value = _field(record, "choices", where, _MCQ.needs)
    if not isinstance(value, list) or not valid_choices(value):
        raise UsageError(f"{where}: field 'choices' must be {CHOICES_RULE}, not {show(value)}")
    return tuple(choice.strip() for choice in value)


def _gold_index(answer: str | int, choices: tuple[str, ...]) -> int | None:
    """The choice an MCQ answer names: a letter, a 0-based index or a choice's text."""
    if isinstance(answer, int):
        return answer if 0 <= answer < len(choices) else None
    text = answer.strip()
    if len(text) == 1 and text.upper() in CHOICE_LETTERS[: len(choices)]:
        return CHOICE_LETTERS.index(text.upper())
    if choices.count(text) == 1:
        return choices.index(text)
    return choice_index(text, choices)


def _mcq_item(record: dict[str, Any], line: int, where: str) -> Item | None:
    question = _question(record, where, _MCQ.needs)
    choices = _choices(record, where)
    answer = _field(record, "answer", where, _MCQ.needs)
    if isinstance(answer, bool) or not isinstance(answer, str | int):
        raise UsageError(
            f"{where}: field 'answer' must be a choice letter, a 0-based index or a "
            f"choice's text, not {show(answer)}"
        )
    index = _gold_index(answer, choices)
    if index is None:
        return None
    return Item(line=line, question=question, gold=choice_letter(index), choices=choices)


_GSM8K = _Format(
    needs="question and answer", skip_reason="gold answer not a number", item=_gsm8k_item
)
_MCQ = _Format(
    needs="question, choices and answer",
    skip_reason="answer names no choice",
    item=_mcq_item,
)
