"""The questions an eval runs: a dataset file's or generated ones, selected, and their digest.

``eval gsm8k`` and ``eval mcq`` read a JSONL file (:mod:`~debategraph.eval.datasets`),
the standard benchmarks' commands (``eval mmlu``...) a task's file or cached dataset
(:mod:`~debategraph.eval.tasks`),
``eval arithmetic`` generates its questions (:mod:`~debategraph.eval.arithmetic`); both
are then selected by ``--offset``/``--limit`` (and a file's by ``--seed``), a choice
question's choices shuffled where asked (``--shuffle-choices``, seeded), and what the
selection came from (the rows skipped and why included) is recorded in ``results.json``'s
meta and ``plan.json``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debategraph.errors import UsageError
from debategraph.eval.records import Item

if TYPE_CHECKING:
    from debategraph.eval.datasets import Loaded


@dataclass(frozen=True)
class Questions:
    """The questions an eval runs, and what to record about where they came from.

    Attributes:
        items: The questions (after ``--offset`` and ``--limit``).
        meta: Their source's entries of ``results.json``'s meta.
        notes: Lines to tell the user (skipped lines, a clamped limit).
        generated: Questions to write to ``questions.jsonl`` in ``--out`` (a generated
            task's); empty for a dataset file.
    """

    items: list[Item]
    meta: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    generated: tuple[Item, ...] = ()


def dataset_questions(
    kind: str,
    dataset: Path,
    selection: tuple[int, int | None, int | None],
    choice_seed: int | None = None,
) -> Questions:
    """The questions of a dataset file, selected.

    Args:
        kind: ``gsm8k`` or ``mcq``.
        dataset: The JSONL file.
        selection: ``--offset``, ``--limit``, ``--seed`` (the shuffle's).
        choice_seed: Shuffle each question's choices with this seed
            (``--shuffle-choices``); ``None``: the file's order.

    Returns:
        The questions.

    Raises:
        UsageError: On a bad file or selection, naming it.
    """
    from debategraph.eval.datasets import load_gsm8k, load_mcq

    loaded = load_gsm8k(dataset) if kind == "gsm8k" else load_mcq(dataset)
    source = {"kind": kind, "dataset": str(dataset)}
    return _selected(loaded, selection, source, "line", choice_seed)


def task_questions(
    task: str,
    dataset: str,
    selection: tuple[int, int | None, int | None],
    choice_seed: int = 0,
    shuffle: bool = False,
) -> Questions:
    """The questions of a standard benchmark's dataset (:mod:`~debategraph.eval.tasks`), selected.

    Args:
        task: The task (``mmlu``, ``gpqa``, ``math``...).
        dataset: A JSONL, JSON, CSV or Parquet file, or ``hf:NAME[:split]``.
        selection: ``--offset``, ``--limit``, ``--seed`` (the questions' shuffle).
        choice_seed: The seed of the choices' shuffle (``--choice-seed``): a task that
            always shuffles them (GPQA), or one asked to; recorded in the meta.
        shuffle: ``--shuffle-choices``: shuffle a choice task's choices.

    Returns:
        The questions; the meta names the task, its metric and the format read.

    Raises:
        UsageError: On a bad dataset or selection, naming it.
    """
    from debategraph.eval.tasks import TASKS

    spec = TASKS[task]
    loaded, fmt = spec.load(dataset, choice_seed)
    source: dict[str, Any] = {"kind": task, "dataset": dataset, "task": task}
    source |= {"metric": spec.metric, "format": fmt}
    if spec.shuffles:  # shuffled as it was read
        source |= {"choice_seed": choice_seed, "shuffle_choices": True}
    asked = choice_seed if shuffle and spec.multiple_choice and not spec.shuffles else None
    return _selected(loaded, selection, source, "row", asked)


def _selected(
    loaded: Loaded,
    selection: tuple[int, int | None, int | None],
    source: dict[str, Any],
    unit: str,
    choice_seed: int | None = None,
) -> Questions:
    """A dataset's questions selected, with the notes and the meta of what was read."""
    from debategraph.eval.datasets import select, shuffle_choices

    offset, limit, seed = selection
    items, note = select(loaded.items, offset=offset, limit=limit, seed=seed)
    if choice_seed is not None:
        items = shuffle_choices(items, choice_seed)
        source = {**source, "choice_seed": choice_seed, "shuffle_choices": True}
    notes = [text for text in (loaded.skipped_note(unit), note) if text]
    meta = {
        **source,
        "questions": len(items),
        "skipped": loaded.skipped,
        "skipped_lines": list(loaded.skipped_lines),
        "skipped_why": list(loaded.why),
        "offset": offset,
        "limit": limit,
        "seed": seed,
    }
    return Questions(items, meta, notes)


def arithmetic_questions(
    generation: tuple[int, int, int, int], selection: tuple[int, int | None]
) -> Questions:
    """The generated arithmetic questions, selected.

    Args:
        generation: ``--count``, ``--operands``, ``--max-operand``, ``--seed``.
        selection: ``--offset``, ``--limit``.

    Returns:
        The questions; all that were generated go to ``questions.jsonl``.

    Raises:
        UsageError: On a setting out of range, naming the option.
    """
    from debategraph.eval.arithmetic import QUESTIONS_FILE, form, generate_arithmetic
    from debategraph.eval.datasets import select

    count, operands, max_operand, seed = generation
    generated = generate_arithmetic(count, operands=operands, max_operand=max_operand, seed=seed)
    offset, limit = selection
    items, note = select(generated, offset=offset, limit=limit, seed=None)
    meta = {
        "kind": "arithmetic",
        "dataset": QUESTIONS_FILE,
        "questions": len(items),
        "skipped": 0,
        "skipped_lines": [],
        "skipped_why": [],
        "offset": offset,
        "limit": limit,
        "seed": seed,
        "arithmetic": {
            "count": count,
            "operands": operands,
            "max_operand": max_operand,
            "form": form(operands),
        },
    }
    return Questions(items, meta, [note] if note else [], tuple(generated))


def dataset_sha256(path: Path) -> str:
    """A dataset file's content digest (how shards on other machines know they read one file).

    Args:
        path: The file.

    Returns:
        Its SHA-256, in hex.

    Raises:
        UsageError: If it cannot be read, naming it.
    """
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise UsageError(f"--dataset {path}: cannot read it ({exc.strerror or exc})") from exc
