"""Reading a benchmark's rows: JSONL, JSON, CSV and Parquet files, or a cached HF dataset.

A file's format is told by its name's ending (``.jsonl``/``.ndjson``, ``.json``,
``.csv``, ``.parquet``); ``hf:NAME[:split]`` (or ``hf:NAME:CONFIG:split``) loads through
``datasets`` from the user's local cache only, offline. Each row is a mapping of field to
value; what a row means is its task's (:mod:`~debategraph.eval.tasks`).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from debategraph.errors import UsageError
from debategraph.eval.datasets import read_text, show
from debategraph.strategies.math_answers import require

#: The prefix of a dataset loaded through ``datasets`` from the local cache.
HF_PREFIX = "hf:"
#: The split read when ``hf:NAME`` names none.
DEFAULT_SPLIT = "test"
_ENDINGS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".parquet": "parquet",
}
#: The formats read, as errors list them.
FORMATS_READ = "JSONL, JSON, CSV, Parquet files, or hf:NAME[:split] from the datasets cache"


@dataclass(frozen=True)
class Rows:
    """A dataset's rows as read.

    Attributes:
        rows: Each row's fields, in order (a CSV without a header: ``None``-less lists
            turned into fields by the task's columns).
        format: ``jsonl``, ``json``, ``csv``, ``parquet`` or ``hf``.
        header: Whether a CSV file had a header row (``True`` for every other format).
    """

    rows: tuple[dict[str, Any], ...]
    format: str
    header: bool = True


def read_rows(
    source: str, *, columns: Sequence[str] = (), headers: Sequence[Sequence[str]] = ()
) -> Rows:
    """Read a dataset's rows.

    Args:
        source: A file path, or ``hf:NAME[:split]`` / ``hf:NAME:CONFIG:split``.
        columns: A header-less CSV's column names (MMLU's original CSV); a CSV whose first
            row is none of ``headers`` is read with these when it has as many cells.
        headers: The fields a header row has (each shape's, any one of them).

    Returns:
        The rows.

    Raises:
        UsageError: If the file is missing, unreadable, of an unknown ending or not
            well formed, or the HF dataset is not in the local cache (how to fetch it).
    """
    if source.startswith(HF_PREFIX):
        return Rows(_hf_rows(source), "hf")
    path = Path(source)
    kind = _ENDINGS.get(path.suffix.lower())
    if kind is None:
        raise UsageError(
            f"--dataset {path}: unknown file ending {path.suffix or '(none)'!r}; reads "
            f"{', '.join(_ENDINGS)} files, or hf:NAME[:split]"
        )
    if kind == "parquet":
        return Rows(_parquet_rows(path), kind)
    text = read_text(path)
    if kind == "csv":
        return _csv_rows(path, text, columns, headers)
    if kind == "json":
        return Rows(_json_rows(path, text), kind)
    return Rows(_jsonl_rows(path, text), kind)


def _object(path: Path, where: str, record: Any) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise UsageError(f"--dataset {path} {where}: not a JSON object but {show(record)}")
    return record


def _jsonl_rows(path: Path, text: str) -> tuple[dict[str, Any], ...]:
    rows = []
    for number, raw in enumerate(text.split("\n"), start=1):
        if raw.strip():
            try:
                record = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise UsageError(f"--dataset {path} line {number}: not JSON ({exc.msg})") from None
            rows.append(_object(path, f"line {number}", record))
    return tuple(rows)


def _json_rows(path: Path, text: str) -> tuple[dict[str, Any], ...]:
    """A JSON array of objects (or ``{"data": [...]}``); JSON Lines saved as ``.json`` too."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        return _jsonl_rows(path, text)  # datasets' to_json writes JSON Lines
    if isinstance(document, dict) and isinstance(document.get("data"), list):
        document = document["data"]
    if isinstance(document, dict):
        return (document,)
    if not isinstance(document, list):
        raise UsageError(f"--dataset {path}: not a JSON array of objects but {show(document)}")
    return tuple(_object(path, f"item {i}", record) for i, record in enumerate(document, 1))


def _csv_rows(
    path: Path, text: str, columns: Sequence[str], headers: Sequence[Sequence[str]]
) -> Rows:
    """A CSV file's rows, read as CSV: a line break inside a quoted cell stays in the cell.

    ``csv.reader`` reads the file object (``newline=""``, as the ``csv`` module asks), so
    a GPQA or MMLU question written on several lines reaches the model as written.
    """
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        table = [row for row in reader if any(cell.strip() for cell in row)]
    except csv.Error as exc:
        raise UsageError(f"--dataset {path} line {reader.line_num}: not CSV ({exc})") from None
    if not table:
        return Rows((), "csv")
    first = [cell.strip() for cell in table[0]]
    header = not columns or any(set(fields) <= set(first) for fields in headers)
    if header:
        names, body = first, table[1:]
    elif len(first) == len(columns):
        names, body = list(columns), table
    else:
        raise UsageError(
            f"--dataset {path}: its first row is no header ({' or '.join(map(', '.join, headers))})"
            f" and has {len(first)} cells where a header-less file has {len(columns)} "
            f"({', '.join(columns)})"
        )
    rows = tuple(dict(zip(names, row, strict=False)) for row in body)
    return Rows(rows, "csv", header)


def _parquet_rows(path: Path) -> tuple[dict[str, Any], ...]:
    parquet = require("pyarrow.parquet", "reading Parquet")
    if not path.is_file():
        raise UsageError(f"--dataset {path}: no such file")
    try:
        table = parquet.read_table(path)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--dataset {path}: not a Parquet file ({exc})") from None
    return tuple(table.to_pylist())


def hf_parts(source: str) -> tuple[str, str | None, str]:
    """The dataset, configuration and split ``hf:NAME[:split]`` / ``hf:NAME:CONFIG:split`` names.

    Args:
        source: The ``--dataset`` value.

    Returns:
        Name, configuration (``None``: the default) and split.

    Raises:
        UsageError: If there is no name or more than three parts.
    """
    parts = source[len(HF_PREFIX) :].split(":")
    if not parts[0] or len(parts) > 3 or not all(parts):
        raise UsageError(f"--dataset {source}: give hf:NAME, hf:NAME:SPLIT or hf:NAME:CONFIG:SPLIT")
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    return parts[0], None, parts[1] if len(parts) == 2 else DEFAULT_SPLIT


def _hf_rows(source: str) -> tuple[dict[str, Any], ...]:
    """A split of a dataset in the local ``datasets`` cache, read offline."""
    name, config, split = hf_parts(source)
    os.environ["HF_DATASETS_OFFLINE"] = "1"  # read before datasets is first imported
    os.environ["HF_HUB_OFFLINE"] = "1"
    datasets = require("datasets", "--dataset hf:NAME")
    datasets.config.HF_DATASETS_OFFLINE = True  # where it was imported before
    datasets.config.HF_HUB_OFFLINE = True
    datasets.logging.set_verbosity_error()  # not "Using the latest cached version..."
    datasets.disable_progress_bars()
    try:
        loaded = datasets.load_dataset(name, config, split=split)
    except (OSError, ValueError, ConnectionError):  # DatasetNotFoundError is an OSError
        raise UsageError(
            f"--dataset {source}: {name!r} ({config or 'default'}, split {split!r}) is not in "
            f"the local datasets cache and cannot be fetched offline; fetch it once with "
            f'network: python -c "import datasets; datasets.load_dataset({name!r}'
            f'{", " + repr(config) if config else ""})" (or: hf download {name} --repo-type '
            "dataset)"
        ) from None
    return tuple(dict(row) for row in loaded)
