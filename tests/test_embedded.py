"""End to end on the embedded model: a real llama.cpp server with SmolLM2, reached over HTTP.

These prove the wiring (server start, grammar-constrained tool calls, checkpoints, cleanup),
never answer quality. They run in CI (``.ci/run`` requires them: see :mod:`tests.backends`);
elsewhere they are skipped only if the ``local`` extra is not installed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from debategraph.local import find_packaged_gguf
from tests.backends import require_module
from tests.groups import EMBEDDED_A, EMBEDDED_B
from tests.processes import embedded_servers

pytestmark = pytest.mark.embedded  # and each test's chain: EMBEDDED_A or EMBEDDED_B

# Skipped without the ``local`` extra; failed instead where the real parts are required.
require_module("xllamacpp", "the embedded model needs: pip install -e '.[local]'")

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "Tom has 3 apples and buys 5 more. How many apples does he have?"
#: Short turns keep the embedded model quick: these tests prove the wiring, so a solver's
#: reasoning may be cut short (a structured reply cut off mid-JSON is closed and kept when
#: complete enough, else retried, else the agent abstains: each test allows for that).
SHORT = ["--max-tokens", "64"]


def wait_until(predicate: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.2)
    return False


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "debategraph.cli", *args]


@EMBEDDED_A
def test_gguf_found_through_distribution_files() -> None:
    path = find_packaged_gguf()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.stat().st_size > 50_000_000


@EMBEDDED_A
def test_solve_on_embedded_model(tmp_path: Path) -> None:
    """The README quickstart's first debate as written, its replies capped for CI's time.

    ``--json`` reads what it did; ``--max-tokens 64`` keeps it to about 15 s of CPU (the
    embedded model's default of 320 tokens a reply took 243 s of CPU on a busy machine:
    the wiring is the same).
    """
    from tests.test_newcomer import quickstart_commands

    first = next(c for c in quickstart_commands() if c[1:2] == ["solve"])
    args = [*first[1:], "--json", *SHORT]
    proc = subprocess.Popen(
        cli(*args, "--db", str(tmp_path / "d.sqlite")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started: set[int] = set()  # the servers this run started (others' tests run beside it)
    assert wait_until(lambda: started.update(embedded_servers(proc.pid)) or started, 60)
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr
    result = json.loads(stdout)
    assert result["termination_reason"] == "rounds_completed"
    assert [r["round"] for r in result["rounds"]] == [1, 2]
    assert result["usage"]["calls"] >= 6  # 3 solvers x 2 rounds
    assert result["usage"]["prompt_tokens"] > 0 and result["usage"]["completion_tokens"] > 0
    assert "answer" in result  # a voted answer, or None if every solver abstained
    assert sum(result["votes"].values()) <= 3
    assert wait_until(lambda: not (started & embedded_servers()), 10), "embedded server left"


def solve_until(marker: str, *args: str) -> tuple[subprocess.Popen[str], list[str]]:
    """Start a 2-solver ``solve`` and read its stderr up to the line holding ``marker``."""
    proc = subprocess.Popen(
        cli("solve", QUESTION, "--agents", "2", *SHORT, *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if marker in line:
            break
    return proc, seen


@EMBEDDED_B
def test_kill_9_leaves_no_server_and_resumes(tmp_path: Path) -> None:
    db = str(tmp_path / "d.sqlite")
    # Killed after round 1: the resume runs round 2 only (round 1 was checkpointed).
    proc, _ = solve_until("round 1 done", "--rounds", "2", "--thread", "k9", "--db", db)
    servers = embedded_servers(proc.pid)
    assert servers, "the CLI should have started an embedded server"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert wait_until(lambda: not (servers & embedded_servers()), 15), "orphaned llama.cpp server"
    done = subprocess.run(
        cli("resume", "k9", "--db", db, "--json"), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["termination_reason"] == "rounds_completed"
    assert [r["round"] for r in result["rounds"]] == [1, 2]


@EMBEDDED_B  # chain B: the kill -9 test, the embedded benchmarks and this: about even
def test_discuss_on_embedded_model_writes_report(tmp_path: Path) -> None:
    paper = tmp_path / "paper.md"
    paper.write_text(
        "# Sparse Debate Helps\n\n## Abstract\nSparse topologies make debate cheaper.\n\n"
        "## Method\nAgents on a ring read their neighbours.\n\n## Results\nThe ring matches.\n"
    )
    personas = tmp_path / "personas.json"  # two, not the default four: CI's time counts
    personas.write_text(
        json.dumps([{"name": "Critic", "focus": "methods"}, {"name": "Builder", "focus": "uses"}])
    )
    report = tmp_path / "report.md"
    args = ["discuss", str(paper), "--rounds", "1", "--report", str(report), "--json", *SHORT]
    args += ["--persona", str(personas)]
    proc = subprocess.run(
        cli(*args, "--db", str(tmp_path / "d.sqlite")),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["termination_reason"] in {"converged", "stalled", "rounds_completed"}
    # 2 x (choose, analyse, ask, assess) + consensus = 9 nominal; 7 keeps the slack that the
    # bound for the default four personas had (13 of 17).
    assert result["usage"]["calls"] >= 7
    spoke = set(result["usage_by_agent"])
    assert {"Critic", "Builder"} <= spoke and "Critical Evaluator" not in spoke
    assert report.read_text().startswith("# Discussion report: Sparse Debate Helps")


@EMBEDDED_A
def test_chat_on_embedded_model(tmp_path: Path) -> None:
    args = ["chat", "Write a slogan for a bakery.", "--rounds", "2", "--json", *SHORT]
    args += ["--select", "llm", "--max-in-a-row", "1"]
    proc = subprocess.run(
        cli(*args, "--db", str(tmp_path / "d.sqlite")), capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["termination_reason"] in {"matched", "max_turns"}
    assert 1 <= result["turns"] <= 2
    assert result["transcript"][0]["agent"] == "user"
    assert {s["method"] for s in result["selections"]} <= {"llm", "fallback", "guard"}
    assert result["usage"]["completion_tokens"] > 0


@EMBEDDED_A
def test_eval_on_embedded_model(tmp_path: Path) -> None:
    """One question in single and debate-ring mode, then a rerun that calls nothing.

    One question, not more: each costs about 10 s of CPU on the embedded model, and the
    wiring (threads, modes, files, the rerun) is the same for one as for many.
    """
    dataset = tmp_path / "gsm.jsonl"
    rows = [("Tom has 3 apples and buys 5 more. How many apples?", 8)]
    dataset.write_text(
        "".join(json.dumps({"question": q, "answer": f"so #### {a}"}) + "\n" for q, a in rows)
    )
    out = tmp_path / "out"
    args = cli("eval", "gsm8k", "--dataset", str(dataset), "--out", str(out),
               "--modes", "single,debate-ring", "--agents", "2", "--rounds", "2",
               "--parallel", "2", "--no-matched", "--json", *SHORT)  # fmt: skip
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    modes = {m["mode"]: m for m in result["modes"]}
    assert [modes[m]["n"] for m in ("single", "debate-ring")] == [1, 1]
    assert modes["single"]["calls"] >= 1  # a retry after unusable output counts as a call
    assert modes["debate-ring"]["calls"] >= 4  # 2 solvers x 2 rounds
    assert all(m["prompt_tokens"] > 0 for m in modes.values())
    assert 0 <= modes["single"]["ci_low"] <= modes["single"]["ci_high"] <= 1
    assert (out / "accuracy.png").stat().st_size > 1000
    assert result["meta"]["threads"]["started"] == 2
    # Read back: no model (nor its server) started. A server that started would refuse
    # these threads (a check made only when one starts), so a clock need not say it.
    refused = {**os.environ, "DEBATEGRAPH_LOCAL_THREADS": "none"}
    again = subprocess.run(args, capture_output=True, text=True, timeout=120, env=refused)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["meta"]["threads"] == {
        "started": 0,
        "resumed": 0,
        "finished": 2,
    }


@EMBEDDED_A
def test_meeting_on_embedded_model(tmp_path: Path) -> None:
    """Two short stages through the CLI (the notebook runs the default three)."""
    stages = tmp_path / "stages.yaml"
    stages.write_text(
        "- name: pitch\n  participants: ['Presenter: states the proposal in two sentences']\n"
        "- name: critique\n  participants: ['Skeptic: names its biggest risk']\n"
    )
    args = ["meeting", "Should we move to a four-day week?", "--stages", str(stages), "--json"]
    args += SHORT
    proc = subprocess.run(
        cli(*args, "--rounds", "1", "--db", str(tmp_path / "d.sqlite")),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["termination_reason"] == "completed"
    said = [(m["agent"], m["stage"]) for m in result["transcript"] if m["role"] == "agent"]
    assert said[:2] == [("Presenter", "pitch"), ("Skeptic", "critique")]
    assert all(m["id"] and "round" in m for m in result["transcript"])
    assert "decision" in result  # typed, or None with a note when the model gave nothing usable


@EMBEDDED_A
def test_server_killed_mid_run_is_named_and_resume_finishes(tmp_path: Path) -> None:
    db = str(tmp_path / "d.sqlite")
    proc, seen = solve_until("round 1", "--rounds", "2", "--thread", "segv", "--db", db)
    (server,) = embedded_servers(proc.pid)
    time.sleep(0.5)  # calls of round 1 are in flight
    os.kill(server, signal.SIGSEGV)
    rest = proc.stderr.read()
    assert proc.wait(timeout=120) == 1, "".join(seen) + rest
    (line,) = [x for x in rest.splitlines() if x.startswith("debategraph: error:")]
    assert "embedded model process died (SIGSEGV, signal 11); last log line:" in line
    assert "unreachable" not in line and "thread segv is resumable" in line
    done = subprocess.run(
        cli("resume", "segv", "--db", db, "--json"), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["termination_reason"] == "rounds_completed"
    assert [r["round"] for r in result["rounds"]] == [1, 2]


@EMBEDDED_A
def test_four_slots_generate_at_the_same_time() -> None:
    from langchain_core.messages import HumanMessage

    from debategraph.models import ModelSpec, get_chat_model

    chat = get_chat_model(ModelSpec(slots=4, max_tokens=48, temperature=0.0)).chat
    spans: dict[int, list[float]] = {}

    def stream(i: int) -> None:
        for chunk in chat.stream([HumanMessage(f"Tell story number {i} about a cat.")]):
            if chunk.text:
                spans.setdefault(i, []).append(time.monotonic())

    import threading

    threads = [threading.Thread(target=stream, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(spans) == 4
    first_tokens = [times[0] for times in spans.values()]
    last_tokens = [times[-1] for times in spans.values()]
    # All four were generating at once: each had its first token before any had its last.
    assert max(first_tokens) < min(last_tokens), spans


@EMBEDDED_A
def test_streamed_debate_turns_report_usage() -> None:
    from debategraph.graphs.debate import build_debate
    from debategraph.models import ModelSpec

    graph = build_debate(
        ModelSpec(max_tokens=40), debaters=["Ann:for", "Ben:against"], max_rounds=1
    ).compile(name="debate")
    pieces = 0
    final: dict[str, object] = {}
    for mode, chunk in graph.stream(
        {"topic": "Tea beats coffee"}, stream_mode=["messages", "values"]
    ):
        if mode == "messages":
            pieces += bool(getattr(chunk[0], "content", ""))
        else:
            final = chunk
    assert pieces > 4, "the turns were not streamed token by token"
    turns = [t for t in final["transcript"] if t.agent in {"Ann", "Ben"}]  # type: ignore[attr-defined]
    assert len(turns) == 2
    assert all(t.usage.completion_tokens > 0 and t.usage.prompt_tokens > 0 for t in turns)
    assert not any(t.usage.estimated for t in turns)  # counted by the server, in the stream
