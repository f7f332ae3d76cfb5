"""Serving: 100 debates at once through ``debategraph serve`` beside the in-process API.

Two figures. The first (issue 25) is measured against one stub model process (the test suite's
OpenAI-compatible server, ``benchmarks/stub_process.py``) that answers each call after
200 ms, so a debate of 4 solvers and 3 rounds has a critical path of 3 x 200 ms = 0.6 s:

* the server: one ``debategraph serve`` process (Aegra on PostgreSQL, one fresh database
  of its own, ``--pool-size`` below) serving the Studio build of ``solver_debate``
  (4 solvers, ring, 3 rounds, plurality vote). This process is the client:
  ``langgraph_sdk.get_client`` (async), and per debate ``threads.create``,
  ``runs.create`` (the model named in the run's context) and ``runs.join``; a debate's
  time runs from its first request to its join returning with the final state. N
  debates start at once (``asyncio.gather``) and every final answer is checked;
* beside it, what the CLI runs: the public API in a process of its own
  (``benchmarks/workload.py``'s ``debategraph`` worker: ``build_solver_debate`` on
  ``open_checkpointer``, ``ainvoke``, ``asyncio.gather``), once on PostgreSQL (another
  fresh database on the same server: the same storage as the server) and once on SQLite
  (the CLI's default).

The three alternate run by run (2 runs of 100 debates each; ``--quick``: 1 run of 30),
each after a warm-up debate. Reported for each: debates finished per run (the expected
answer back), debates per second (those finished / the batch's wall), p50 and p95 time
per finished debate and their ratio to the 0.6 s critical path, and peak memory: the
server process's ``VmHWM`` (with its children's, if any) from ``/proc``, the worker's
peak RSS. Target: every debate finishes through the server; the rest is reported as
measured. A debate through the server that fails (an HTTP error, a run that ends
otherwise or is not done within 150 s, 60 s in ``--quick``) counts as not finished and
its error is reported; so are the error and warning lines of the server's log, and why
the debates failed where the log tells (a database pool of Aegra's running out).

The second (issue 35) is a property-based run of ``schemathesis`` against the server's
own OpenAPI document (``tests/fuzz_server.py``): a server signed in with an operator's
tokens and model list, every operation called with generated requests (examples,
coverage cases, fuzzing, stateful sequences) as a signed-in user, for several seeds. Target:
no 5xx and no exception text in any response. CI runs one short seed
(``tests/test_serve_safety.py``); this runs 3 seeds of 25 examples each (``--quick``: 1
of 1).

PostgreSQL: the server named by ``DEBATEGRAPH_TEST_POSTGRES_URL`` (a role that may create
databases); without it the script runs ``.ci/postgres.sh`` (which installs and starts one
where it can) and stops with one line if that fails.

    python benchmarks/serve.py [--quick] [--pool-size N] [--keep DIR] [--json out.json]
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# benchmarks/ is on sys.path when run as a script
from harness import Figure, base_parser, run_benchmark
from speed import AGENTS, ANSWER, CALLS, CRITICAL_S, LATENCY_S, ROUNDS, Worker
from stub_process import StubProcess, stub_process
from workload import QUESTION

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
POSTGRES_ENV = "DEBATEGRAPH_TEST_POSTGRES_URL"
POSTGRES_SCRIPT = REPO_ROOT / ".ci" / "postgres.sh"
GRAPH = "solver_debate"
#: Connections the server keeps for checkpoints and the store (``--pool-size``).
POOL_SIZE = 20
#: Seconds one request of the client may take (a join waits for its run).
CLIENT_TIMEOUT_S = 120.0
#: Seconds after which a debate through the server counts as not finished (full, quick).
DEADLINE_S = (150.0, 60.0)
#: What Aegra logs when its metadata pool (SQLAlchemy) runs out of connections.
POOL_EXHAUSTED = "QueuePool limit"
WARNINGS: set[str] = set()
#: Server log lines that count as problems (a log level, or a traceback's first line).
LOG_PROBLEM = re.compile(
    r"\[\s*(error|critical|warning)\s*\]|\b(ERROR|WARNING|CRITICAL):|Traceback"
)
#: Terminal colour codes in the server's log.
ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: The time a log line starts with.
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT[\d:.]+Z? ")
#: Thread and run ids, in an error's text.
IDS = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def repo_imports() -> tuple[Any, Any, Any]:
    """The test suite's server, model list and database helpers (imported, not copied)."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from tests.aegra_server import aegra_server, models_file
    from tests.backends import fresh_database

    return aegra_server, models_file, fresh_database


