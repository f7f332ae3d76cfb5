"""Benchmarks of the discussion graph against a simulated OpenAI-compatible endpoint.

Two figures, each printed with its target and PASS/FAIL:

1. Phase wall time: four personas, 200 ms per model call, ``max_concurrency`` 4. Each
   phase's wall time (from the step before it to its last agent's update) must be
   <= 1.3 x its critical path: phase 1 is two sequential calls per agent (400 ms), the
   question, answer and convergence phases and the consensus one call each (200 ms).
2. Prompt tokens: five iterations forced (convergence votes of 0, an insight revised
   every iteration); the prompt tokens of iteration 5 (all its calls) must be <= 1.5 x
   those of iteration 2 (agents read the latest insights and this iteration's exchange
   only, not the whole history).

Usage::

    .venv/bin/python benchmarks/discussion.py            # full run
    .venv/bin/python benchmarks/discussion.py --quick    # smaller smoke variant
    .venv/bin/python benchmarks/discussion.py --json out.json

Exit status 1 if any figure that counts fails, else 0. In ``--quick`` mode the timing
figure (1) is advisory: printed with its verdict but never fails the exit code.
"""

from __future__ import annotations

import contextlib
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

# benchmarks/ is on sys.path when run as a script
from harness import Figure, base_parser, fmt_runs, run_benchmark

from debategraph import build_discussion, recursion_limit
from debategraph.graphs.discussion import GRAPH_NAME
from debategraph.models import ModelSpec
from debategraph.nodes.discussion import (
    CHECK_NODE,
    CONSENSUS_NODE,
    OPEN_ITERATION_NODE,
    PREPARE_NODE,
    QUESTIONS_DONE_NODE,
    RESPONSES_DONE_NODE,
)

if TYPE_CHECKING:
    from tests.openai_stub import StubOpenAIServer

REPO_ROOT = Path(__file__).resolve().parents[1]
LATENCY_S = 0.2
WALL_FACTOR = 1.3
TOKEN_FACTOR = 1.5
CONCURRENCY = 4
PARAGRAPH = (
    "Sparse communication topologies let each debating agent read only a few neighbours, "
    "which keeps accuracy close to a fully connected debate while the prompt of every "
    "agent stays short and the total cost of a debate falls. "
)
PAPER = (
    "# Sparse Debate Topologies\n\n## Abstract\n\n"
    + PARAGRAPH
    + "".join(
        f"\n\n## {title}\n\n" + PARAGRAPH * 4
        for title in ["Introduction", "Method", "Experiments", "Analysis", "Limitations"]
    )
)
AGENT_RE = re.compile(r"You are (.+?), one of the agents")
INSIGHT_ID_RE = re.compile(r"\[([a-z_]+-\d+)\]")
QUESTION_ID_RE = re.compile(r"\[(Q\d+-[a-z_]+-\d+)\]")
ITERATION_RE = re.compile(r"Iteration (\d+)\.")


# --------------------------------------------------------------------------
# Simulated endpoint
# --------------------------------------------------------------------------


def _texts(body: dict[str, Any]) -> tuple[str, str]:
    messages = body.get("messages") or [{}, {}]
    return str(messages[0].get("content", "")), str(messages[1].get("content", ""))


