"""One implementation of the benchmark debate, run in a process of its own.

The speed benchmark (``benchmarks/speed.py``) starts one such process per implementation
and sends it commands on standard input, one per line; each is answered with one JSON
line on standard output:

* ``run N``: run N debates at once (4 solvers, ring, 3 rounds by default) against the
  server; answers ``{"wall_s", "walls_s", "cpu_s", "answers", "peak_rss_mb"}``, where
  ``cpu_s`` is this process's CPU time (user + system) for the N debates.

Implementations: ``debategraph`` (the public API, ``ainvoke`` on the package's SQLite
checkpointer), ``debategraph-sync`` (``invoke``, one thread per debate),
``debategraph-bare`` (``ainvoke`` without a checkpointer: what checkpoints cost) and ``langgraph``
(a plain LangGraph graph of the same debate on LangGraph's own ``SqliteSaver``, written
here as a user of LangGraph would). AutoGen-core has its own script
(``benchmarks/peers/autogen_debate.py``): it needs a virtual environment of its own.

    python benchmarks/workload.py debategraph --url URL --db FILE
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import resource
import sys
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
QUESTION = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips "
    "in May. How many clips did Natalia sell altogether in April and May?"
)


#: What stays open for the life of the process (the checkpointer).
_OPEN = contextlib.ExitStack()


def peak_rss_mb() -> float:
    """This process's peak resident memory, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s() -> float:
    """CPU time (user + system) of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def debategraph_runner(
    url: str, db: str | None, agents: int, rounds: int, topology: str, sync: bool
) -> Runner:
    """Debates through the public API: ``build_solver_debate`` on ``open_checkpointer``."""
    from debategraph import build_solver_debate, recursion_limit
    from debategraph.checkpoints import open_checkpointer
    from debategraph.models import ModelSpec

    spec = ModelSpec(model="stub", base_url=url, timeout_s=60, max_retries=0)
    # Open for the life of this process (none for db=None).
    saver = _OPEN.enter_context(open_checkpointer(db)) if db is not None else None
    graph = build_solver_debate(spec, agents=agents, max_rounds=rounds, topology=topology).compile(
        checkpointer=saver, name="solver_debate"
    )

    def config() -> dict[str, Any]:
        return {
            "configurable": {"thread_id": uuid.uuid4().hex},
            "recursion_limit": recursion_limit(graph),
            "max_concurrency": agents,
        }

    if sync:

        def one_sync(_: int) -> tuple[float, Any]:
            started = time.perf_counter()
            out = graph.invoke({"question": QUESTION}, config())
            return time.perf_counter() - started, out["answer"]

        def run_sync(n: int) -> tuple[list[float], list[Any]]:
            with ThreadPoolExecutor(n) as pool:
                done = list(pool.map(one_sync, range(n)))
            return [w for w, _ in done], [a for _, a in done]

        return run_sync

    async def one(_: int) -> tuple[float, Any]:
        started = time.perf_counter()
        out = await graph.ainvoke({"question": QUESTION}, config())
        return time.perf_counter() - started, out["answer"]

    loop = asyncio.new_event_loop()

    async def batch(n: int) -> list[tuple[float, Any]]:
        return await asyncio.gather(*(one(i) for i in range(n)))

    def run(n: int) -> tuple[list[float], list[Any]]:
        done = loop.run_until_complete(batch(n))
        return [w for w, _ in done], [a for _, a in done]

    return run


#: Runs N debates at once; gives each one's wall time and answer.
Runner = Callable[[int], tuple[list[float], list[Any]]]


def serve(runner: Runner, plan: str | None = None) -> None:
    """Answer ``run N`` commands (from ``plan``, or standard input) with JSON lines.

    Args:
        runner: Runs the debates.
        plan: Comma-separated debate counts to run instead of reading standard input.
    """
    print(json.dumps({"ready": True}), flush=True)
    commands = [f"run {n}" for n in plan.split(",")] if plan else sys.stdin
    for line in commands:
        words = line.split()
        if not words or words[0] != "run":
            continue
        n = int(words[1])
        cpu0 = cpu_s()
        started = time.perf_counter()
        walls, answers = runner(n)
        wall = time.perf_counter() - started
        result = {
            "wall_s": wall,
            "walls_s": walls,
            "cpu_s": cpu_s() - cpu0,
            "answers": answers,
            "peak_rss_mb": peak_rss_mb(),
        }
        print(json.dumps(result), flush=True)


def main() -> None:
    """Serve ``run N`` commands for one implementation."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "impl", choices=["debategraph", "debategraph-sync", "debategraph-bare", "langgraph"]
    )
    parser.add_argument("--url", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--topology", default="ring")
    parser.add_argument(
        "--plan", help="run these batches (comma-separated debate counts) and exit, no stdin"
    )
    args = parser.parse_args()
    runner: Runner
    if args.impl == "langgraph":
        from peers.langgraph_debate import langgraph_runner

        runner = langgraph_runner(args.url, args.db, args.agents, args.rounds, QUESTION)
    else:
        db = None if args.impl == "debategraph-bare" else args.db
        runner = debategraph_runner(
            args.url, db, args.agents, args.rounds, args.topology,
            sync=args.impl == "debategraph-sync",
        )  # fmt: skip
    serve(runner, args.plan)


if __name__ == "__main__":
    main()
