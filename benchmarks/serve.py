"""Serving: 100 debates at once through ``debategraph serve`` beside the in-process API.

Four figures. The first (issue 25) is measured against one stub model process (the test suite's
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

The three alternate run by run (2 runs of 100 debates each; ``--quick``: 1 run of 10),
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
(``tests/test_serve_safety.py``); this runs 3 seeds of 25 examples each, every phase
(``--quick``: 1 seed of 1 example, without the coverage phase: its ~1,600 cases a seed are
most of the fuzz's time, and ``tests/test_serve_safety.py`` runs every phase).

Figures 1 and 2 measure one user's load, not the per-user limits of the operator's models
file (issue 47): their models file lifts them (``limits:``). The last two (issue 47)
measure those limits at their defaults, on servers signed in
with ``--tokens``:

* **One user floods, another is served.** The stub model at 200 ms per call; alice's quiet
  time is the median of 3 debates alone (``langgraph_sdk``, after a warm-up). Then bob, from
  a client process of his own (httpx async), sends 200 ``POST /threads/T/runs`` at once
  (``--quick``: 40), one thread of his each; his answers are counted (accepted, 429, and
  whether each 429 carries ``Retry-After``), and as soon as the server has made one of his
  runs alice runs one debate. Target: her time <= 2x her quiet median, every 429 with
  ``Retry-After``. Reported too: the server's CPU and bob's client's over the flood, the
  load average, bob's model calls during alice's debate (his runs were in flight), and
  whether his accepted runs finish.
* **A 50 MB body is refused before it is read whole** (``--quick``: 5 MB, too small for the
  memory target to tell). As alice, after a warm-up debate, one run whose JSON question
  makes the body that size, sent by httpx from a generator, (a) with ``Content-Length``,
  (b) chunked; each on a fresh server process (``--quick``: both on the flood figure's
  server), whose ``VmRSS`` idle before and ``VmHWM`` after are read from ``/proc`` (a peak
  cannot be reset). Target: 413 both ways, the peak <= 1.5x the idle RSS. Reported too:
  how much of the body a client had written when the answer came (the same request by
  hand on a socket, reading while it writes: httpx reads an answer only once it has sent
  the whole body).

``--only throughput|fuzz|fairness`` runs one part (figure 1, 2, or 3 and 4; repeatable).

PostgreSQL: the server named by ``DEBATEGRAPH_TEST_POSTGRES_URL`` (a role that may create
databases); without it the script runs ``.ci/postgres.sh`` (which installs and starts one
where it can) and stops with one line if that fails.

    python benchmarks/serve.py [--quick] [--only PART] [--pool-size N] [--keep DIR]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import re
import secrets
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


#: A run's context: the model by its name in the operator's list (which says where it is).
CONTEXT = {"model": "stub"}
#: The per-user limits (issue 47: the operator's models file's ``limits:``) lifted where a
#: figure measures one user's load rather than the limits: figure 1's 100 debates at once of
#: one (anonymous) user, the fuzz's requests a minute. The body limit stays the default.
LIFTED_LIMITS = {
    "runs_in_flight": 1000,
    "requests_per_minute": 1_000_000,
    "tokens_per_day": 1_000_000_000,
}
#: How a figure's setup says so.
LIFTED_NOTE = ", per-user limits lifted (runs in flight, requests a minute, tokens a day)"


def lifted_note() -> str:
    """How a figure whose server runs with :data:`LIFTED_LIMITS` says so."""
    return LIFTED_NOTE


def operator_models(
    folder: Path, url: str, *, limits: dict[str, int] | None = None, **fields: Any
) -> Path:
    """The operator's models file naming the stub at ``url`` (``tests.aegra_server``'s).

    Args:
        folder: Where to write it.
        url: The stub's base URL (the model ``stub``).
        limits: Per-user limits to set (``limits:``).
        **fields: More fields of the model's entry.
    """
    _, models_file, _ = repo_imports()
    path = Path(models_file(folder, {"stub": url}, **fields))
    if limits:
        data = json.loads(path.read_text())
        path.write_text(json.dumps({**data, "limits": limits}, indent=2))
    return path


def tokens_file(folder: Path, *users: str) -> tuple[Path, dict[str, str]]:
    """A ``serve --tokens`` file giving each user a fresh token; (the file, user -> token)."""
    tokens = {user: secrets.token_urlsafe(32) for user in users}
    path = folder / "tokens.json"
    path.write_text(json.dumps(tokens))
    return path, tokens


#: The fuzz figure's seeds and examples per operation and phase (full, quick).
FUZZ_SEEDS = {False: (11, 22, 33), True: (11,)}
FUZZ_EXAMPLES = {False: 25, True: 1}
#: The fuzz figure's phases (full: every one; quick: all but coverage, whose ~1,600 cases a
#: seed take most of the fuzz's time; ``tests/test_serve_safety.py`` runs the same phases
#: as quick, with 5 examples: coverage runs here, in full mode, alone).
FUZZ_PHASES: dict[bool, tuple[str, ...] | None] = {
    False: None,
    True: ("examples", "fuzzing", "stateful"),
}


def figure_fuzz(workdir: Path, *, quick: bool) -> Figure:
    """The figure: schemathesis finds no 5xx and no exception text on a signed-in server."""
    aegra_server, _, fresh_database = repo_imports()
    from tests.fuzz_server import fuzz

    tokens, token_of = tokens_file(workdir, "fuzzer")
    token = token_of["fuzzer"]
    results = []
    with (
        stub_process(0.0) as model,
        fresh_database("debategraph_bench_fuzz") as db,
        aegra_server(
            db,
            logdir=workdir,
            extra_args=(
                "--models",
                str(operator_models(workdir, model.url, limits=LIFTED_LIMITS)),
                "--tokens",
                str(tokens),
            ),
        ) as server,
    ):
        for seed in FUZZ_SEEDS[quick]:
            print(f"  schemathesis, seed {seed} ...", flush=True)
            results.append(
                fuzz(
                    server.url,
                    token,
                    examples=FUZZ_EXAMPLES[quick],
                    seed=seed,
                    phases=FUZZ_PHASES[quick],
                )
            )
    cases = sum(r.cases for r in results)
    failures = sum(r.failures for r in results)
    clean = all(r.returncode == 0 for r in results) and failures == 0 and cases > 0
    rows = [
        (f"seed {seed}", f"{r.cases} cases, {r.failures} failures, {r.seconds:.0f} s")
        for seed, r in zip(FUZZ_SEEDS[quick], results, strict=True)
    ]
    examples = FUZZ_EXAMPLES[quick]
    phases = FUZZ_PHASES[quick]
    only = f" ({', '.join(phases)} phases only)" if phases else ""
    return Figure(
        number=2,
        name="schemathesis against the server's OpenAPI",
        setup=f"schemathesis {schemathesis_version()} on `debategraph serve` (Aegra on "
        f"PostgreSQL, --models{lifted_note()}, --tokens), every operation of its "
        f"/openapi.json with generated requests signed in as one user, {examples} examples "
        f"per operation and phase{only}, seeds {', '.join(map(str, FUZZ_SEEDS[quick]))}; checks: "
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
        return reachable(url)
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
    return reachable(url)


def reachable(url: str) -> str:
    """``url``, once a connection to it opens; else stop with one line."""
    import psycopg

    try:
        psycopg.connect(url, connect_timeout=10).close()
    except psycopg.Error as exc:
        said = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise SystemExit(f"serve.py: no PostgreSQL at {POSTGRES_ENV}'s URL: {said}") from None
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


def memory_mb(pid: int, key: str) -> float:
    """``key`` (``VmHWM``, ``VmRSS``) of ``pid`` and its descendants from ``/proc``, in MiB."""
    total_kb = 0
    for each in [pid, *descendants(pid)]:
        try:
            status = Path(f"/proc/{each}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith(f"{key}:"):
                total_kb += int(line.split()[1])
    return total_kb / 1024


def peak_mb(pid: int) -> float:
    """Peak resident memory (``VmHWM``) of ``pid`` and its descendants, summed, in MiB."""
    return memory_mb(pid, "VmHWM")


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


def sdk_client(url: str, api_key: str | None = None) -> Any:
    """``langgraph_sdk``'s async client of the server, signed in with ``api_key`` if given."""
    from langgraph_sdk import get_client

    return get_client(url=url, api_key=api_key, timeout=CLIENT_TIMEOUT_S)


