"""Smoke tests: every benchmark script runs in --quick mode and reports every figure.

Per script: the figures it must report, the ones that must pass, and its own checks of
the JSON payload. Durability's kill -9 and multi-process figures must pass (the issue's
done-when figures); its prune figure must report its numbers, whether or not it reaches
its target, so the exit status only has to match the figures. The embedded model's
benchmark carries the ``embedded`` marker and is skipped where the ``local`` extra is not
installed, unless the real parts are required (``.ci/run``; see :mod:`tests.backends`), as
``tests/test_embedded.py``; so does the eval benchmark's embedded figure, run apart from its
stub-server figures (``eval.py --only ...``). The serving benchmark needs PostgreSQL
(``DEBATEGRAPH_TEST_POSTGRES_URL``) and the server's packages, and is skipped or failed
without them as ``tests/test_serve.py`` is.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.backends import postgres_admin_url, require_module
from tests.groups import EMBEDDED_B

REPO_ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow  # benchmark scripts


def check_composition(figures: dict[str, dict[str, Any]], output: str) -> None:
    agent = figures["As a supervisor's agent"]["values"]
    assert agent["count_problems"] == [], output  # counted, whatever the timing
    calls = {"direct": {"stub": 12}, "agent": {"stub": 12, "boss": 2}}
    assert agent["calls_per_run"] == calls, output  # 4 solvers x 3 rounds; 2 supervisor calls
    assert agent["extra_calls"] == 2, output  # the supervisor's own
    stored = figures["Messages never checkpointed"]["values"]["stored_messages"]
    assert stored == {"messages": 0, "supervisor": 0, "question": 0}, output


def check_debate(figures: dict[str, dict[str, Any]], output: str) -> None:
    window = figures["Prompt tokens (window)"]["values"]
    assert window["full_ratio"] > 2 * window["ratio"], output


def check_discussion(figures: dict[str, dict[str, Any]], output: str) -> None:
    tokens = figures["Prompt tokens"]["values"]
    assert tokens["iterations"] == 5, output
    assert set(tokens["per_iteration"]) == {"1", "2", "3", "4", "5"}, output


def check_durability(figures: dict[str, dict[str, Any]], output: str) -> None:
    kill = figures["kill -9 recovery"]["values"]
    modes = [trial["mode"] for trial in kill["per_trial"]]
    assert kill["trials"] == 2 and modes == ["startup", "after-answer"], output
    shared = figures["multi-process SQLite"]["values"]
    assert (shared["processes"], shared["debates_per_process"]) == (2, 1), output
    prune = figures["prune"]["values"]
    assert prune["bytes_after"] < prune["bytes_before"], output


def check_embedded(figures: dict[str, dict[str, Any]], output: str) -> None:
    throughput = figures["Embedded throughput"]["values"]
    calls = [b for key in ("alone_runs", "concurrent_runs") for b in throughput[key]]
    assert {n for b in calls for n in b["tokens"]} == {throughput["max_tokens"]}, output
    assert all(len(b["tokens"]) == 4 for b in throughput["concurrent_runs"]), output
    runs = figures["CLI solve"]["values"]["runs"]
    assert sorted((r["solvers"], r["rounds"]) for r in runs) == [(2, 1), (4, 1)], output
    assert all(r["completion_tokens"] > 0 and r["calls"] >= r["solvers"] for r in runs), output
    assert all(r["overlap"] > 0 for r in runs), output


def check_eval_stub(figures: dict[str, dict[str, Any]], output: str) -> None:
    throughput = figures["Eval throughput"]["values"]
    assert throughput["calls"] == throughput["expected_calls"] == 16 * 16, output
    assert set(throughput["n"].values()) == {16}, output
    assert throughput["threads"] == {"started": 64, "resumed": 0, "finished": 0}, output
    assert 0.3 <= throughput["accuracy"]["single"] <= 1.0, output  # p = 0.7 a call
    rerun = figures["Eval rerun"]["values"]
    assert rerun["calls"] == 0 and rerun["threads"]["finished"] == 64, output


def check_eval_embedded(figures: dict[str, dict[str, Any]], output: str) -> None:
    values = figures["Embedded model eval"]["values"]
    answered = {m: v["n"] for m, v in values["modes"].items()}
    assert values["matched"] == [], output  # --quick: no matched vote on the embedded model
    rows = {"single", "debate-ring", "debate-ring/weighted"}
    assert answered == dict.fromkeys(rows, 1), output  # --quick: 1 question
    assert values["png"] and values["questions_file"], output
    assert values["docs"] is None, output  # --quick leaves docs/eval alone


def check_vote_then_debate(figures: dict[str, dict[str, Any]], output: str) -> None:
    values = figures["Vote, then debate"]["values"]
    assert {m: v["n"] for m, v in values["modes"].items()} == dict.fromkeys(
        ("vote", "debate-full", "vote-then-debate"), 1
    ), output
    entry = values["vote_then_debate"]
    assert entry["n"] == 1 and 0 <= entry["debated"] <= 1, output
    assert entry["against"] == "debate-full" and entry["how"] == "measured", output
    tested = {t["b"] if t["a"] == "vote-then-debate" else t["a"] for t in entry["tests"]}
    assert tested == {"vote", "debate-full"}, output  # --quick: no matched vote
    assert values["plain_answer"].startswith("On stub @ http"), output  # --quick: the stub


def check_open_agents(figures: dict[str, dict[str, Any]], output: str) -> None:
    endpoints = figures["Two endpoints, CLI"]["values"]
    assert endpoints["count_problems"] == [], output  # counted, whatever the timing
    calls = {label[0]: s["calls"] for label, s in endpoints["endpoints"].items()}
    assert calls == {"A": 4, "B": 4, "C": 0}, output  # 2 solvers x 2 rounds each, C none
    assert figures["Tool loop in-process"]["values"]["tool_calls"] == 4, output
    tools = figures["Tool loop, CLI"]["values"]
    assert tools["tool_calls"] == 4 * 2 * 4, output  # 4 solvers x 2 rounds x 4 calls
    assert tools["calls"] == {"tools": 48, "plain": 8}, output


def check_serve(figures: dict[str, dict[str, Any]], output: str) -> None:
    values = figures["10 debates through the server"]["values"]
    assert (values["n"], values["runs"]) == (10, 1), output
    sides = values["sides"]
    assert set(sides) == {"server", "in_process_postgres", "in_process_sqlite"}, output
    for side in sides.values():
        assert side["finished"] == [10] and side["errors"] == {}, output  # every answer right
        assert side["calls"] == [10 * values["calls_per_debate"]], output
        assert side["debates_per_s"][0] > 0 and side["peak_rss_mb"] > 0, output
        assert values["critical_path_s"] <= side["p50_s"][0] <= side["p95_s"][0], output
    fuzz = figures["schemathesis against the server's OpenAPI"]["values"]
    assert fuzz["cases"] > 0 and fuzz["failures"] == 0, output


def check_fairness(figures: dict[str, dict[str, Any]], output: str) -> None:
    flood = figures["One user floods, another is served"]["values"]
    assert flood["refused_429"] > 0, output  # bob was held to his share ...
    assert flood["refused_429"] == flood["retry_after"], output  # ... told when to come back
    assert flood["accepted"] + flood["refused_429"] == flood["flood"], output
    assert flood["during_finished"], output  # and alice was served
    body = figures["A 5 MB body is refused before it is read whole"]["values"]
    assert {case["status"] for case in body["cases"].values()} == {413}, output


def check_providers(figures: dict[str, dict[str, Any]], output: str) -> None:
    solve = figures["solve within a request limit"]["values"]
    assert solve["calls"] == 12 and solve["limited"] > 0, output  # met the limit, all answered
    scored = figures["eval within a request limit"]["values"]["scored"]
    assert scored == {mode: [5, 0] for mode in ("single", "vote", "debate-ring")}, output
    faults = figures["Random faults"]["values"]
    assert faults["scored"] and faults["retried"] > 0, output
    assert set(faults["same"].values()) == {True}, output
    cost = figures["Cost and a budget"]["values"]
    assert 0 < cost["spent"] <= cost["budget"] < cost["total"] and cost["same"], output
    cache = figures["The response cache"]["values"]
    assert cache["first"] > 0 and cache["decisions"] == 0, output  # nothing paid twice


def check_speed(figures: dict[str, dict[str, Any]], output: str) -> None:
    assert set(figures["One debate"]["values"]["ratios"]) == {"debategraph", "langgraph"}, output
    in_flight = figures["10 debates at once"]["values"]["max_in_flight"]
    # 40 calls (10 debates x 4 solvers) go out at once: more than 32 in flight together is
    # more than any thread pool lets through by default (Python's: min(32, CPUs + 4)). All
    # 40 on a quiet machine; on a busy one a debate's first calls may be answered before
    # the last debate's are sent, so the count is a floor, not an equality.
    assert in_flight["debategraph"] > 32, output
    assert figures["20 debates at once"]["values"]["n"] == 20, output
    assert figures["Start-up and the CLI end to end"]["values"]["import_floor_s"] > 0, output


def check_simulated(figures: dict[str, dict[str, Any]], output: str) -> None:
    """Every population ran the eval's modes and its share is measured from them."""
    values = figures["Voting explains debate's gain (simulated populations)"]["values"]
    assert set(values) == {"independent", "conformist", "herd"}, output
    for population in values.values():
        modes = population["modes"]
        assert {"single", "vote", "debate-full"} <= set(modes), output
        gain = modes["debate-full"]["accuracy"] - modes["single"]["accuracy"]
        if gain > 0:
            share = (modes["vote"]["accuracy"] - modes["single"]["accuracy"]) / gain
            assert population["share"] == pytest.approx(share), output
        else:
            assert population["share"] is None, output