#: The fuzz figure's seeds and examples per operation and phase (full, quick).
FUZZ_SEEDS = {False: (11, 22, 33), True: (11,)}
FUZZ_EXAMPLES = {False: 25, True: 1}


def figure_fuzz(workdir: Path, *, quick: bool) -> Figure:
    """The figure: schemathesis finds no 5xx and no exception text on a signed-in server."""
    import secrets

    aegra_server, models_file, fresh_database = repo_imports()
    from tests.fuzz_server import fuzz

    token = secrets.token_urlsafe(32)
    (workdir / "tokens.yaml").write_text(f"fuzzer: {token}\n")
    results = []
    with (
        stub_process(0.0) as model,
        fresh_database("debategraph_bench_fuzz") as db,
        aegra_server(
            db,
            logdir=workdir,
            extra_args=(
                "--models",
                str(models_file(workdir, {"stub": model.url})),
                "--tokens",
                str(workdir / "tokens.yaml"),
            ),
        ) as server,
    ):
        for seed in FUZZ_SEEDS[quick]:
            print(f"  schemathesis, seed {seed} ...", flush=True)
            results.append(fuzz(server.url, token, examples=FUZZ_EXAMPLES[quick], seed=seed))
    cases = sum(r.cases for r in results)
    failures = sum(r.failures for r in results)
    clean = all(r.returncode == 0 for r in results) and failures == 0 and cases > 0
    rows = [
        (f"seed {seed}", f"{r.cases} cases, {r.failures} failures, {r.seconds:.0f} s")
        for seed, r in zip(FUZZ_SEEDS[quick], results, strict=True)
    ]
    examples = FUZZ_EXAMPLES[quick]
    return Figure(
        number=2,
        name="schemathesis against the server's OpenAPI",
        setup=f"schemathesis {schemathesis_version()} on `debategraph serve` (Aegra on "
        "PostgreSQL, --models, --tokens), every operation of its /openapi.json with "
        f"generated requests signed in as one user, {examples} examples per operation "
        f"and phase, seeds {', '.join(map(str, FUZZ_SEEDS[quick]))}; checks: "
        "not_a_server_error, no_exception_text (tests/schemathesis_hooks.py)",
        rows=rows,
        target="no 5xx and no exception text in any response",
        passed=clean,
        values={"cases": cases, "failures": failures, "seeds": list(FUZZ_SEEDS[quick])},
        why="" if clean else next((r.tail[-600:] for r in results if r.returncode), ""),
        headline=f"{cases} generated requests, {failures} failures",
    )


def schemathesis_version() -> str:
    """The installed schemathesis's version."""
    from importlib.metadata import version

    return version("schemathesis")


