"""The eval's results: ``results.json``, ``results.csv``, ``accuracy.png`` and the tables.

Each file is rendered to a temporary file next to its target and moved into place only
once all three are complete, so an interrupted or failed write never leaves a truncated
file behind (an older complete one stays as it was).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import IO, Any

from rich.table import Table
from rich.text import Text

from debategraph.errors import UsageError
from debategraph.eval.records import Comparison, ModeSummary, Outcome

_FILES = {"json": "results.json", "csv": "results.csv", "png": "accuracy.png"}
_DECIMALS = {"accuracy": 4, "ci_low": 4, "ci_high": 4, "abstention_rate": 4, "calls": 2}
_DECIMALS |= {"prompt_tokens": 1, "completion_tokens": 1, "wall_s": 3}
_SUMMARY_HEADERS = (
    "mode",
    "n",
    "accuracy (95% CI)",
    "abstain",
    "prompt tok/q",
    "completion tok/q",
    "calls/q",
    "s/q",
)
_COMPARISON_HEADERS = ("a vs b", "n", "a only", "b only", "McNemar p")


def _summary_json(summary: ModeSummary) -> dict[str, Any]:
    """A summary as a ``results.json`` entry: rounded, with ``ci95: [low, high]`` added."""
    entry: dict[str, Any] = {
        key: round(value, _DECIMALS[key]) if key in _DECIMALS else value
        for key, value in asdict(summary).items()
    }
    entry["ci95"] = [entry["ci_low"], entry["ci_high"]]
    return entry


def _comparison_json(comparison: Comparison) -> dict[str, Any]:
    """A comparison as a ``results.json`` entry, its p-value to 6 significant digits."""
    entry = asdict(comparison)
    entry["p_value"] = float(f"{comparison.p_value:.6g}")
    return entry


def _write_json(
    stream: IO[bytes],
    summaries: Sequence[ModeSummary],
    comparisons: Sequence[Comparison],
    meta: Mapping[str, Any],
) -> None:
    """Write ``results.json``; values of ``meta`` that JSON lacks (paths...) become strings."""
    document = {
        "meta": dict(meta),
        "modes": [_summary_json(summary) for summary in summaries],
        "comparisons": [_comparison_json(comparison) for comparison in comparisons],
    }
    text = json.dumps(document, indent=2, ensure_ascii=False, default=str)
    stream.write((text + "\n").encode("utf-8"))


def _write_csv(stream: IO[bytes], outcomes: Sequence[Outcome]) -> None:
    """Write ``results.csv``: one row per outcome, an abstention's answer left empty."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    names = [field.name for field in fields(Outcome)]
    writer.writerow(names)
    for outcome in outcomes:
        row = asdict(outcome)
        writer.writerow(["" if row[name] is None else row[name] for name in names])
    stream.write(buffer.getvalue().encode("utf-8"))


def _n_label(summaries: Sequence[ModeSummary]) -> str:
    """``n = 100``, or ``n = 95-100`` when the modes answered different numbers."""
    counts = sorted({summary.n for summary in summaries}) or [0]
    if len(counts) == 1:
        return f"n = {counts[0]}"
    return f"n = {counts[0]}\N{EN DASH}{counts[-1]}"


