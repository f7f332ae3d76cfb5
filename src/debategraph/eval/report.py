"""The eval's results: ``results.json``, ``results.csv``, the two plots, and the tables.

Each file is rendered to a temporary file next to its target and moved into place only
once all four are complete, so an interrupted or failed write never leaves a truncated
file behind (an older complete one stays as it was). The printed tables and their
Markdown form (for ``docs/eval/results.md`` and the README) are the same cells.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO, Any

from rich.table import Table
from rich.text import Text

from debategraph.errors import UsageError
from debategraph.eval.budget import MatchedResult
from debategraph.eval.dynamics import DecisionResult, ModeDynamics
from debategraph.eval.figures import accuracy_figure, dynamics_figure
from debategraph.eval.records import Comparison, ModeSummary, Outcome
from debategraph.eval.stats import ALPHA, Report
from debategraph.strategies.dynamics import DynamicsSummary

#: The files written, by the key ``write_results`` returns their paths under.
FILES = {
    "json": "results.json",
    "csv": "results.csv",
    "png": "accuracy.png",
    "dynamics": "dynamics.png",
}
_DECIMALS = {"accuracy": 4, "ci_low": 4, "ci_high": 4, "abstention_rate": 4, "calls": 2}
_DECIMALS |= {"prompt_tokens": 1, "completion_tokens": 1, "tokens": 1, "wall_s": 3}
_RATE = 4  # decimals of every other share in results.json
_DASH = "\N{EM DASH}"


def _significance(p_value: float) -> str:
    """``significant`` below :data:`~debategraph.eval.stats.ALPHA`, else ``not significant``."""
    return "significant" if p_value < ALPHA else "not significant"


def _p_json(p_value: float) -> float:
    """A p-value for ``results.json``: 6 significant digits."""
    return float(f"{p_value:.6g}")


def _rounded(value: Any, digits: int = _RATE) -> Any:
    """``value`` with every float in it rounded (in lists and mappings too; tuples become lists)."""
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, Mapping):
        return {key: _rounded(item, digits) for key, item in value.items()}
    return [_rounded(item, digits) for item in value]


def _summary_json(summary: ModeSummary, pareto: set[str]) -> dict[str, Any]:
    """A label's summary as a ``results.json`` entry: rounded, with ``ci95`` and ``pareto``."""
    values = asdict(summary)
    order = ["mode", "decision", *(f.name for f in fields(summary) if f.name not in {"mode"})]
    entry: dict[str, Any] = {}
    for key in dict.fromkeys(order):
        value = values[key]
        entry[key] = round(value, _DECIMALS[key]) if key in _DECIMALS else value
        if key == "ci_high":
            entry["ci95"] = [entry["ci_low"], entry["ci_high"]]
    entry["pareto"] = summary.mode in pareto
    return entry


def _comparison_json(comparison: Comparison) -> dict[str, Any]:
    """A comparison as a ``results.json`` entry, its p-value to 6 significant digits."""
    entry = asdict(comparison)
    entry["p_value"] = _p_json(comparison.p_value)
    entry["significant"] = entry["p_value"] < ALPHA
    return entry


def _matched_json(result: MatchedResult) -> dict[str, Any]:
    """A matched-budget result as a ``results.json`` entry."""
    entry: dict[str, Any] = _rounded(asdict(result))
    entry["tokens"] = round(result.tokens, 1)
    entry["vote_tokens"] = round(result.vote_tokens, 1)
    entry["p_value"] = _p_json(result.p_value)
    entry["significant"] = entry["p_value"] < ALPHA
    return entry


def _dynamics_json(entry: ModeDynamics) -> dict[str, Any]:
    """A debate mode's dynamics as a ``results.json`` entry (shares to 4 decimals)."""
    return {
        "mode": entry.mode,
        **_rounded(entry.summary.model_dump()),
        "decisions": [_rounded(asdict(result)) for result in entry.decisions],
    }


