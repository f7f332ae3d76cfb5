"""Durability benchmarks of the ``debategraph`` CLI: kill -9 recovery and shared SQLite files.

Two figures, each printed with its target and PASS/FAIL (same format as
the other benchmarks: ``Figure`` and the main loop come from ``benchmarks/harness.py``):

1. kill -9 recovery: per trial a fresh SQLite file and a fresh simulated OpenAI server
   (in this process; every solver answers 18, 100-250 ms per call). ``debategraph solve``
   (4 solvers x 4 rounds, ``--max-retries 0``) runs as a subprocess and gets SIGKILL at a
   seeded random moment; in each group of 5 trials (see :func:`kill_plan`): 1 during
   start-up, before the first model request (alternately before the database file
   exists, and while the thread is recorded and its first checkpoints written); 2
   uniformly over the debate (from the first request to 0.1 s past the last answer of an
   uninterrupted run); 2 within 20 ms after a random answer (the window in which a
   finished call's result is in transit or being saved, which uniform kills almost never
   hit; ``--quick``: 2 trials, one during start-up and one within 20 ms after an answer).
   Then ``debategraph resume`` runs once; if the kill came before the thread was
   recorded (``unknown thread id``) and its id was never printed, the trial counts as
   "not started" and ``solve`` runs again under the same thread id. Every call
   is identified as (solver, round) by a round tag the responder puts in its reasoning, so
   repeated calls are named. Target: every trial finishes (``rounds_completed``, 4 rounds),
   and the model requests the server received in a trial (killed run + resume) are at most
   the 16 of an uninterrupted run plus the calls in flight at the kill, per trial and
   summed. In flight: received by the server and not answered, or answered at most the
   transit window before SIGKILL: such an answer may not have reached the killed
   process's SQLite file yet, and no durability setting can save it. The window is
   ``TRANSIT_MS`` (20 ms), or 3x the slowest answer-to-file time of the uninterrupted
   run if that is longer, at most 100 ms (a loaded machine saves more slowly; the
   figure prints both). A
   call answered earlier and sent again is a durability gap and fails the figure; the
   figure also prints the bound without the transit window. A trial whose thread id was
   printed and which ``resume`` then calls unknown fails.
2. multi-process SQLite: P processes at once, each running D debates one after another
   (every debate is its own ``debategraph solve ... --json`` CLI process, 3 solvers x 2
   rounds, 20 ms per call), all on ONE SQLite file. Target: all P x D finish
   (``rounds_completed``, exit 0), no lock errors (``locked``/``busy`` on any stderr), and
   ``debategraph threads --json`` lists all P x D threads as finished.

Usage::

    .venv/bin/python benchmarks/durability.py               # 20 trials, 8 x 5 debates
    .venv/bin/python benchmarks/durability.py --quick       # 2 trials, 2 x 1 debates
    .venv/bin/python benchmarks/durability.py --trials 50 --seed 7 --json out.json
    .venv/bin/python benchmarks/durability.py --keep /tmp/dur  # keep the SQLite files

Exit status 1 if a figure fails, else 0.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

# benchmarks/ is on sys.path when run as a script
from harness import Figure, base_parser, cli, run_benchmark, stub_model_args

from debategraph.checkpoints import open_checkpointer, thread_config

if TYPE_CHECKING:
    from tests.openai_stub import StubOpenAIServer

REPO_ROOT = Path(__file__).resolve().parents[1]
QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in total?"

KILL_AGENTS, KILL_ROUNDS = 4, 4
KILL_CALLS = KILL_AGENTS * KILL_ROUNDS
KILL_LATENCY_S, KILL_JITTER_S = 0.10, 0.15
#: An answer produced this recently before SIGKILL may still be on its way into the
#: killed process (HTTP, parsing, the SQLite write of the task's result): it counts as in
#: flight. On a 2-CPU box such answers were lost up to 9.3 ms before the kill, with
#: durability "sync" and "async" alike; none older was ever lost.
TRANSIT_MS = 20.0
#: The most the calibrated transit window may be (ms).
TRANSIT_CAP_MS = 100.0

MP_AGENTS, MP_ROUNDS = 3, 2
MP_LATENCY_S = 0.02
LOCK_PATTERN = re.compile(r"locked|busy", re.IGNORECASE)

PROCESS_TIMEOUT_S = 180.0
ROUND_TAG = re.compile(r"\(round (\d+)\)")


# --------------------------------------------------------------------------
# Simulated endpoint
# --------------------------------------------------------------------------


def repo_imports() -> tuple[Any, Any, Any]:
    """The stub server and the test suite's responder helpers (imported, not copied)."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from tests.conftest import answer_18, solver_of
    from tests.openai_stub import StubOpenAIServer

    return StubOpenAIServer, answer_18, solver_of


def call_round(request: dict[str, Any]) -> int:
    """The round a request belongs to: one past the newest round tag in its prompt."""
    tags = [int(t) for t in ROUND_TAG.findall(json.dumps(request.get("messages")))]
    return max(tags, default=0) + 1


