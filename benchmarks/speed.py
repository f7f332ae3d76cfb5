"""Speed beside the peers: one debate, 10 and 100 at once, client CPU, start-up, prompt tokens.

Every implementation runs the same debate (4 solvers, ring, 3 rounds, majority vote)
against the OpenAI-compatible stub server, in a process of its own (so its CPU time is
its own and the server's is not), alternating run by run:

* ``debategraph``: the public API, ``build_solver_debate(...).compile(checkpointer=...)``
  on ``open_checkpointer`` (SQLite), ``ainvoke``; N at once with ``asyncio.gather``;
* ``langgraph``: the same debate in plain LangGraph on its ``SqliteSaver`` (``invoke``,
  a thread per debate), ``benchmarks/peers/langgraph_debate.py``;
* ``autogen``: AutoGen-core 0.7.5 in the shape of its multi-agent debate pattern,
  ``benchmarks/peers/autogen_debate.py``, run by ``.venv-peers/bin/python`` (skipped
  with a line saying how to install it when that is missing).

Figures (the server answers each call after 200 ms, so a debate's critical path is
3 x 200 ms = 0.6 s):

1. One debate: wall / critical path, median of the runs, for each; target <= 1.05x and
   below AutoGen's.
2. 10 debates at once in one process: wall of the batch / critical path; target <= 1.5x
   and below AutoGen's.
3. Client CPU per model call (user + system CPU of the process over the 10-at-once runs,
   over the calls the server answered), SQLite checkpoints on; target: below AutoGen's.
4. 100 debates at once in one process (debategraph on one SQLite file, AutoGen storing
   nothing), alternating: all finish, peak memory, debates per second; target: more
   debates per second than AutoGen. ``--quick``: 20, in figures 1-3's worker processes.
5. Start-up: ``debategraph solve`` as a new process, from its spawn to the first request
   at the server; target <= 1.2 s. Beside it, what importing the stack costs, by package
   (``python -X importtime``). Also the end-to-end CLI run (``wall_s``) at 200 ms,
   and per model call at zero latency. ``--quick``: without the run that warms the file
   cache first, and the zero-latency run on the 200 ms run's stub process, its latency set
   to zero (a server start-up less).
6. Prompt tokens per question, counted by the server: debategraph >= 50% below AutoGen.

    python benchmarks/speed.py [--quick] [--json out.json]
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# benchmarks/ is on sys.path when run as a script
from harness import Figure, base_parser, cli, run_benchmark, stub_model_args
from stub_process import StubProcess, stub_process

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
LATENCY_S = 0.2
ROUNDS = 3
AGENTS = 4
CRITICAL_S = ROUNDS * LATENCY_S
CALLS = AGENTS * ROUNDS
ANSWER = "72"
ONE_TARGET = 1.05
TEN_TARGET = 1.5
START_TARGET_S = 1.2
#: The peer each speed target must also beat, in the same run.
RIVAL = "autogen"
TOKENS_TARGET = 0.5
PEERS_PYTHON = Path(
    os.environ.get("DEBATEGRAPH_PEERS_PYTHON", REPO_ROOT / ".venv-peers/bin/python")
)
INSTALL_PEERS = "make peers (benchmarks/peers/requirements.txt in .venv-peers)"
WARNINGS: set[str] = set()
#: debategraph without a checkpointer: run beside the others, reported as info.
BARE = "debategraph-bare"


@dataclass
class Worker:
    """A workload process of one implementation, answering ``run N`` commands."""

    name: str
    proc: subprocess.Popen[str]
    server: StubProcess
    runs: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    def run(self, n: int) -> dict[str, Any]:
        """Run ``n`` debates at once; their figures plus the server's counts."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.server.take_stats()
        self.proc.stdin.write(f"run {n}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name} worker died")
        result: dict[str, Any] = json.loads(line)
        result["server"] = self.server.take_stats()
        wrong = [a for a in result["answers"] if str(a) != ANSWER]
        if result["server"]["calls"] != n * CALLS or wrong:
            raise RuntimeError(
                f"{self.name}: {n} debates made {result['server']['calls']} calls "
                f"(expected {n * CALLS}); answers {result['answers'][:5]}"
            )
        self.runs.setdefault(n, []).append(result)
        return result

    def close(self) -> None:
        """End the process."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def start_worker(name: str, server: StubProcess, workdir: Path) -> Worker | None:
    """Start the workload process of ``name``; ``None`` (and a warning) if unavailable."""
    db = str(workdir / f"{name}.sqlite")
    if name == "autogen":
        if not PEERS_PYTHON.exists():
            WARNINGS.add(
                f"AutoGen peer skipped: {PEERS_PYTHON} not found; install: {INSTALL_PEERS}"
            )
            return None
        cmd = [str(PEERS_PYTHON), str(HERE / "peers/autogen_debate.py"), "--url", server.url]
    else:
        cmd = [sys.executable, str(HERE / "workload.py"), name, "--url", server.url, "--db", db]
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert proc.stdout is not None
    ready = proc.stdout.readline()
    if not ready.startswith("{"):
        proc.kill()
        if name == "autogen":
            WARNINGS.add(f"AutoGen peer skipped: it did not start ({ready!r}); {INSTALL_PEERS}")
            return None
        raise RuntimeError(f"{name} worker did not start: {ready!r}")
    worker = Worker(name, proc, server)
    worker.run(1)  # warm-up: imports, connections, caches
    return worker


def ratio_row(
    name: str, values: Sequence[float], base: float | None, unit: str = "x"
) -> tuple[str, str]:
    """``name: median (min-max) [, n x debategraph's]``."""
    med = statistics.median(values)
    text = f"{med:.2f}{unit} ({min(values):.2f}-{max(values):.2f}, {len(values)} runs)"
    if base is not None and name != "debategraph":
        text += f"; {med / base:.2f} x debategraph's"
    return name, text


def round_timing(arrivals: Sequence[float], latency_s: float) -> dict[str, float]:
    """How a debate's rounds spend their CPU, from when its requests reached the server.

    The requests of a round arrive together; a gap longer than half the latency opens the
    next round (its requests wait for the previous round's replies).

    Args:
        arrivals: When each request of one debate reached the server (seconds, any origin).
        latency_s: The server's latency per call.

    Returns:
        Medians over the rounds, in ms: ``spread_ms``, from a round's first request to its
        last (the requests are built one after another on one thread), and ``turn_ms``,
        from a round's last reply (its last request + the latency) to the next round's
        first request (the replies read, the round closed and the next opened).
    """
    rounds: list[list[float]] = []
    for at in sorted(arrivals):
        if rounds and at - rounds[-1][-1] < latency_s / 2:
            rounds[-1].append(at)
        else:
            rounds.append([at])
    spreads = [(r[-1] - r[0]) * 1000 for r in rounds]
    turns = [(nxt[0] - (cur[-1] + latency_s)) * 1000 for cur, nxt in itertools.pairwise(rounds)]
    return {
        "rounds": float(len(rounds)),
        "spread_ms": statistics.median(spreads) if spreads else 0.0,
        "turn_ms": statistics.median(turns) if turns else 0.0,
    }


def why_one(ratio: float, bare: float, timing: dict[str, float]) -> str:
    """Why one debate misses its target, in the figures this run measured.

    Args:
        ratio: debategraph's wall / critical path (median of its runs).
        bare: The same without a checkpointer.
        timing: :func:`round_timing` over debategraph's one-debate runs (medians).

    Returns:
        The "why not" text.
    """
    over = (ratio - 1) * CRITICAL_S / ROUNDS * 1000
    allowed = (ONE_TARGET - 1) * CRITICAL_S / ROUNDS * 1000
    return (
        f"the graph without a checkpointer takes {bare:.3f}x and SQLite checkpoints add "
        f"{ratio - bare:+.3f}x. What is left is CPU on the critical path of each round, on one "
        f"thread: a round takes {over:.1f} ms beyond its {LATENCY_S * 1000:.0f} ms of waiting, "
        f"against the {allowed:.1f} ms that {ONE_TARGET:.2f}x allows. Of that, its {AGENTS} "
        f"requests reach the server over {timing['spread_ms']:.1f} ms (built one after "
        "another: LangGraph's task, the node, langchain-core and langchain-openai, the openai "
        f"SDK's request), and {timing['turn_ms']:.1f} ms pass from the round's last reply to "
        "the next round's first request (the replies read, the round closed and the next "
        "opened; medians over this run's rounds, timed at the server). What would: less CPU "
        "per request built and per reply read on the event loop's thread (figure 3)."
    )


def peers_said(values: dict[str, list[float]], fmt: str) -> str:
    """``; name median`` for each peer (not debategraph), for a headline."""
    return "".join(
        f"; {k} {fmt.format(statistics.median(v))}" for k, v in values.items() if k != "debategraph"
    )


def _rival(values: dict[str, list[float]]) -> float | None:
    """The median of :data:`RIVAL`'s values, or ``None`` when it did not run."""
    return statistics.median(values[RIVAL]) if RIVAL in values else None


def _below(ours: float, rival: float | None) -> bool:
    """Whether ``ours`` is below the rival's figure (no rival ran: nothing to beat)."""
    return rival is None or ours < rival


def figure_peers(
    workdir: Path, *, runs: int, quick: bool, hundred: int | None = None
) -> list[Figure]:
    """Figures 1-3 and 6: the implementations alternating, one and 10 at once.

    Args:
        workdir: Where the workers' SQLite files go.
        runs: Runs of each batch per implementation.
        quick: ``--quick`` (the timing figures advisory).
        hundred: Figure 4's debates at once, to run in these workers after the others
            (``--quick``: a worker start-up less), its figure last; ``None``: not here.
    """
    with stub_process(LATENCY_S) as server:
        workers = [
            w
            for n in ("debategraph", "langgraph", "autogen", BARE)
            if (w := start_worker(n, server, workdir))
        ]
        try:
            for _ in range(runs):
                for worker in workers:
                    worker.run(1)
            for _ in range(runs):
                for worker in workers:
                    worker.run(10)
            if hundred is not None:
                run_hundred([w for w in workers if w.name in HUNDRED], hundred, runs)
        finally:
            for worker in workers:
                worker.close()
    bare = next(w for w in workers if w.name == BARE)  # info only: what checkpoints cost
    workers = [w for w in workers if w.name != BARE]
    bare_one = statistics.median(r["wall_s"] / CRITICAL_S for r in bare.runs[1][1:])
    ours = next(w for w in workers if w.name == "debategraph")
    timings = [round_timing(r["server"]["arrivals"], LATENCY_S) for r in ours.runs[1][1:]]
    timing = {key: statistics.median(t[key] for t in timings) for key in ("spread_ms", "turn_ms")}
    bare_ten = statistics.median(r["wall_s"] / CRITICAL_S for r in bare.runs[10])
    bare_cpu = statistics.median(r["cpu_s"] / r["server"]["calls"] * 1000 for r in bare.runs[10])
    one = {w.name: [r["wall_s"] / CRITICAL_S for r in w.runs[1][1:]] for w in workers}
    ten = {w.name: [r["wall_s"] / CRITICAL_S for r in w.runs[10]] for w in workers}
    cpu = {w.name: [r["cpu_s"] / r["server"]["calls"] * 1000 for r in w.runs[10]] for w in workers}
    tokens = {
        w.name: statistics.median(r["server"]["prompt_tokens"] for r in w.runs[1]) for w in workers
    }
    base_one = statistics.median(one["debategraph"])
    base_ten = statistics.median(ten["debategraph"])
    spread_ten = (max(ten["debategraph"]) - min(ten["debategraph"])) / base_ten
    base_cpu = statistics.median(cpu["debategraph"])
    rival_one = _rival(one)
    rival_ten = _rival(ten)
    rival_cpu = _rival(cpu)
    setup = f"{AGENTS} solvers, ring, {ROUNDS} rounds, {LATENCY_S * 1000:.0f} ms per call"
    in_flight = {w.name: max(r["server"]["max_in_flight"] for r in w.runs[10]) for w in workers}
    beats = " and below AutoGen's in the same run"
    figures = [
        Figure(
            number=1,
            name="One debate",
            setup=f"{setup} (critical path {CRITICAL_S:.1f} s), SQLite checkpoints, "
            "implementations alternating",
            rows=[
                *[ratio_row(k, v, base_one) for k, v in one.items()],
                ("info: no checkpointer", f"debategraph without one: {bare_one:.3f}x"),
            ],
            target=f"debategraph wall <= {ONE_TARGET:.2f} x the critical path" + beats,
            passed=base_one <= ONE_TARGET and _below(base_one, rival_one),
            advisory=quick,
            values={"ratios": one, "no_checkpointer_ratio": bare_one, "round_timing_ms": timing},
            why=why_one(base_one, bare_one, timing),
            headline=f"{base_one:.3f}x the critical path" + peers_said(one, "{:.3f}x"),
        ),
        Figure(
            number=2,
            name="10 debates at once",
            setup=f"{setup}, 10 debates in one process, one SQLite file",
            rows=[
                *[ratio_row(k, v, base_ten) for k, v in ten.items()],
                ("info: calls in flight", ", ".join(f"{k} {v}" for k, v in in_flight.items())),
                ("info: no checkpointer", f"debategraph without one: {bare_ten:.2f}x"),
            ],
            target=f"debategraph batch wall <= {TEN_TARGET:.1f} x the critical path" + beats,
            passed=base_ten <= TEN_TARGET and _below(base_ten, rival_ten),
            advisory=quick,
            values={"ratios": ten, "max_in_flight": in_flight},
            why=f"the batch takes {base_ten:.2f} x {CRITICAL_S:.1f} s: beyond its {ROUNDS} x "
            f"{LATENCY_S * 1000:.0f} ms of waiting, its {10 * CALLS} calls run one at a time on "
            f"the interpreter ({(base_ten - 1) * CRITICAL_S / (10 * CALLS) * 1000:.1f} ms each "
            f"of the {base_cpu:.1f} ms of client CPU per call of figure 3; SQLite's own I/O "
            f"overlaps), and the batch varied by {spread_ten:.0%} over this run's "
            f"{len(ten['debategraph'])} runs. What would: less CPU per call on the event "
            "loop's thread (figure 3).",
            headline=f"{base_ten:.2f}x" + peers_said(ten, "{:.2f}x"),
        ),
        Figure(
            number=3,
            name="Client CPU per call",
            setup="user + system CPU of each implementation's process over its 10-at-once "
            "runs, per call answered",
            rows=[
                *[ratio_row(k, v, base_cpu, " ms") for k, v in cpu.items()],
                (
                    "info: no checkpointer",
                    f"debategraph without one: {bare_cpu:.2f} ms (its SQLite checkpoints "
                    f"cost {base_cpu - bare_cpu:.2f} ms per call; AutoGen stores nothing)",
                ),
            ],
            target="debategraph below AutoGen's, with SQLite checkpoints on"
            + (f" ({rival_cpu:.2f} ms)" if rival_cpu is not None else " (AutoGen did not run)"),
            passed=_below(base_cpu, rival_cpu),
            advisory=quick,
            values={"ms_per_call": cpu, "no_checkpointer_ms_per_call": bare_cpu},
            why=f"debategraph without a checkpointer uses {bare_cpu:.2f} ms; its durable "
            f"SQLite checkpoints (every step and every agent's turn written) the other "
            f"{base_cpu - bare_cpu:.2f} ms. What would: fewer, smaller checkpoint writes.",
            headline=f"{base_cpu:.2f} ms" + peers_said(cpu, "{:.2f} ms"),
        ),
    ]
    if "autogen" in tokens:
        cut = 1 - tokens["debategraph"] / tokens["autogen"]
        figures.append(
            Figure(
                number=6,
                name="Prompt tokens per question",
                setup=f"{setup}: prompt tokens the server counted for one debate",
                rows=[(k, f"{v:,.0f}") for k, v in tokens.items()]
                + [("cut vs autogen", f"{cut:.0%}")],
                target=f"debategraph >= {TOKENS_TARGET:.0%} below AutoGen",
                passed=cut >= TOKENS_TARGET,
                values={"prompt_tokens": tokens, "cut_vs_autogen": cut},
                headline=f"{tokens['debategraph']:,.0f} vs AutoGen "
                f"{tokens['autogen']:,.0f} ({cut:.0%} fewer)",
            )
        )
    else:
        WARNINGS.add("figure 6 (prompt tokens vs AutoGen) not measured: AutoGen peer missing")
    if hundred is not None:
        hundreds = [w for w in workers if w.name in HUNDRED]
        figures.append(hundred_figure(hundreds, n=hundred, runs=runs, quick=quick, shared=True))
    return figures


#: Figure 4's debates at once in ``--quick`` (100 in the full run).
QUICK_HUNDRED = 20
#: The implementations of figure 4.
HUNDRED = ("debategraph", "autogen")


def run_hundred(workers: Sequence[Worker], n: int, runs: int) -> None:
    """Figure 4's batches: ``runs`` of ``n`` debates at once per worker, alternating."""
    for _ in range(runs):
        for worker in workers:
            worker.run(n)


def figure_hundred(workdir: Path, *, n: int, runs: int, quick: bool) -> Figure:
    """Figure 4: 100 debates at once in one process, beside AutoGen, alternating."""
    with stub_process(LATENCY_S) as server:
        workers = [w for name in HUNDRED if (w := start_worker(name, server, workdir))]
        try:
            run_hundred(workers, n, runs)
        finally:
            for worker in workers:
                worker.close()
    return hundred_figure(workers, n=n, runs=runs, quick=quick, shared=False)


def hundred_figure(
    workers: Sequence[Worker], *, n: int, runs: int, quick: bool, shared: bool
) -> Figure:
    """Figure 4 from its workers' batches of ``n``.

    Args:
        workers: debategraph's worker, and AutoGen's where it ran.
        n: Debates at once.
        runs: Batches per worker.
        quick: ``--quick`` (the figure advisory).
        shared: The workers ran figures 1-3 first (their peak memory includes those).
    """
    rate = {w.name: [n / r["wall_s"] for r in w.runs[n]] for w in workers}
    ours = next(w for w in workers if w.name == "debategraph")
    result = ours.runs[n][-1]
    rival = _rival(rate)
    own_rate = statistics.median(rate["debategraph"])
    finished = all(len(r["answers"]) == n for w in workers for r in w.runs[n])
    rows = [
        ("finished", f"{len(result['answers'])}/{n} in each of {runs} runs, every answer {ANSWER}"),
        *[
            (
                f"{w.name}: debates per second",
                f"{statistics.median(rate[w.name]):.1f} ({min(rate[w.name]):.1f}-"
                f"{max(rate[w.name]):.1f}, {runs} runs); wall "
                f"{statistics.median(r['wall_s'] for r in w.runs[n]):.2f} s; peak RSS "
                f"{max(r['peak_rss_mb'] for r in w.runs[n]):.0f} MiB",
            )
            for w in workers
        ],
        ("calls in flight at most", str(result["server"]["max_in_flight"])),
    ]
    target = f"all {n} finish" + (
        ", more debates per second than AutoGen" if rival is not None else ""
    )
    return Figure(
        number=4,
        name=f"{n} debates at once",
        setup=f"{AGENTS} solvers, ring, {ROUNDS} rounds, {LATENCY_S * 1000:.0f} ms per call, "
        f"{n} debates in one process (debategraph: one SQLite file, ainvoke, "
        "asyncio.gather; AutoGen storing nothing), implementations alternating"
        + (
            " (in figures 1-3's processes: their peak memory includes those runs)" if shared else ""
        ),
        rows=rows,
        target=target,
        passed=finished and (rival is None or own_rate > rival),
        advisory=quick,
        values={
            "n": n,
            "debates_per_s": rate,
            "wall_s": {w.name: [r["wall_s"] for r in w.runs[n]] for w in workers},
            "peak_rss_mb": {w.name: max(r["peak_rss_mb"] for r in w.runs[n]) for w in workers},
        },
        why="the debates are CPU-bound on 2 cores: what would is less client CPU per call "
        "(figure 3).",
        headline=f"{n}/{n} finish; {own_rate:.1f} debates/s"
        + peers_said(rate, "{:.1f} debates/s")
        + f", peak RSS {max(r['peak_rss_mb'] for r in ours.runs[n]):.0f} MiB",
    )


def cli_run(server: StubProcess, db: Path) -> tuple[float, dict[str, Any], dict[str, Any]]:
    """``debategraph solve --json`` as a new process: spawn-to-first-request, result, stats."""
    server.take_stats()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as users
    args = ["solve", "What is 6 times 12?", "--json", *stub_model_args(server.url, db)]
    spawned = time.time()
    proc = subprocess.run(
        cli(*args), capture_output=True, text=True, env=env, cwd=REPO_ROOT, check=False
    )
    stats = server.take_stats()
    if proc.returncode != 0:
        raise RuntimeError(f"debategraph solve failed: {proc.stderr[-500:]}")
    result: dict[str, Any] = json.loads(proc.stdout)
    return stats["first_request_at"] - spawned, result, stats


def import_floor() -> float:
    """Seconds a new process takes to import the stack every run needs.

    ``langchain_openai`` (with the openai SDK) and ``langgraph``: no run reaches its first
    request sooner than this. Measured right before each start-up run, so both see the
    machine in the same state.
    """
    started = time.perf_counter()
    code = "import langchain_openai, langgraph.graph, langgraph.checkpoint.sqlite"
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - started


#: Packages whose import cost figure 5 reports (cumulative, as ``-X importtime`` counts it:
#: each where it is first imported, so a package imported inside another counts there).
IMPORT_PARTS = (
    "openai.types",
    "langsmith.run_trees",
    "langgraph_sdk",
    "langchain_core.language_models",
    "openai",
    "langgraph.graph",
    "langchain_openai",
)


def import_profile() -> dict[str, float]:
    """Seconds each of :data:`IMPORT_PARTS` takes to import, in a new process, inclusive."""
    code = "import langchain_openai, langgraph.graph, langgraph.checkpoint.sqlite"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    found: dict[str, float] = {}
    for line in proc.stderr.splitlines():
        parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
        if len(parts) == 3 and parts[2] in IMPORT_PARTS and parts[1].isdigit():
            found[parts[2]] = int(parts[1]) / 1e6
    return found


def figure_start(workdir: Path, *, runs: int, quick: bool) -> Figure:
    """Figure 5: the CLI as a new process: start-up, a debate end to end, per call."""
    starts: list[float] = []
    floors: list[float] = []
    walls: list[float] = []
    zero: list[float] = []

    def zero_latency_runs(server: StubProcess) -> None:
        """The zero-latency runs on ``server``: each run's ``wall_s`` per call, in ms."""
        for i in range(runs):
            _, result, stats = cli_run(server, workdir / f"zero-{i}.sqlite")
            zero.append(result["wall_s"] / stats["calls"] * 1000)

    with stub_process(LATENCY_S) as server:
        if not quick:  # warm the file cache, not the process
            cli_run(server, workdir / "start-warm.sqlite")
        for i in range(runs):
            floors.append(import_floor())
            start, result, _ = cli_run(server, workdir / f"start-{i}.sqlite")
            starts.append(start)
            walls.append(result["wall_s"])
        if quick:  # the same stub process at zero latency: a server start-up less
            server.set_latency(0.0)
            zero_latency_runs(server)
    if not quick:
        with stub_process(0.0) as server:
            zero_latency_runs(server)
    start = statistics.median(starts)
    floor = statistics.median(floors)
    own = statistics.median(s - f for s, f in zip(starts, floors, strict=True))
    parts = import_profile()
    where = ", ".join(f"{name} {secs:.2f} s" for name, secs in parts.items())
    return Figure(
        number=5,
        name="Start-up and the CLI end to end",
        setup="`debategraph solve --json` as a new process (4 solvers, ring, 3 rounds), "
        "a fresh SQLite file each run",
        rows=[
            (
                "spawn to first request",
                f"{start:.2f} s ({min(starts):.2f}-{max(starts):.2f}, {runs} runs)",
            ),
            (
                "wall_s at 200 ms per call",
                f"{statistics.median(walls):.3f} s = "
                f"{statistics.median(walls) / CRITICAL_S:.2f} x the critical path",
            ),
            ("wall_s per call at zero latency", f"{statistics.median(zero):.2f} ms"),
            (
                "info: import floor",
                f"{floor:.2f} s: a new process importing langchain_openai and langgraph "
                f"(median of {runs}, each just before a start-up run); debategraph's own "
                f"start: {own:+.2f} s (median of the differences)",
            ),
            (
                "info: where the imports go",
                f"{where} (python -X importtime, inclusive, each counted where it is "
                "first imported)",
            ),
        ],
        target=f"spawn to first request <= {START_TARGET_S} s",
        passed=start <= START_TARGET_S,
        advisory=quick,
        values={
            "start_s": starts,
            "wall_s": walls,
            "zero_latency_ms_per_call": zero,
            "import_floor_s": floor,
            "import_floor_runs_s": floors,
            "import_parts_s": parts,
        },
        why=f"importing what every run needs (langchain-openai with the openai SDK, "
        f"LangGraph) takes {floor:.2f} s here before any debategraph code runs, and "
        f"debategraph's own start (its modules, the thread recorded in SQLite, the graph) "
        f"adds {own:+.2f} s (median of the run-by-run differences). Most of the floor is "
        "what those packages import eagerly and a chat request never uses: the openai SDK's "
        "types of every API (openai.types), LangSmith's run trees (imported by "
        "langchain-core's tracers), the LangGraph SDK's client (imported by "
        "langgraph.runtime). What would: a process that is already running (an Agent "
        "Protocol server or `langgraph dev` pays the imports once), or those packages "
        "importing lazily.",
        headline=f"{start:.2f} s to the first request (imports alone: {floor:.2f} s); "
        "a debate's wall_s "
        f"{statistics.median(walls) / CRITICAL_S:.2f}x the critical path; "
        f"{statistics.median(zero):.1f} ms per call at zero latency",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the figures; 1 if a counting figure fails, else 0."""
    args = base_parser(__doc__).parse_args(argv)
    quick: bool = args.quick
    return run_benchmark(
        "debategraph speed benchmark",
        [
            lambda workdir: figure_peers(
                workdir,
                runs=1 if quick else 7,
                quick=quick,
                hundred=QUICK_HUNDRED if quick else None,
            ),
            *(
                []
                if quick
                else [lambda workdir: figure_hundred(workdir, n=100, runs=3, quick=False)]
            ),
            lambda workdir: figure_start(workdir, runs=1 if quick else 5, quick=quick),
        ],
        args=args,
        quick_note=f"quick mode: 1 run each, {QUICK_HUNDRED} debates at once instead of 100 "
        "(in the workers of figures 1-3), no start-up run to warm the file cache; timing "
        "figures are advisory",
        warnings=lambda: WARNINGS,
    )


if __name__ == "__main__":
    sys.exit(main())