async def settled(
    client: Any, thread_id: str, run_id: str, deadline: float
) -> tuple[dict[str, Any] | None, str]:
    """Join a run until its final state (``answer`` in it); (that state, error or ``""``).

    Args:
        client: ``langgraph_sdk``'s async client.
        thread_id: The run's thread.
        run_id: The run.
        deadline: ``time.perf_counter()`` after which a run still going counts as failed.
    """
    output = await client.runs.join(thread_id, run_id)
    # Aegra's join gives up waiting after 30 s and answers what the run has so far.
    while "answer" not in (output or {}):
        status = (await client.runs.get(thread_id, run_id))["status"]
        if status not in ("pending", "running"):
            return None, f"run ended {status}"
        if time.perf_counter() > deadline:
            return None, f"run still {status}"
        await asyncio.sleep(0.5)  # a run Aegra lost track of answers at once
        output = await client.runs.join(thread_id, run_id)
    return output, ""


class ServerSide(Side):
    """Debates through ``debategraph serve`` with ``langgraph_sdk``'s async client."""

    def __init__(
        self,
        url: str,
        pid: int,
        model: StubProcess,
        deadline_s: float,
        api_key: str | None = None,
    ) -> None:
        super().__init__("server (Aegra, PostgreSQL)", "server")
        self.url = url
        self.pid = pid
        self.model = model
        self.deadline_s = deadline_s
        self.api_key = api_key  # a user's token, on a server with sign-in
        self.context = CONTEXT

    async def one(self, client: Any) -> tuple[float, Any, str]:
        """One debate: create its thread and run, join it; (seconds, answer, error)."""
        started = time.perf_counter()
        try:
            thread = await client.threads.create()
            thread_id = thread["thread_id"]
            run = await client.runs.create(
                thread_id, GRAPH, input={"question": QUESTION}, context=self.context
            )
            output, error = await settled(
                client, thread_id, run["run_id"], started + self.deadline_s
            )
        except Exception as exc:  # noqa: BLE001 - counted: the figure is "all finish"
            return time.perf_counter() - started, None, error_kind(exc)
        return time.perf_counter() - started, (output or {}).get("answer"), error

    async def batch(self, n: int) -> tuple[float, list[tuple[float, Any, str]]]:
        """``n`` debates at once; the batch's wall and each debate's result."""
        client = sdk_client(self.url, self.api_key)
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
    aegra_server, _, fresh_database = repo_imports()
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
                str(operator_models(workdir, model.url, limits=LIFTED_LIMITS, timeout=60)),
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
        n=10 if quick else 100,
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
        f"{pool_size}{lifted_note()}; client: langgraph_sdk async, threads.create + "
        "runs.create + runs.join "
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


