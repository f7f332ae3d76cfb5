"""Benchmarks of the debate graph against a simulated OpenAI-compatible endpoint.

Two figures, each printed with its target and PASS/FAIL:

1. Prompt tokens with ``history="window"``: a two-party debate of 30 rounds (moderator
   and judge on, ``keep_last=4``); the prompt of the last turn must be <= 1.5 x that of
   turn 5 (prompt tokens counted by the simulated server per request). The same debate
   with ``history="full"`` is shown for comparison (its prompts grow with every turn).
2. Orchestration overhead: zero model latency, SQLite checkpoints on a file. Overhead per
   turn = (wall of the graph run - wall of the same debater calls made without LangGraph
   or checkpoints) / turns; must be <= 3 ms.

Usage::

    .venv/bin/python benchmarks/debate.py            # full run
    .venv/bin/python benchmarks/debate.py --quick    # smaller smoke variant
    .venv/bin/python benchmarks/debate.py --json out.json

Exit status 1 if any figure that counts fails, else 0. In ``--quick`` mode the timing
figure (2) is advisory: printed with its verdict but never fails the exit code.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

# benchmarks/ is on sys.path when run as a script
from harness import Figure, base_parser, overhead_figure, run_benchmark

from debategraph import build_debate, recursion_limit
from debategraph.checkpoints import open_checkpointer
from debategraph.graphs.debate import GRAPH_NAME
from debategraph.models import ModelSpec, bind_model
from debategraph.nodes.debate import make_debater
from debategraph.nodes.debate.setup import debate_setup
from debategraph.state.debate import HistoryMode
from debategraph.state.records import Turn, Usage

if TYPE_CHECKING:
    from tests.openai_stub import StubOpenAIServer

REPO_ROOT = Path(__file__).resolve().parents[1]

TOPIC = "This house would ban homework in primary schools."
DEBATERS = ["Affirmative:for the motion", "Negative:against the motion"]
WORDS = 80
KEEP_LAST = 4
#: What a debater (or the summarizer) "writes"; cut to WORDS words.
ARGUMENT_TEXT = (
    "Homework in primary school adds little to learning at that age, while it takes time "
    "from play, sleep and family life. The studies my opponent cites measure older pupils; "
    "for young children the effect on attainment is close to zero, and it widens the gap "
    "between families who can help and those who cannot. Reading together and free play "
    "build the same habits without the stress, so the motion should stand. "
)

WINDOW_FACTOR = 1.5
OVERHEAD_TARGET_MS = 3.0


# --------------------------------------------------------------------------
# Simulated endpoint
# --------------------------------------------------------------------------


def argument_text(salt: str) -> str:
    """About WORDS words of argument, made unique by ``salt``."""
    words = (f"[{salt}] " + ARGUMENT_TEXT * 3).split()
    return " ".join(words[:WORDS])


def respond(body: dict[str, Any]) -> Any:
    """Responder: ~80-word text for plain requests, valid tool args for the officials."""
    tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
    if "ModeratorDecision" in tools:
        return {"settled": False, "leading": "tie", "reason": "Both sides still add points."}
    if "Verdict" in tools:
        return {
            "winner": "Affirmative",
            "scores": [
                {"debater": "Affirmative", "criterion": "logic", "score": 8},
                {"debater": "Negative", "criterion": "logic", "score": 7},
            ],
            "rationale": "The affirmative answered the evidence point directly.",
            "strongest": [
                {"debater": "Affirmative", "argument": "The effect at that age is near zero."},
                {"debater": "Negative", "argument": "Practice builds study habits early."},
            ],
        }
    prompt = json.dumps(body.get("messages"), sort_keys=True)
    return argument_text(hashlib.sha1(prompt.encode()).hexdigest()[:8])


def repo_imports() -> tuple[Any, Callable[[dict[str, Any]], int]]:
    """The test suite's stub server and its token counter (imported, not copied)."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from tests.openai_stub import StubOpenAIServer, count_prompt_tokens

    return StubOpenAIServer, count_prompt_tokens


@contextlib.contextmanager
def stub_server() -> Iterator[StubOpenAIServer]:
    """A zero-latency simulated OpenAI server answering with :func:`respond`."""
    server_cls, _count = repo_imports()
    with server_cls(respond) as server:
        yield server


