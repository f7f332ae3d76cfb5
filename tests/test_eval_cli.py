"""``debategraph eval`` end to end through the CLI, against the stub HTTP server."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from debategraph.eval.modes import DEFAULT_MODES, MODES
from debategraph.eval.plan import EvalPlan
from debategraph.eval.records import Item
from tests.conftest import one_error_line, run_cli, stub_args
from tests.eval_data import (
    band,
    chance_responder,
    choice_responder,
    plurality_accuracy,
    write_gsm8k,
    write_mcq,
)
from tests.openai_stub import StubOpenAIServer
from tests.processes import takes_ctrl_c

P_RIGHT = 0.6
WRONG_VALUES = 2
VOTERS = 3
QUESTIONS = 300


def eval_args(
    server: StubOpenAIServer, kind: str, dataset: Path, out: Path, *extra: str
) -> list[str]:
    """``debategraph eval KIND`` against the stub, checkpoints in ``out``."""
    args = stub_args(server, out / "checkpoints.sqlite", *extra)
    return ["eval", kind, "--dataset", str(dataset), "--out", str(out), *args]


@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_single_and_vote_land_in_their_binomial_bands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each call is right with probability p: single ~ p, vote ~ the plurality theory."""
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", QUESTIONS)
    out = tmp_path / "out"
    with StubOpenAIServer(chance_responder(P_RIGHT, WRONG_VALUES)) as server:
        args = eval_args(
            server, "gsm8k", dataset, out,
            "--modes", "single,vote", "--agents", str(VOTERS), "--parallel", "16", "--json",
        )  # fmt: skip
        code, stdout, err = run_cli(args, capsys)
        assert code == 0, err
        assert len(server.requests) == QUESTIONS * (1 + VOTERS)
    result = json.loads(stdout)
    modes = {m["mode"]: m for m in result["modes"]}
    assert modes["single"]["n"] == modes["vote"]["n"] == QUESTIONS
    low, high = band(P_RIGHT, QUESTIONS)
    assert low <= modes["single"]["accuracy"] <= high
    expected = plurality_accuracy(P_RIGHT, VOTERS, WRONG_VALUES)
    assert expected > P_RIGHT + 0.05  # the theory says voting helps here: the test can tell
    low, high = band(expected, QUESTIONS)
    assert low <= modes["vote"]["accuracy"] <= high
    for figures in modes.values():
        ci_low, ci_high = figures["ci95"]
        assert ci_low < figures["accuracy"] < ci_high
        assert figures["calls"] == (1 if figures["mode"] == "single" else VOTERS)
        assert figures["abstention_rate"] == 0
        assert figures["prompt_tokens"] > 0
    (pair,) = result["comparisons"]
    assert (pair["a"], pair["b"], pair["n"]) == ("single", "vote", QUESTIONS)
    assert 0 <= pair["p_value"] <= 1
    rows = list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))
    assert len(rows) == 2 * QUESTIONS
    right = sum(r["correct"] == "True" for r in rows if r["mode"] == "vote")
    assert right == modes["vote"]["correct"]
    assert (out / "accuracy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((out / "results.json").read_text())["modes"] == result["modes"]


@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_a_finished_eval_reruns_without_a_model_call(
    tmp_path: Path, checkpoint_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """On either checkpoint backend (``--db``): the second run reads every answer back."""
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 6)
    out = tmp_path / "out"
    with StubOpenAIServer(chance_responder(0.5, 3)) as server:
        args = eval_args(server, "gsm8k", dataset, out, "--modes", "single,debate-ring", "--json")
        args += ["--db", checkpoint_url]  # the last --db wins
        code, first, err = run_cli(args, capsys)
        assert code == 0, err
        calls = len(server.requests)
        (matched,) = json.loads(first)["matched"]  # debate-ring's vote at its budget
        k = matched["k"]
        assert calls == 6 * (1 + 3 * 2 + k)  # single; 3 solvers x 2 rounds; vote@k
        code, again, err = run_cli(args, capsys)
        assert code == 0, err
        assert len(server.requests) == calls
    before, after = json.loads(first), json.loads(again)
    # The same figures; the wall time read from the checkpoints, not timed again.
    assert [{**m, "wall_s": 0} for m in after["modes"]] == [
        {**m, "wall_s": 0} for m in before["modes"]
    ]
    assert after["matched"] == before["matched"]
    assert before["meta"]["threads"] == {"started": 18, "resumed": 0, "finished": 0}
    assert after["meta"]["threads"] == {"started": 0, "resumed": 0, "finished": 18}
    # each run records the machine's load beside its wall time (1, 5 and 15-minute averages)
    for run in (before, after):
        load = run["meta"]["load"]
        assert set(load) == {"before", "after"} and all(len(load[k]) == 3 for k in load)
    assert not (out / "checkpoints.sqlite").exists()  # --db, not the default in --out


@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_an_interrupted_eval_resumes_without_redoing_finished_questions(tmp_path: Path) -> None:
    """Ctrl-C in the middle, then the same command: only what was left is asked."""
    n, agents, rounds = 12, 3, 2
    per_question = 1 + agents * rounds
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", n)
    out = tmp_path / "out"
    with StubOpenAIServer(chance_responder(0.5, 3), latency_s=0.05) as server:
        args = [
            sys.executable, "-m", "debategraph.cli",
            *eval_args(server, "gsm8k", dataset, out, "--modes", "single,debate-ring",
                       "--parallel", "2", "--no-matched", "--json"),
        ]  # fmt: skip
        env = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1"}
        proc = subprocess.Popen(
            args,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            preexec_fn=takes_ctrl_c,
        )
        deadline = time.monotonic() + 60
        while len(server.requests) < n * per_question // 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err.decode()
        assert "rerun the same command to resume" in err.decode()
        first = len(server.requests)
        assert first < n * per_question
        server.reset_stats()
        done = subprocess.run(args, capture_output=True, env=env, timeout=120, check=False)
        assert done.returncode == 0, done.stderr.decode()
        second = len(server.requests)
    result = json.loads(done.stdout)
    threads = result["meta"]["threads"]
    assert threads["finished"] >= 1  # read back, not asked again
    assert sum(threads.values()) == 2 * n
    # Only the calls of steps in flight at the interrupt are asked twice.
    assert first + second <= n * per_question + 2 * agents
    assert all(m["n"] == n for m in result["modes"])


def test_mcq_reads_choice_letters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = write_mcq(tmp_path / "mcq.jsonl", 8)
    out = tmp_path / "out"
    with StubOpenAIServer(choice_responder) as server:
        args = eval_args(server, "mcq", dataset, out, "--modes", "single,vote", "--json")
        code, stdout, err = run_cli(args, capsys)
        assert code == 0, err
        prompt = json.dumps(server.requests[0]["messages"])
    assert "A) option" in prompt and "D) option" in prompt
    result = json.loads(stdout)
    assert [m["accuracy"] for m in result["modes"]] == [1.0, 1.0]
    rows = list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))
    assert {r["answer"] for r in rows} == {"A", "B", "C", "D"}