def _write_png(stream: IO[bytes], summaries: Sequence[ModeSummary]) -> None:
    """Plot accuracy (with its Wilson interval) against mean prompt tokens per question.

    Uses a bare ``Figure`` (matplotlib's object API with its Agg canvas) rather than
    ``pyplot``: no global figure to close, and the backend of a host process (a notebook)
    is left alone.
    """
    from matplotlib.figure import Figure  # imported here: matplotlib is slow to import

    figure = Figure(figsize=(6.4, 4.8), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    span = max((s.prompt_tokens for s in summaries), default=0.0) or 1.0
    placed: list[tuple[float, float, int]] = []  # (x, y, label row) of the labels so far
    for summary in sorted(summaries, key=lambda s: s.prompt_tokens):
        x, y = summary.prompt_tokens, summary.accuracy
        error = [[y - summary.ci_low], [summary.ci_high - y]]
        axes.errorbar([x], [y], yerr=error, fmt="o", capsize=4, clip_on=False)
        # Points close together (two debate modes of similar cost) get their labels on
        # rows of their own instead of on top of each other.
        row = sum(1 for px, py, _ in placed if abs(px - x) < 0.12 * span and abs(py - y) < 0.1)
        placed.append((x, y, row))
        axes.annotate(summary.mode, (x, y), xytext=(6, 6 - 13 * row), textcoords="offset points")
    if not summaries:
        axes.text(0.5, 0.5, "no results", ha="center", va="center", transform=axes.transAxes)
    axes.set_xlabel("mean prompt tokens per question")
    axes.set_ylabel("accuracy (95% Wilson interval)")
    axes.set_ylim(-0.03, 1.05)  # a point at 0 is drawn whole
    axes.set_title(f"Accuracy against prompt tokens ({_n_label(summaries)} questions)")
    axes.margins(x=0.25)  # room for the labels right of the outermost points
    axes.grid(alpha=0.3)
    figure.savefig(stream, format="png")


def _stage(out_dir: Path, name: str, write: Callable[[IO[bytes]], None]) -> Path:
    """Write a file's content to a new temporary file in ``out_dir`` and return its path.

    The file is created with mode 0o666 less the umask, as ``open`` would (``mkstemp``
    would make it 0o600, and ``os.replace`` keeps the mode).
    """
    temp = out_dir / f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


def write_results(
    out_dir: Path,
    outcomes: Sequence[Outcome],
    summaries: Sequence[ModeSummary],
    comparisons: Sequence[Comparison],
    meta: Mapping[str, Any],
) -> dict[str, Path]:
    """Write ``results.json``, ``results.csv`` and ``accuracy.png`` into ``out_dir``.

    ``results.json`` holds ``meta`` as given, ``modes`` (the summaries under their field
    names, rates to 4 decimals, tokens to 1, calls to 2, wall time to 3, plus
    ``ci95: [low, high]``) and ``comparisons``. ``results.csv`` has one row per outcome
    under the ``Outcome`` field names. All three files are complete before any is moved
    into place, and none is left half-written when something fails.

    Args:
        out_dir: The folder to write into; created when missing.
        outcomes: Every outcome of the eval, one CSV row each.
        summaries: The modes' summaries (see ``stats.summarize``).
        comparisons: The pairwise tests (see ``stats.compare``).
        meta: Anything to record with the results (dataset, model, settings, skips);
            values JSON cannot hold are written as their ``str``.

    Returns:
        The paths written, by name: ``"json"``, ``"csv"`` and ``"png"``.

    Raises:
        UsageError: When a file cannot be written (a one-line message naming it).
    """
    writers: dict[str, Callable[[IO[bytes]], None]] = {
        "json": lambda stream: _write_json(stream, summaries, comparisons, meta),
        "csv": lambda stream: _write_csv(stream, outcomes),
        "png": lambda stream: _write_png(stream, summaries),
    }
    staged: dict[str, Path] = {}
    name = _FILES["json"]
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for key, write in writers.items():
            name = _FILES[key]
            staged[key] = _stage(out_dir, name, write)
        for key, temp in list(staged.items()):
            name = _FILES[key]
            os.replace(temp, out_dir / name)
            del staged[key]
    except OSError as exc:
        raise UsageError(f"--out {out_dir}: cannot write {name}: {exc.strerror or exc}") from exc
    finally:
        for temp in staged.values():
            with contextlib.suppress(OSError):
                temp.unlink(missing_ok=True)
    return {key: out_dir / name for key, name in _FILES.items()}


def _format_p(p_value: float) -> str:
    """A p-value for a table: 3 decimals, or scientific notation below 0.001."""
    return f"{p_value:.3f}" if p_value >= 0.001 else f"{p_value:.1e}"


def _summary_rows(summaries: Sequence[ModeSummary]) -> list[list[str]]:
    """The cells of the summary table, one row per mode."""
    return [
        [
            summary.mode,
            str(summary.n),
            f"{summary.accuracy:.3f} [{summary.ci_low:.3f}, {summary.ci_high:.3f}]",
            f"{summary.abstention_rate:.1%}",
            f"{summary.prompt_tokens:,.0f}",
            f"{summary.completion_tokens:,.0f}",
            f"{summary.calls:.2f}",
            f"{summary.wall_s:.2f}",
        ]
        for summary in summaries
    ]


def _comparison_rows(comparisons: Sequence[Comparison]) -> list[list[str]]:
    """The cells of the comparison table, one row per pair of modes."""
    return [
        [
            f"{comparison.a} vs {comparison.b}",
            str(comparison.n),
            str(comparison.a_only),
            str(comparison.b_only),
            _format_p(comparison.p_value),
        ]
        for comparison in comparisons
    ]


def _rich_table(title: str, headers: Sequence[str], rows: list[list[str]]) -> Table:
    """A Rich table of plain-text cells (``Text``, so ``[0.61, 0.79]`` is not markup)."""
    table = Table(title=title)
    for index, header in enumerate(headers):
        table.add_column(Text(header), justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def results_table(
    summaries: Sequence[ModeSummary], comparisons: Sequence[Comparison]
) -> list[Table]:
    """The printed report: a table of the modes and one of their paired comparisons.

    Args:
        summaries: The modes' summaries.
        comparisons: The pairwise tests; with none (one mode) the second table is left out.

    Returns:
        The tables, to print with ``console.print(*tables)``.
    """
    tables = [_rich_table("Accuracy and cost per mode", _SUMMARY_HEADERS, _summary_rows(summaries))]
    if comparisons:
        tables.append(
            _rich_table(
                "Paired comparisons (exact McNemar test)",
                _COMPARISON_HEADERS,
                _comparison_rows(comparisons),
            )
        )
    return tables


def _markdown(headers: Sequence[str], rows: list[list[str]]) -> str:
    """One GitHub Markdown table, the first column left-aligned and the others right."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    rule = "| " + " | ".join(":---" if i == 0 else "---:" for i in range(len(headers))) + " |"
    return "\n".join([line(headers), rule, *(line(row) for row in rows)])


def markdown_table(summaries: Sequence[ModeSummary], comparisons: Sequence[Comparison]) -> str:
    """The printed report's tables as GitHub Markdown (for the README and benchmark report).

    Args:
        summaries: The modes' summaries.
        comparisons: The pairwise tests; with none the second table is left out.

    Returns:
        The summary table and, after a blank line, the comparison table, ending in a
        newline.
    """
    parts = [_markdown(_SUMMARY_HEADERS, _summary_rows(summaries))]
    if comparisons:
        parts.append(_markdown(_COMPARISON_HEADERS, _comparison_rows(comparisons)))
    return "\n\n".join(parts) + "\n"