# -- Issue 47: one user's load does not starve another's; a huge body is refused unread --

#: Bob's run-creating requests at once (full, quick).
FLOOD = {False: 200, True: 40}
#: The big body's size in bytes (full, quick).
BODY_BYTES = {False: 50_000_000, True: 5_000_000}
#: Alice's debates alone, for her quiet time.
QUIET_RUNS = 3
#: Alice's debate during bob's flood may take at most this many times her quiet median.
FAIR_RATIO = 2.0
#: The server's peak memory after the big body may be at most this many times its idle RSS.
PEAK_RATIO = 1.5
#: The pieces a big body is sent in.
CHUNK_BYTES = 64 * 1024
#: The default per-user limits the fairness figures run with (issue 47's interface).
DEFAULT_LIMITS = (
    "4 runs in flight, 600 requests a minute, 2,000,000 tokens a day, bodies of 1,000,000 bytes"
)


def run_body(question: str) -> dict[str, Any]:
    """The body of ``POST /threads/T/runs``: the debate on ``question``, the stub model."""
    return {"assistant_id": GRAPH, "input": {"question": question}, "context": CONTEXT}


@contextlib.contextmanager
def fairness_server(
    workdir: Path, db: str, model: StubProcess, *users: str, pool_size: int = POOL_SIZE
) -> Iterator[tuple[Any, dict[str, str]]]:
    """A server with the default limits and a token per user; (the server, user -> token)."""
    aegra_server, _, _ = repo_imports()
    tokens, token_of = tokens_file(workdir, *users)
    args = ("--pool-size", str(pool_size), "--models", str(operator_models(workdir, model.url)))
    with aegra_server(db, logdir=workdir, extra_args=(*args, "--tokens", str(tokens))) as server:
        yield server, token_of


@dataclass
class Fairness:
    """A fairness figure's server with its model; in ``--quick`` both figures share one.

    Attributes:
        model: The stub model process.
        server: The ``debategraph serve`` process (``tests.aegra_server``'s).
        tokens: Each user's token.
    """

    model: StubProcess
    server: Any
    tokens: dict[str, str]


@contextlib.contextmanager
def fairness_setup(
    workdir: Path, db_name: str, latency_s: float, *users: str, pool_size: int = POOL_SIZE
) -> Iterator[Fairness]:
    """A stub model at ``latency_s``, a fresh database ``db_name`` and a fairness server."""
    _, _, fresh_database = repo_imports()
    with (
        stub_process(latency_s) as model,
        fresh_database(db_name) as db,
        fairness_server(workdir, db, model, *users, pool_size=pool_size) as (server, tokens),
    ):
        yield Fairness(model, server, tokens)


@dataclass
class Flood:
    """What bob's flood and alice's debates gave.

    Attributes:
        quiet: Alice's debates alone: (seconds, answer, error) each.
        answers: Bob's run-creating requests: (status or ``None``, its ``Retry-After``, the
            run's id where one was made, error kind) each.
        flood_s: From bob's first request to his last answer.
        flood_cpu_s: The server's CPU time meanwhile (alice's first requests included).
        client_cpu_s: Bob's client process's own CPU time meanwhile.
        load: The machine's 1-minute load average as the flood began.
        during: Alice's debate while bob's accepted runs were in flight.
        bob_calls: Model calls of bob's runs while alice's debate ran (it starts once the
            server has made one of his runs).
        bob_finished: Bob's accepted runs that ended with the expected answer.
        bob_errors: What went wrong with his others.
    """

    quiet: list[tuple[float, Any, str]]
    answers: list[tuple[int | None, str | None, str | None, str]]
    flood_s: float
    flood_cpu_s: float
    client_cpu_s: float
    load: float
    during: tuple[float, Any, str]
    bob_calls: int
    bob_finished: int
    bob_errors: Counter[str]

    def statuses(self) -> Counter[str]:
        """Bob's answers by status (an error's kind where none came)."""
        return Counter(str(status) if status else error for status, _, _, error in self.answers)

    def refused(self) -> list[str | None]:
        """The ``Retry-After`` of each 429 bob got (``None`` where it has none)."""
        return [after for status, after, _, _ in self.answers if status == 429]


async def create_run(
    http: Any, thread_id: str, made: asyncio.Event
) -> tuple[int | None, str | None, str | None, str]:
    """``POST /threads/T/runs`` (one debate): (status, ``Retry-After``, run id, error kind).

    ``made`` is set once the server has made the run.
    """
    try:
        response = await http.post(f"/threads/{thread_id}/runs", json=run_body(QUESTION))
    except Exception as exc:  # noqa: BLE001 - counted with the answers
        return None, None, None, error_kind(exc)
    run_id = response.json().get("run_id") if response.is_success else None
    if run_id:
        made.set()
    return response.status_code, response.headers.get("retry-after"), run_id, ""