def test_the_printed_table_has_intervals_and_the_paired_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 5)
    with StubOpenAIServer(chance_responder(0.5, 2)) as server:
        args = eval_args(server, "gsm8k", dataset, tmp_path / "out", "--modes", "single,vote")
        code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    assert "single" in stdout and "vote" in stdout
    assert re.search(r"\[\d\.", stdout)  # the Wilson interval (its cell may wrap, or be cut)
    assert "McNemar" in stdout
    assert "10 started, 0 resumed, 0 read back" in err  # 5 questions x 2 modes


@pytest.mark.parametrize(
    ("make", "extra", "message"),
    [
        (None, [], "no such file"),
        ("notjson", [], "line 2: not JSON"),
        ("nofield", [], "no questions (1 line skipped: missing field 'answer'"),
        ("ok", ["--modes", "single,chess"], "unknown mode 'chess'"),
        ("ok", ["--parallel", "0"], "--parallel 0 must be at least 1"),
        ("ok", ["--agents", "1"], "--agents 1 must be at least 2"),
        ("ok", ["--offset", "50"], "--offset 50"),
        ("ok", ["--limit", "0"], "--limit"),
        ("ok", ["--out", "/proc/no/such"], "not writable"),
        ("ok", ["--out", "FILE"], "not writable"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: str | None,
    extra: list[str],
    message: str,
) -> None:
    dataset = tmp_path / "data.jsonl"
    if make == "ok":
        write_gsm8k(dataset, 3)
    elif make == "notjson":
        dataset.write_text('{"question": "q", "answer": "#### 1"}\nnot json\n')
    elif make == "nofield":
        dataset.write_text('{"question": "q"}\n')
    if "FILE" in extra:  # --out names a regular file
        (tmp_path / "FILE").write_text("keep me")
        extra = [str(tmp_path / "FILE") if a == "FILE" else a for a in extra]
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        args = eval_args(server, "gsm8k", dataset, tmp_path / "out", *extra)
        code, _, err = run_cli(args, capsys)
        assert not server.requests
    assert code == 2, err
    assert message in one_error_line(err)


def test_unusable_gold_is_skipped_and_a_big_limit_clamped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 3)
    with dataset.open("a", encoding="utf-8") as f:
        f.write(json.dumps({"question": "Item 9: ?", "answer": "#### many"}) + "\n")
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        args = eval_args(
            server,
            "gsm8k",
            dataset,
            tmp_path / "out",
            "--modes",
            "single",
            "--limit",
            "50",
            "--json",
        )
        code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    assert "1 line skipped: gold answer not a number (line 4)" in err
    assert "--limit 50" in err
    result = json.loads(stdout)
    assert result["meta"]["skipped"] == 1
    assert result["modes"][0]["n"] == 3
    assert result["modes"][0]["accuracy"] == 1.0


def test_the_eval_threads_are_listed_and_shown_by_the_thread_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 2)
    out = tmp_path / "out"
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        code, stdout, err = run_cli(
            eval_args(server, "gsm8k", dataset, out, "--modes", "single", "--json"), capsys
        )
        assert code == 0, err
    thread = json.loads(stdout)["meta"]["threads"]
    rows = list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))
    db = str(out / "checkpoints.sqlite")
    code, listing, err = run_cli(["threads", "--db", db, "--json"], capsys)
    assert code == 0, err
    listed = {t["thread_id"]: t for t in json.loads(listing)}
    assert all(listed[r["thread_id"]]["status"] == "finished" for r in rows)
    code, shown, err = run_cli(["show", rows[0]["thread_id"], "--db", db, "--json"], capsys)
    assert code == 0, err
    assert json.loads(shown)["answer"] == rows[0]["gold"]
    assert thread["started"] == 2


