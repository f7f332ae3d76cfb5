"""An eval and a solve that finish against an endpoint that behaves like a paid provider.

The stub holds a request limit (a token bucket answering 429 with ``Retry-After``) and
fails a share of requests at random (429, 500, 503); the CLI runs as a user runs it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debategraph.models.pacing import forget_paces
from tests.conftest import one_error_line, run_cli, stub_args
from tests.eval_data import chance_responder, write_gsm8k
from tests.openai_stub import StubOpenAIServer

pytestmark = pytest.mark.slow  # seconds of real time: the limit sets them

QUESTIONS = 30
MODES = "single,vote,debate-ring"


@pytest.fixture(autouse=True)
def _fresh_paces() -> None:
    forget_paces()


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
    with StubOpenAIServer(chance_responder(1.0, 1), rate_limit=(4.0, 1)) as server:
        args = ["solve", "What is 2+2?", *stub_args(server, tmp_path / "d.sqlite")]
        code, _, err = run_cli([*args, "--agents", "3", "--rounds", "2", "--rpm", "200"], capsys)
        assert code == 0, err
        assert server.limited == 0 and server.calls == 6


def test_a_bad_rpm_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["solve", "What is 2+2?", "--model", "x", "--rpm", "0"], capsys)
    assert code == 2
    assert (
        one_error_line(err)
        == "debategraph: error: rpm 0.0 must be a number of requests a minute > 0"
    )