async def bob_run(client: Any, thread_id: str, run_id: str, deadline: float) -> str:
    """Wait for one of bob's accepted runs: ``""`` if it ended with the answer, else why not."""
    try:
        output, error = await settled(client, thread_id, run_id, deadline)
    except Exception as exc:  # noqa: BLE001 - counted
        return error_kind(exc)
    answer = (output or {}).get("answer")
    return error or ("" if str(answer) == ANSWER else f"answered {answer!r}")


async def flood(
    url: str, pid: int, model: StubProcess, tokens: dict[str, str], n: int, deadline_s: float
) -> Flood:
    """Alice alone, then bob's ``n`` runs at once (another process) and alice's debate."""
    alice_side = ServerSide(url, pid, model, deadline_s, api_key=tokens["alice"])
    alice, bob = sdk_client(url, tokens["alice"]), sdk_client(url, tokens["bob"])
    child = None
    try:
        warm = await alice_side.one(alice)  # imports, connections, the graph's first run
        if str(warm[1]) != ANSWER:
            raise RuntimeError(f"alice's warm-up debate failed: {warm}")
        quiet = [await alice_side.one(alice) for _ in range(QUIET_RUNS)]
        print(f"  alice alone: {', '.join(f'{w:.2f} s' for w, _, _ in quiet)}", flush=True)
        made = await asyncio.gather(*(bob.threads.create() for _ in range(n)))
        threads = [t["thread_id"] for t in made]
        # Bob is another client: his own process, so his requests share no event loop
        # with alice's (they share the machine's cores, as the server does).
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            str(Path(__file__).resolve()),
            "--flood-child",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=2**24,
        )
        assert child.stdin is not None and child.stdout is not None
        spec = {"url": url, "token": tokens["bob"], "threads": threads, "pid": pid}
        child.stdin.write(json.dumps(spec).encode() + b"\n")
        await child.stdin.drain()
        if await child.stdout.readline() != b"READY\n":
            raise RuntimeError("bob's flood process did not start")
        model.take_stats()
        load = os.getloadavg()[0]
        child.stdin.write(b"go\n")
        await child.stdin.drain()
        # Alice starts once the server has made one of bob's runs (or answered him all).
        line = await child.stdout.readline()
        window = time.time()
        during = await alice_side.one(alice)
        arrivals = model.take_stats()["arrivals"]
        while line and not line.startswith(b"DONE "):
            line = await child.stdout.readline()
        if not line:
            raise RuntimeError("bob's flood process ended without its answers")
        done = json.loads(line[len(b"DONE ") :])
        answers = [tuple(a) for a in done["answers"]]
        mine = CALLS if str(during[1]) == ANSWER else 0
        calls = sum(1 for at in arrivals if at >= window) - mine
        print(
            f"  bob's flood: {dict(Counter(a[0] for a in answers))} in {done['flood_s']:.2f} s; "
            f"alice during it: {during[0]:.2f} s",
            flush=True,
        )
        accepted = [(t, a[2]) for t, a in zip(threads, answers, strict=True) if a[2]]
        deadline = time.perf_counter() + deadline_s
        ends = await asyncio.gather(*(bob_run(bob, t, r, deadline) for t, r in accepted))
    finally:
        if child is not None and child.returncode is None:
            child.kill()
            await child.wait()
        await alice.aclose()
        await bob.aclose()
    return Flood(
        quiet=quiet,
        answers=answers,
        flood_s=done["flood_s"],
        flood_cpu_s=done["cpu_s"],
        client_cpu_s=done["client_cpu_s"],
        load=load,
        during=during,
        bob_calls=max(calls, 0),
        bob_finished=sum(1 for end in ends if not end),
        bob_errors=Counter(end for end in ends if end),
    )