def postgres_url() -> str:
    """The PostgreSQL server to use: ``$DEBATEGRAPH_TEST_POSTGRES_URL``, or start one.

    Returns:
        Its URL (also set in the environment, where the test helpers read it).

    Raises:
        SystemExit: One line when there is none and ``.ci/postgres.sh`` cannot start one.
    """
    url = os.environ.get(POSTGRES_ENV, "").strip()
    if url:
        return url
    try:
        proc = subprocess.run(
            ["bash", str(POSTGRES_SCRIPT)], capture_output=True, text=True, timeout=600
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SystemExit(f"serve.py: no PostgreSQL ({POSTGRES_ENV} unset): {exc}") from None
    lines = proc.stdout.strip().splitlines()
    prefix = f"export {POSTGRES_ENV}="
    if proc.returncode != 0 or not lines or not lines[-1].startswith(prefix):
        said = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(
            f"serve.py: no PostgreSQL: {POSTGRES_ENV} is unset and .ci/postgres.sh failed "
            f"(exit {proc.returncode}: {said}); set {POSTGRES_ENV} to a server whose role "
            "may create databases"
        )
    url = lines[-1][len(prefix) :]
    os.environ[POSTGRES_ENV] = url
    return url


def descendants(pid: int) -> list[int]:
    """The process ids of ``pid``'s children, their children, and so on."""
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            children = [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
        for child in children:
            found += [child, *descendants(child)]
    return found


def peak_mb(pid: int) -> float:
    """Peak resident memory (``VmHWM``) of ``pid`` and its descendants, summed, in MiB."""
    total_kb = 0
    for each in [pid, *descendants(pid)]:
        try:
            status = Path(f"/proc/{each}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                total_kb += int(line.split()[1])
    return total_kb / 1024


def error_kind(exc: BaseException) -> str:
    """What went wrong with a debate, without its ids: the same failure reads the same."""
    response = getattr(exc, "response", None)
    try:  # httpx: the request an error or a response belongs to, if it was set
        request = response.request if response is not None else getattr(exc, "request", None)
    except RuntimeError:
        request = None
    where = f" on {request.method} {IDS.sub('{id}', request.url.path)}" if request else ""
    if response is not None and request is not None:
        return f"HTTP {response.status_code}{where}"
    first = IDS.sub("{id}", (str(exc).splitlines() or [""])[0])
    return f"{type(exc).__name__}{where}{': ' + first if first else ''}"[:200]


def cpu_s_of(pid: int) -> float:
    """CPU time (user + system) of ``pid`` and its descendants so far, in seconds."""
    ticks = 0
    for each in [pid, *descendants(pid)]:
        try:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return ticks / os.sysconf("SC_CLK_TCK")


@dataclass
class Side:
    """One way of running the debates, and what each of its batches gave.

    Attributes:
        label: Its name in the figure.
        key: Its key in the JSON values.
        runs: Per batch: ``wall_s``, ``walls_s`` and ``answers`` (per debate),
            ``cpu_s`` (the process's own over the batch), ``peak_rss_mb``, ``calls`` and
            ``max_in_flight`` (the model's counts) and ``errors`` (what went wrong with
            the debates that failed, one item each).
    """

    label: str
    key: str
    runs: list[dict[str, Any]] = field(default_factory=list)


def finished(result: dict[str, Any]) -> list[float]:
    """The times of a batch's debates that ended with the expected answer."""
    return [
        w for w, a in zip(result["walls_s"], result["answers"], strict=True) if str(a) == ANSWER
    ]


class ServerSide(Side):
    """Debates through ``debategraph serve`` with ``langgraph_sdk``'s async client."""

    def __init__(self, url: str, pid: int, model: StubProcess, deadline_s: float) -> None:
        super().__init__("server (Aegra, PostgreSQL)", "server")
        self.url = url
        self.pid = pid
        self.model = model
        self.deadline_s = deadline_s
        self.context = {"model": "stub"}  # the operator's list says where it is

    async def one(self, client: Any) -> tuple[float, Any, str]:
        """One debate: create its thread and run, join it; (seconds, answer, error)."""
        started = time.perf_counter()
        try:
            thread = await client.threads.create()
            thread_id = thread["thread_id"]
            run = await client.runs.create(
                thread_id, GRAPH, input={"question": QUESTION}, context=self.context
            )
            output = await client.runs.join(thread_id, run["run_id"])
            # Aegra's join gives up waiting after 30 s and answers what the run has so far.
            while "answer" not in (output or {}):
                status = (await client.runs.get(thread_id, run["run_id"]))["status"]
                if status not in ("pending", "running"):
                    return time.perf_counter() - started, None, f"run ended {status}"
                if time.perf_counter() - started > self.deadline_s:
                    return time.perf_counter() - started, None, f"run still {status}"
                await asyncio.sleep(0.5)  # a run Aegra lost track of answers at once
                output = await client.runs.join(thread_id, run["run_id"])
        except Exception as exc:  # noqa: BLE001 - counted: the figure is "all finish"
            return time.perf_counter() - started, None, error_kind(exc)
        return time.perf_counter() - started, output["answer"], ""

    async def batch(self, n: int) -> tuple[float, list[tuple[float, Any, str]]]:
        """``n`` debates at once; the batch's wall and each debate's result."""
        from langgraph_sdk import get_client

        client = get_client(url=self.url, api_key=None, timeout=CLIENT_TIMEOUT_S)
        try:
            started = time.perf_counter()
            done = await asyncio.gather(*(self.one(client) for _ in range(n)))
            return time.perf_counter() - started, list(done)
        finally:
            await client.aclose()

    def run(self, n: int) -> dict[str, Any]:
        """Run ``n`` debates at once through the server; record and return the batch."""
        self.model.take_stats()
        cpu0 = cpu_s_of(self.pid)
        wall, done = asyncio.run(self.batch(n))
        cpu = cpu_s_of(self.pid) - cpu0
        stats = self.model.take_stats()
        result = {
            "wall_s": wall,
            "cpu_s": cpu,
            "walls_s": [w for w, _, _ in done],
            "answers": [a for _, a, _ in done],
            "errors": [e or f"answered {a!r}" for _, a, e in done if str(a) != ANSWER],
            "peak_rss_mb": peak_mb(self.pid),
            "calls": stats["calls"],
            "max_in_flight": stats["max_in_flight"],
        }
        self.runs.append(result)
        return result


class InProcessSide(Side):
    """Debates through the public API in a worker process (``benchmarks/workload.py``)."""

    def __init__(self, label: str, key: str, worker: Worker) -> None:
        super().__init__(label, key)
        self.worker = worker

    def run(self, n: int) -> dict[str, Any]:
        """Run ``n`` debates at once in the worker (it checks every answer and call)."""
        result = dict(self.worker.run(n))
        result["calls"] = result["server"]["calls"]
        result["max_in_flight"] = result["server"]["max_in_flight"]
        result["errors"] = []
        self.runs.append(result)
        return result


def start_worker(name: str, db: str, model: StubProcess) -> Worker:
    """Start a ``workload.py debategraph`` process on ``db`` and warm it up with one debate."""
    cmd = [sys.executable, str(HERE / "workload.py"), "debategraph", "--url", model.url]
    proc = subprocess.Popen(
        [*cmd, "--db", db],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    ready = proc.stdout.readline()
    if not ready.startswith("{"):
        proc.kill()
        raise RuntimeError(f"{name} worker did not start: {ready!r}")
    worker = Worker(name, proc, model)
    worker.run(1)
    return worker


def p95(values: Sequence[float]) -> float:
    """The 95th percentile (linear interpolation between the nearest ranks)."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=20, method="inclusive")[-1]


def spread(values: Sequence[float | None], fmt: str) -> str:
    """``median (min-max)`` of per-run values (``-`` for none), or the one value."""
    known = [v for v in values if v is not None]
    if not known:
        return "-"
    text = fmt.format(statistics.median(known))
    if len(known) > 1:
        text += f" ({fmt.format(min(known))}-{fmt.format(max(known))})"
    return text


def median_or_none(values: Sequence[float | None]) -> float | None:
    """The median of the values that are known, or ``None``."""
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def summary(side: Side, n: int) -> dict[str, Any]:
    """One side's figures, per run; times per debate are over the debates that finished."""
    done = [finished(r) for r in side.runs]
    return {
        "n": n,
        "finished": [len(d) for d in done],
        "debates_per_s": [len(d) / r["wall_s"] for d, r in zip(done, side.runs, strict=True)],
        "wall_s": [r["wall_s"] for r in side.runs],
        "p50_s": [statistics.median(d) if d else None for d in done],
        "p95_s": [p95(d) if d else None for d in done],
        "cpu_ms_per_debate": [r["cpu_s"] / n * 1000 for r in side.runs],
        "peak_rss_mb": max(r["peak_rss_mb"] for r in side.runs),
        "calls": [r["calls"] for r in side.runs],
        "expected_calls": n * CALLS,
        "max_in_flight": max(r["max_in_flight"] for r in side.runs),
        "errors": dict(Counter(e for r in side.runs for e in r["errors"]).most_common()),
    }


@dataclass
class ServerLog:
    """What the server's log says.

    Attributes:
        problems: Its lines that name an error or a warning (colours and times removed).
        pool_exhausted: Aegra's own database pool ran out of connections.
    """

    problems: list[str]
    pool_exhausted: bool

    @classmethod
    def read(cls, path: Path) -> ServerLog:
        """Read and scan the log at ``path`` (none: nothing to report)."""
        try:
            text = ANSI.sub("", path.read_text(errors="replace"))
        except OSError:
            return cls([], False)
        lines = (" ".join(line.split()) for line in text.splitlines())
        problems = [TIMESTAMP.sub("", line) for line in lines if LOG_PROBLEM.search(line)]
        return cls(problems, POOL_EXHAUSTED in text)

    def distinct(self) -> list[str]:
        """The problem lines, each once, in order of first appearance."""
        return list(dict.fromkeys(self.problems))


@dataclass
class Served:
    """The server's process and log, kept for the figure."""

    pid: int
    log_path: Path
    startup_s: float


def alternate(sides: Sequence[Side], n: int, runs: int) -> None:
    """``runs`` batches of ``n`` debates per side, the sides taking turns."""
    for index in range(runs):
        for side in sides:
            result = side.run(n)
            print(
                f"  run {index + 1}/{runs} {side.label}: {len(finished(result))}/{n} finished "
                f"in {result['wall_s']:.2f} s",
                flush=True,
            )


@dataclass
class Setup:
    """What one measurement ran with."""

    n: int
    runs: int
    pool_size: int
    deadline_s: float
    sqlite: bool = True


def measure(workdir: Path, setup: Setup) -> tuple[list[Side], Served]:
    """Start the model, databases, server and workers; alternate the batches."""
    aegra_server, models_file, fresh_database = repo_imports()
    workers: list[Worker] = []
    with (
        stub_process(LATENCY_S) as model,
        fresh_database("debategraph_bench_serve") as served_db,
        fresh_database("debategraph_bench_inproc") as inproc_db,
        aegra_server(
            served_db,
            logdir=workdir,
            extra_args=(
                "--pool-size",
                str(setup.pool_size),
                "--models",
                str(models_file(workdir, {"stub": model.url}, timeout=60)),
            ),
        ) as server,
    ):
        try:
            server_side = ServerSide(server.url, server.pid, model, setup.deadline_s)
            warm = server_side.run(1)  # imports, connections, the graph's first run
            server_side.runs.clear()
            if warm["errors"]:
                raise RuntimeError(f"the warm-up debate through the server failed: {warm}")
            workers.append(start_worker("in-process PostgreSQL", inproc_db, model))
            sides: list[Side] = [
                server_side,
                InProcessSide("in-process (PostgreSQL)", "in_process_postgres", workers[-1]),
            ]
            if setup.sqlite:
                db = str(workdir / "in-process.sqlite")
                workers.append(start_worker("in-process SQLite", db, model))
                sides.append(InProcessSide("in-process (SQLite)", "in_process_sqlite", workers[-1]))
            alternate(sides, setup.n, setup.runs)
        finally:
            for worker in workers:
                worker.close()
        return sides, Served(server.pid, server.log_path, server.startup_s)


#: Each side's name in the rows.
LABELS = {
    "server": "server",
    "in_process_postgres": "in-process PG",
    "in_process_sqlite": "in-process SQLite",
}


def side_rows(stats: dict[str, dict[str, Any]]) -> Iterator[tuple[str, str]]:
    """The figure's rows: one per measure, the sides side by side."""

    def row(fmt: Callable[[dict[str, Any]], str]) -> str:
        return " | ".join(f"{LABELS[k]} {fmt(v)}" for k, v in stats.items())

    def ratio(values: Sequence[float | None]) -> str:
        med = median_or_none(values)
        return "" if med is None else f" s = {med / CRITICAL_S:.1f}x"

    yield "finished per run", row(lambda v: ", ".join(f"{f}/{v['n']}" for f in v["finished"]))
    yield "debates per second", row(lambda v: spread(v["debates_per_s"], "{:.1f}"))
    yield "p50 per debate", row(lambda v: spread(v["p50_s"], "{:.2f}") + ratio(v["p50_s"]))
    yield "p95 per debate", row(lambda v: spread(v["p95_s"], "{:.2f}") + ratio(v["p95_s"]))
    yield "peak memory", row(lambda v: f"{v['peak_rss_mb']:.0f} MiB")
    yield (
        "info: CPU per debate (the process's own)",
        row(lambda v: spread(v["cpu_ms_per_debate"], "{:.0f}") + " ms"),
    )
    yield "info: model calls in flight at most", row(lambda v: str(v["max_in_flight"]))


def why_not(log: ServerLog, errors: dict[str, int]) -> str:
    """Why debates did not finish through the server, from its log and the client's errors."""
    said = "; ".join(f"{count} x {kind}" for kind, count in list(errors.items())[:3])
    said = said or "no error, but not every answer was right"
    if log.pool_exhausted:
        return (
            f"a database pool of Aegra's ran out ({POOL_EXHAUSTED!r} in the server's log; the "
            f"client saw: {said}): Aegra 0.6.0 keeps threads and runs through a SQLAlchemy "
            "pool apart from the checkpoints' (debategraph serve sizes it from --pool-size: "
            "half of it, as many again on demand), and a request that waits out the pool's "
            "timeout for one of its connections fails. What would: fewer requests holding a "
            "connection while they wait, or a larger --pool-size within PostgreSQL's "
            "max_connections."
        )
    return f"the client saw: {said}; see the server's log"


def figure_serve(workdir: Path, *, quick: bool, pool_size: int) -> Figure:
    """The figure: N debates at once through the server, beside the in-process API."""
    setup = Setup(
        n=30 if quick else 100,
        runs=1 if quick else 2,
        pool_size=pool_size,
        deadline_s=DEADLINE_S[quick],
    )
    n = setup.n
    sides, served = measure(workdir, setup)
    stats = {s.key: summary(s, n) for s in sides}
    server = stats["server"]
    log = ServerLog.read(served.log_path)
    distinct = log.distinct()
    all_finished = all(f == n for f in server["finished"])
    for kind, count in server["errors"].items():
        WARNINGS.add(f"{count} debate(s) through the server failed: {kind}")
    if distinct:
        WARNINGS.add(
            f"the server's log has {len(log.problems)} error/warning lines; first: "
            f"{distinct[0][:200]}"
        )
    for key, values in stats.items():
        wrong = any(c != values["expected_calls"] for c in values["calls"])
        if wrong and (key != "server" or all_finished):
            WARNINGS.add(f"{LABELS[key]}: model calls {values['calls']}, not {n * CALLS}")
    rows = list(side_rows(stats))
    rows.append(
        (
            "info: server",
            f"1 process, --pool-size {pool_size}, healthy "
            f"{served.startup_s:.1f} s after its spawn; its log: {len(log.problems)} "
            "error/warning lines"
            + (f" ({len(distinct)} distinct; first: {distinct[0][:100]})" if distinct else ""),
        )
    )
    if server["errors"]:
        failures = "; ".join(f"{c} x {k}" for k, c in list(server["errors"].items())[:4])
        rows.append(("info: failed through the server", failures))
    med = {k: median_or_none(v["debates_per_s"]) or 0.0 for k, v in stats.items()}
    p50 = median_or_none(server["p50_s"])
    p95s = median_or_none(server["p95_s"])
    local = stats["in_process_postgres"]
    local_p50 = median_or_none(local["p50_s"])
    times = (
        f"p50 {p50:.2f} s / p95 {p95s:.2f} s ({p50 / CRITICAL_S:.1f}x / "
        f"{p95s / CRITICAL_S:.1f}x the {CRITICAL_S:.1f} s path)"
        if p50 is not None and p95s is not None
        else "no time per debate"
    )
    runs_text = f"{setup.runs} runs each" if setup.runs > 1 else "1 run each"
    return Figure(
        number=1,
        name=f"{n} debates through the server",
        setup=f"{AGENTS} solvers, ring, {ROUNDS} rounds, stub model at "
        f"{LATENCY_S * 1000:.0f} ms per call (critical path {CRITICAL_S:.1f} s): {n} debates "
        f"at once through one `debategraph serve` process (Aegra on PostgreSQL, --pool-size "
        f"{pool_size}; client: langgraph_sdk async, threads.create + runs.create + runs.join "
        "per debate, timed from its first request to the join), beside the same debates "
        "in one process through the public API (what the CLI runs: ainvoke, asyncio.gather) "
        f"on PostgreSQL and on SQLite; alternating, {runs_text}, medians (ranges); times per "
        "debate over those that finished; peak memory: the server's VmHWM, the in-process "
        "worker's peak RSS",
        rows=rows,
        target=f"all {n} debates finish through the server, in every run",
        passed=all_finished,
        advisory=quick,
        values={
            "n": n,
            "runs": setup.runs,
            "pool_size": pool_size,
            "critical_path_s": CRITICAL_S,
            "calls_per_debate": CALLS,
            "server_startup_s": served.startup_s,
            "server_log_problem_count": len(log.problems),
            "server_log_problems": distinct[:20],
            "server_pool_exhausted": log.pool_exhausted,
            "sides": stats,
        },
        why=why_not(log, server["errors"]),
        headline=f"{min(server['finished'])}/{n} finish through the server; "
        f"{med['server']:.1f} debates/s, {times}, peak {server['peak_rss_mb']:.0f} MiB; "
        f"in-process on PostgreSQL {med['in_process_postgres']:.1f} debates/s"
        + (f", p50 {local_p50:.2f} s" if local_p50 is not None else "")
        + f", {local['peak_rss_mb']:.0f} MiB",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the figure; 1 if it fails (outside ``--quick``), else 0."""
    parser = base_parser(__doc__, quick_help="1 run of 30 debates instead of 2 runs of 100")
    parser.add_argument(
        "--pool-size",
        type=int,
        default=POOL_SIZE,
        help=f"the server's --pool-size (default {POOL_SIZE})",
    )
    parser.add_argument(
        "--keep", type=Path, metavar="DIR", help="keep the server's log and the SQLite file in DIR"
    )
    args = parser.parse_args(argv)
    quick: bool = args.quick
    for module in ("aegra_api", "langgraph_sdk", "schemathesis"):
        if importlib.util.find_spec(module) is None:
            raise SystemExit(f"serve.py: {module} is missing: pip install -e '.[dev]'")
    postgres_url()
    return run_benchmark(
        "debategraph serving benchmark",
        [
            lambda workdir: figure_serve(workdir, quick=quick, pool_size=args.pool_size),
            lambda workdir: figure_fuzz(workdir, quick=quick),
        ],
        args=args,
        quick_note="quick mode: 1 run of 30 debates at once per side instead of 2 runs of "
        "100; the figure is advisory",
        warnings=lambda: WARNINGS,
        workdir=args.keep,
        progress=True,
    )


if __name__ == "__main__":
    sys.exit(main())
