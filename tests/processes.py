"""Finding the embedded model's server processes (Linux ``/proc``) from tests."""

from __future__ import annotations

import signal
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
