"""Opt-in: each test's CPU time, to see where a CPU-bound suite spends it.

``python -m pytest -p tests.cpu_profile`` writes one JSON line per test to
``$DEBATEGRAPH_CPU_PROFILE_DIR/<worker>.jsonl`` (default: the system's temporary folder,
``debategraph-cpu``): its node id, wall seconds, and the CPU seconds (user + system) of the
worker (``self``) and of the child processes it waited for (``children``). Processes a test
did not wait for (a notebook's kernel it killed, a server started by another process) are
not counted. Sum the lines with any tool; compare with ``/proc/stat``'s busy time over the
run to see what was left out.
"""

from __future__ import annotations

import json
import os
import resource
import tempfile
import time
from collections.abc import Generator
from pathlib import Path
from typing import IO, Any

import pytest

_out: IO[str] | None = None


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Generator[None, None, None]:
    """Record the test's wall time and CPU (its setup and teardown included)."""
    global _out
    if _out is None:
        folder = Path(
            os.environ.get("DEBATEGRAPH_CPU_PROFILE_DIR")
            or Path(tempfile.gettempdir()) / "debategraph-cpu"
        )
        folder.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _out = (folder / f"{worker}.jsonl").open("a", encoding="utf-8")
    own, children = _cpu()
    started = time.monotonic()
    yield
    own_after, children_after = _cpu()
    record = {
        "id": item.nodeid,
        "wall": round(time.monotonic() - started, 3),
        "self": round(own_after - own, 3),
        "children": round(children_after - children, 3),
    }
    _out.write(json.dumps(record) + "\n")
    _out.flush()