def respond(body: dict[str, Any]) -> Any:
    """Responder: valid tool arguments for each schema the discussion asks for.

    Every agent challenges another agent's first insight and every answer revises it
    (to a text of the same length), so insights keep changing; convergence votes are 0,
    so the discussion runs to its iteration cap.
    """
    tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
    system, task = _texts(body)
    match = AGENT_RE.search(system)
    agent = match.group(1) if match else "consensus"
    if "SectionChoice" in tools:
        return {"section_ids": ["S2", "S3"], "reason": "method and results"}
    if "Analysis" in tools:
        return {
            "insights": [
                {
                    "content": f"{agent} finds point {n}: " + PARAGRAPH[:120],
                    "importance": 0.6,
                    "confidence": 0.7,
                    "evidence": ["the total cost of a debate falls"],
                    "questions": [],
                }
                for n in (1, 2, 3)
            ]
        }
    if "Inquiry" in tools:
        own = agent.lower().replace(" ", "_") + "-"
        target = next(i for i in INSIGHT_ID_RE.findall(task) if not i.startswith(own))
        name = target.split("-")[0].replace("_", " ").title()
        return {
            "questions": [
                {
                    "target_agent": name,
                    "target_insight": target,
                    "type": "challenge",
                    "priority": 0.7,
                    "text": "Does this hold beyond math benchmarks and small models?",
                }
            ]
        }
    if "ResponseSet" in tools:
        it = ITERATION_RE.search(task)
        n = it.group(1) if it else "0"
        return {
            "responses": [
                {
                    "question_id": qid,
                    "answer": "Partly: the evidence covers math only, so I narrow the claim.",
                    "stance": "revise",
                    "revised_insight": f"[rev {n:>2}] " + PARAGRAPH[:120],
                    "confidence": 0.6,
                }
                for qid in QUESTION_ID_RE.findall(task)
            ]
        }
    if "ConvergenceVote" in tools:
        return {"score": 0.0, "reason": "Claims are still being revised."}
    if "ConsensusReport" in tools:
        return {
            "consensus_points": [
                {
                    "statement": "Sparse topologies cut cost.",
                    "supporting": ["Critical Evaluator", "Practical Applicator"],
                    "opposing": [],
                    "strength": 0.7,
                }
            ],
            "divergent_views": [],
            "overview": "A paper on sparse debate topologies.",
            "main_contributions": ["ring topologies for debate"],
            "consensus_assessment": "Useful, narrow evidence.",
            "contested_points": ["generality"],
            "significance": "Cheaper multi-agent reasoning.",
            "overall_confidence": 0.6,
        }
    raise RuntimeError(f"unexpected request with tools {tools}")


def repo_imports() -> tuple[Any, Callable[[dict[str, Any]], int]]:
    """The test suite's stub server and its token counter (imported, not copied)."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from tests.openai_stub import StubOpenAIServer, count_prompt_tokens

    return StubOpenAIServer, count_prompt_tokens


@contextlib.contextmanager
def stub_server(latency_s: float) -> Iterator[StubOpenAIServer]:
    """A simulated OpenAI server answering with :func:`respond`."""
    server_cls, _count = repo_imports()
    with server_cls(respond, latency_s=latency_s) as server:
        yield server


def spec_for(server: StubOpenAIServer) -> ModelSpec:
    """The model spec every figure uses."""
    return ModelSpec(model="sim", base_url=server.url, timeout_s=30, max_retries=0)


def run_config(graph: Any) -> dict[str, Any]:
    """Invoke config: the graph's recursion limit, four calls at once."""
    return {"recursion_limit": recursion_limit(graph), "max_concurrency": CONCURRENCY}


# --------------------------------------------------------------------------
# Figure 1: phase wall time vs critical path
# --------------------------------------------------------------------------

#: Phase -> (the node its step follows, node prefix of its agents or the node itself,
#: sequential calls on its critical path).
PHASES: dict[str, tuple[str, str, int]] = {
    "1 analyse": (PREPARE_NODE, "analyse_", 2),
    "2 ask": (OPEN_ITERATION_NODE, "ask_", 1),
    "3 answer": (QUESTIONS_DONE_NODE, "answer_", 1),
    "4 assess": (RESPONSES_DONE_NODE, "assess_", 1),
    "5 consensus": (CHECK_NODE, CONSENSUS_NODE, 1),
}


def phase_walls(graph: Any) -> dict[str, list[float]]:
    """Stream one discussion; each phase's wall time per occurrence, in seconds.

    A phase's wall time runs from the update of the node its step follows to the update
    of its last agent node (updates are streamed as each task finishes).
    """
    stamps: list[tuple[str, float]] = []
    for chunk in graph.stream({"document": PAPER}, run_config(graph), stream_mode="updates"):
        now = time.perf_counter()
        stamps.extend((node, now) for node in chunk)
    walls: dict[str, list[float]] = {name: [] for name in PHASES}
    for name, (before, prefix, _calls) in PHASES.items():
        start: float | None = None
        last: float | None = None
        for node, at in stamps:
            if node == before:
                if start is not None and last is not None:
                    walls[name].append(last - start)
                start, last = at, None
            elif node.startswith(prefix) and start is not None:
                last = at
        if start is not None and last is not None:
            walls[name].append(last - start)
    return walls


