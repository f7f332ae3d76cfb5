r"""The standard benchmarks ``eval`` reads: each task's shapes, its checker and its metric.

A task (``mmlu``, ``gpqa``, ``math``...) reads its rows (:mod:`~debategraph.eval.formats`)
in any of the shapes its publishers distribute, told apart by their fields, and turns each
row into an :class:`~debategraph.eval.records.Item`: a choice question (its gold the
letter), a yes/no question (StrategyQA: choices ``yes``/``no``, its answers ``true``/
``false`` or ``yes``/``no`` in any case) or a math question (its gold the published
answer, checked by math-verify equivalence), with its subject or category where the
dataset names one. A row that cannot be a question (no gold answer, a blank choice, an
empty question) is skipped and counted with its reason, never the whole file refused for
it; an empty file is called empty, and a file of no known shape is one line naming its
fields and the shapes the task reads.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from debategraph.errors import UsageError
from debategraph.eval.datasets import BadRow, Loaded, choices_fault, no_questions, show
from debategraph.eval.formats import FORMATS_READ, read_rows
from debategraph.eval.records import Item
from debategraph.strategies.answers import (
    CHOICE_LETTERS,
    AnswerKind,
    choice_index,
    valid_choices,
)
from debategraph.strategies.math_answers import Checker, last_boxed, require
from debategraph.strategies.numbers import normalize_number

#: The metric of a choice task, as ``results.json``'s meta names it.
CHOICE_METRIC = "accuracy (exact match of the choice letter)"
YES_NO_METRIC = "accuracy (yes/no match)"
MATH_METRIC = "accuracy (math-verify equivalence)"
YES_NO = ("yes", "no")
_TRUE = {"true", "yes", "1"}
_FALSE = {"false", "no", "0"}

Row = Mapping[str, Any]
#: Turns a row into its item: the row, its number (1-based), the choice shuffle's seed;
#: ``None`` where the row has no gold answer.
Convert = Callable[[Row, int, int], Item | None]


@dataclass(frozen=True)
class Shape:
    """One way a task's rows are distributed.

    Attributes:
        name: Whose shape it is (``cais/mmlu``).
        fields: The fields that tell it apart (all present in the file).
        describe: Its fields as errors list them, the answer's included.
        item: Turns one of its rows into an item.
    """

    name: str
    fields: tuple[str, ...]
    describe: str
    item: Convert


@dataclass(frozen=True)
class Task:
    """A benchmark: its shapes, its checker, its metric.

    Attributes:
        name: The command's name (``mmlu-pro``).
        title: Its name in prose (``MMLU-Pro``).
        metric: What its accuracy means, recorded in ``results.json``'s meta.
        checker: How answers are checked (``exact`` letters or ``math``).
        shapes: The shapes it reads, tried in order.
        csv_columns: The columns of its header-less CSV (MMLU's original files).
        shuffles: Its choices are always shuffled with a recorded seed (GPQA lists the
            right answer first); any other choice task's only with ``--shuffle-choices``.
        answer_kind: What its solvers answer with where there are no choices: a
            ``number``, or an ``expression`` (MATH's answers are often no number).
        subject_fields: The fields that name a row's subject or category, the first
            one present wins (the results score each subject apart).
    """

    name: str
    title: str
    metric: str
    checker: Checker
    shapes: tuple[Shape, ...]
    csv_columns: tuple[str, ...] = ()
    shuffles: bool = False
    answer_kind: AnswerKind = "number"
    subject_fields: tuple[str, ...] = ()

    @property
    def multiple_choice(self) -> bool:
        """Whether its questions have lettered choices to shuffle (not yes/no, not math)."""
        return self.metric == CHOICE_METRIC

    def load(self, source: str, choice_seed: int = 0) -> tuple[Loaded, str]:
        """Read a dataset of this task into items.

        Args:
            source: A file, or ``hf:NAME[:split]``.
            choice_seed: The seed of the choices' shuffle (a task that shuffles).

        Returns:
            Its items (rows that cannot be a question skipped and counted, each with its
            reason), and the format read (``jsonl``, ``csv``...).

        Raises:
            UsageError: On a file that cannot be read, is empty, of no shape this task
                reads, no usable row, or a missing extra.
        """
        if self.checker == "math":
            require("math_verify", f"--task {self.name}")
        headers = [shape.fields for shape in self.shapes]
        read = read_rows(source, columns=self.csv_columns, headers=headers)
        if not read.rows:
            raise no_questions(source, Loaded((), 0, ()), "row")
        found = sorted({name for row in read.rows for name in row})
        shape = next((s for s in self.shapes if set(s.fields) <= set(found)), None)
        if shape is None:
            shapes = "; ".join(f"{s.name} ({s.describe})" for s in self.shapes)
            raise UsageError(
                f"--dataset {source}: not a {self.title} file: its fields are "
                f"{', '.join(found)}; {self.title} is read as {shapes}, from {FORMATS_READ}"
            )
        named = "" if read.header else _subject_of_file(source)
        items, skipped, why = [], [], []
        for number, row in enumerate(read.rows, start=1):
            try:
                item = shape.item(row, number, choice_seed)
            except BadRow as exc:
                skipped.append(number)
                why.append(str(exc))
                continue
            if item is None:
                skipped.append(number)
                why.append("no gold answer")
                continue
            item = replace(item, subject=self._subject(row) or named)
            items.append(item if self.checker == "exact" else self._math(item))
        loaded = Loaded(tuple(items), len(skipped), tuple(skipped), tuple(why))
        if not items:
            raise no_questions(source, loaded, "row")
        return loaded, read.format

    def _subject(self, row: Row) -> str:
        """A row's subject: the first of :attr:`subject_fields` it has (``""``: none)."""
        return next((t for f in self.subject_fields if (t := _text(row, f))), "")

    def _math(self, item: Item) -> Item:
        """A math item: checked by math-verify, answered with this task's kind."""
        return replace(item, checker="math", answer_kind=self.answer_kind)


def _subject_of_file(source: str) -> str:
    """MMLU's header-less CSV names its subject in its file: ``abstract_algebra_test.csv``."""
    stem = Path(source).stem
    for split in ("_test", "_val", "_dev"):
        stem = stem.removesuffix(split)
    return stem


def _text(row: Row, name: str) -> str | None:
    """A field as stripped text; ``None`` where it is absent, null, NaN or blank."""
    value = row.get(name)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value).strip()
    return text or None


def _question(row: Row, name: str, number: int) -> str:
    text = _text(row, name)
    if text is None:
        raise BadRow(f"field {name!r} is empty")
    return text


def _choice_item(
    number: int, question: str, choices: Sequence[Any], gold: int | None
) -> Item | None:
    if not valid_choices(list(choices)):
        raise BadRow(choices_fault(list(choices)))
    if gold is None or not 0 <= gold < len(choices):
        raise BadRow("its answer names no choice")
    texts = tuple(str(choice).strip() for choice in choices)
    return Item(line=number, question=question, gold=CHOICE_LETTERS[gold], choices=texts)


def _gold(answer: Any, choices: Sequence[str]) -> int | None:
    """The choice an answer names: a 0-based index, a letter, or a choice's text."""
    if answer is None or isinstance(answer, bool):
        return None
    if isinstance(answer, int):
        return answer
    text = str(answer).strip()
    if text.isdigit():
        return int(text)
    if len(text) == 1 and text.upper() in CHOICE_LETTERS[: len(choices)]:
        return CHOICE_LETTERS.index(text.upper())
    return choice_index(text, [str(choice) for choice in choices]) if text else None


def _mmlu(row: Row, number: int, _seed: int) -> Item | None:
    choices = row.get("choices")
    if not isinstance(choices, list | tuple):
        raise BadRow(f"field 'choices' is {show(choices)}")
    question = _question(row, "question", number)
    return _choice_item(number, question, choices, _gold(row.get("answer"), choices))


def _mmlu_csv(row: Row, number: int, _seed: int) -> Item | None:
    choices = [row.get(letter) or "" for letter in "ABCD"]
    question = _question(row, "question", number)
    return _choice_item(number, question, choices, _gold(_text(row, "answer"), choices))


def _mmlu_pro(row: Row, number: int, _seed: int) -> Item | None:
    options = row.get("options")
    if not isinstance(options, list | tuple):
        raise BadRow(f"field 'options' is {show(options)}")
    choices = list(options)
    while choices and str(choices[-1]).strip() == "N/A":  # early files padded to ten
        choices.pop()
    answer = row.get("answer_index") if row.get("answer") in (None, "") else row.get("answer")
    question = _question(row, "question", number)
    return _choice_item(number, question, choices, _gold(answer, choices))


def _gpqa(row: Row, number: int, seed: int) -> Item | None:
    question = _question(row, "Question", number)
    right = _text(row, "Correct Answer")
    wrong = [_text(row, f"Incorrect Answer {i}") for i in (1, 2, 3)]
    if right is None:
        return None
    choices = [right, *(text or "" for text in wrong)]
    random.Random(f"{seed}:{number}").shuffle(choices)  # the same seed, the same order
    return _choice_item(number, question, choices, choices.index(right))


def _labelled(row: Row, number: int, _seed: int) -> Item | None:
    """ARC and CommonsenseQA: choices ``{text: [...], label: [...]}`` and ``answerKey``.

    The publishers' JSONL nests them: ``question: {stem, choices: [{label, text}]}``.
    """
    question: Any = row.get("question")
    choices: Any = row.get("choices")
    if isinstance(question, Mapping):
        question, choices = question.get("stem"), question.get("choices")
    if isinstance(choices, list):
        choices = {
            "text": [c.get("text") for c in choices if isinstance(c, Mapping)],
            "label": [c.get("label") for c in choices if isinstance(c, Mapping)],
        }
    if not isinstance(choices, Mapping):
        raise BadRow(f"field 'choices' is {show(choices)}")
    texts = list(choices.get("text") or [])
    labels = [str(label).strip() for label in choices.get("label") or []]
    key = _text(row, "answerKey")
    gold = labels.index(key) if key in labels else None
    text = _question({"question": question}, "question", number)
    return _choice_item(number, text, texts, gold)


def _medqa(row: Row, number: int, _seed: int) -> Item | None:
    options = row.get("options")
    if isinstance(options, Mapping):
        keys = sorted(k for k in options if options[k] is not None)
        choices = [options[k] for k in keys]
    elif isinstance(options, list) and all(isinstance(o, Mapping) for o in options):
        keys = [str(o.get("key")) for o in options]
        choices = [o.get("value") for o in options]
    elif isinstance(options, list):
        keys, choices = list(CHOICE_LETTERS[: len(options)]), options
    else:
        raise BadRow(f"field 'options' is {show(options)}")
    key = _text(row, "answer_idx")
    gold = keys.index(key) if key in keys else _gold(_text(row, "answer"), choices)
    return _choice_item(number, _question(row, "question", number), choices, gold)


def _yes_no(row: Row, number: int, _seed: int) -> Item | None:
    answer = _text(row, "answer")
    if answer is None or answer.casefold() not in _TRUE | _FALSE:
        return None
    gold = 0 if answer.casefold() in _TRUE else 1
    return _choice_item(number, _question(row, "question", number), YES_NO, gold)


def _math_item(row: Row, number: int, _seed: int) -> Item | None:
    gold = _text(row, "answer")
    if gold is None:
        gold = last_boxed(_text(row, "solution") or "")
    if not gold:
        return None
    return Item(line=number, question=_question(row, "problem", number), gold=gold)


def _gsm_hard(row: Row, number: int, _seed: int) -> Item | None:
    target = _text(row, "target")
    gold = None if target is None else normalize_number(target)
    if gold is None:
        return None
    return Item(line=number, question=_question(row, "input", number), gold=gold)


_LABELLED = "question, choices {text, label}, answerKey"
_TASKS = (
    Task(
        "mmlu",
        "MMLU",
        CHOICE_METRIC,
        "exact",
        (
            Shape("cais/mmlu", ("question", "choices"), "question, choices, answer", _mmlu),
            Shape(
                "the original CSV",
                ("question", "A", "B", "C", "D"),
                "question, A, B, C, D, answer letter; no header",
                _mmlu_csv,
            ),
        ),
        csv_columns=("question", "A", "B", "C", "D", "answer"),
        subject_fields=("subject",),
    ),
    Task(
        "mmlu-pro",
        "MMLU-Pro",
        CHOICE_METRIC,
        "exact",
        (
            Shape(
                "TIGER-Lab/MMLU-Pro",
                ("question", "options"),
                "question, options, answer letter or answer_index",
                _mmlu_pro,
            ),
        ),
        subject_fields=("category",),
    ),
    Task(
        "gpqa",
        "GPQA",
        CHOICE_METRIC,
        "exact",
        (
            Shape(
                "Idavidrein/gpqa",
                ("Question", "Correct Answer", "Incorrect Answer 1"),
                "Question, Correct Answer, Incorrect Answer 1..3",
                _gpqa,
            ),
        ),
        shuffles=True,
        subject_fields=("High-level domain",),
    ),
    Task(
        "math",
        "MATH",
        MATH_METRIC,
        "math",
        (
            Shape("MATH-500", ("problem", "answer"), "problem, answer", _math_item),
            Shape(
                "hendrycks MATH",
                ("problem", "solution"),
                "problem, solution with \\boxed{...}",
                _math_item,
            ),
        ),
        answer_kind="expression",
        subject_fields=("subject", "type"),
    ),
    Task(
        "gsm-hard",
        "GSM-Hard",
        MATH_METRIC,
        "math",
        (
            Shape(
                "reasoning-machines/gsm-hard",
                ("input", "target"),
                "input, target number",
                _gsm_hard,
            ),
        ),
    ),
    Task(
        "strategyqa",
        "StrategyQA",
        YES_NO_METRIC,
        "exact",
        (Shape("StrategyQA", ("question", "answer"), "question, answer true/false", _yes_no),),
    ),
    Task(
        "arc",
        "ARC",
        CHOICE_METRIC,
        "exact",
        (Shape("allenai/ai2_arc", ("question", "answerKey"), _LABELLED, _labelled),),
    ),
    Task(
        "csqa",
        "CommonsenseQA",
        CHOICE_METRIC,
        "exact",
        (Shape("tau/commonsense_qa", ("question", "answerKey"), _LABELLED, _labelled),),
    ),
    Task(
        "medqa",
        "MedQA",
        CHOICE_METRIC,
        "exact",
        (
            Shape(
                "MedQA",
                ("question", "options"),
                "question, options A-E (a mapping or a list), answer_idx or answer",
                _medqa,
            ),
        ),
    ),
)

#: The tasks, by name, in the order the CLI lists them.
TASKS: dict[str, Task] = {task.name: task for task in _TASKS}