def spec_for(server: StubOpenAIServer) -> ModelSpec:
    """The model spec every figure uses."""
    return ModelSpec(model="sim", base_url=server.url, timeout_s=30, max_retries=0)


def run_config(graph: Any) -> dict[str, Any]:
    """Invoke config: fresh thread, the graph's recursion limit."""
    return {
        "configurable": {"thread_id": uuid.uuid4().hex},
        "recursion_limit": recursion_limit(graph),
    }


def is_debater_request(body: dict[str, Any]) -> bool:
    """Whether a chat request is a debater's turn (its system message says so)."""
    messages = body.get("messages") or [{}]
    return ", a debater arguing " in str(messages[0].get("content", ""))


def check_output(out: dict[str, Any], rounds: int) -> None:
    """Refuse to report figures of a run that did not do what it should."""
    if out.get("termination_reason") != "rounds_completed":
        raise RuntimeError(f"benchmark run went wrong: {out.get('termination_reason')}")
    if out.get("rounds_completed") != rounds:
        raise RuntimeError(f"expected {rounds} rounds, got {out.get('rounds_completed')}")


# --------------------------------------------------------------------------
# Figure 1: prompt tokens, window vs full
# --------------------------------------------------------------------------


def turn_prompts(
    workdir: Path, history: HistoryMode, rounds: int
) -> tuple[list[int], dict[str, Any]]:
    """Server-counted prompt tokens of every debater turn of one debate, in order."""
    _cls, count_prompt_tokens = repo_imports()
    with stub_server() as server, open_checkpointer(workdir / f"tokens_{history}.sqlite") as s:
        graph = build_debate(
            spec_for(server),
            debaters=DEBATERS,
            max_rounds=rounds,
            words=WORDS,
            moderator=True,
            judge=True,
            history=history,
            keep_last=KEEP_LAST,
        ).compile(checkpointer=s, name=GRAPH_NAME)
        config = run_config(graph)
        out = graph.invoke({"topic": TOPIC}, config)
        check_output(out, rounds)
        sizes = [count_prompt_tokens(b) for b in server.requests if is_debater_request(b)]
        transcript: list[Turn] = graph.get_state(config).values["transcript"]
    # Cross-check: what the server counted is what each Turn recorded as its usage.
    recorded = [t.usage.prompt_tokens for t in transcript if t.stage == "argue"]
    if recorded != sizes or len(sizes) != rounds * len(DEBATERS):
        raise RuntimeError(f"turn prompt sizes disagree: server {sizes}, turns {recorded}")
    return sizes, {
        "calls": server.calls,
        "summarizer_calls": out["usage_by_agent"].get("summarizer", Usage()).calls,
        "summary_words": len(out["summary"].split()),
        "verdict": out["verdict"].winner if out["verdict"] else None,
    }


def figure_window(workdir: Path, *, rounds: int) -> Figure:
    """Prompt tokens of turn 5 and of the last turn, window vs full history."""
    window, info = turn_prompts(workdir, "window", rounds)
    full, _ = turn_prompts(workdir, "full", rounds)
    turn_5, last = window[4], window[-1]
    ratio = last / turn_5
    later = window[4:]
    return Figure(
        number=1,
        name="Prompt tokens (window)",
        setup=f"2 debaters x {rounds} rounds, history=window keep_last={KEEP_LAST}, "
        f"~{WORDS}-word arguments, moderator + judge",
        rows=[
            ("turn 5", f"{turn_5} prompt tokens"),
            (f"turn {len(window)} (last)", f"{last} prompt tokens"),
            ("ratio", f"{ratio:.3f}"),
            ("turns 5..last", f"min {min(later)}, max {max(later)} prompt tokens"),
            (
                "info: history=full",
                f"turn 5 {full[4]}, last {full[-1]} -> ratio {full[-1] / full[4]:.2f}",
            ),
            (
                "info: summarizer",
                f"{info['summarizer_calls']} calls, final summary {info['summary_words']} words",
            ),
        ],
        target=f"last turn <= {WINDOW_FACTOR} x turn 5",
        passed=ratio <= WINDOW_FACTOR,
        values={
            "rounds": rounds,
            "window_turn_prompt_tokens": window,
            "full_turn_prompt_tokens": full,
            "turn_5": turn_5,
            "last": last,
            "ratio": ratio,
            "full_ratio": full[-1] / full[4],
            **info,
        },
        notes=[
            "tokens counted by the simulated server per debater request (ceil(chars / 4) "
            "over all message contents), and checked equal to each Turn's usage",
        ],
    )


