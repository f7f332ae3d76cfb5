"""Every interrupt ends with one line and exit 130 (issue 20, item 1).

``debategraph solve`` runs in a process group of its own and gets SIGINT (as Ctrl-C
sends it to the terminal's group) or SIGTERM at moments it used to print nothing or a
traceback: during its start-up imports, right after its first line, and while it waits
for its first model call. Each time stderr ends with one line naming what to do, the exit
status is 130, and a thread that was recorded finishes with ``debategraph resume``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from tests.conftest import answer_18, stub_args
from tests.openai_stub import StubOpenAIServer
from tests.processes import takes_ctrl_c

pytestmark = pytest.mark.slow  # interrupts CLI processes: make test-fast leaves it out

CLI = [sys.executable, "-m", "debategraph.cli"]
QUESTION = "Natalia sold clips to 48 of her friends in April, and half as many in May. Total?"
#: Long enough that the run is still in its first calls when it is interrupted.
SLOW_S = 120.0
INTERRUPTED = "debategraph: error: interrupted; "


class Running:
    """``debategraph ARGS`` in a session (process group) of its own, stderr read as it comes."""

    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen(
            [*CLI, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=takes_ctrl_c,
        )
        self.err_lines: list[str] = []
        self.out_lines: list[str] = []
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._readers = [
            threading.Thread(target=_collect, args=(pipe, lines), daemon=True)
            for pipe, lines in (
                (self.proc.stderr, self.err_lines),
                (self.proc.stdout, self.out_lines),
            )
        ]
        for reader in self._readers:
            reader.start()

    def signal_group(self, signum: int) -> None:
        os.killpg(self.proc.pid, signum)

    def finish(self) -> tuple[int, str, list[str]]:
        """Wait for the exit; its status, stdout and every stderr line."""
        code = self.proc.wait(timeout=60)
        for reader in self._readers:
            reader.join(timeout=60)
        return code, "".join(f"{line}\n" for line in self.out_lines), self.err_lines

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def _collect(pipe: IO[str], lines: list[str]) -> None:
    for line in pipe:
        lines.append(line.rstrip("\n"))


@contextlib.contextmanager
def running(args: list[str]) -> Iterator[Running]:
    run = Running(args)
    try:
        yield run
    finally:
        run.kill()


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)


def catches_sigterm(pid: int) -> bool:
    """Whether the process has a SIGTERM handler (``SigCgt`` in ``/proc/PID/status``)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


def solve_args(server: StubOpenAIServer, db: Path, thread: str) -> list[str]:
    args = ["solve", QUESTION, "--agents", "2", "--rounds", "2", "--thread", thread]
    return [*args, *stub_args(server, db)]


def assert_ends_interrupted(code: int, err_lines: list[str]) -> str:
    """Exit 130, no traceback, and one error line: the last one."""
    text = "\n".join(err_lines)
    assert code == 130, text
    assert "Traceback" not in text and "Exception ignored" not in text, text
    errors = [line for line in err_lines if line.startswith("debategraph: error:")]
    assert len(errors) == 1, text
    assert err_lines[-1] == errors[0], text
    assert errors[0].startswith(INTERRUPTED), text
    return errors[0]


def resumable_line(thread: str, db: Path) -> str:
    return f"{INTERRUPTED}thread {thread} is resumable: debategraph resume {thread} --db {db}"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_in_the_first_model_call_then_resume(signum: int, tmp_path: Path) -> None:
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(answer_18, latency_s=SLOW_S) as server:
        with running(solve_args(server, db, "k")) as run:
            wait_for(lambda: len(server.requests) >= 1, "the first model call")
            run.signal_group(signum)
            code, _, err_lines = run.finish()
        assert assert_ends_interrupted(code, err_lines) == resumable_line("k", db)
        listed = subprocess.run(
            [*CLI, "threads", "--db", str(db), "--json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert listed.returncode == 0, listed.stderr
        # its calls in flight were cancelled by the interrupt: that is no failure
        assert [(t["thread_id"], t["status"]) for t in json.loads(listed.stdout)] == [
            ("k", "interrupted")
        ]
        server.latency_s = 0.0
        done = subprocess.run(
            [*CLI, "resume", "k", "--db", str(db), "--json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["termination_reason"] == "rounds_completed"
    assert result["answer"] == "18"


def test_sigterm_right_after_the_first_line(tmp_path: Path) -> None:
    """The thread is recorded before its first line: SIGTERM then names it."""
    db = tmp_path / "d.sqlite"
    with (
        StubOpenAIServer(answer_18, latency_s=SLOW_S) as server,
        running(solve_args(server, db, "h")) as run,
    ):
        wait_for(lambda: any(line.startswith("thread h") for line in run.err_lines), "line 1")
        run.signal_group(signal.SIGTERM)
        code, _, err_lines = run.finish()
    assert assert_ends_interrupted(code, err_lines) == resumable_line("h", db)


def test_sigint_during_start_up(tmp_path: Path) -> None:
    """SIGINT while the CLI still imports its modules: one line, no traceback, 130."""
    db = tmp_path / "d.sqlite"
    with (
        StubOpenAIServer(answer_18, latency_s=SLOW_S) as server,
        running(solve_args(server, db, "e")) as run,
    ):
        # The CLI's interrupt guard is its first act; the app's imports come after.
        wait_for(lambda: catches_sigterm(run.proc.pid), "the CLI's interrupt guard")
        run.signal_group(signal.SIGINT)
        code, out, err_lines = run.finish()
    line = assert_ends_interrupted(code, err_lines)
    assert out == ""
    if line != resumable_line("e", db):  # interrupted before the thread was recorded
        assert line == f"{INTERRUPTED}nothing was saved (no thread was created)"
