"""Many machines, one eval: deterministic shards, their plans, and the checks that merge them.

``--shard i/N`` runs every N-th question of the selection, starting at the i-th, so N
machines run disjoint slices of the same eval. Each run writes ``plan.json`` into its
``--out`` before any question runs: the settings that decide its answers, which
``debategraph eval report`` reads to merge shards (refusing shards of different
settings, naming the difference) and to resume what a shard left.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from debategraph.errors import UsageError
from debategraph.eval.report import write_out

T = TypeVar("T")

#: The plan's file name in ``--out``.
PLAN_FILE = "plan.json"
#: The plan format's version (a newer one is refused by an older reader).
PLAN_VERSION = 1
#: Settings that may differ between shards of one eval: they decide no answer (where a
#: shard keeps its files, its database, how its client waits; the dataset and rosters
#: are compared by content, not by path).
PER_SHARD = frozenset(
    {
        "shard",
        "db",
        "db_default",
        "db_redacted",
        "out",
        "parallel",
        "json",
        "client",
        "dataset",
        "modes_text",
        "roster_paths",
    }
)

_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


def parse_shard(text: str) -> tuple[int, int]:
    """Read ``--shard i/N``.

    Args:
        text: The option's value, e.g. ``2/4``.

    Returns:
        ``(i, N)``.

    Raises:
        UsageError: Unless it is ``i/N`` with ``1 <= i <= N``.
    """
    match = _SHARD.fullmatch(text)
    if match is None or not 1 <= int(match[1]) <= int(match[2]):
        raise UsageError(
            f"--shard {text!r}: must be i/N with 1 <= i <= N (e.g. 1/4 for the first of 4)"
        )
    return int(match[1]), int(match[2])


def shard_items(items: Sequence[T], shard: tuple[int, int] | None) -> list[T]:
    """The questions of one shard: every N-th, from the i-th (all without a shard).

    Args:
        items: The eval's selection, in order.
        shard: ``(i, N)``, or ``None``.

    Returns:
        The slice; the N shards' slices are disjoint and cover ``items``.
    """
    if shard is None:
        return list(items)
    index, count = shard
    return list(items[index - 1 :: count])


def this_shard(items: Sequence[T], shard: tuple[int, int] | None) -> list[T]:
    """The questions this run's ``--shard`` runs, refusing a shard left with none.

    Args:
        items: The eval's selection, in order.
        shard: ``(i, N)``, or ``None``.

    Returns:
        The shard's questions (:func:`shard_items`).

    Raises:
        UsageError: If the shard has no questions (more shards than questions).
    """
    chosen = shard_items(items, shard)
    if shard is not None and not chosen:
        index, count = shard
        raise UsageError(
            f"--shard {index}/{count}: no questions (the selection has {len(items)}): "
            "use fewer shards"
        )
    return chosen


def write_plan(out_dir: Path, settings: Mapping[str, Any]) -> Path:
    """Write ``plan.json``: the settings of this run (JSON values; paths as text).

    Args:
        out_dir: ``--out`` (it exists and is writable).
        settings: Every setting of the run, under its option's name.

    Returns:
        The file written.

    Raises:
        UsageError: If it cannot be written.
    """
    path = out_dir / PLAN_FILE
    document = {"version": PLAN_VERSION, "settings": dict(settings)}
    return write_out(path, json.dumps(document, indent=2, sort_keys=True, default=str) + "\n")


def read_plan(out_dir: Path) -> dict[str, Any]:
    """Read a shard's ``plan.json``.

    Args:
        out_dir: The shard's ``--out`` folder.

    Returns:
        Its settings.

    Raises:
        UsageError: If the folder has no readable plan of this version.
    """
    path = Path(out_dir) / PLAN_FILE
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(
            f"{out_dir}: no {PLAN_FILE} (not the --out folder of a debategraph eval run)"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it ({exc})") from None
    if not isinstance(document, dict) or not isinstance(document.get("settings"), dict):
        raise UsageError(f"{path}: not a plan written by debategraph eval")
    if document.get("version") != PLAN_VERSION:
        raise UsageError(
            f"{path}: plan version {document.get('version')!r}, this debategraph reads "
            f"{PLAN_VERSION}: use the version that wrote it"
        )
    settings: dict[str, Any] = document["settings"]
    return settings


def differences(first: Mapping[str, Any], other: Mapping[str, Any]) -> list[str]:
    """The settings two shards' plans disagree on (those that decide answers).

    Args:
        first: One plan's settings.
        other: Another's.

    Returns:
        ``name: A != B`` for each, sorted by name; empty when they are shards of one eval.
    """
    keys = sorted((first.keys() | other.keys()) - PER_SHARD)
    return [
        f"{key}: {json.dumps(first.get(key))} != {json.dumps(other.get(key))}"
        for key in keys
        if first.get(key) != other.get(key)
    ]


def check_shards(plans: Mapping[Path, Mapping[str, Any]]) -> int:
    """Check that the plans are distinct shards of one eval, all of them.

    Args:
        plans: Each shard folder's plan settings (``shard`` is ``[i, N]`` or ``None``).

    Returns:
        N, the number of shards.

    Raises:
        UsageError: One line: plans of different settings (naming the first difference
            and the folders), different N, a shard given twice, or shards missing.
    """
    folders = list(plans)
    if not folders:
        raise UsageError("eval report: give the --out folder of each shard")
    first = folders[0]
    for folder in folders[1:]:
        diff = differences(plans[first], plans[folder])
        if diff:
            more = f" (and {len(diff) - 1} more)" if len(diff) > 1 else ""
            raise UsageError(
                f"{folder} is not a shard of the same eval as {first}: {diff[0]}{more}"
            )
    seen: dict[int, Path] = {}
    count = None
    for folder in folders:
        shard = plans[folder].get("shard")
        index, total = (1, 1) if shard is None else (int(shard[0]), int(shard[1]))
        if count is not None and total != count:
            raise UsageError(
                f"{folder} is shard {index}/{total} but {first} is one of {count}: "
                "give the shards of one split"
            )
        count = total
        if index in seen:
            raise UsageError(f"{folder} and {seen[index]} are both shard {index}/{total}")
        seen[index] = folder
    assert count is not None
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
    if missing:
        raise UsageError(
            f"shard {', '.join(missing)} missing: give every shard's --out folder "
            f"(a shard's folder exists once it started)"
        )
    return count