#: How much longer than a case's bounds a busy machine may take (the suite's own workers
#: beside other processes on both cores): the bounds are for a hang, never a figure.
BUSY = 2


@dataclass(frozen=True)
class Case:
    """One benchmark script and what its --quick run must show."""

    script: str
    figures: tuple[str, ...]
    #: Seconds the script may run.
    timeout_s: int
    #: Seconds the whole test may run (pytest-timeout).
    test_timeout_s: int
    #: Figures that must pass (token counts are deterministic: never advisory).
    must_pass: tuple[str, ...] = ()
    #: Exit status must be 0 and timing figures are advisory; otherwise the exit status
    #: only has to match the figures' verdicts.
    exit_zero: bool = True
    #: Script-specific checks of the figures by name (and the output, for messages).
    check: Callable[[dict[str, dict[str, Any]], str], None] | None = None
    #: Runs the embedded model: marked ``embedded``, and needs the ``local`` extra.
    embedded: bool = False
    #: Environment variables the script runs with.
    env: tuple[tuple[str, str], ...] = ()
    #: Arguments after ``--quick`` (a script split across cases).
    args: tuple[str, ...] = ()
    #: Needs PostgreSQL and the server's packages: skipped without them (see
    #: :func:`tests.backends.missing_part`).
    postgres: bool = False

    @property
    def id(self) -> str:
        """The test id: the script's name, then its arguments' last word if it has any."""
        name = self.script.removesuffix(".py")
        return f"{name}-{self.args[-1]}" if self.args else name


