"""An eval and a solve that finish against an endpoint that behaves like a paid provider.

The stub holds a request limit (a token bucket answering 429 with ``Retry-After``) and
fails a share of requests at random (429, 500, 503); the CLI runs as a user runs it.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from debategraph.models.pacing import forget_paces
from tests.conftest import one_error_line, run_cli, stub_args
from tests.eval_data import chance_responder, write_gsm8k
from tests.openai_stub import StubOpenAIServer

# seconds of real time (the limit sets them); what an endpoint said is each test's own
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fresh_paces")]

QUESTIONS = 30
MODES = "single,vote,debate-ring"


def eval_run(
    server: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> dict[str, dict[str, object]]:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", QUESTIONS)
    out = tmp_path / name
    args = [
        "eval", "gsm8k", "--dataset", str(dataset), "--out", str(out),
        *stub_args(server, out / "checkpoints.sqlite"),
        "--max-retries", "8",  # past stub_args's 0: a random 500 is tried again
        "--modes", MODES, "--agents", "2", "--rounds", "2", "--parallel", "8", "--json",
    ]  # fmt: skip
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    result = json.loads(stdout)
    return {m["mode"]: m for m in result["modes"]}


def calls_of(modes: dict[str, dict[str, object]]) -> int:
    """The model calls an eval's modes made (calls per question x questions)."""
    return round(sum(float(str(v["calls"])) * int(str(v["n"])) for v in modes.values()))


def test_an_eval_finishes_in_one_command_within_a_request_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """30 questions in three modes at --parallel 8 on 40 requests a second (burst 4)."""
    with StubOpenAIServer(chance_responder(0.7, 2), rate_limit=(40.0, 4)) as server:
        modes = eval_run(server, tmp_path, capsys, "limited")
        assert server.limited > 0  # the limit was met ...
        assert server.calls == calls_of(modes)  # ... and every call was answered in the end
    assert set(MODES.split(",")) <= set(modes)  # and the vote matched to the debate's calls
    assert {v["n"] for v in modes.values()} == {QUESTIONS}  # every question scored


def test_random_faults_change_no_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """15% of requests fail at random: the eval's answers are the fault-free run's."""
    with StubOpenAIServer(chance_responder(0.7, 2)) as server:
        clean = eval_run(server, tmp_path, capsys, "clean")
    with StubOpenAIServer(chance_responder(0.7, 2), fault_rate=0.15, fault_seed=7) as server:
        faulty = eval_run(server, tmp_path, capsys, "faulty")
        # Faults met, and every call answered in the end.
        assert len(server.requests) > server.calls == calls_of(faulty) == calls_of(clean)
    for mode, figures in clean.items():
        assert faulty[mode]["correct"] == figures["correct"], mode
        assert faulty[mode]["n"] == figures["n"] == QUESTIONS


@pytest.mark.parametrize("value", ["soon", "-5m", "0", "inf"])
def test_a_bad_patience_is_one_line(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["solve", "What is 2+2?", "--model", "x", "--patience", value], capsys)
    assert code == 2
    assert one_error_line(err).startswith(f"debategraph: error: --patience '{value}'")


def test_a_rate_limit_past_the_patience_stops_the_run_resumable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        server.inject("429", 1, seconds=30.0)
        args = ["solve", "What is 2+2?", *stub_args(server, db), "--agents", "2", "--rounds", "1"]
        code, _, err = run_cli([*args, "--patience", "2s", "--thread", "t"], capsys)
        assert code != 0
        line = one_error_line(err)
        assert "answered HTTP 429" in line and server.url in line
        assert server.limited == 1  # told to wait 30 s, past its patience: no retry
        forget_paces()  # a resume is a new process: it knows nothing of the 30 s
        code, _, err = run_cli(["resume", "t", "--db", str(db)], capsys)
        assert code == 0, err


def test_rpm_on_the_command_line_paces_a_solve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with StubOpenAIServer(chance_responder(1.0, 1), rate_limit=(4.0, 2)) as server:
        args = ["solve", "What is 2+2?", *stub_args(server, tmp_path / "d.sqlite")]
        code, _, err = run_cli([*args, "--agents", "3", "--rounds", "2", "--rpm", "120"], capsys)
        assert code == 0, err
        assert server.limited == 0 and server.calls == 6


def test_a_bad_rpm_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["solve", "What is 2+2?", "--model", "x", "--rpm", "0"], capsys)
    assert code == 2
    assert (
        one_error_line(err)
        == "debategraph: error: rpm 0.0 must be a number of requests a minute > 0"
    )