def test_a_failed_call_leaves_a_thread_the_rerun_resumes(
    tmp_path: Path, checkpoint_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 503 mid-round stops the eval with one line; the rerun resumes that very thread.

    Only that round's calls are asked again: the failed one, and those still in flight
    when it failed (cancelled); the other questions' and rounds' answers were saved.
    """
    n, per_question = 3, 1 + 3 * 2
    answer = chance_responder(0.5, 3)
    seen = [0]

    def respond(request: dict[str, object]) -> object:
        seen[0] += 1
        if seen[0] == 10:  # question 2's debate, round 1: the next request fails
            server.inject("503")
        return answer(request)

    dataset = write_gsm8k(tmp_path / "gsm.jsonl", n)
    with StubOpenAIServer(respond) as server:
        args = eval_args(server, "gsm8k", dataset, tmp_path / "out", "--parallel", "1")
        args += ["--modes", "single,debate-ring", "--no-matched", "--json", "--db", checkpoint_url]
        code, _, err = run_cli(args, capsys)
        assert code == 1, err
        line = one_error_line(err)
        assert "line 2 in mode debate-ring" in line
        assert "rerun the same command to resume" in line
        assert len(server.requests) == 11
        code, stdout, err = run_cli(args, capsys)
        assert code == 0, err
        asked_again = len(server.requests) - n * per_question
        assert 1 <= asked_again <= 3  # the failed call (+ its round's calls in flight)
    result = json.loads(stdout)
    assert result["meta"]["threads"] == {"started": 1 * 2, "resumed": 1, "finished": 3}
    assert all(m["n"] == n for m in result["modes"])


def test_another_model_does_not_read_back_this_ones_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 2)
    out = tmp_path / "out"

    def thread_ids() -> set[str]:
        return {r["thread_id"] for r in csv.DictReader((out / "results.csv").open())}

    # It serves both models (the CLI refuses a model its endpoint does not list).
    with StubOpenAIServer(chance_responder(1.0, 1), models=("stub", "another")) as server:
        args = eval_args(server, "gsm8k", dataset, out, "--modes", "single", "--json")
        code, _, err = run_cli(args, capsys)
        assert code == 0, err
        first = thread_ids()
        code, second, err = run_cli([*args, "--model", "another"], capsys)  # the last wins
        assert code == 0, err
        assert len(server.requests) == 4
    assert json.loads(second)["meta"]["threads"]["started"] == 2
    assert not first & thread_ids()


def test_thread_ids_stay_those_of_earlier_versions() -> None:
    """A rerun after an upgrade finds the threads it started: the ids do not change.

    The ids were computed before ``rounds`` was renamed ``max_rounds`` in the settings.
    """
    plan = EvalPlan(
        modes=MODES,
        agents=3,
        rounds=2,
        neighbours=1,
        parallel=1,
        model={"model": "m"},
        model_key={"model": "m", "base_url": "http://x"},
    )
    assert plan.settings("debate-ring")["max_rounds"] == 2
    item = Item(line=7, question="2+3?", gold="5")
    assert [plan.thread_id(mode, item) for mode in DEFAULT_MODES] == [
        "eval-single-7-c09ffbfde9",
        "eval-vote-7-7100e190f2",
        "eval-debate-ring-7-439aeefc0e",
        "eval-debate-full-7-0c6772a1ff",
    ]


def arithmetic_responder(request: dict[str, object]) -> dict[str, object]:
    """Works out 'What is a + b?' (the generated question) exactly."""
    found = re.search(r"What is (\d+) \+ (\d+)\?", json.dumps(request["messages"]))
    value = int(found.group(1)) + int(found.group(2)) if found else -1
    return {"reasoning": f"it is {value}", "answer": str(value), "confidence": 0.9}


def test_arithmetic_writes_its_questions_then_runs_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    with StubOpenAIServer(arithmetic_responder) as server:
        args = ["eval", "arithmetic", "--count", "4", "--operands", "2", "--max-operand", "9"]
        args += ["--seed", "7", "--out", str(out), "--modes", "single", "--json"]
        code, stdout, err = run_cli([*args, *stub_args(server, out / "c.sqlite")], capsys)
        assert code == 0, err
        assert len(server.requests) == 4
    lines = (out / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line) for line in lines]
    assert len(questions) == 4
    for q in questions:
        a, b = map(int, re.findall(r"\d+", q["question"]))
        assert 0 <= a <= 9 and 0 <= b <= 9 and q["answer"] == a + b
    result = json.loads(stdout)
    assert result["modes"][0]["accuracy"] == 1.0
    meta = result["meta"]
    assert (meta["kind"], meta["seed"]) == ("arithmetic", 7)
    assert meta["arithmetic"] == {"count": 4, "operands": 2, "max_operand": 9, "form": "a+b"}
    rows = list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))
    assert [int(r["gold"]) for r in rows] == [q["answer"] for q in questions]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--operands", "9"], "--operands 9"),
        (["--max-operand", "0"], "--max-operand 0"),
        (["--count", "0"], "--count 0"),
        (["--decisions", "supermajority:0.4"], "not in (0.5, 1]"),
    ],
)
def test_bad_arithmetic_input_is_one_line_exit_2_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    out = tmp_path / "out"
    with StubOpenAIServer(arithmetic_responder) as server:
        args = ["eval", "arithmetic", "--out", str(out), *extra]
        code, _, err = run_cli([*args, *stub_args(server, out / "c.sqlite")], capsys)
        assert not server.requests
    assert code == 2, err
    assert message in one_error_line(err)
    assert not out.exists()


def test_max_tokens_caps_every_eval_call_and_is_part_of_the_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_mcq(tmp_path / "mcq.jsonl", 4)
    out = tmp_path / "out"
    with StubOpenAIServer(choice_responder) as server:
        extra = ("--modes", "single,vote", "--max-tokens", "9", "--json")
        code, _, err = run_cli(eval_args(server, "mcq", dataset, out, *extra), capsys)
        assert code == 0, err
        assert len(server.requests) == 4 + 4 * 3  # single, then a vote of 3
        sent = {r.get("max_completion_tokens", r.get("max_tokens")) for r in server.requests}
        assert sent == {9}
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    assert plan["settings"]["model"]["max_tokens"] == 9