def results_document(report: Report, meta: Mapping[str, Any]) -> dict[str, Any]:
    """``results.json``'s content: ``meta``, ``modes``, ``comparisons``, ``matched``, ``dynamics``.

    Args:
        report: The report (see :func:`~debategraph.eval.stats.build_report`).
        meta: Anything to record with the results, as given.

    Returns:
        The document (rounded; values of ``meta`` JSON lacks are left to the writer).
    """
    pareto = set(report.pareto)
    return {
        "meta": dict(meta),
        "modes": [_summary_json(summary, pareto) for summary in report.summaries],
        "comparisons": [_comparison_json(comparison) for comparison in report.comparisons],
        "matched": [_matched_json(result) for result in report.matched],
        "dynamics": [_dynamics_json(entry) for entry in report.dynamics],
    }


def _pair(value: Sequence[float]) -> tuple[float, float]:
    """A ``[low, high]`` list as a tuple."""
    low, high = value
    return (low, high)


def read_report(document: Mapping[str, Any]) -> Report:
    """The report back from a ``results.json`` document (its rounded figures).

    For callers that hold the JSON (the benchmark's report, ``--json`` output) and want
    the tables: ``markdown_table(read_report(json.loads(text)))`` is the same text as
    ``markdown_table(report)`` of the report that wrote it (the tables show the figures
    as ``results.json`` rounds them).

    Args:
        document: ``results.json``'s content (``matched`` and ``dynamics`` may be absent).

    Returns:
        The report.

    Raises:
        ValueError: When an entry lacks a field or has one of the wrong kind.
    """
    try:
        summaries = tuple(
            ModeSummary(**{f.name: entry[f.name] for f in fields(ModeSummary)})
            for entry in document["modes"]
        )
        comparisons = tuple(
            Comparison(**{f.name: entry[f.name] for f in fields(Comparison)})
            for entry in document["comparisons"]
        )
        matched = tuple(
            MatchedResult(**{f.name: entry[f.name] for f in fields(MatchedResult)})
            for entry in document.get("matched", [])
        )
        dynamics = []
        for entry in document.get("dynamics", []):
            values = dict(entry)
            mode = values.pop("mode")
            decisions = tuple(
                DecisionResult(
                    **{
                        **{f.name: item[f.name] for f in fields(DecisionResult)},
                        "oracle_ci": _pair(item["oracle_ci"]),
                        "final_ci": _pair(item["final_ci"]),
                        "loss_ci": _pair(item["loss_ci"]),
                    }
                )
                for item in values.pop("decisions")
            )
            dynamics.append(ModeDynamics(mode, DynamicsSummary.model_validate(values), decisions))
        front = [s for s, e in zip(summaries, document["modes"], strict=True) if e["pareto"]]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a results.json document: {type(exc).__name__} {exc}") from exc
    front.sort(key=lambda s: (s.tokens, -s.accuracy))  # as pareto_front orders it
    return Report(summaries, comparisons, matched, tuple(dynamics), tuple(s.mode for s in front))


def _write_json(stream: IO[bytes], report: Report, meta: Mapping[str, Any]) -> None:
    """Write ``results.json``; values of ``meta`` that JSON lacks (paths...) become strings."""
    text = json.dumps(results_document(report, meta), indent=2, ensure_ascii=False, default=str)
    stream.write((text + "\n").encode("utf-8"))