async def flood_child() -> None:
    """Bob's side of :func:`flood`, in a process of its own (``--flood-child``).

    Reads ``{url, token, threads, pid}`` (one JSON line), opens its client and says
    ``READY``; at the next line sends one run-creating request per thread, all at once;
    says ``MADE`` once the server has made one of the runs, then ``DONE {answers, flood_s,
    cpu_s, client_cpu_s}`` (the server's CPU time meanwhile, and its own).
    """
    import httpx

    spec = json.loads(await asyncio.to_thread(sys.stdin.readline))
    made = asyncio.Event()
    async with httpx.AsyncClient(
        base_url=spec["url"],
        headers={"Authorization": f"Bearer {spec['token']}"},
        timeout=CLIENT_TIMEOUT_S,
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=None),
    ) as http:
        print("READY", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        started, cpu0, mine0 = time.perf_counter(), cpu_s_of(spec["pid"]), time.process_time()

        async def tell() -> None:
            await made.wait()
            print("MADE", flush=True)

        telling = asyncio.ensure_future(tell())
        answers = await asyncio.gather(*(create_run(http, t, made) for t in spec["threads"]))
        flood_s, cpu_s = time.perf_counter() - started, cpu_s_of(spec["pid"]) - cpu0
        client_cpu_s = time.process_time() - mine0
        telling.cancel()
    done = {"answers": answers, "flood_s": flood_s, "cpu_s": cpu_s, "client_cpu_s": client_cpu_s}
    print(f"DONE {json.dumps(done)}", flush=True)


def limits_said() -> str:
    """The per-user limits a fairness figure's server runs with, in words."""
    return f"default per-user limits ({DEFAULT_LIMITS})"


def figure_flood(
    workdir: Path, *, quick: bool, pool_size: int, shared: Fairness | None = None
) -> Figure:
    """The figure: alice's debate while bob floods the server takes <= 2x her quiet time.

    Args:
        workdir: Where the server's files go.
        quick: ``--quick`` (a flood of 40, the figure advisory).
        pool_size: The server's ``--pool-size``.
        shared: A server for alice and bob (the stub model at :data:`LATENCY_S`) to use
            rather than one of its own.
    """
    n = FLOOD[quick]
    folder = workdir / "flood"
    folder.mkdir(exist_ok=True)
    with contextlib.ExitStack() as stack:
        setup = shared or stack.enter_context(
            fairness_setup(
                folder, "debategraph_bench_flood", LATENCY_S, "alice", "bob", pool_size=pool_size
            )
        )
        server, model = setup.server, setup.model
        result = asyncio.run(
            flood(server.url, server.pid, model, setup.tokens, n, DEADLINE_S[quick])
        )
        log = ServerLog.read(server.log_path)
    quiet = [w for w, a, _ in result.quiet if str(a) == ANSWER]
    quiet_s = statistics.median(quiet) if quiet else None
    alice_s, alice_answer, alice_error = result.during
    alice_ok = str(alice_answer) == ANSWER
    ratio = alice_s / quiet_s if quiet_s and alice_ok else None
    statuses = result.statuses()
    refused = result.refused()
    with_after = sum(1 for after in refused if after)
    accepted = sum(1 for _, _, run_id, _ in result.answers if run_id)
    others = {k: v for k, v in statuses.items() if k not in ("200", "429")}
    passed = ratio is not None and ratio <= FAIR_RATIO and with_after == len(refused)
    said = f"{alice_s:.2f} s" + (f" = {ratio:.1f}x her quiet median" if ratio else "")
    if not alice_ok:
        said += f", failed: {alice_error or f'answered {alice_answer!r}'}"
    rows = [
        (
            f"alice alone ({QUIET_RUNS} debates)",
            f"median {quiet_s:.2f} s ({', '.join(f'{w:.2f}' for w, _, _ in result.quiet)})"
            if quiet_s
            else "no debate finished",
        ),
        (
            "bob's flood",
            f"{n} run-creating requests at once, answered in {result.flood_s:.2f} s: "
            f"{accepted} accepted, {len(refused)} refused with 429 ({with_after} with "
            "Retry-After)" + (f", other: {others}" if others else ""),
        ),
        (
            "info: CPU meanwhile",
            f"the server {result.flood_cpu_s:.2f} s ({result.flood_cpu_s / n * 1000:.1f} ms a "
            f"request, bob's runs and alice's first requests included), bob's client "
            f"{result.client_cpu_s:.2f} s; load average {result.load:.1f} on "
            f"{os.cpu_count()} CPUs as it began",
        ),
        ("alice during it", f"{said}; bob's model calls meanwhile: {result.bob_calls}"),
        (
            "info: bob's accepted runs",
            f"{result.bob_finished}/{accepted} finished with the answer"
            + (f"; {dict(result.bob_errors.most_common(3))}" if result.bob_errors else ""),
        ),
    ]
    # Aegra logs each 4xx as a warning: bob's 429s are what the figure counts, not problems.
    problems = [line for line in log.problems if '" 429' not in line]
    if problems:
        first = problems[0][:120]
        rows.append(("info: server log", f"{len(problems)} error/warning lines; first: {first}"))
    if not refused:
        why = (
            f"bob's {n} requests were all taken ({accepted} runs made, none refused with "
            "429): his runs in flight were not capped (limits.runs_in_flight), so they "
            "share the model and the server's CPU with alice's debate"
        )
    elif with_after < len(refused):
        why = f"{len(refused) - with_after} of bob's {len(refused)} 429s carry no Retry-After"
    elif not alice_ok:
        why = f"alice's debate during the flood did not finish: {said}"
    else:
        why = (
            f"bob was held to {accepted} runs ({len(refused)} refused), yet alice's debate "
            f"took {said}: meanwhile the server used {result.flood_cpu_s:.2f} s of CPU and "
            f"bob's client {result.client_cpu_s:.2f} s, on {os.cpu_count()} CPUs at load "
            f"{result.load:.1f}: alice's requests waited for a core. What would: a refusal "
            "that costs the server less (refuse before the thread's ownership is looked up), "
            "or a machine with cores to spare for the client"
        )
    return Figure(
        number=3,
        name="One user floods, another is served",
        setup=f"`debategraph serve` (Aegra on PostgreSQL, --pool-size {pool_size}) signed in "
        f"with --tokens for alice and bob, {limits_said()}, the stub model at "
        f"{LATENCY_S * 1000:.0f} ms per call ({AGENTS} solvers, {ROUNDS} "
        f"rounds: a {CRITICAL_S:.1f} s path); alice's quiet time: the median of "
        f"{QUIET_RUNS} debates alone (langgraph_sdk async: threads.create + runs.create + "
        f"runs.join, after a warm-up); then bob sends {n} POST /threads/T/runs at once "
        "(httpx async, from a client process of his own, asyncio.gather, a thread of his "
        "each) and, as soon as the server has "
        "made one of his runs, alice runs one debate, while his accepted runs are in flight "
        "and the rest of his requests are answered",
        rows=rows,
        target=f"alice's debate during the flood <= {FAIR_RATIO:.0f}x her quiet median; "
        "every 429 carries Retry-After",
        passed=passed,
        advisory=quick,
        values={
            "flood": n,
            "quiet_s": [w for w, _, _ in result.quiet],
            "quiet_median_s": quiet_s,
            "during_s": alice_s,
            "during_finished": alice_ok,
            "ratio": ratio,
            "statuses": dict(statuses),
            "accepted": accepted,
            "refused_429": len(refused),
            "retry_after": with_after,
            "retry_after_values": sorted(set(filter(None, refused)))[:5],
            "flood_s": result.flood_s,
            "flood_server_cpu_s": result.flood_cpu_s,
            "flood_client_cpu_s": result.client_cpu_s,
            "load_at_flood": result.load,
            "bob_calls_during": result.bob_calls,
            "bob_finished": result.bob_finished,
            "bob_errors": dict(result.bob_errors),
            "server_log_problems": list(dict.fromkeys(problems))[:10],
        },
        why=why,
        notes=[]
        if result.bob_calls
        else ["bob's runs made no model call while alice's debate ran: it did not overlap them"],
        headline=f"alice {said} while bob floods ({accepted} of his {n} runs accepted, "
        f"{len(refused)} refused with 429)",
    )


@dataclass
class BigBody:
    """One big body sent to the server, and what its memory did.

    Attributes:
        how: ``Content-Length`` or ``chunked``.
        status: The answer's status (``None``: no answer, see ``error``).
        line: The answer's message (or the error).
        sent: Bytes of the body the client had handed to the connection when it ended.
        seconds: From the first byte sent to the answer.
        idle_rss_mb: The server's ``VmRSS`` before, idle after a warm-up debate.
        hwm_before_mb: Its ``VmHWM`` then (its start-up's peak).
        hwm_after_mb: Its ``VmHWM`` once answered.
        probe_status: The same request by hand (:func:`answered_after`), after: its status.
        probe_written: The body bytes it had written when that status came.
    """

    how: str
    status: int | None
    line: str
    sent: int
    seconds: float
    idle_rss_mb: float
    hwm_before_mb: float
    hwm_after_mb: float
    probe_status: int | None
    probe_written: int

    @property
    def ratio(self) -> float:
        """The peak after over the idle RSS."""
        return self.hwm_after_mb / self.idle_rss_mb


async def warm_thread(url: str, pid: int, model: StubProcess, token: str) -> str:
    """A warm-up debate as the user of ``token``, then a thread of theirs; its id."""
    client = sdk_client(url, token)
    try:
        warm = await ServerSide(url, pid, model, DEADLINE_S[True], api_key=token).one(client)
        if str(warm[1]) != ANSWER:
            raise RuntimeError(f"the warm-up debate failed: {warm}")
        return str((await client.threads.create())["thread_id"])
    finally:
        await client.aclose()


def body_pieces(size: int) -> Iterator[bytes]:
    """A run's body of ``size`` bytes (its question's ``x`` fills it), in pieces."""
    marker = "@question@"  # the question's place in the body, between its quotes
    head, tail = json.dumps(run_body(marker)).encode().split(marker.encode())
    filler = size - len(head) - len(tail)
    piece = b"x" * CHUNK_BYTES
    yield head
    for _ in range(filler // CHUNK_BYTES):
        yield piece
    yield piece[: filler % CHUNK_BYTES]
    yield tail


def big_headers(token: str, size: int, *, chunked: bool) -> dict[str, str]:
    """A big run's headers: signed in, JSON, ``Content-Length`` unless ``chunked``."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    return headers if chunked else {**headers, "Content-Length": str(size)}


def send_big(url: str, token: str, thread_id: str, size: int, *, chunked: bool) -> dict[str, Any]:
    """POST a run of ``size`` bytes with httpx (a generator body); what came back.

    With ``Content-Length`` unless ``chunked`` (then httpx sends it chunked). A run the
    server makes of it is cancelled at once.
    """
    import httpx

    sent = 0

    def body() -> Iterator[bytes]:
        nonlocal sent
        for part in body_pieces(size):
            sent += len(part)
            yield part

    headers = big_headers(token, size, chunked=chunked)
    with httpx.Client(base_url=url, timeout=CLIENT_TIMEOUT_S) as http:
        started = time.perf_counter()
        try:
            response = http.post(f"/threads/{thread_id}/runs", content=body(), headers=headers)
        except httpx.HTTPError as exc:
            seconds = time.perf_counter() - started
            return {"status": None, "line": error_kind(exc), "sent": sent, "seconds": seconds}
        seconds = time.perf_counter() - started
        try:
            answer = response.json()
        except ValueError:
            answer = {"message": response.text[:200]}
        run_id = answer.get("run_id") if response.is_success else None
        if run_id:  # the body was taken: stop its run (a huge question for every solver)
            signed_in = {"Authorization": headers["Authorization"]}
            with contextlib.suppress(httpx.HTTPError):
                http.post(f"/threads/{thread_id}/runs/{run_id}/cancel", headers=signed_in)
    said = answer.get("message") or answer.get("detail") or (f"run {run_id}" if run_id else "")
    return {
        "status": response.status_code,
        "line": str(said)[:160],
        "sent": sent,
        "seconds": seconds,
    }


async def answered_after(
    url: str, token: str, thread_id: str, size: int, *, chunked: bool
) -> tuple[int | None, int]:
    """The same request by hand, reading while it writes: (status, body bytes written by then).

    httpx reads an answer only once it has sent the whole body, so this tells how much of
    the body the client had written (to the connection) when the server's status line came.
    """
    from urllib.parse import urlsplit

    where = urlsplit(url)
    reader, writer = await asyncio.open_connection(where.hostname, where.port)
    headers = big_headers(token, size, chunked=chunked)
    if chunked:
        headers["Transfer-Encoding"] = "chunked"
    lines = [f"POST /threads/{thread_id}/runs HTTP/1.1", f"Host: {where.netloc}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    status_line = asyncio.ensure_future(reader.readline())
    written = 0
    try:
        for part in body_pieces(size):
            if status_line.done():
                break
            writer.write(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
            await writer.drain()
            written += len(part)
            await asyncio.sleep(0)  # the status line's turn, if it came
        else:
            writer.write(b"0\r\n\r\n" if chunked else b"")
        first = await asyncio.wait_for(status_line, CLIENT_TIMEOUT_S)
    except (TimeoutError, OSError):  # the server closed it: its answer may be in
        first = status_line.result() if status_line.done() and not status_line.exception() else b""
    finally:
        writer.close()
        status_line.cancel()
    parts = first.split()
    return (int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None), written


def big_body(server: Any, token: str, model: StubProcess, size: int, *, chunked: bool) -> BigBody:
    """Send one big body to ``server`` as the user of ``token``; measure its memory."""
    thread_id = asyncio.run(warm_thread(server.url, server.pid, model, token))
    idle = memory_mb(server.pid, "VmRSS")
    before = memory_mb(server.pid, "VmHWM")
    sent = send_big(server.url, token, thread_id, size, chunked=chunked)
    after = memory_mb(server.pid, "VmHWM")
    probe = asyncio.run(answered_after(server.url, token, thread_id, size, chunked=chunked))
    how = "chunked" if chunked else "Content-Length"
    print(
        f"  {how}: {sent['status']}, peak {after:.0f} MiB (idle {idle:.0f} MiB); by hand: "
        f"{probe[0]} after {probe[1]:,} bytes written",
        flush=True,
    )
    return BigBody(
        how,
        sent["status"],
        sent["line"],
        sent["sent"],
        sent["seconds"],
        idle,
        before,
        after,
        *probe,
    )


def figure_body(workdir: Path, *, quick: bool, shared: Fairness | None = None) -> Figure:
    """The figure: a 50 MB body gets 413 before the server has read it whole.

    Args:
        workdir: Where the servers' files go.
        quick: ``--quick`` (a 5 MB body, the figure advisory).
        shared: A server (alice signed in) for both cases, rather than a fresh one each.
    """
    _, _, fresh_database = repo_imports()
    size = BODY_BYTES[quick]
    folder = workdir / "body"
    folder.mkdir(exist_ok=True)
    cases = []
    if shared is not None:
        for chunked in (False, True):
            alice = shared.tokens["alice"]
            cases.append(big_body(shared.server, alice, shared.model, size, chunked=chunked))
    else:
        with stub_process(0.0) as model, fresh_database("debategraph_bench_body") as db:
            for chunked in (False, True):  # each case on a fresh server, for a peak of its own
                with fairness_server(folder, db, model, "alice") as (server, tokens):
                    cases.append(big_body(server, tokens["alice"], model, size, chunked=chunked))
    refused = all(c.status == 413 for c in cases)
    small = all(c.ratio <= PEAK_RATIO for c in cases)
    rows = [
        (
            c.how,
            f"{c.status or 'no answer'} ({c.line}) in {c.seconds:.2f} s; server peak "
            f"{c.hwm_after_mb:.0f} MiB = {c.ratio:.2f}x its idle {c.idle_rss_mb:.0f} MiB "
            f"(peak before: {c.hwm_before_mb:.0f} MiB)",
        )
        for c in cases
    ]
    rows.append(
        (
            "info: when the answer came",
            "; ".join(
                f"{c.how}: {c.probe_status or 'no answer'} with {c.probe_written:,} of "
                f"{size:,} bytes written"
                for c in cases
            )
            + " (by hand, reading while writing; what was written includes what the "
            "sockets' buffers hold unread, up to a few MB; httpx writes the whole body "
            "before it reads the answer)",
        )
    )
    mb = f"{size / 1e6:.0f} MB"
    if not refused:
        taken = ", ".join(f"{c.how}: {c.status or c.line}" for c in cases if c.status != 413)
        why = (
            f"the {mb} body was not refused with 413 ({taken}): the server read it whole "
            "(limits.body_bytes refuses by Content-Length before reading, and while a "
            "chunked body streams)"
        )
    elif not small:
        why = "413 came, but only after the server had held the body: " + "; ".join(
            f"{c.how} peak {c.ratio:.2f}x idle" for c in cases if c.ratio > PEAK_RATIO
        )
    else:
        why = ""
    notes = (
        [f"quick: a {mb} body, too small for the memory target to tell reading it whole"]
        if quick
        else []
    )
    if shared is not None:
        notes.append(
            "both on the flood figure's server, after its flood (the second's peak may be the "
            "first's)"
        )
    return Figure(
        number=4,
        name=f"A {mb} body is refused before it is read whole",
        setup=f"`debategraph serve` (Aegra on PostgreSQL) signed in with --tokens, "
        f"{limits_said()}; as alice, after a warm-up debate, one POST "
        f"/threads/T/runs of {size:,} bytes (a JSON question of that size, httpx, a "
        f"generator body in {CHUNK_BYTES // 1024} KiB pieces), (a) with Content-Length, "
        f"(b) chunked without it, {'both on one' if shared else 'each on a fresh'} server "
        "process; memory: the server's "
        "VmRSS idle before, its VmHWM (peak) once answered, from /proc; then the same "
        "request by hand on a socket, to see how much of the body was written when the "
        "answer came",
        rows=rows,
        target=f"413 both ways, the server's peak <= {PEAK_RATIO}x its idle RSS",
        passed=refused and small,
        advisory=quick,
        values={
            "bytes": size,
            "cases": {
                c.how: {
                    "status": c.status,
                    "line": c.line,
                    "sent_bytes": c.sent,
                    "probe_status": c.probe_status,
                    "probe_written_bytes": c.probe_written,
                    "seconds": c.seconds,
                    "idle_rss_mb": c.idle_rss_mb,
                    "hwm_before_mb": c.hwm_before_mb,
                    "hwm_after_mb": c.hwm_after_mb,
                    "peak_over_idle": c.ratio,
                }
                for c in cases
            },
        },
        why=why,
        notes=notes,
        headline=", ".join(
            f"{c.how}: {c.status or 'no answer'}, peak {c.ratio:.2f}x idle" for c in cases
        ),
    )


def figures_fairness(workdir: Path, *, quick: bool, pool_size: int) -> list[Figure]:
    """Figures 3 and 4; in ``--quick`` on one server (the flood's), a start-up less."""
    if not quick:
        return [
            figure_flood(workdir, quick=quick, pool_size=pool_size),
            figure_body(workdir, quick=quick),
        ]
    folder = workdir / "fairness"
    folder.mkdir(exist_ok=True)
    users = ("alice", "bob")
    db_name = "debategraph_bench_flood"
    with fairness_setup(folder, db_name, LATENCY_S, *users, pool_size=pool_size) as shared:
        return [
            figure_flood(workdir, quick=quick, pool_size=pool_size, shared=shared),
            figure_body(workdir, quick=quick, shared=shared),
        ]


#: The parts ``--only`` picks: issue 25's throughput, issue 35's fuzz, issue 47's fairness.
PARTS = ("throughput", "fuzz", "fairness")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the figures; 1 if one fails (outside ``--quick``), else 0."""
    parser = base_parser(
        __doc__,
        quick_help="1 run of 10 debates instead of 2 runs of 100; the fuzz 1 seed of 1 "
        "example, without the coverage phase; the fairness figures: a flood of 40, a body of "
        "5 MB, both on one server",
    )
    parser.add_argument(
        "--pool-size",
        type=int,
        default=POOL_SIZE,
        help=f"the server's --pool-size (default {POOL_SIZE})",
    )
    parser.add_argument(
        "--keep", type=Path, metavar="DIR", help="keep the server's log and the SQLite file in DIR"
    )
    parser.add_argument(
        "--only",
        choices=PARTS,
        action="append",
        help="run only this part (repeatable): throughput (figure 1), fuzz (2), fairness "
        "(3 and 4); default: all",
    )
    parser.add_argument("--flood-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.flood_child:  # bob's process in the fairness figure
        asyncio.run(flood_child())
        return 0
    quick: bool = args.quick
    for module in ("aegra_api", "langgraph_sdk", "schemathesis"):
        if importlib.util.find_spec(module) is None:
            raise SystemExit(f"serve.py: {module} is missing: pip install -e '.[dev]'")
    postgres_url()
    parts = args.only or PARTS
    steps = {
        "throughput": [
            lambda workdir: figure_serve(workdir, quick=quick, pool_size=args.pool_size)
        ],
        "fuzz": [lambda workdir: figure_fuzz(workdir, quick=quick)],
        "fairness": [
            lambda workdir: figures_fairness(workdir, quick=quick, pool_size=args.pool_size)
        ],
    }
    repo_imports()
    from tests.aegra_server import AegraServerError

    try:
        return run_benchmark(
            "debategraph serving benchmark",
            [step for part in PARTS if part in parts for step in steps[part]],
            args=args,
            quick_note="quick mode: 1 run of 10 debates at once per side instead of 2 runs "
            "of 100; the fuzz 1 seed of 1 example without the coverage phase; the fairness "
            f"figures on one server, with a flood of {FLOOD[True]} requests and a body "
            f"of {BODY_BYTES[True]:,} bytes; timing figures are advisory",
            warnings=lambda: WARNINGS,
            workdir=args.keep,
            progress=True,
        )
    except AegraServerError as exc:
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        said = f"{lines[0]} (last log line: {lines[-1][:200]})" if len(lines) > 1 else lines[0]
        raise SystemExit(f"serve.py: debategraph serve did not start: {said}") from None


if __name__ == "__main__":
    sys.exit(main())
