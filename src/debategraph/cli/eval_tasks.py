"""``debategraph eval TASK``: one command per standard benchmark (MMLU, GPQA, MATH...).

Each task of :data:`~debategraph.eval.tasks.TASKS` is a command of its own, built like
``eval gsm8k`` (:func:`~debategraph.cli.evaluate.eval_command`: its own options, then the
shared ones): ``--dataset`` is a JSONL, JSON, CSV or Parquet file in one of the shapes
its publishers distribute, or ``hf:NAME[:split]`` from the local ``datasets`` cache. A
task that shuffles its choices (GPQA) also takes ``--choice-seed``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated

import typer

from debategraph.cli.evaluate import LimitOpt, OffsetOpt, SeedOpt, eval_app, eval_command
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
ChoiceSeedOpt = Annotated[
    int,
    typer.Option(
        "--choice-seed", help="The seed the choices are shuffled with (recorded in results.json)."
    ),
]


def _task_command(task: Task) -> Callable[..., None]:
    """The command of one standard benchmark: its dataset's questions, its checker.

    Only a task that shuffles its choices (GPQA) takes ``--choice-seed``.
    """

    def own(
        dataset: TaskDatasetOpt,
        limit: LimitOpt = None,
        offset: OffsetOpt = 0,
        seed: SeedOpt = None,
        choice_seed: ChoiceSeedOpt = 0,
    ) -> Callable[[], Questions]:
        return lambda: task_questions(task.name, dataset, (offset, limit, seed), choice_seed)

    if not task.shuffles:
        options = inspect.signature(own, eval_str=True).parameters.values()
        kept = [option for option in options if option.name != "choice_seed"]
        own.__signature__ = inspect.Signature(kept)  # type: ignore[attr-defined]
    return eval_command(task.name, own)


def _help(task: Task) -> str:
    """A task command's help: its title, whose shapes it reads, its metric."""
    shapes = [shape.name for shape in task.shapes if shape.name != task.title]
    whose = f" ({'; '.join(shapes)})" if shapes else ""
    return f"Run {task.title}{whose} in each mode; {task.metric}."


for _task in TASKS.values():
    eval_app.command(_task.name, help=_help(_task))(_task_command(_task))
