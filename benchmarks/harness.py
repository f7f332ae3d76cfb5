"""Reporting and main loop shared by the benchmark scripts in ``benchmarks/``.

Every script builds its own figures; this module prints them in one format, sums them up,
writes the optional JSON payload and gives the exit status. It is imported as a plain
module (``from harness import ...``): ``benchmarks/`` is on ``sys.path`` when a script runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def cli(*args: str) -> list[str]:
    """Command line of one ``debategraph`` CLI process (this interpreter).

    Args:
        args: The CLI's arguments.

    Returns:
        The command.
    """
    return [sys.executable, "-m", "debategraph.cli", *args]


def stub_model_args(url: str, db: Path | str) -> list[str]:
    """The CLI options of a run against the simulated OpenAI server, on ``db``.

    Args:
        url: The server's base URL.
        db: The checkpoint database.

    Returns:
        ``--model stub --base-url URL --db DB --max-retries 0``.
    """
    return ["--model", "stub", "--base-url", url, "--db", str(db), "--max-retries", "0"]


@dataclass
class Figure:
    """One reported figure."""

    number: int
    name: str
    setup: str
    rows: list[tuple[str, str]]
    target: str
    passed: bool
    values: dict[str, Any]
    advisory: bool = False
    notes: list[str] = field(default_factory=list)
    #: The measured value in a few words, for the report's table (``docs/benchmarks.md``).
    headline: str = ""
    #: When it misses its target: why, and what would reach it (printed and reported).
    why: str = ""

    def render(self) -> str:
        """Text block for the console."""
        verdict = "PASS" if self.passed else "FAIL"
        if self.advisory:
            verdict += " (advisory in --quick mode: timing on a loaded box is noisy)"
        width = max(len(label) for label, _ in [*self.rows, ("target", "")])
        lines = [f"[{self.number}] {self.name}: {self.setup}"]
        lines += [f"    {label:<{width}}  {value}" for label, value in self.rows]
        lines.append(f"    {'target':<{width}}  {self.target}")
        lines.append(f"    {'result':<{width}}  {verdict}")
        if self.why and not self.passed:
            lines.append(f"    why not: {self.why}")
        lines += [f"    note: {note}" for note in self.notes]
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {
            "number": self.number,
            "name": self.name,
            "setup": self.setup,
            "target": self.target,
            "passed": self.passed,
            "advisory": self.advisory,
            "values": self.values,
            "notes": self.notes,
            "headline": self.headline or (self.rows[-1][1] if self.rows else ""),
            "why": self.why if not self.passed else "",
        }


def fmt_runs(values: Sequence[float], scale: float = 1.0, unit: str = "s") -> str:
    """``a / b / c`` with a unit."""
    return " / ".join(f"{v * scale:.3f}" for v in values) + f" {unit}"


#: One step of a benchmark: called with the work directory, returns its figure (or
#: several figures measured together).
Step = Callable[[Path], "Figure | list[Figure]"]


def base_parser(
    description: str, *, quick_help: str = "smaller, faster smoke variant"
) -> argparse.ArgumentParser:
    """Parser with the flags every benchmark has: ``--quick`` and ``--json PATH``.

    ``description`` may be a whole module docstring: its first paragraph is used.
    """
    parser = argparse.ArgumentParser(description=description.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write figures as JSON")
    return parser


def run_benchmark(
    title: str,
    steps: Sequence[Step],
    *,
    args: argparse.Namespace,
    quick_note: str | None = None,
    warnings: Callable[[], Iterable[str]] | None = None,
    workdir: Path | None = None,
    tmp_prefix: str = "debategraph-bench-",
    progress: bool = False,
) -> int:
    """Run ``steps`` in a work directory, print each figure and a summary; the exit status.

    Args:
        title: What the header line names, e.g. ``"debategraph debate benchmark"``.
        steps: The figures, in order; each is called with the work directory.
        args: Parsed arguments of :func:`base_parser` (``quick``, ``json``).
        quick_note: Printed under the header in ``--quick`` mode.
        warnings: Problems that do not invalidate the figures, read after the last step:
            printed before the summary and, when given, written to the JSON payload.
        workdir: Use (and keep) this directory instead of a temporary one.
        tmp_prefix: Prefix of the temporary work directory.
        progress: The steps print progress lines: a blank line goes before each figure.

    Returns:
        1 if a figure that counts (not advisory) fails, else 0.
    """
    quick: bool = args.quick
    mode = "quick" if quick else "full"
    started = time.perf_counter()
    print(
        f"{title} ({mode}): Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, {platform.platform()}"
    )
    if quick and quick_note:
        print(quick_note)
    print()
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix=tmp_prefix) as tmp:
        if workdir is not None:
            workdir.mkdir(parents=True, exist_ok=True)
        for step in steps:
            made = step(workdir if workdir is not None else Path(tmp))
            for figure in made if isinstance(made, list) else [made]:
                figures.append(figure)
                if progress:
                    print()
                print(figure.render(), flush=True)
                print()
    failed = [f for f in figures if not f.passed and not f.advisory]
    advisory = [f for f in figures if not f.passed and f.advisory]
    elapsed = time.perf_counter() - started
    summary = f"{len(figures) - len(failed) - len(advisory)}/{len(figures)} figures pass"
    if advisory:
        summary += f"; advisory failures (not counted): {', '.join(f.name for f in advisory)}"
    if failed:
        summary += f"; FAILED: {', '.join(f.name for f in failed)}"
    seen = sorted(warnings()) if warnings is not None else []
    for warning in seen:
        print(f"warning: {warning}")
    print(f"{summary} ({elapsed:.1f} s)")
    exit_code = 1 if failed else 0
    if args.json is not None:
        payload: dict[str, Any] = {
            "mode": mode,
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "elapsed_s": elapsed,
            "exit_code": exit_code,
        }
        if warnings is not None:
            payload["warnings"] = seen
        payload["figures"] = [f.as_json() for f in figures]
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return exit_code


def overhead_figure(
    *,
    number: int,
    setup: str,
    unit: str,
    count: int,
    graph_walls: Sequence[float],
    base_walls: Sequence[float],
    bare_walls: Sequence[float],
    target_ms: float,
    quick: bool,
    note: str,
) -> Figure:
    """The orchestration-overhead figure: (graph wall - direct-calls wall) / ``count``.

    Args:
        number: Figure number.
        setup: What was run.
        unit: What is counted (``call``, ``turn``).
        count: How many of them one run makes.
        graph_walls: Walls of the graph run with its SQLite checkpointer.
        base_walls: Walls of the same calls made without LangGraph.
        bare_walls: Walls of the graph without a checkpointer.
        target_ms: Target overhead per ``unit``.
        quick: Quick mode (a timing figure is then advisory).
        note: How ``W_base`` was measured.

    Returns:
        The figure.
    """
    w_graph = statistics.median(graph_walls)
    w_base = statistics.median(base_walls)
    w_bare = statistics.median(bare_walls)
    overhead_ms = (w_graph - w_base) / count * 1000
    bare_ms = (w_bare - w_base) / count * 1000
    label = f"median of {len(graph_walls)}" if len(graph_walls) > 1 else "1 run"
    return Figure(
        number=number,
        name="Orchestration overhead",
        setup=setup,
        rows=[
            (f"W_graph ({label})", f"{w_graph:.3f} s   (runs: {fmt_runs(graph_walls)})"),
            (f"W_base ({label})", f"{w_base:.3f} s   (runs: {fmt_runs(base_walls)})"),
            (f"{unit}s", str(count)),
            (f"overhead per {unit}", f"{overhead_ms:.2f} ms"),
            (
                "info: no checkpointer",
                f"W={w_bare:.3f} s -> {bare_ms:.2f} ms/{unit} (LangGraph alone)",
            ),
        ],
        target=f"overhead per {unit} <= {target_ms:.1f} ms",
        passed=overhead_ms <= target_ms,
        advisory=quick,
        headline=f"{overhead_ms:.2f} ms per {unit} with SQLite, {bare_ms:.2f} ms without a "
        "checkpointer (in-process)",
        values={
            "w_graph_s": w_graph,
            "w_base_s": w_base,
            "w_no_checkpointer_s": w_bare,
            "graph_runs_s": list(graph_walls),
            "base_runs_s": list(base_walls),
            "no_checkpointer_runs_s": list(bare_walls),
            f"{unit}s": count,
            f"overhead_ms_per_{unit}": overhead_ms,
            f"no_checkpointer_overhead_ms_per_{unit}": bare_ms,
        },
        notes=[note],
    )