CASES = [
    Case(
        "speed.py",
        (
            "One debate",
            "10 debates at once",
            "Client CPU per call",
            "20 debates at once",
            "Start-up and the CLI end to end",
        ),
        timeout_s=170,
        test_timeout_s=180,
        must_pass=("20 debates at once",),
        check=check_speed,
        # Without AutoGen's environment on every machine: the peer is tested on its own.
        env=(("DEBATEGRAPH_PEERS_PYTHON", "/nonexistent/python"),),
    ),
    Case(
        "solver_debate.py",
        ("Wall time", "Prompt tokens", "Orchestration overhead", "Storage"),
        timeout_s=110,
        test_timeout_s=120,
    ),
    Case(
        "debate.py",
        ("Prompt tokens (window)", "Orchestration overhead"),
        timeout_s=30,
        test_timeout_s=60,
        must_pass=("Prompt tokens (window)",),
        check=check_debate,
    ),
    Case(
        "discussion.py",
        ("Phase wall time", "Prompt tokens"),
        timeout_s=40,
        test_timeout_s=60,
        must_pass=("Prompt tokens",),
        check=check_discussion,
    ),
    Case(
        "durability.py",
        ("kill -9 recovery", "multi-process SQLite", "prune"),
        # Beside the suite's other workers its CLI processes (4 at once) wait on the cores:
        # the bound is for a hang, not a figure.
        timeout_s=150,
        test_timeout_s=160,
        must_pass=("kill -9 recovery", "multi-process SQLite"),
        exit_zero=False,
        check=check_durability,
    ),
    # 10 debates through `debategraph serve` (Aegra on PostgreSQL), beside in-process.
    Case(
        "serve.py",
        ("10 debates through the server", "schemathesis against the server's OpenAPI"),
        timeout_s=180,
        test_timeout_s=200,
        must_pass=("10 debates through the server", "schemathesis against the server's OpenAPI"),
        check=check_serve,
        postgres=True,
        args=("--only", "throughput", "--only", "fuzz"),
    ),
    # One user floods the server (40 runs at once), another is served; a 5 MB body: 413,
    # both on one server.
    Case(
        "serve.py",
        ("One user floods, another is served", "A 5 MB body is refused before it is read whole"),
        timeout_s=150,
        test_timeout_s=170,
        check=check_fairness,
        postgres=True,
        args=("--only", "fairness"),
    ),
    Case(
        "checkpoint_bytes.py",
        ("Bytes per agent turn", "Where the bytes go"),
        timeout_s=60,
        test_timeout_s=90,
        must_pass=("Bytes per agent turn", "Where the bytes go"),
        exit_zero=False,  # no timing figure: none is advisory
    ),
    Case(
        "chat.py",
        ("Selection robustness", "Interjection latency"),
        timeout_s=90,
        test_timeout_s=100,
        must_pass=("Selection robustness", "Interjection latency"),
        exit_zero=False,  # no timing figure: none is advisory
    ),
    # The stub server's figures in the plain suite; the embedded model's marked (~60 s).
    Case(
        "eval.py",
        ("Eval throughput", "Eval rerun"),
        timeout_s=60,
        test_timeout_s=90,
        must_pass=("Eval rerun",),
        check=check_eval_stub,
        args=("--only", "stub"),
    ),
    Case(
        "eval.py",
        ("Embedded model eval",),
        timeout_s=150,
        test_timeout_s=170,
        must_pass=("Embedded model eval",),
        check=check_eval_embedded,
        embedded=True,
        args=("--only", "embedded"),
    ),
    Case(
        "vote_then_debate.py",
        ("Vote, then debate",),
        timeout_s=150,
        test_timeout_s=170,
        must_pass=("Vote, then debate",),
        check=check_vote_then_debate,
        exit_zero=False,  # no timing figure: none is advisory
    ),
    # The CLI figures (two endpoints, --tools calculator) and the in-process tool loop.
    Case(
        "open_agents.py",
        ("Two endpoints, CLI", "Tool loop in-process", "Tool loop, CLI"),
        timeout_s=60,
        test_timeout_s=90,
        check=check_open_agents,
        args=("--only", "1,3,5"),
    ),
    # A debate as a supervisor's agent, and its messages never in a checkpoint.
    Case(
        "composition.py",
        ("As a supervisor's agent", "Messages never checkpointed"),
        timeout_s=40,
        test_timeout_s=60,
        must_pass=("Messages never checkpointed",),
        check=check_composition,
    ),
    # A solve and an eval against a rate-limited stub, one with 15% random faults, an
    # eval's cost and budget, and the response cache.
    Case(
        "providers.py",
        (
            "solve within a request limit",
            "eval within a request limit",
            "Random faults",
            "Cost and a budget",
            "The response cache",
        ),
        timeout_s=150,
        test_timeout_s=160,
        must_pass=("Random faults", "Cost and a budget", "The response cache"),
        check=check_providers,
    ),
    # The eval through the CLI on three simulated populations (4 questions each).
    Case(
        "simulated.py",
        ("Voting explains debate's gain (simulated populations)",),
        timeout_s=60,
        test_timeout_s=90,
        exit_zero=False,  # no timing figure; a small sample may miss the direction
        check=check_simulated,
    ),
    Case(
        "embedded.py",
        ("Embedded throughput", "CLI solve"),
        timeout_s=240,
        test_timeout_s=260,
        check=check_embedded,
        embedded=True,
    ),
]