# --------------------------------------------------------------------------
# Figure 2: orchestration overhead per turn
# --------------------------------------------------------------------------


def baseline_run(server: StubOpenAIServer, rounds: int) -> float:
    """The same debater calls without LangGraph or checkpoints; wall seconds.

    The graph's own debater node bodies (view of the transcript, prompt, ``text_call``,
    ``Turn`` and word count) run one after another, round by round, on a growing
    transcript, as the graph runs them.
    """
    setup = debate_setup(
        debaters=DEBATERS,
        max_rounds=rounds,
        first_speaker=None,
        words=WORDS,
        moderator=False,
        judge=False,
        history="full",
        keep_last=KEEP_LAST,
        pause_after_round=False,
        time_limit_s=None,
    )
    binding = bind_model(spec_for(server))
    nodes = [make_debater(name, setup, binding) for name in setup.names]
    transcript: list[Turn] = []
    usage = Usage()
    started = time.perf_counter()
    for rnd in range(1, rounds + 1):
        for node in nodes:
            state: Any = {
                "topic": TOPIC,
                "round": rnd,
                "transcript": transcript,
                "summary": "",
                "summarized": 0,
                "usage": usage,
                "usage_by_agent": {},
            }
            update = node.func(state, None)  # the node's sync body, outside LangGraph
            transcript.extend(update["transcript"])
            usage = update["usage"]
    wall = time.perf_counter() - started
    if len(transcript) != rounds * len(DEBATERS) or not all(t.content for t in transcript):
        raise RuntimeError("baseline run went wrong")
    return wall


def timed_debate(graph: Any, rounds: int) -> float:
    """Run one debate on a fresh thread; wall seconds."""
    started = time.perf_counter()
    out = graph.invoke({"topic": TOPIC}, run_config(graph))
    wall = time.perf_counter() - started
    check_output(out, rounds)
    return wall


def figure_overhead(workdir: Path, *, rounds: int, runs: int, quick: bool) -> Figure:
    """Zero latency: (graph wall - direct-calls wall) / turns, SQLite file checkpoints."""
    turns = rounds * len(DEBATERS)
    graph_walls: list[float] = []
    base_walls: list[float] = []
    bare_walls: list[float] = []
    with stub_server() as server, open_checkpointer(workdir / "overhead.sqlite") as saver:
        builder = build_debate(spec_for(server), debaters=DEBATERS, max_rounds=rounds)
        graph = builder.compile(checkpointer=saver, name=GRAPH_NAME)
        bare = builder.compile(name=GRAPH_NAME)
        # Warm-up of every variant, then interleaved measured runs.
        timed_debate(graph, rounds)
        timed_debate(bare, rounds)
        baseline_run(server, rounds)
        for _ in range(runs):
            server.reset_stats()
            graph_walls.append(timed_debate(graph, rounds))
            if server.calls != turns:
                raise RuntimeError(f"expected {turns} calls, the server answered {server.calls}")
            base_walls.append(baseline_run(server, rounds))
            bare_walls.append(timed_debate(bare, rounds))
    return overhead_figure(
        number=2,
        setup=f"2 debaters x {rounds} rounds, history=full, zero latency, SQLite file checkpoints",
        unit="turn",
        count=turns,
        graph_walls=graph_walls,
        base_walls=base_walls,
        bare_walls=bare_walls,
        target_ms=OVERHEAD_TARGET_MS,
        quick=quick,
        note="W_base = the debater node bodies (view, prompt, text_call, Turn, word count) "
        "called one after another, no LangGraph, no checkpoints; each turn of the graph "
        "is its own step, plus open_round and close_round steps per round",
    )


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks; 1 if a counting figure fails, else 0."""
    args = base_parser(__doc__).parse_args(argv)
    quick: bool = args.quick
    runs = 1 if quick else 3
    return run_benchmark(
        "debategraph debate benchmark",
        [
            lambda workdir: figure_window(workdir, rounds=12 if quick else 30),
            lambda workdir: figure_overhead(
                workdir, rounds=10 if quick else 30, runs=runs, quick=quick
            ),
        ],
        args=args,
        quick_note="quick mode: smaller sizes, 1 run per figure; the timing figure (2) is advisory",
    )


if __name__ == "__main__":
    sys.exit(main())
