"""``plan.json``: what a run records of its plan, and how ``eval report`` rebuilds the run.

Every run writes its plan (:func:`plan_record`) into ``--out`` before any question runs
(:func:`~debategraph.eval.shards.write_plan`). ``debategraph eval report`` reads the
shards' plans back, rebuilds the options and questions of the run they describe
(:func:`options_from_plan`), refuses what changed since the shards ran
(:func:`check_same_run`), and finds each question's database (:func:`shard_dbs`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from debategraph.errors import UsageError
from debategraph.eval.modes import DEFAULT_AGREE, RosterMode
from debategraph.eval.options import (
    CHECKPOINTS_FILE,
    DEFAULT_EPOCHS,
    DEFAULT_TEMPERATURE,
    EvalOptions,
    eval_options,
)
from debategraph.eval.plan import EvalPlan
from debategraph.eval.questions import (
    Questions,
    arithmetic_questions,
    dataset_questions,
    dataset_sha256,
    task_questions,
)
from debategraph.eval.records import Item
from debategraph.eval.shards import shard_items
from debategraph.eval.tasks import TASKS
from debategraph.models.money import parse_price


def plan_record(plan: EvalPlan, options: EvalOptions, source: Mapping[str, Any]) -> dict[str, Any]:
    """What ``plan.json`` holds: every setting that decides the run's answers, and its shard.

    ``eval report`` rebuilds the run from it (the questions, the modes, the model) and
    compares shards by it: the rosters are kept by content, so an edited agents file is
    a difference; the database is kept without its password.

    Args:
        plan: The plan.
        options: The shared options.
        source: The questions' meta (kind, dataset or generation, selection).

    Returns:
        The settings, JSON values.
    """
    from debategraph.checkpoints.savers import redact_url

    dataset = source.get("dataset")
    digest = None
    if source.get("kind") != "arithmetic" and dataset is not None and dataset[:3] != "hf:":
        dataset = str(Path(dataset).resolve())
        digest = dataset_sha256(Path(dataset))
    spec = options.spec
    db = options.checkpoints
    if "://" not in db:
        db = str(Path(db).resolve())
    return {
        "kind": source.get("kind"),
        "dataset": dataset,
        "dataset_sha256": digest,
        "offset": source.get("offset"),
        "limit": source.get("limit"),
        "seed": source.get("seed"),
        "arithmetic": source.get("arithmetic"),
        **({"choice_seed": source["choice_seed"]} if "choice_seed" in source else {}),
        **({"shuffle_choices": True} if source.get("shuffle_choices") else {}),
        **({"epochs": plan.epochs} if plan.epochs != DEFAULT_EPOCHS else {}),
        "modes": list(plan.modes),
        "modes_text": options.modes,
        "rosters": {name: _roster_record(r) for name, r in plan.rosters.items()},
        "roster_paths": {name: str(Path(r.path).resolve()) for name, r in plan.rosters.items()},
        "decisions": [p.spec for p in plan.decisions],
        "judge_model": plan.judge_model,
        "matched": plan.matched,
        "agree": plan.agree,
        "agents": plan.agents,
        "rounds": plan.rounds,
        "neighbours": plan.neighbours,
        # max_tokens and temperature decide answers: compared between shards, and only
        # where they are not the default (a plan written before them reads the same).
        "model": {
            "model": spec.model,
            "base_url": spec.base_url,
            **({"max_tokens": spec.max_tokens} if spec.max_tokens is not None else {}),
            **(
                {"temperature": spec.temperature} if spec.temperature != DEFAULT_TEMPERATURE else {}
            ),
        },
        "client": {
            "timeout": spec.timeout_s,
            "max_retries": spec.max_retries,
            "patience": spec.patience_s,
            "rpm": spec.rpm,
            "tpm": spec.tpm,
            "price": None if spec.price is None else spec.price.written(),
        },
        "model_key": dict(plan.model_key),
        "parallel": plan.parallel,
        "shard": list(options.shard) if options.shard is not None else None,
        "db": redact_url(db),
        "db_default": options.db is None,
        "db_redacted": redact_url(db) != db,
    }


def _roster_record(roster: RosterMode) -> dict[str, Any]:
    """A roster mode as ``plan.json`` keeps it: its file, and its content (JSON)."""
    content = {"solvers": list(roster.solvers), "judge": roster.judge}
    return {
        "path": str(Path(roster.path).resolve()),
        **json.loads(json.dumps(content, default=str)),
    }


def options_from_plan(
    settings: Mapping[str, Any], out_dir: Path, db: str | None, json_output: bool
) -> tuple[EvalOptions, Callable[[], Questions]]:
    """The options and questions of the run a ``plan.json`` describes, for ``eval report``.

    Args:
        settings: The plan's settings.
        out_dir: Where the merged results go.
        db: ``--db`` (``None``: each shard's own).
        json_output: ``--json``.

    Returns:
        The options (no shard) and the questions' reader.

    Raises:
        UsageError: If the dataset is not here, or is not the file the shards ran.
    """
    model, client = settings["model"], settings["client"]
    options = eval_options(
        settings["modes_text"],
        ",".join(settings["decisions"]),
        settings["judge_model"],
        bool(settings["matched"]),
        (int(settings["agents"]), int(settings["rounds"]), int(settings["neighbours"])),
        int(settings["parallel"]),
        out_dir,
        model["model"],
        model["base_url"],
        client["timeout"],
        int(client["max_retries"]),
        db,
        json_output,
        max_tokens=model.get("max_tokens"),
        agree=str(settings.get("agree", DEFAULT_AGREE)),  # a plan from before --agree
        patience=client.get("patience"),  # None in a plan from before --patience
        rpm=client.get("rpm"),
        tpm=client.get("tpm"),  # None in a plan from before --tpm
        price=None if client.get("price") is None else parse_price(client["price"]),
        temperature=float(model.get("temperature", DEFAULT_TEMPERATURE)),
        epochs=int(settings.get("epochs", DEFAULT_EPOCHS)),
    )
    selection = (int(settings["offset"]), settings["limit"], settings["seed"])
    if settings["kind"] == "arithmetic":
        task = settings["arithmetic"]
        generation = (task["count"], task["operands"], task["max_operand"], settings["seed"])
        return options, lambda: arithmetic_questions(generation, selection[:2])
    if settings["kind"] in TASKS:
        return options, _task_reader(settings, selection)
    dataset = _same_file(settings)
    shuffled = int(settings.get("choice_seed") or 0) if settings.get("shuffle_choices") else None
    return options, lambda: dataset_questions(settings["kind"], dataset, selection, shuffled)


def _same_file(settings: Mapping[str, Any]) -> Path:
    """The plan's dataset file, refused where it is not here or not the file the shards ran."""
    dataset = Path(settings["dataset"])
    if not dataset.is_file() or dataset_sha256(dataset) != settings["dataset_sha256"]:
        raise UsageError(
            f"--dataset {dataset}: not here, or not the file the shards ran (its content "
            "differs): run eval report where the shards' dataset is at that path"
        )
    return dataset


def _task_reader(
    settings: Mapping[str, Any], selection: tuple[int, int | None, int | None]
) -> Callable[[], Questions]:
    """The questions of a standard benchmark's plan: its file, checked, or its cached dataset."""
    source = str(settings["dataset"])
    if not source.startswith("hf:"):
        _same_file(settings)
    seed = int(settings.get("choice_seed") or 0)
    shuffle = bool(settings.get("shuffle_choices"))
    return lambda: task_questions(settings["kind"], source, selection, seed, shuffle)


def check_same_run(plan: EvalPlan, settings: Mapping[str, Any], folder: Path) -> None:
    """Refuse to merge where the run here is not the one the shards ran.

    A roster file edited since (its threads would not be found), or another model.

    Args:
        plan: The plan rebuilt here.
        settings: The first shard's plan.
        folder: The first shard's folder (named in the refusal).

    Raises:
        UsageError: One line naming what differs and what to do.
    """
    for name, roster in plan.rosters.items():
        then = dict(settings["rosters"].get(name, {}))
        if then != _roster_record(roster):  # the file at the first shard's path, here
            raise UsageError(
                f"--modes {name}={roster.path}: the file changed since {folder} ran: restore "
                "it (the shards' threads are keyed by its content)"
            )
    if dict(plan.model_key) != settings["model_key"]:
        raise UsageError(
            f"the model here ({json.dumps(dict(plan.model_key), sort_keys=True)}) is not the "
            f"one the shards ran ({json.dumps(settings['model_key'], sort_keys=True)}): run eval "
            "report where the shards' model is the same"
        )


def shard_dbs(
    plans: Mapping[Path, Mapping[str, Any]], items: Sequence[Item], db: str | None
) -> dict[int, str]:
    """Each question's database, by its line: the database of the shard that ran it.

    Args:
        plans: Each shard's plan, by its folder.
        items: The questions (all the shards').
        db: ``--db`` (``None``: each shard's own).

    Returns:
        The databases.

    Raises:
        UsageError: If a shard's database has a password its plan does not keep.
    """
    dbs: dict[int, str] = {}
    for folder, settings in plans.items():
        shard = settings.get("shard")
        split = None if shard is None else (int(shard[0]), int(shard[1]))
        own = _shard_db(settings, folder, db)
        dbs.update((item.line, own) for item in shard_items(items, split))
    return dbs


def _shard_db(settings: Mapping[str, Any], folder: Path, db: str | None) -> str:
    """A shard's database: ``--db``, else the default file in its folder, else its plan's.

    The default file is found in the folder as given to ``eval report`` (a folder copied
    from another machine included); a database whose password the plan left out is
    refused.
    """
    if db is not None:
        return db
    if settings.get("db_default"):
        return str(folder / CHECKPOINTS_FILE)
    if settings.get("db_redacted"):
        raise UsageError(
            f"{folder}: its database {settings['db']} has a password plan.json does not keep: "
            "give the URL with --db"
        )
    return str(settings["db"])