def run_in_own_group(
    command: list[str], *, timeout_s: float, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """Run a benchmark script in a process group of its own; on timeout kill the group.

    A script starts ``debategraph`` processes of its own (and they an embedded model's
    server): killing the script alone would leave them running, loading the machine for
    every test after it.
    """
    proc = subprocess.Popen(
        command,
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(f"{command[1]} ran past {timeout_s} s:\n{stdout}{stderr}")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # anything it left behind
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            case,
            id=case.id,
            marks=[
                pytest.mark.timeout(case.test_timeout_s * BUSY),
                *([pytest.mark.embedded, EMBEDDED_B] if case.embedded else []),
            ],
        )
        for case in CASES
    ],
)
def test_benchmark_quick(case: Case, tmp_path: Path) -> None:
    if case.embedded:
        require_module("xllamacpp", "the embedded model needs: pip install -e '.[local]'")
    if case.postgres:
        require_module("aegra_api", "pip install -e '.[dev]' installs the serve extra (aegra-api)")
        require_module("langgraph_sdk", "pip install -e '.[dev]' installs langgraph-sdk")
        postgres_admin_url()  # the script would start a server of its own: skip instead
    script = REPO_ROOT / "benchmarks" / case.script
    out_json = tmp_path / "figures.json"
    proc = run_in_own_group(
        [sys.executable, str(script), "--quick", *case.args, "--json", str(out_json)],
        timeout_s=case.timeout_s * BUSY,
        env={**os.environ, **dict(case.env)},
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode in ((0,) if case.exit_zero else (0, 1)), output
    for name in case.figures:
        assert name in output, f"figure {name!r} missing from:\n{output}"
    if case.exit_zero:
        assert "advisory" in output
    payload = json.loads(out_json.read_text())
    assert [f["name"] for f in payload["figures"]] == list(case.figures)
    assert payload["mode"] == "quick"
    by_name = {f["name"]: f for f in payload["figures"]}
    assert all(by_name[name]["passed"] for name in case.must_pass), output
    counted = [f["passed"] for f in payload["figures"] if not f["advisory"]]
    assert proc.returncode == (0 if all(counted) else 1), output
    if case.check is not None:
        case.check(by_name, output)


def test_report_tables_every_figure_and_says_why_one_missed() -> None:
    """``make bench``'s report: a row per figure, and the reason a missed one gives."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("report", REPO_ROOT / "benchmarks/report.py")
    assert spec is not None and spec.loader is not None
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)

    def figure(name: str, passed: bool, why: str = "") -> dict[str, Any]:
        return {
            "name": name, "target": "<= 1 | 2", "headline": f"{name} measured", "setup": "how",
            "passed": passed, "advisory": False, "why": why,
        }  # fmt: skip

    payload = {"figures": [figure("Fast", True), figure("Slow", False, "imports take 2 s")]}
    text = report.render(
        [("speed.py", "Speed", payload, 1), ("embedded.py", "Embedded", None, 2)], quick=True
    )
    assert "| Fast | <= 1 \\| 2 | Fast measured | pass | how (`speed.py`) |" in text
    assert "| Slow | <= 1 \\| 2 | Slow measured | FAIL |" in text
    assert "| Embedded | - | did not run (exit 2) | FAIL | `embedded.py` |" in text
    assert "**Slow** (Slow measured): imports take 2 s" in text
    assert "2 figure(s) failed." in text and "Machine: " in text
