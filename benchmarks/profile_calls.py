"""Where a debate's client CPU goes: py-spy samples of the workload, summed by function.

Runs the benchmark debate (4 solvers, ring, 3 rounds) through debategraph's public API
against the OpenAI-compatible stub server (in a process of its own, zero latency), under
``py-spy record`` (every thread, CPU samples only), and prints the functions and the
areas (model client, LangGraph, checkpoints, debategraph...) that hold the most samples,
inclusive, plus the CPU time per model call.

    pip install py-spy
    python benchmarks/profile_calls.py [--impl debategraph-sync] [--debates 10 --batches 5]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from stub_process import stub_process

HERE = Path(__file__).resolve().parent

#: Areas a sample's frames are counted under: the first prefix that matches a frame's file.
AREAS = (
    ("sqlite / checkpoints", ("langgraph/checkpoint", "debategraph/checkpoints", "sqlite3")),
    ("pydantic", ("pydantic",)),
    ("openai SDK + httpx", ("openai/", "httpx", "httpcore", "h11", "anyio")),
    ("langchain-openai", ("langchain_openai",)),
    ("langchain-core", ("langchain_core",)),
    ("langgraph", ("langgraph/",)),
    ("debategraph", ("debategraph/",)),
    ("asyncio", ("asyncio/",)),
)


def frames(stack: str) -> list[tuple[str, str]]:
    """``(function, file:line)`` of each frame of a py-spy raw stack, outermost first."""
    out = []
    for frame in stack.split(";"):
        name, _, where = frame.partition(" (")
        out.append((name.strip(), where.rstrip(")")))
    return out


def summarise(raw: Path, calls: int, cpu: float, top: int) -> list[str]:
    """The report lines of a py-spy raw file."""
    total = 0
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    areas: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        total += count
        stack_frames = frames(stack)
        seen: set[str] = set()
        for name, where in stack_frames:
            key = f"{name} ({where.rsplit(':', 1)[0].split('site-packages/')[-1]})"
            if key not in seen:
                inclusive[key] += count
                seen.add(key)
        name, where = stack_frames[-1]
        own[f"{name} ({where.split('site-packages/')[-1]})"] += count
        hit = {
            area
            for area, prefixes in AREAS
            for _, w in stack_frames
            if any(p in w for p in prefixes)
        }
        for area in hit:
            areas[area] += count
    lines = [
        f"{total} samples; client CPU {cpu:.2f} s for {calls} model calls = "
        f"{cpu / calls * 1000:.2f} ms per call",
        "",
        "areas (inclusive: a sample counts for every area on its stack)",
    ]
    lines += [f"  {n / total:6.1%}  {area}" for area, n in areas.most_common()]
    lines += ["", f"top {top} functions, inclusive"]
    lines += [f"  {n / total:6.1%}  {key}" for key, n in inclusive.most_common(top)]
    lines += ["", f"top {top} functions, own time"]
    lines += [f"  {n / total:6.1%}  {key}" for key, n in own.most_common(top)]
    return lines


def main() -> int:
    """Profile, print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--impl", default="debategraph", choices=["debategraph", "debategraph-sync", "langgraph"]
    )
    parser.add_argument("--debates", type=int, default=10, help="debates at once per batch")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--keep", type=Path, help="also keep py-spy's raw file here")
    parser.add_argument(
        "--src", type=Path, help="profile the package of another checkout (its src folder)"
    )
    args = parser.parse_args()
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        print("py-spy is not installed: pip install py-spy", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp, stub_process() as server:
        raw = Path(tmp) / "raw.txt"
        worker = subprocess.Popen(
            [
                sys.executable, str(HERE / "workload.py"), args.impl, "--url", server.url,
                "--db", str(Path(tmp) / "profile.sqlite"),
            ],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(args.src)} if args.src else None,
        )  # fmt: skip
        assert worker.stdin is not None and worker.stdout is not None

        def command(text: str) -> dict[str, Any]:
            assert worker.stdin is not None and worker.stdout is not None
            worker.stdin.write(text + "\n")
            worker.stdin.flush()
            result: dict[str, Any] = json.loads(worker.stdout.readline())
            return result

        json.loads(worker.stdout.readline())  # ready
        command("run 1")  # warm-up: imports, connections, caches (not sampled)
        spy_proc = subprocess.Popen(
            [spy, "record", "--format", "raw", "--rate", "250", "--nonblocking",
             "--output", str(raw), "--pid", str(worker.pid)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        time.sleep(1.0)  # py-spy attaches
        measured = [command(f"run {args.debates}") for _ in range(args.batches)]
        spy_proc.send_signal(signal.SIGINT)
        spy_proc.wait(timeout=60)
        worker.stdin.close()
        worker.wait(timeout=30)
        cpu = sum(r["cpu_s"] for r in measured)
        calls = args.debates * args.batches * 12
        print(
            f"profile of {args.impl}: {args.batches} batches of {args.debates} debates at "
            "once, 4 solvers, ring, 3 rounds, zero latency; after a warm-up debate"
        )
        for line in summarise(raw, calls, cpu, args.top):
            print(line)
        if args.keep is not None:
            shutil.copy(raw, args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