class TaggedResponder:
    """``answer_18`` with a ``(round N)`` tag in the reasoning and per-call jitter.

    The tag makes every request identifiable as (solver, round): later rounds quote the
    earlier answers, so a repeated call is recognised even though every answer is 18.
    Jitter is a function of (seed, solver, round): a repeated call takes as long as the
    first. ``log`` holds (solver, round, monotonic time the answer was produced); the server
    counts the call as answered right after.
    """

    def __init__(self, jitter_s: float, seed: int) -> None:
        _server, self._answer, self._solver_of = repo_imports()
        self.jitter_s = jitter_s
        self.seed = seed
        self.log: list[tuple[str, int, float]] = []
        self._lock = threading.Lock()

    def key(self, request: dict[str, Any]) -> tuple[str, int]:
        """(solver, round) of a request."""
        return str(self._solver_of(request)), call_round(request)

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        solver, rnd = self.key(request)
        if self.jitter_s > 0:
            digest = hashlib.sha256(f"{self.seed}:{solver}:{rnd}".encode()).digest()
            time.sleep(self.jitter_s * digest[0] / 255)
        reply = dict(self._answer(request))
        reply["reasoning"] = f"{reply['reasoning']} (round {rnd})"
        with self._lock:
            self.log.append((solver, rnd, time.monotonic()))
        return reply


def solve_args(
    server: StubOpenAIServer, db: Path, thread: str, agents: int, rounds: int
) -> list[str]:
    """``debategraph solve`` against the stub server."""
    args = ["solve", QUESTION, "--agents", str(agents), "--rounds", str(rounds)]
    return cli(*args, *stub_model_args(server.url, db), "--thread", thread, "--json")


@dataclass
class CliRun:
    """One finished CLI process."""

    code: int
    stdout: str
    stderr: str
    wall_s: float
    timed_out: bool = False

    def result(self) -> dict[str, Any] | None:
        """The ``--json`` result on the last stdout line, if any."""
        for line in reversed(self.stdout.strip().splitlines()):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            return value if isinstance(value, dict) else None
        return None


def run_cli(cmd: Sequence[str], cwd: Path, timeout: float = PROCESS_TIMEOUT_S) -> CliRun:
    """Run a CLI process to the end (killed and reported as timed out past ``timeout``)."""
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            list(cmd), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:

        def text(raw: str | bytes | None) -> str:
            return raw.decode(errors="replace") if isinstance(raw, bytes) else raw or ""

        return CliRun(-9, text(exc.stdout), text(exc.stderr), time.perf_counter() - started, True)
    return CliRun(proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - started)


def good_result(result: dict[str, Any] | None, rounds: int) -> bool:
    """A finished debate of ``rounds`` rounds."""
    return (
        result is not None
        and result.get("termination_reason") == "rounds_completed"
        and len(result.get("rounds") or []) == rounds
    )


def tail(text: str, lines: int = 3) -> str:
    """The last lines of a process's output, on one line."""
    return " | ".join(text.strip().splitlines()[-lines:])


# --------------------------------------------------------------------------
# Checkpoint inspection
# --------------------------------------------------------------------------


def persisted_state(db: Path, thread: str) -> str:
    """What a thread's latest checkpoint holds: step, round, solvers whose writes were saved."""
    if not db.exists():
        return "no database file"
    with open_checkpointer(db) as saver:
        tup = saver.get_tuple(thread_config(thread))
        if tup is None:
            return "no checkpoint"
        step = (tup.metadata or {}).get("step")
        values = tup.checkpoint.get("channel_values", {})
        nxt = sorted(ch.removeprefix("branch:to:") for ch in values if ch.startswith("branch:to:"))
        saved = sorted({str(v) for _t, ch, v in tup.pending_writes or [] if ch.startswith("join:")})
        other = sorted({ch for _t, ch, _v in tup.pending_writes or [] if ch == "rounds"})
        parts = [f"step {step}", f"round {values.get('round', 0)}"]
        if nxt:
            parts.append(f"next {'+'.join(nxt)}")
        if saved:
            parts.append(f"writes saved for {', '.join(saved)}")
        if other:
            parts.append("close_round writes saved")
        return ", ".join(parts)


def snapshot_db(db: Path, dest: Path) -> None:
    """Copy a SQLite file with its WAL (no process has it open)."""
    for suffix in ("", "-wal"):
        src = Path(f"{db}{suffix}")
        if src.exists():
            shutil.copyfile(src, f"{dest}{suffix}")


# --------------------------------------------------------------------------
# Figure 1: kill -9 recovery
# --------------------------------------------------------------------------


@dataclass
class Baseline:
    """An uninterrupted run."""

    requests: int
    db_file_s: float
    first_request_s: float
    last_answer_s: float
    wall_s: float
    #: Per call, ms from the server producing the answer to its turn being in the file.
    persist_ms: list[float] = field(default_factory=list)

    def transit_ms(self, floor_ms: float = TRANSIT_MS) -> float:
        """The transit window: 3x the slowest save seen uninterrupted, within bounds.

        How long an answer takes to reach the file depends on how loaded the machine is
        (parsing, the node's return, LangGraph's background write all share two cores
        with the server); an answer older than three times the slowest save of the
        uninterrupted run, yet sent again on resume, is a durability gap. At least
        ``floor_ms``; at most :data:`TRANSIT_CAP_MS`, so that saves which regress (say,
        deferred to the end of a step) cannot widen the window until it hides them.
        """
        return min(TRANSIT_CAP_MS, max(floor_ms, 3 * max(self.persist_ms, default=0.0)))