def figure_wall(workdir: Path, *, iterations: int, quick: bool) -> Figure:
    """Each phase's wall time against its critical path, 200 ms per call."""
    with stub_server(LATENCY_S) as server:
        graph = build_discussion(spec_for(server), max_rounds=iterations, threshold=1.0).compile(
            name=GRAPH_NAME
        )
        phase_walls(graph)  # warm-up: connections, schemas
        server.reset_stats()
        walls = phase_walls(graph)
        in_flight = server.max_in_flight
    rows: list[tuple[str, str]] = []
    ratios: dict[str, float] = {}
    for name, (_before, _prefix, calls) in PHASES.items():
        critical = calls * LATENCY_S
        worst = max(walls[name])
        ratios[name] = worst / critical
        rows.append(
            (
                f"phase {name}",
                f"max {worst:.3f} s vs critical path {critical:.3f} s -> "
                f"{ratios[name]:.2f} x   (runs: {fmt_runs(walls[name])})",
            )
        )
    rows.append(("info: max calls in flight", str(in_flight)))
    worst_ratio = max(ratios.values())
    return Figure(
        number=1,
        name="Phase wall time",
        setup=f"4 personas x {iterations} iterations, {LATENCY_S * 1000:.0f} ms per call, "
        f"max_concurrency {CONCURRENCY}, no checkpointer",
        rows=rows,
        target=f"every phase <= {WALL_FACTOR} x its critical path",
        passed=worst_ratio <= WALL_FACTOR,
        advisory=quick,
        values={
            "walls_s": walls,
            "ratios": ratios,
            "worst_ratio": worst_ratio,
            "median_ratio": statistics.median(ratios.values()),
            "max_in_flight": in_flight,
        },
        notes=[
            "critical path: phase 1 = choose + analyse (2 calls) per agent; the other "
            "phases 1 call per agent; agents of a phase run concurrently",
        ],
    )


# --------------------------------------------------------------------------
# Figure 2: prompt tokens per iteration
# --------------------------------------------------------------------------


def iteration_of(body: dict[str, Any]) -> int | None:
    """The iteration a request belongs to (its task says), or None (phase 1, consensus)."""
    _system, task = _texts(body)
    match = ITERATION_RE.search(task)
    return int(match.group(1)) if match else None


def figure_tokens(workdir: Path, *, iterations: int) -> Figure:
    """Prompt tokens of all calls of iteration 2 and of the last iteration."""
    _cls, count_prompt_tokens = repo_imports()
    with stub_server(0.0) as server:
        graph: Any = build_discussion(
            spec_for(server), max_rounds=iterations, threshold=1.0
        ).compile(name=GRAPH_NAME)
        out = graph.invoke({"document": PAPER}, run_config(graph))
        per_iteration: dict[int, int] = {}
        for body in server.requests:
            it = iteration_of(body)
            if it is not None:
                per_iteration[it] = per_iteration.get(it, 0) + count_prompt_tokens(body)
    if out["termination_reason"] != "rounds_completed" or out["iterations_completed"] != iterations:
        raise RuntimeError(
            f"benchmark run went wrong: {out['termination_reason']} after "
            f"{out['iterations_completed']} iteration(s)"
        )
    second, last = per_iteration[2], per_iteration[iterations]
    ratio = last / second
    return Figure(
        number=2,
        name="Prompt tokens",
        setup=f"4 personas x {iterations} iterations (forced: votes 0, a revision every "
        "iteration), zero latency",
        rows=[
            ("iteration 2", f"{second} prompt tokens"),
            (f"iteration {iterations}", f"{last} prompt tokens"),
            ("ratio", f"{ratio:.3f}"),
            ("per iteration", ", ".join(f"{k}: {v}" for k, v in sorted(per_iteration.items()))),
            ("info: total usage", f"{out['usage'].prompt_tokens} prompt tokens"),
        ],
        target=f"iteration {iterations} <= {TOKEN_FACTOR} x iteration 2",
        passed=ratio <= TOKEN_FACTOR,
        values={
            "iterations": iterations,
            "per_iteration": {str(k): v for k, v in sorted(per_iteration.items())},
            "iteration_2": second,
            "last": last,
            "ratio": ratio,
        },
        notes=[
            "tokens counted by the simulated server per request (ceil(chars / 4)); an "
            "iteration's calls are the questions, answers and convergence votes",
        ],
    )


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks; 1 if a counting figure fails, else 0."""
    args = base_parser(__doc__).parse_args(argv)
    quick: bool = args.quick
    return run_benchmark(
        "debategraph discussion benchmark",
        [
            lambda workdir: figure_wall(workdir, iterations=1 if quick else 3, quick=quick),
            lambda workdir: figure_tokens(workdir, iterations=5),
        ],
        args=args,
        quick_note="quick mode: 1 iteration for the timing figure (1), which is advisory",
    )


if __name__ == "__main__":
    sys.exit(main())