def test_a_question_whose_calls_keep_failing_is_errored_and_retried_next_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 3's calls fail every time: it is errored in each mode, never scored wrong."""
    right = chance_responder(1.0, 1)

    def broken_on_item_3(body: dict[str, Any]) -> Any:
        if "Item 3:" in json.dumps(body.get("messages", [])):
            raise RuntimeError("the provider keeps failing this one")
        return right(body)

    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 10)
    out = tmp_path / "out"
    args = [
        "eval", "gsm8k", "--dataset", str(dataset), "--out", str(out),
        "--modes", "single,vote", "--agents", "2", "--no-matched", "--json",
        "--max-errors", "0.1",  # 1 of 10 questions in each mode may error
    ]  # fmt: skip
    with StubOpenAIServer(broken_on_item_3) as server:
        args += stub_args(server, out / "c.sqlite")
        code, stdout, err = run_cli(args, capsys)
        assert code == 0, err
        modes = {m["mode"]: m for m in json.loads(stdout)["modes"]}
        assert {m: (v["n"], v["correct"], v["errored"]) for m, v in modes.items()} == {
            "single": (9, 9, 1),
            "vote": (9, 9, 1),
        }
        rows = list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))
        failed = [r for r in rows if r["error"]]
        assert [(r["mode"], r["line"]) for r in failed] == [("single", "4"), ("vote", "4")]
        assert all("answered HTTP 500" in r["error"] and r["correct"] == "False" for r in failed)
        answer = (out / "results.md").read_text(encoding="utf-8").split("\n\n", 1)[0]
        assert answer.endswith(
            "Errored questions (their calls kept failing) are left out of these figures: "
            "single 1, vote 1; the same command again retries them."
        )
        server.responder = right  # the provider mended: the same command again
        server.reset_stats()
        code, stdout, err = run_cli(args, capsys)
        assert code == 0, err
        assert server.calls == 1 + 2  # item 3 alone, in each mode: the rest read back
    modes = {m["mode"]: m for m in json.loads(stdout)["modes"]}
    assert {m: (v["n"], v["correct"], v["errored"]) for m, v in modes.items()} == {
        "single": (10, 10, 0),
        "vote": (10, 10, 0),
    }


def test_more_errors_than_max_errors_stop_the_eval_resumable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 6)
    out = tmp_path / "out"
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        server.inject("5xx", 100)
        args = ["eval", "gsm8k", "--dataset", str(dataset), "--out", str(out), "--modes", "single"]
        args += [*stub_args(server, out / "c.sqlite"), "--max-errors", "0.2", "--parallel", "1"]
        code, _, err = run_cli(args, capsys)
    assert code != 0
    line = one_error_line(err)
    assert "answered HTTP 500" in line
    assert "2 questions errored in single, more than --max-errors 0.2 allows" in line  # 1 may
    assert "resume" in line or "rerun" in line or "again" in line


@pytest.mark.parametrize("value", ["-0.1", "1.5"])
def test_a_bad_max_errors_is_one_line(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "arithmetic", "--model", "x", "--max-errors", value]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert one_error_line(err).startswith(f"debategraph: error: --max-errors {float(value):g}")


def test_a_solve_says_when_it_waits_on_a_rate_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        server.inject("429", 1, seconds=3.0)  # six looks of the watcher
        args = ["solve", "What is 2+2?", *stub_args(server, tmp_path / "d.sqlite")]
        code, _, err = run_cli([*args, "--agents", "2", "--rounds", "1"], capsys)
        assert code == 0, err
        assert server.limited == 1 and server.calls == 2
        host = server.url.split("//", 1)[1].split("/", 1)[0]
    notes = [line.strip() for line in err.splitlines() if "waiting on a rate limit" in line]
    assert len(notes) == 1 and notes[0].startswith(f"waiting on a rate limit: {host} ")


def test_a_request_that_hangs_is_cut_at_the_timeout_and_tried_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        server.inject("timeout", 1, seconds=8.0)  # the provider hangs on one request
        args = ["solve", "What is 2+2?", *stub_args(server, tmp_path / "d.sqlite")]
        # a timeout far above an answered call's time on a loaded machine, far below the hang
        args += ["--agents", "2", "--rounds", "1", "--timeout", "3", "--max-retries", "1"]
        code, stdout, err = run_cli([*args, "--json"], capsys)
        assert code == 0, err
        assert len(server.requests) == 3  # two calls, the hung one tried again
    assert json.loads(stdout)["answer"] is not None