@dataclass
class KillTrial:
    """One kill-and-resume trial.

    Calls are (solver, round) labels. "In flight" at the kill: received by the server and
    not answered yet, or answered less than the transit window before the kill (the answer
    is still on its way into the killed process: HTTP, parsing, the SQLite write).
    """

    trial: int
    thread: str
    mode: str
    planned: str
    kill_after_s: float
    kill_since_first_request_s: float | None
    solve_exited_before_kill: bool
    received_at_kill: int
    answered_at_kill: int
    server_calls_at_kill: int
    unanswered_at_kill: list[str]
    in_transit_at_kill: list[str]
    persisted_at_kill: str
    not_started: int
    resumes: int
    finished: bool
    termination_reason: str | None
    rounds: int
    usage_calls: int | None
    total_requests: int
    repeated: list[str] = field(default_factory=list)
    repeated_answered_before_kill: list[str] = field(default_factory=list)
    answer_age_at_kill_ms: dict[str, float] = field(default_factory=dict)
    error: str | None = None

    @property
    def in_flight(self) -> int:
        """Calls in flight at the kill (unanswered + in transit)."""
        return len(self.unanswered_at_kill) + len(self.in_transit_at_kill)

    @property
    def bound(self) -> int:
        """Requests allowed: an uninterrupted run's plus those in flight at the kill."""
        return KILL_CALLS + self.in_flight

    @property
    def excess(self) -> int:
        """Requests beyond the bound (<= 0 is good)."""
        return self.total_requests - self.bound

    @property
    def strict_excess(self) -> int:
        """Requests beyond 16 + the calls the server had not answered (no transit window)."""
        return self.total_requests - KILL_CALLS - len(self.unanswered_at_kill)

    @property
    def lost(self) -> list[str]:
        """Calls answered before the transit window yet sent again: a durability gap."""
        return [k for k in self.repeated_answered_before_kill if k not in self.in_transit_at_kill]

    def line(self) -> str:
        """One line for the console."""
        if self.kill_since_first_request_s is not None:
            when = f"+{self.kill_since_first_request_s:.3f}s after 1st request"
        elif self.received_at_kill == 0:
            when = f"{self.kill_after_s:.3f}s after spawn, before any request"
        else:
            when = f"{self.kill_after_s:.3f}s after spawn (requests had started)"
        when = f"[{self.mode}: {self.planned}] {when}"
        if self.solve_exited_before_kill:
            when += " (solve had already exited)"
        flight = ", ".join(self.unanswered_at_kill) or "-"
        text = (
            f"{self.thread:<4} kill {when}; answered {self.answered_at_kill}, "
            f"unanswered {len(self.unanswered_at_kill)} [{flight}]"
        )
        if self.in_transit_at_kill:
            transit = ", ".join(
                f"{k} {self.answer_age_at_kill_ms[k]:.1f}ms" for k in self.in_transit_at_kill
            )
            text += f", in transit {len(self.in_transit_at_kill)} [{transit}]"
        text += (
            f"; persisted: {self.persisted_at_kill}; requests {self.total_requests}/{self.bound}"
        )
        if self.not_started:
            text += f"; not started x{self.not_started}"
        if self.repeated:
            text += f"; repeated {', '.join(self.repeated)}"
        if self.repeated_answered_before_kill:
            ages = ", ".join(
                f"{k} {self.answer_age_at_kill_ms[k]:.1f} ms before"
                for k in self.repeated_answered_before_kill
            )
            text += f" (answered before the kill: {ages})"
        if self.error:
            text += f"; error: {self.error}"
        verdict = "ok" if self.finished and self.excess <= 0 else "PROBLEM"
        return f"{text} -> {verdict}"


def label(key: tuple[str, int]) -> str:
    """``solver_2@r3``."""
    return f"{key[0]}@r{key[1]}"


