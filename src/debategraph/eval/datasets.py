"""The eval's datasets: GSM8K and multiple-choice JSONL files read into items, and a selection.

One JSON object per line; blank lines are ignored. A line that is JSON but cannot be a
question (a field missing, blank or ill typed, a blank choice, a GSM8K answer with no
number after ``####``, an MCQ answer that names no choice) is skipped and counted with
its reason (:class:`BadRow`), never the whole file refused for it; a file that is not
JSON Lines, is empty or has no usable line is a :class:`UsageError` of one line that
names the file (and the line) and what is allowed.
"""

from __future__ import annotations

import codecs
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
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
_REASONS = 3  # reasons a note on skipped lines names


@dataclass(frozen=True)
class Loaded:
    """A dataset file read into items.

    Attributes:
        items: Its usable questions, in file order.
        skipped: How many lines (rows) were skipped: no usable gold answer, or a field
            that cannot be used.
        skipped_lines: Their line (row) numbers (1-based).
        why: Why each was skipped, in the order of ``skipped_lines``.
    """

    items: tuple[Item, ...]
    skipped: int
    skipped_lines: tuple[int, ...]
    why: tuple[str, ...] = ()

    def skipped_note(self, unit: str) -> str | None:
        """Which lines were skipped and why: each reason once, with its first lines.

        Args:
            unit: What a number names: ``line`` or ``row``.

        Returns:
            ``3 rows skipped: choice C is empty (rows 3, 8); no gold answer (row 9)``
            (three reasons and five numbers each at most); ``None`` where none was.
        """
        if not self.skipped:
            return None
        whys = self.why or ("no usable gold answer",) * self.skipped
        numbers: dict[str, list[int]] = {}
        for number, why in zip(self.skipped_lines, whys, strict=False):
            numbers.setdefault(why, []).append(number)
        parts = []
        for why, found in list(numbers.items())[:_REASONS]:
            shown = ", ".join(map(str, found[:5])) + (", ..." if len(found) > 5 else "")
            parts.append(f"{why} ({unit}{'s' if len(found) > 1 else ''} {shown})")
        more = "; ..." if len(numbers) > _REASONS else ""
        return f"{plural(self.skipped, unit)} skipped: {'; '.join(parts)}{more}"


class BadRow(ValueError):
    """A row (line) that cannot be a question: skipped and counted, its reason the message."""


def no_questions(source: object, loaded: Loaded, unit: str) -> UsageError:
    """The one-line error of a dataset none of whose rows is a question.

    Args:
        source: The ``--dataset`` value.
        loaded: What was read (every row skipped, or none there).
        unit: What a number names: ``line`` or ``row``.

    Returns:
        ``--dataset FILE is empty: ...``, or ``--dataset FILE: no questions (...)`` naming
        the first skipped rows and why.
    """
    if not loaded.skipped:
        return UsageError(f"{_OPTION} {source} is empty: it has no {unit}s to read")
    return UsageError(f"{_OPTION} {source}: no questions ({loaded.skipped_note(unit)})")


@dataclass(frozen=True)
class _Format:
    needs: str  # the fields each line needs, for errors
    skip_reason: str  # why a line whose item is None is skipped
    item: Callable[[dict[str, Any], int], Item | None]  # None: skipped; BadRow: its reason


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


def shuffle_choices(items: Sequence[Item], seed: int) -> list[Item]:
    """Each question's choices in a seeded order, its gold letter moved with its choice.

    A question's order depends on the seed and its line alone (``random.Random(
    f"{seed}:{line}")``), so the same seed gives the same choices whatever is selected;
    a question without choices is kept as it is.

    Args:
        items: The questions.
        seed: The seed (``--choice-seed``), recorded in the results' meta.

    Returns:
        The questions, shuffled.
    """
    shuffled = []
    for item in items:
        if not item.choices:
            shuffled.append(item)
            continue
        order = list(range(len(item.choices)))
        random.Random(f"{seed}:{item.line}").shuffle(order)
        gold = choice_letter(order.index(CHOICE_LETTERS.index(item.gold)))
        choices = tuple(item.choices[i] for i in order)
        shuffled.append(replace(item, choices=choices, gold=gold))
    return shuffled


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
    why: list[str] = []
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
        try:
            item = fmt.item(record, number)
        except BadRow as exc:
            skipped.append(number)
            why.append(str(exc))
            continue
        if item is None:
            skipped.append(number)
            why.append(fmt.skip_reason)
        else:
            items.append(item)
    loaded = Loaded(tuple(items), len(skipped), tuple(skipped), tuple(why))
    if not items:
        raise no_questions(path, loaded, "line")
    return loaded


def _field(record: dict[str, Any], name: str, needs: str) -> Any:
    if name not in record:
        raise BadRow(f"missing field {name!r}; each line needs {needs}")
    return record[name]


def _question(record: dict[str, Any], needs: str) -> str:
    value = _field(record, "question", needs)
    if not isinstance(value, str) or not value.strip():
        raise BadRow(f"field 'question' must be a non-empty string, not {show(value)}")
    return value.strip()


def _subject(record: dict[str, Any]) -> str:
    """A line's optional ``subject`` (its score is reported per subject), else ``""``."""
    value = record.get("subject")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadRow(f"field 'subject' must be a string, not {show(value)}")
    return value.strip()


def _gsm8k_item(record: dict[str, Any], line: int) -> Item | None:
    needs = _GSM8K.needs
    question = _question(record, needs)
    answer = _field(record, "answer", needs)
    if not isinstance(answer, str):
        raise BadRow(
            f"field 'answer' must be a string ending in '#### <number>', not {show(answer)}"
        )
    if "####" not in answer:
        return None
    gold = normalize_number(answer.rsplit("####", 1)[1].strip())
    if gold is None:
        return None
    return Item(line=line, question=question, gold=gold, subject=_subject(record))


def choices_fault(choices: object) -> str:
    """Why a row's choices cannot be used: the first blank one by its letter, else the rule.

    Args:
        choices: The row's choices (not :func:`valid_choices`).

    Returns:
        ``choice C is empty``, or ``the choices must be ...`` with the value.
    """
    if isinstance(choices, list | tuple) and 2 <= len(choices) <= len(CHOICE_LETTERS):
        for index, choice in enumerate(choices):
            if choice is None or (isinstance(choice, str) and not choice.strip()):
                return f"choice {choice_letter(index)} is empty"
    return f"the choices must be {CHOICES_RULE}, not {show(choices)}"


def _choices(record: dict[str, Any]) -> tuple[str, ...]:
    value = _field(record, "choices", _MCQ.needs)
    if not isinstance(value, list) or not valid_choices(value):
        raise BadRow(choices_fault(value))
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


def _mcq_item(record: dict[str, Any], line: int) -> Item | None:
    question = _question(record, _MCQ.needs)
    choices = _choices(record)
    answer = _field(record, "answer", _MCQ.needs)
    if isinstance(answer, bool) or not isinstance(answer, str | int):
        raise BadRow(
            "field 'answer' must be a choice letter, a 0-based index or a choice's text, "
            f"not {show(answer)}"
        )
    index = _gold_index(answer, choices)
    if index is None:
        return None
    gold = choice_letter(index)
    return Item(line, question, gold, choices=choices, subject=_subject(record))


_GSM8K = _Format(
    needs="question and answer", skip_reason="gold answer not a number", item=_gsm8k_item
)
_MCQ = _Format(
    needs="question, choices and answer",
    skip_reason="answer names no choice",
    item=_mcq_item,
)
