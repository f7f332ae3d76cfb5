"""Client CPU per model call of two source trees, alternating run by run (an A/B).

Each run is a process of its own that imports debategraph from one tree and runs 10
solver debates at once (4 solvers, 3 rounds: 120 calls) through the public API, with
SQLite checkpoints, against the stub server in a process of its own at zero latency; the
run's user + system CPU from the start of the debates over the calls made is its figure.
The trees alternate (A B, then B A, ...) so that a busy machine weighs on both alike.

    python benchmarks/cpu_ab.py OLD/src NEW/src [--runs 12]

Prints each tree's median CPU per call and wall per batch, and the ratio NEW / OLD. Used
for issue 37's speed check (how nodes are wrapped); not part of ``make bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEBATES = 10
SOLVERS = 4
ROUNDS = 3
CALLS = DEBATES * SOLVERS * ROUNDS


def worker(url: str) -> None:
    """One run (in its own process): the debates at once; prints CPU and wall as JSON."""
    from debategraph import ModelSpec, build_solver_debate, recursion_limit
    from debategraph.checkpoints import open_checkpointer  # where older trees have it too

    async def debates(graph: object) -> float:
        configs = [
            {"configurable": {"thread_id": f"t{i}"}, "recursion_limit": recursion_limit(graph)}
            for i in range(DEBATES)
        ]
        started = time.perf_counter()
        runs = (graph.ainvoke({"question": "What is 6*3?"}, c) for c in configs)  # type: ignore[attr-defined]
        await asyncio.gather(*runs)
        return time.perf_counter() - started

    before = resource.getrusage(resource.RUSAGE_SELF)
    with (
        tempfile.TemporaryDirectory() as folder,
        open_checkpointer(os.path.join(folder, "runs.sqlite")) as saver,
    ):
        spec = ModelSpec(model="stub", base_url=url)
        builder = build_solver_debate(spec, agents=SOLVERS, max_rounds=ROUNDS)
        wall = asyncio.run(debates(builder.compile(checkpointer=saver)))
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    print(json.dumps({"cpu_s": cpu, "wall_s": wall}))


def main() -> None:
    """Alternate the two trees and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="the first tree's src folder")
    parser.add_argument("new", type=Path, help="the second tree's src folder")
    parser.add_argument("--runs", type=int, default=12, help="runs of each tree")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # the stub's URL, in a run
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    sys.path.insert(0, str(HERE))
    from stub_process import stub_process

    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    with stub_process(latency_s=0.0) as server:
        for run in range(args.runs):
            order = list(trees) if run % 2 == 0 else list(reversed(trees))
            for name in order:
                env = {**os.environ, "PYTHONPATH": str(trees[name])}
                out = subprocess.run(
                    [sys.executable, __file__, "old", "new", "--worker", server.url],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                rows[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    cpu = {name: statistics.median(r["cpu_s"] for r in runs) for name, runs in rows.items()}
    for name, runs in rows.items():
        wall = statistics.median(r["wall_s"] for r in runs)
        per_call = cpu[name] / CALLS * 1000
        print(f"{name} ({trees[name]}): {per_call:.2f} ms CPU per call, {wall:.2f} s per batch")
    print(f"CPU per call, new / old: {cpu['new'] / cpu['old']:.3f} (median of {args.runs} runs)")


if __name__ == "__main__":
    main()