def baseline_run(workdir: Path, seed: int) -> Baseline:
    """One uninterrupted debate: request count and timings to place the kills."""
    server_cls, _answer, _solver = repo_imports()
    responder = TaggedResponder(KILL_JITTER_S, seed)
    db = workdir / "baseline.sqlite"
    with server_cls(responder, latency_s=KILL_LATENCY_S) as server:
        started = time.monotonic()
        proc = subprocess.Popen(
            solve_args(server, db, "baseline", KILL_AGENTS, KILL_ROUNDS),
            cwd=workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        first: float | None = None
        db_file: float | None = None
        saved = SavedTurns(db)
        while proc.poll() is None:
            if db_file is None and db.exists():
                db_file = time.monotonic() - started
            if db_file is not None:
                saved.poll()
            if first is None and server.requests:
                first = time.monotonic() - started
            time.sleep(0.001)
        stdout, stderr = proc.communicate()
        wall = time.monotonic() - started
        run = CliRun(proc.returncode, stdout, stderr, wall)
        if proc.returncode != 0 or not good_result(run.result(), KILL_ROUNDS):
            raise RuntimeError(f"uninterrupted run failed: {tail(stderr)}")
        if first is None or db_file is None or not responder.log:
            raise RuntimeError("uninterrupted run made no model request")
        last = max(t for _s, _r, t in responder.log) - started - first
        saved.close()
        persist = [
            (saved.seen[(solver, rnd)] - answered) * 1000
            for solver, rnd, answered in responder.log
            if (solver, rnd) in saved.seen
        ]
        return Baseline(len(server.requests), db_file, first, last, wall, persist)


class SavedTurns:
    """When each (agent, round) turn first appears in a checkpoint file's pending writes.

    Polled by the benchmark while the CLI writes the file (WAL: reading does not block
    the writer); the time is the benchmark's monotonic clock, like the server's log.
    """

    def __init__(self, db: Path) -> None:
        from debategraph.checkpoints.savers import serializer

        self.db = db
        self.serde = serializer()
        self.seen: dict[tuple[str, int], float] = {}
        self._conn: sqlite3.Connection | None = None
        self._rows: set[tuple[str, str, int]] = set()

    def poll(self) -> None:
        """Read the rows written since the last poll (``writes`` may have no rowid)."""
        try:
            if self._conn is None:
                self._conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
            rows = self._conn.execute(
                "SELECT checkpoint_id, task_id, idx, type, value FROM writes WHERE channel = ?",
                ("transcript",),
            ).fetchall()
        except sqlite3.Error:  # the file or its tables are not there yet
            return
        now = time.monotonic()
        for checkpoint_id, task_id, idx, kind, value in rows:
            if (checkpoint_id, task_id, idx) in self._rows:
                continue
            self._rows.add((checkpoint_id, task_id, idx))
            turns = self.serde.loads_typed((kind, value))
            for turn in turns if isinstance(turns, list) else [turns]:
                key = (str(getattr(turn, "agent", "")), int(getattr(turn, "round", -1)))
                self.seen.setdefault(key, now)

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._conn.close()


#: How each trial of a group of 5 picks its kill moment (see the module docstring).
KILL_MODES = ("startup", "uniform", "after-answer", "uniform", "after-answer")
#: ``--quick``'s: a kill during start-up (the "not started" path) and one within 20 ms after
#: an answer (the transit window), each trial costing CLI processes of ~2-3 s of CPU.
QUICK_KILL_MODES = ("startup", "after-answer")


def kill_plan(
    index: int,
    rng: random.Random,
    base: Baseline,
    only: str | None = None,
    modes: Sequence[str] = KILL_MODES,
) -> tuple[str, float, int]:
    """Mode, delay (s) and, for ``after-answer``, the answer count that starts the delay.

    ``startup`` kills before the first request: alternately at 0.5-1.0 x the time an
    uninterrupted run takes to create its database file (counted from spawn: nothing is
    written yet, no thread id printed), and 0-1.2 x the time from the database file
    appearing to the first request (counted from the file appearing: the window in which
    the thread is recorded, its id printed and the first checkpoints are written). ``uniform``: 0 to
    0.1 s past the last answer of an uninterrupted run, from the first request.
    ``after-answer``: 0-20 ms after the server produced the k-th answer (k uniform in
    1..16): the window in which a finished call's result is in transit or being saved.
    The trials take the kinds of ``modes`` in turn (:data:`KILL_MODES`, or
    :data:`QUICK_KILL_MODES`), or ``only`` in every trial.
    """
    mode = only or modes[index % len(modes)]
    if mode == "startup":
        if (index // len(modes)) % 2 == 0:
            return "startup", rng.uniform(0.5, 1.0) * base.db_file_s, 0
        gap = max(base.first_request_s - base.db_file_s, 0.01)
        return "db-open", rng.uniform(0.0, 1.2) * gap, 0
    if mode == "uniform":
        return mode, rng.uniform(0.0, base.last_answer_s + 0.1), 0
    return mode, rng.uniform(0.0, 0.02), rng.randint(1, KILL_CALLS)


def describe_plan(mode: str, delay: float, after: int) -> str:
    """The planned kill moment, in words."""
    if mode == "startup":
        return f"{delay:.3f}s after spawn"
    if mode == "db-open":
        return f"{delay * 1000:.0f}ms after the db file appears"
    if mode == "uniform":
        return f"{delay:.3f}s after 1st request"
    return f"{delay * 1000:.1f}ms after answer {after}"


def wait_until(condition: Callable[[], bool], proc: subprocess.Popen[Any]) -> None:
    """Poll ``condition`` until true, the process exits, or the process timeout passes."""
    deadline = time.monotonic() + PROCESS_TIMEOUT_S
    while not condition() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.0005)


def kill_trial(
    workdir: Path,
    index: int,
    rng: random.Random,
    base: Baseline,
    seed: int,
    keep: bool,
    only: str | None = None,
    transit_ms: float = TRANSIT_MS,
    modes: Sequence[str] = KILL_MODES,
) -> KillTrial:
    """Solve, SIGKILL at a random moment, resume until finished; count model requests."""
    server_cls, _answer, _solver = repo_imports()
    thread = f"t{index}"
    db = workdir / f"kill-{thread}.sqlite"
    mode, delay, after = kill_plan(index, rng, base, only, modes)
    responder = TaggedResponder(KILL_JITTER_S, seed)
    with server_cls(responder, latency_s=KILL_LATENCY_S) as server:
        started = time.monotonic()
        stderr_path = workdir / f"kill-{thread}.stderr"
        with stderr_path.open("wb") as stderr_file:
            proc = subprocess.Popen(
                solve_args(server, db, thread, KILL_AGENTS, KILL_ROUNDS),
                cwd=workdir,
                stdout=subprocess.DEVNULL,
                stderr=stderr_file,
            )
        first: float | None = None
        if mode == "startup":
            kill_at = started + delay
        elif mode == "db-open":
            wait_until(db.exists, proc)
            kill_at = time.monotonic() + delay
        else:
            wait_until(lambda: bool(server.requests), proc)
            first = time.monotonic()
            if mode == "after-answer":
                wait_until(lambda: server.calls >= after, proc)
            kill_at = time.monotonic() + delay
        while time.monotonic() < kill_at and proc.poll() is None:
            time.sleep(min(0.0005, max(0.0, kill_at - time.monotonic())))
        exited = proc.poll() is not None
        server_calls = server.calls
        killed_at = time.monotonic()
        if not exited:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        # Requests the process had written may still be read by the server: wait until
        # every request it sent has been answered (latency + jitter).
        time.sleep(KILL_LATENCY_S + KILL_JITTER_S + 0.2)
        received = len(server.requests)
        sent = {responder.key(r) for r in server.requests[:received]}
        answered_before = {(s, r): t for s, r, t in responder.log if t < killed_at}
        ages = {k: (killed_at - t) * 1000 for k, t in answered_before.items()}
        unanswered = sorted(label(k) for k in sent if k not in answered_before)
        in_transit = sorted(label(k) for k, age in ages.items() if age <= transit_ms)
        persisted = persisted_state(db, thread)
        # The CLI prints "thread ID · db ..." on stderr once the thread is recorded.
        id_printed = f"thread {thread} " in stderr_path.read_text(errors="replace")
        if keep:
            snapshot_db(db, workdir / f"kill-{thread}.at-kill.sqlite")

        not_started = resumes = 0
        outcome: CliRun | None = None
        error: str | None = None
        for _attempt in range(3):
            resumes += 1
            outcome = run_cli(cli("resume", thread, "--db", str(db), "--json"), workdir)
            if outcome.code == 0:
                break
            if "unknown thread id" in outcome.stderr:
                if id_printed:  # its id was printed: it must resume
                    error = f"thread id printed, then resume said: {tail(outcome.stderr)}"
                    break
                not_started += 1
                outcome = run_cli(solve_args(server, db, thread, KILL_AGENTS, KILL_ROUNDS), workdir)
                if outcome.code == 0:
                    break
            error = f"exit {outcome.code}: {tail(outcome.stderr)}"
        result = outcome.result() if outcome is not None and outcome.code == 0 else None
        if result is not None:
            error = None
        total = len(server.requests)
        counts = Counter(responder.key(r) for r in server.requests)
    repeated = [k for k, n in counts.items() if n > 1]
    shown_ages = {
        label(k): round(age, 2) for k, age in ages.items() if age <= transit_ms or k in repeated
    }
    return KillTrial(
        trial=index,
        thread=thread,
        mode=mode,
        planned=describe_plan(mode, delay, after),
        kill_after_s=killed_at - started,
        kill_since_first_request_s=None if first is None else killed_at - first,
        solve_exited_before_kill=exited,
        received_at_kill=received,
        answered_at_kill=len(answered_before),
        server_calls_at_kill=server_calls,
        unanswered_at_kill=unanswered,
        in_transit_at_kill=in_transit,
        persisted_at_kill=persisted,
        not_started=not_started,
        resumes=resumes,
        finished=good_result(result, KILL_ROUNDS),
        termination_reason=None if result is None else result.get("termination_reason"),
        rounds=0 if result is None else len(result.get("rounds") or []),
        usage_calls=None if result is None else (result.get("usage") or {}).get("calls"),
        total_requests=total,
        repeated=sorted(label(k) for k in repeated),
        repeated_answered_before_kill=sorted(label(k) for k in repeated if k in answered_before),
        answer_age_at_kill_ms=shown_ages,
        error=error,
    )


def figure_kill(
    workdir: Path,
    *,
    trials: int,
    seed: int,
    keep: bool,
    only: str | None = None,
    transit_ms: float | None = None,
    modes: Sequence[str] = KILL_MODES,
) -> Figure:
    """kill -9 at random moments, then resume: finished runs and repeated model requests.

    ``transit_ms`` ``None``: the window :meth:`Baseline.transit_ms` calibrates. ``modes``:
    the kinds of kill moment the trials take in turn (see :func:`kill_plan`).
    """
    rng = random.Random(seed)
    base = baseline_run(workdir, seed)
    if transit_ms is None:
        transit_ms = base.transit_ms()
    results: list[KillTrial] = []
    for index in range(trials):
        trial = kill_trial(workdir, index, rng, base, seed, keep, only, transit_ms, modes)
        results.append(trial)
        print(f"  {trial.line()}", flush=True)
    finished = sum(t.finished for t in results)
    total = sum(t.total_requests for t in results)
    bound = sum(t.bound for t in results)
    max_excess = max(t.excess for t in results)
    strict_total = sum(KILL_CALLS + len(t.unanswered_at_kill) for t in results)
    max_strict = max(t.strict_excess for t in results)
    not_started = sum(t.not_started for t in results)
    before_first = sum(t.received_at_kill == 0 for t in results)
    modes = Counter(t.mode for t in results)
    repeated = [t for t in results if t.repeated]
    in_flight = Counter(t.in_flight for t in results)
    transit_lost = [
        (t, k) for t in results for k in t.repeated_answered_before_kill if k not in t.lost
    ]
    gap_lost = [(t, k) for t in results for k in t.lost]
    lost_ages = [t.answer_age_at_kill_ms[k] for t, k in transit_lost + gap_lost]
    passed = finished == trials and max_excess <= 0 and total <= bound
    rows = [
        ("finished", f"{finished}/{trials}   (rounds_completed, {KILL_ROUNDS} rounds)"),
        (
            "model requests",
            f"{total} received in all trials; uninterrupted: {base.requests} per run "
            f"({base.requests * trials} for {trials})",
        ),
        ("allowed bound", f"{bound}   (sum of {KILL_CALLS} + in flight at the kill)"),
        ("max excess / trial", f"{max_excess:+d}   (requests - bound; <= 0 is good)"),
        (
            "not started",
            f"{not_started}   (killed before its id was printed: resume says unknown "
            "thread, solve again; unknown after the id was printed fails the trial)",
        ),
        (
            "kills",
            ", ".join(f"{m} x{c}" for m, c in modes.items())
            + f"; {before_first} before the first request; in flight at kill: "
            + ", ".join(f"{n} x{c}" for n, c in sorted(in_flight.items())),
        ),
        (
            "repeated calls",
            f"{sum(len(t.repeated) for t in results)} in {len(repeated)} trials; "
            f"{len(transit_lost)} answered <= {transit_ms:.1f} ms before the kill (in transit), "
            f"{len(gap_lost)} answered earlier (durability gap)"
            + (f"; lost answers' age at kill: max {max(lost_ages):.1f} ms" if lost_ages else ""),
        ),
        (
            "info: no transit window",
            f"bound {strict_total} (16 + requests unanswered by the server at the kill), "
            f"max excess / trial {max_strict:+d}",
        ),
        (
            "info: uninterrupted",
            f"first request {base.first_request_s:.2f} s after spawn (db file at "
            f"{base.db_file_s:.2f} s), last answer {base.last_answer_s:.2f} s later, "
            f"process {base.wall_s:.2f} s",
        ),
        (
            "info: save latency",
            f"answer to turn in the file, uninterrupted: median "
            f"{statistics.median(base.persist_ms or [0.0]):.1f} ms, max "
            f"{max(base.persist_ms, default=0.0):.1f} ms ({len(base.persist_ms)} turns); "
            f"transit window {transit_ms:.1f} ms",
        ),
    ]
    notes = [
        f"{KILL_AGENTS} solvers x {KILL_ROUNDS} rounds, {KILL_LATENCY_S * 1000:.0f}-"
        f"{(KILL_LATENCY_S + KILL_JITTER_S) * 1000:.0f} ms per call; in flight at the kill = "
        "requests the server had received and not answered, plus answers produced <= "
        f"{transit_ms:.1f} ms before SIGKILL (still in transit into the killed process)",
    ]
    for trial, key in gap_lost:
        notes.append(
            f"DURABILITY GAP {trial.thread} [{trial.planned}]: {key} was answered "
            f"{trial.answer_age_at_kill_ms[key]:.1f} ms before the kill and sent again on "
            f"resume; persisted at kill: {trial.persisted_at_kill}"
        )
    for trial in results:
        if not trial.finished:
            notes.append(f"{trial.thread} did not finish: {trial.error}")
    return Figure(
        number=1,
        name="kill -9 recovery",
        setup=f"{trials} trials, solve {KILL_AGENTS}x{KILL_ROUNDS} killed with SIGKILL at a "
        f"random moment (seed {seed}), then resume",
        rows=rows,
        target=f"{trials}/{trials} finished; requests <= {KILL_CALLS} + in flight at the "
        "kill, per trial and summed",
        passed=passed,
        values={
            "trials": trials,
            "seed": seed,
            "transit_ms": transit_ms,
            "finished": finished,
            "total_requests": total,
            "allowed_bound": bound,
            "max_excess": max_excess,
            "strict_bound": strict_total,
            "strict_max_excess": max_strict,
            "not_started": not_started,
            "kills_before_first_request": before_first,
            "repeated_in_transit": len(transit_lost),
            "repeated_durability_gap": len(gap_lost),
            "lost_answer_ages_ms": lost_ages,
            "baseline": asdict(base),
            "per_trial": [
                {
                    **asdict(t),
                    "in_flight": t.in_flight,
                    "bound": t.bound,
                    "excess": t.excess,
                    "strict_excess": t.strict_excess,
                }
                for t in results
            ],
        },
        notes=notes,
    )


# --------------------------------------------------------------------------
# Figure 2: many processes on one SQLite file
# --------------------------------------------------------------------------


def figure_multiprocess(workdir: Path, *, processes: int, debates: int) -> Figure:
    """``processes`` workers at once, each ``debates`` CLI solves in a row, one SQLite file."""
    server_cls, answer_18, _solver = repo_imports()
    db = workdir / "shared.sqlite"
    runs: dict[str, CliRun] = {}
    lock = threading.Lock()
    with server_cls(answer_18, latency_s=MP_LATENCY_S) as server:

        def worker(p: int) -> None:
            for d in range(debates):
                thread = f"p{p}-d{d}"
                run = run_cli(solve_args(server, db, thread, MP_AGENTS, MP_ROUNDS), workdir)
                with lock:
                    runs[thread] = run

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=processes) as pool:
            list(pool.map(worker, range(processes)))
        wall = time.perf_counter() - started
        requests = len(server.requests)
        max_in_flight = server.max_in_flight
    expected = processes * debates
    ok = sorted(t for t, r in runs.items() if r.code == 0 and good_result(r.result(), MP_ROUNDS))
    failed = {t: r for t, r in runs.items() if t not in ok}
    lock_errors = {
        t: [line for line in r.stderr.splitlines() if LOCK_PATTERN.search(line)]
        for t, r in runs.items()
    }
    lock_errors = {t: lines for t, lines in lock_errors.items() if lines}
    timed_out = sorted(t for t, r in runs.items() if r.timed_out)
    listing = run_cli(cli("threads", "--db", str(db), "--json"), workdir)
    try:
        rows = json.loads(listing.stdout) if listing.code == 0 else []
    except json.JSONDecodeError:
        rows = []
    listed_finished = sorted(
        r["thread_id"] for r in rows if r.get("status") == "finished" and r["thread_id"] in runs
    )
    walls = sorted(r.wall_s for r in runs.values())
    passed = (
        len(ok) == expected
        and not lock_errors
        and len(listed_finished) == expected
        and listing.code == 0
    )
    notes = [
        f"{processes * debates} separate `debategraph solve` processes, at most {processes} "
        f"at once ({processes} workers, each running its {debates} debates one after another)",
    ]
    for thread, run in sorted(failed.items()):
        notes.append(f"{thread}: exit {run.code}: {tail(run.stderr)}")
    for thread, lines in sorted(lock_errors.items()):
        notes.append(f"{thread} lock error: {lines[0].strip()}")
    if listing.code != 0:
        notes.append(f"threads --json failed: exit {listing.code}: {tail(listing.stderr)}")
    return Figure(
        number=2,
        name="multi-process SQLite",
        setup=f"{processes} processes x {debates} debates ({MP_AGENTS} solvers x {MP_ROUNDS} "
        f"rounds, {MP_LATENCY_S * 1000:.0f} ms per call), one SQLite file",
        rows=[
            ("finished", f"{len(ok)}/{expected}   (exit 0, rounds_completed)"),
            ("lock errors", f"{len(lock_errors)}   (stderr lines matching locked/busy)"),
            ("threads --json", f"{len(listed_finished)}/{expected} listed as finished"),
            ("stuck processes", f"{len(timed_out)}   (killed after {PROCESS_TIMEOUT_S:.0f} s)"),
            ("wall", f"{wall:.2f} s"),
            (
                "info: per process",
                f"median {statistics.median(walls):.2f} s, max {walls[-1]:.2f} s; "
                f"{requests} model requests, max {max_in_flight} in flight",
            ),
        ],
        target=f"{expected}/{expected} finished, 0 lock errors, threads lists {expected} finished",
        passed=passed,
        values={
            "processes": processes,
            "debates_per_process": debates,
            "finished": len(ok),
            "expected": expected,
            "lock_errors": len(lock_errors),
            "lock_error_lines": lock_errors,
            "listed_finished": len(listed_finished),
            "timed_out": timed_out,
            "wall_s": wall,
            "process_wall_s": walls,
            "model_requests": requests,
            "max_in_flight": max_in_flight,
            "failed": {t: {"code": r.code, "stderr": tail(r.stderr, 5)} for t, r in failed.items()},
        },
        notes=notes,
    )


