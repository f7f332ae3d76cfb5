"""``debategraph eval TASK``: one command per standard benchmark (MMLU, GPQA, MATH...).

Each task of :data:`~debategraph.eval.tasks.TASKS` is a command of its own, built like
``eval gsm8k`` (:func:`~debategraph.cli.evaluate.eval_command`: its own options, then the
shared ones): ``--dataset`` is a JSONL, JSON, CSV or Parquet file in one of the shapes
its publishers distribute, or ``hf:NAME[:split]`` from the local ``datasets`` cache. A
task of lettered choices also takes ``--shuffle-choices`` and ``--choice-seed``; GPQA,
whose files list the right answer first, always shuffles them (``--choice-seed`` alone).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from debategraph.cli.evaluate import (
    ChoiceSeedOpt,
    LimitOpt,
    OffsetOpt,
    SeedOpt,
    ShuffleChoicesOpt,
    eval_app,
    eval_command,
    keep_options,
)
from debategraph.eval.options import DEFAULT_CHOICE_SEED
from debategraph.eval.questions import Questions, task_questions
from debategraph.eval.tasks import TASKS, Task

TaskDatasetOpt = Annotated[
    str,
    typer.Option(
        "--dataset",
        help="A JSONL, JSON, CSV or Parquet file in a shape the task reads (told by its "
        "fields), or hf:NAME[:split] / hf:NAME:CONFIG:split from the local datasets cache.",
    ),
]


def _task_command(task: Task) -> Callable[..., None]:
    """The command of one standard benchmark: its dataset's questions, its checker.

    Only a task of lettered choices takes ``--shuffle-choices`` and ``--choice-seed``
    (GPQA, which always shuffles, ``--choice-seed`` alone).
    """

    def own(
        dataset: TaskDatasetOpt,
        limit: LimitOpt = None,
        offset: OffsetOpt = 0,
        seed: SeedOpt = None,
        shuffle_choices: ShuffleChoicesOpt = False,
        choice_seed: ChoiceSeedOpt = DEFAULT_CHOICE_SEED,
    ) -> Callable[[], Questions]:
        selection = (offset, limit, seed)
        return lambda: task_questions(task.name, dataset, selection, choice_seed, shuffle_choices)

    if not task.multiple_choice:
        keep_options(own, drop={"shuffle_choices", "choice_seed"})
    elif task.shuffles:
        keep_options(own, drop={"shuffle_choices"})
    return eval_command(task.name, own)


def _help(task: Task) -> str:
    """A task command's help: its title, whose shapes it reads, its metric."""
    shapes = [shape.name for shape in task.shapes if shape.name != task.title]
    whose = f" ({'; '.join(shapes)})" if shapes else ""
    return f"Run {task.title}{whose} in each mode; {task.metric}."


for _task in TASKS.values():
    eval_app.command(_task.name, help=_help(_task))(_task_command(_task))
