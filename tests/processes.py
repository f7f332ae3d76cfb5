"""Processes from tests: a fresh interpreter's output, the embedded model's servers (``/proc``)."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

CHILD_SCRIPT = b"debategraph/local/child.py"


def _cmdlines() -> dict[int, bytes]:
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found[int(entry.name)] = (entry / "cmdline").read_bytes()
            except OSError:
                continue
    return found


def embedded_servers(parent: int | None = None) -> set[int]:
    """Pids of live embedded model servers (started by ``parent``, if given)."""
    marker = f"\0--parent\0{parent}\0".encode()
    return {
        pid
        for pid, cmdline in _cmdlines().items()
        if CHILD_SCRIPT in cmdline and (parent is None or marker in cmdline)
    }


def takes_ctrl_c() -> None:
    """``preexec_fn`` for a child a test interrupts: SIGINT back to its default.

    A shell starts a background job (CI runners may run the suite as one) with SIGINT
    ignored, which its children inherit and Python keeps: Ctrl-C would then do nothing.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def python_run(
    code: str, *args: str, env: Mapping[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ``python -c code args...`` (a fresh interpreter) and capture what it prints.

    Args:
        code: The program.
        *args: Its arguments.
        env: Its whole environment (default: this process's).
        timeout: Seconds it may take.

    Returns:
        The finished process (``stdout``, ``stderr``, ``returncode``).
    """
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=None if env is None else dict(env),
    )


def python_output(code: str, *args: str) -> str:
    """What ``python -c code args...`` prints: a fresh interpreter, nothing imported yet.

    Raises:
        subprocess.CalledProcessError: If it exits non-zero.
    """
    done = python_run(code, *args)
    done.check_returncode()
    return done.stdout