# --------------------------------------------------------------------------
# Figure 3: prune
# --------------------------------------------------------------------------

PRUNE_THREADS = 50
PRUNE_AGENTS = 4
PRUNE_ROUNDS = KILL_ROUNDS  # the 4-solver x 4-round debate of the kill figure
PRUNE_TARGET = 0.80
PRUNE_REASONING = (
    "April: 48 clips. May: half as many, 48 / 2 = 24 clips. Together: 48 + 24 = 72 clips. "
) * 6  # about 500 characters, the answer size of the storage figure


def figure_prune(workdir: Path, *, threads: int) -> Figure:
    """``threads`` finished CLI debates on one SQLite file, then ``prune --keep-last 1``.

    The debates run through ``debategraph.cli.main`` in this process (the same code path as
    the command, without 50 interpreter start-ups), archive tables included.
    """
    from contextlib import redirect_stderr, redirect_stdout
    from io import StringIO

    from debategraph.cli import main as cli_main

    server_cls, _answer_18, _solver = repo_imports()
    db = workdir / "prune.sqlite"

    def answer(_request: dict[str, Any]) -> dict[str, Any]:
        return {"reasoning": PRUNE_REASONING[:500], "answer": "72", "confidence": 0.9}

    def call(*args: str) -> tuple[int, str]:
        buffer = StringIO()
        code = 0
        with redirect_stdout(buffer), redirect_stderr(StringIO()):
            try:
                cli_main(list(args))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 0
        return code, buffer.getvalue()

    with server_cls(answer) as server:
        for i in range(threads):
            code, _ = call(
                "solve", QUESTION, "--agents", str(PRUNE_AGENTS), "--rounds", str(PRUNE_ROUNDS),
                "--thread", f"t{i}", "--model", "stub", "--base-url", server.url,
                "--db", str(db), "--max-retries", "0",
            )  # fmt: skip
            if code != 0:
                raise RuntimeError(f"debate t{i} failed with exit code {code}")
    code, out = call("prune", "--keep-last", "1", "--db", str(db), "--json")
    report = json.loads(out) if code == 0 else {}
    before = int(report.get("bytes_before", 0))
    after = int(report.get("bytes_after", 0))
    shrink = 1 - after / before if before else 0.0
    _code, listing = call("threads", "--db", str(db), "--json")
    finished = sum(1 for row in json.loads(listing or "[]") if row.get("status") == "finished")
    shown = sum(1 for i in range(threads) if call("show", f"t{i}", "--db", str(db))[0] == 0)
    passed = code == 0 and shrink >= PRUNE_TARGET and finished == threads and shown == threads
    return Figure(
        number=3,
        name="prune",
        setup=f"{threads} finished debates ({PRUNE_AGENTS} solvers x {PRUNE_ROUNDS} rounds, "
        "500-char answers) on one SQLite file, then `prune --keep-last 1`",
        rows=[
            ("file before", f"{before:,} bytes"),
            ("file after", f"{after:,} bytes"),
            ("shrink", f"{shrink:.1%}"),
            ("checkpoints removed", f"{report.get('checkpoints_deleted')}"),
            (
                "per thread",
                f"{before / threads / 1024:.1f} KiB before, {after / threads / 1024:.1f} KiB after",
            ),
            ("still finished", f"{finished}/{threads} (threads), {shown}/{threads} (show)"),
        ],
        target=f"the file shrinks by >= {PRUNE_TARGET:.0%}; every thread still shows",
        passed=passed,
        values={"bytes_before": before, "bytes_after": after, "shrink": shrink, **report},
        notes=[
            "checkpoints store transcript deltas, compressed, so an unpruned thread is already "
            "lean (benchmarks/checkpoint_bytes.py); what prune keeps is one checkpoint holding "
            "a full snapshot of the transcript, so the shrink grows with debate length",
        ],
    )


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run every figure; 1 if one fails, else 0."""
    parser = base_parser(
        __doc__,
        quick_help="2 trials (a start-up kill, one after an answer), 2 x 1 debates, "
        "10 threads pruned",
    )
    parser.add_argument("--trials", type=int, help="kill trials (default 20, quick 2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill moments")
    parser.add_argument("--processes", type=int, help="processes at once (default 8, quick 2)")
    parser.add_argument("--debates", type=int, help="debates per process (default 5, quick 1)")
    parser.add_argument(
        "--kill-mode",
        choices=sorted({*KILL_MODES}),
        help="use only this kind of kill moment (default: the mix of kill_plan)",
    )
    parser.add_argument(
        "--transit-ms",
        type=float,
        help="answers produced this recently (ms) before the kill count as in flight "
        f"(default: {TRANSIT_MS:g}, or 3x the slowest save of an uninterrupted run if longer)",
    )
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the SQLite files in DIR")
    args = parser.parse_args(argv)
    quick: bool = args.quick
    trials = args.trials or (2 if quick else 20)
    processes = args.processes or (2 if quick else 8)
    debates = args.debates or (1 if quick else 5)

    def kill_step(workdir: Path) -> Figure:
        print(f"kill trials ({trials}):", flush=True)
        return figure_kill(
            workdir,
            trials=trials,
            seed=args.seed,
            keep=args.keep is not None,
            only=args.kill_mode,
            transit_ms=args.transit_ms,
            modes=QUICK_KILL_MODES if quick else KILL_MODES,
        )

    return run_benchmark(
        "debategraph durability benchmark",
        [
            kill_step,
            lambda workdir: figure_multiprocess(workdir, processes=processes, debates=debates),
            lambda workdir: figure_prune(workdir, threads=10 if quick else PRUNE_THREADS),
        ],
        args=args,
        workdir=args.keep,
        tmp_prefix="debategraph-durability-",
        progress=True,
    )


if __name__ == "__main__":
    sys.exit(main())