def _write_csv(stream: IO[bytes], outcomes: Sequence[Outcome]) -> None:
    """Write ``results.csv``: one row per outcome, an abstention's answer left empty."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    names = [f.name for f in fields(Outcome)]
    writer.writerow(names)
    for outcome in outcomes:
        row = asdict(outcome)
        writer.writerow(["" if row[name] is None else row[name] for name in names])
    stream.write(buffer.getvalue().encode("utf-8"))


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
    report: Report,
    meta: Mapping[str, Any],
) -> dict[str, Path]:
    """Write ``results.json``, ``results.csv``, ``accuracy.png`` and ``dynamics.png``.

    ``results.json`` holds ``meta`` as given, then ``modes`` (one entry per label: the
    summary's fields, rates to 4 decimals, tokens to 1, calls to 2, wall time to 3, plus
    ``ci95: [low, high]`` and ``pareto``), ``comparisons`` (with ``significant``),
    ``matched`` and ``dynamics`` (shares to 4 decimals, p-values to 6 significant
    digits). ``results.csv`` has one row per outcome under the ``Outcome`` field names.
    All four files are complete before any is moved into place, and none is left
    half-written when something fails.

    Args:
        out_dir: The folder to write into; created when missing.
        outcomes: Every outcome of the eval, one CSV row each.
        report: Their report (see :func:`~debategraph.eval.stats.build_report`).
        meta: Anything to record with the results (dataset, model, settings, skips);
            values JSON cannot hold are written as their ``str``.

    Returns:
        The paths written, by key: ``"json"``, ``"csv"``, ``"png"`` (accuracy.png) and
        ``"dynamics"`` (dynamics.png).

    Raises:
        UsageError: When a file cannot be written (a one-line message naming it).
    """
    writers: dict[str, Callable[[IO[bytes]], None]] = {
        "json": lambda stream: _write_json(stream, report, meta),
        "csv": lambda stream: _write_csv(stream, outcomes),
        "png": lambda stream: accuracy_figure(report.summaries, report.pareto).savefig(
            stream, format="png"
        ),
        "dynamics": lambda stream: dynamics_figure(report.dynamics).savefig(stream, format="png"),
    }
    staged: dict[str, Path] = {}
    name = FILES["json"]
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for key, write in writers.items():
            name = FILES[key]
            staged[key] = _stage(out_dir, name, write)
        for key, temp in list(staged.items()):
            name = FILES[key]
            os.replace(temp, out_dir / name)
            del staged[key]
    except OSError as exc:
        raise UsageError(f"--out {out_dir}: cannot write {name}: {exc.strerror or exc}") from exc
    finally:
        for temp in staged.values():
            with contextlib.suppress(OSError):
                temp.unlink(missing_ok=True)
    return {key: out_dir / name for key, name in FILES.items()}


# The tables


@dataclass(frozen=True)
class _Section:
    """One table: its title, column headers, rows of cells and notes under it.

    Its first ``keys`` columns say what a row is: a table split to fit repeats them.
    """

    title: str
    headers: tuple[str, ...]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)
    keys: int = 1


def _format_p(p_value: float) -> str:
    """A p-value for a table: 3 decimals, or scientific notation below 0.001."""
    return f"{p_value:.3f}" if p_value >= 0.001 else f"{p_value:.1e}"


def _with_ci(value: float, ci: Sequence[float]) -> str:
    """``0.620 [0.522, 0.709]``."""
    return f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _rate(value: float | None, count: int) -> str:
    """``0.125 (3)``: a rate and the count behind it; a dash where there is none."""
    return _DASH if value is None else f"{value:.3f} ({count})"


def _summary_section(report: Report) -> _Section:
    """Accuracy and cost per label."""
    pareto = set(report.pareto)
    rows = [
        [
            s.mode,
            str(s.n),
            _with_ci(s.accuracy, (s.ci_low, s.ci_high)),
            f"{s.abstention_rate:.1%}",
            f"{s.prompt_tokens:,.0f}",
            f"{s.completion_tokens:,.0f}",
            f"{s.tokens:,.0f}",
            f"{s.calls:.2f}",
            f"{s.wall_s:.2f}",
            "yes" if s.mode in pareto else "",
        ]
        for s in report.summaries
    ]
    headers: tuple[str, ...] = ("mode", "n", "accuracy (95% CI)", "abstain", "prompt tok/q")
    headers += ("completion tok/q", "total tok/q", "calls/q", "s/q", "Pareto")
    return _Section("Accuracy and cost per mode and protocol", headers, rows)


def _comparison_section(report: Report) -> _Section:
    """The paired tests."""
    rows = [
        [
            f"{c.a} vs {c.b}",
            str(c.n),
            str(c.a_only),
            str(c.b_only),
            _format_p(c.p_value),
            _significance(c.p_value),
        ]
        for c in report.comparisons
    ]
    headers = ("a vs b", "n", "a only", "b only", "McNemar p", "at 5%")
    return _Section("Paired comparisons (exact McNemar test)", headers, rows)


def _matched_section(report: Report) -> _Section:
    """Each debate mode against its matched-budget vote."""
    rows = []
    for m in report.matched:
        ratio = _DASH if m.ratio is None else f"{m.ratio:.2f}"
        rows.append(
            [
                f"{m.mode} vs {m.vote_mode}",
                str(m.n),
                f"{m.tokens:,.0f} vs {m.vote_tokens:,.0f}",
                f"{ratio} ({'within' if m.within else 'not within'} 10%)",
                f"{m.accuracy:.3f} vs {m.vote_accuracy:.3f}",
                str(m.a_only),
                str(m.b_only),
                _format_p(m.p_value),
                _significance(m.p_value),
            ]
        )
    headers: tuple[str, ...] = ("debate vs vote", "n", "total tok/q", "vote/debate tokens")
    headers += ("accuracy",)
    headers += ("debate only", "vote only", "McNemar p", "at 5%")
    notes = [f"{m.vote_mode}: {m.how}" for m in report.matched]
    return _Section("Debate against a vote at the same token budget", headers, rows, notes)


def _rounds_section(report: Report) -> _Section:
    """Per debate mode and round: accuracy, flips, conformity."""
    rows = [
        [
            entry.mode,
            str(r.round),
            str(r.threads),
            _with_ci(r.agent_accuracy, r.agent_ci),
            _with_ci(r.decision_accuracy, r.decision_ci),
            _rate(r.flip_to_wrong, r.flips_to_wrong),
            _rate(r.flip_to_right, r.flips_to_right),
            _rate(r.conformity, r.conformed),
        ]
        for entry in report.dynamics
        for r in entry.summary.rounds
    ]
    headers: tuple[str, ...] = ("mode", "round", "n", "agents (95% CI)")
    headers += ("plurality decision (95% CI)",)
    headers += ("flip to wrong", "flip to right", "conformity")
    notes = [
        "agents: share of the solvers' answers that are right; flip to wrong: share of the "
        "solvers right the round before that are not now (count); flip to right: share of "
        "those not right that are now; conformity: share of the solvers off the previous "
        "round's plurality that moved to it."
    ]
    return _Section("Debate dynamics per round", headers, rows, notes, keys=2)


def _loss_section(report: Report) -> _Section:
    """Per debate mode and protocol: the oracle, the final accuracy and the loss."""
    rows = [
        [
            result.label,
            str(result.threads),
            _with_ci(result.oracle, result.oracle_ci),
            _with_ci(result.final_accuracy, result.final_ci),
            _with_ci(result.loss, result.loss_ci),
        ]
        for entry in report.dynamics
        for result in entry.decisions
    ]
    headers = ("mode", "n", "oracle (95% CI)", "decision (95% CI)", "loss (95% CI)")
    notes = [
        "oracle: some solver gave the gold answer in some round; loss: the oracle holds and "
        "the decision is wrong."
    ]
    return _Section("Oracle and loss per mode and protocol", headers, rows, notes)


def _sections(report: Report) -> list[_Section]:
    """The tables of a report: the summary always, the others where they have rows.

    The cells show the figures as ``results.json`` rounds them, so the tables of a
    report and of its ``results.json`` read back are the same.
    """
    report = read_report(results_document(report, {}))
    sections = [
        _summary_section(report),
        _comparison_section(report),
        _matched_section(report),
        _rounds_section(report),
        _loss_section(report),
    ]
    return [sections[0], *(s for s in sections[1:] if s.rows)]


def _rich_tables(section: _Section, width: int | None) -> list[Table]:
    """A section as Rich tables of plain-text cells that fit ``width`` columns.

    Cells are ``Text`` (so ``[0.61, 0.79]`` is not markup) and never cut or folded: a
    section too wide for ``width`` is split by columns into tables that fit, each
    repeating the key columns (what the row is) and titled ``(continued)`` after the
    first; a header wraps at its spaces where its column is narrower. The notes go under
    the last.
    """
    groups = _column_groups(section, width)
    tables = []
    for number, columns in enumerate(groups):
        last = number == len(groups) - 1
        caption = Text("\n".join(section.notes)) if section.notes and last else None
        title = section.title if number == 0 else f"{section.title} (continued)"
        table = Table(title=title, caption=caption, caption_justify="left")
        for index, column_width in columns:
            table.add_column(
                Text(section.headers[index]),
                justify="left" if index < section.keys else "right",
                width=column_width,
            )
        for row in section.rows:
            table.add_row(*(Text(row[index]) for index, _ in columns))
        tables.append(table)
    return tables


#: What a Rich table adds to its columns' text: a border and a space either side each,
#: and the closing border.
_COLUMN_EXTRA, _TABLE_EXTRA = 3, 1


def _widths(section: _Section, index: int) -> tuple[int, int]:
    """A column's least width and the width that holds its header on one line.

    The least holds its widest cell whole and its header's longest word.
    """
    cells = [len(row[index]) for row in section.rows]
    header = section.headers[index]
    least = max([*cells, *(len(word) for word in header.split()), 1])
    return least, max(least, len(header))


def _column_groups(section: _Section, width: int | None) -> list[list[tuple[int, int]]]:
    """The section's columns, with their widths, in groups that fit ``width``.

    Each group starts with the key columns; columns get their least width, then what
    room is left widens them toward a one-line header, left to right. ``None``: one
    group, every column as wide as its header and cells.
    """
    count = len(section.headers)
    widths = [_widths(section, index) for index in range(count)]
    if width is None:
        return [[(index, widths[index][1]) for index in range(count)]]
    keys = list(range(min(section.keys, count)))
    groups: list[list[int]] = [list(keys)]
    for index in range(len(keys), count):
        group = groups[-1]
        used = sum(widths[i][0] + _COLUMN_EXTRA for i in group) + _TABLE_EXTRA
        if used + widths[index][0] + _COLUMN_EXTRA > width and len(group) > len(keys):
            groups.append(list(keys))
        groups[-1].append(index)
    placed = []
    for group in groups:
        room = width - _TABLE_EXTRA - sum(widths[i][0] + _COLUMN_EXTRA for i in group)
        sized = []
        for index in group:
            least, whole = widths[index]
            extra = max(0, min(whole - least, room))
            room -= extra
            sized.append((index, least + extra))
        placed.append(sized)
    return placed


def results_table(report: Report, width: int | None = None) -> list[Table]:
    """The printed report's tables.

    Accuracy and cost per label, then the paired tests, the matched-budget votes, the
    dynamics per round and the oracle and loss (each where there is something to show).

    Args:
        report: The report.
        width: The columns they are printed in (a terminal's, 80 when piped): a table
            wider is split by its columns into tables that fit, none of its figures cut.
            ``None``: one table per section, however wide.

    Returns:
        The tables, to print with ``console.print(*tables)``.
    """
    return [table for section in _sections(report) for table in _rich_tables(section, width)]


def _markdown(section: _Section) -> str:
    """One titled GitHub Markdown table, its notes below it (first column left-aligned)."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    rule = "| " + " | ".join(":---" if i == 0 else "---:" for i in range(len(section.headers)))
    rule += " |"
    parts = [
        f"**{section.title}**",
        "\n".join([line(section.headers), rule, *(line(row) for row in section.rows)]),
    ]
    parts += [f"_{note}_" for note in section.notes]
    return "\n\n".join(parts)


def markdown_table(report: Report) -> str:
    """The printed report's tables as GitHub Markdown (for the README and ``docs/eval/``).

    Args:
        report: The report.

    Returns:
        Each table under its bold title, its notes in italics below it, separated by
        blank lines and ending in a newline.
    """
    return "\n\n".join(_markdown(section) for section in _sections(report)) + "\n"
