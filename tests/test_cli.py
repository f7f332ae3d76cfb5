"""The CLI end to end against the stub server: results, durability, and every bad input."""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.backends import wait_for_saved_tasks
from tests.conftest import answer_18, one_error_line, run_cli, solver_of, stub_args
from tests.openai_stub import StubOpenAIServer
from tests.processes import takes_ctrl_c
from tests.studio_server import closed_port

QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in total?"


def test_solve_json_result(
    stub: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    code, out, err = run_cli(
        [
            "solve",
            QUESTION,
            "--agents",
            "3",
            "--rounds",
            "2",
            "--thread",
            "t1",
            "--json",
            *stub_args(stub, db),
        ],
        capsys,
    )
    assert code == 0, err
    result = json.loads(out)
    assert set(result) >= {
        "thread_id",
        "answer",
        "votes",
        "agreement",
        "rounds",
        "termination_reason",
        "usage",
        "wall_s",
    }
    assert result["thread_id"] == "t1"
    assert result["answer"] == "18"
    assert result["votes"] == {"18": 3}
    assert result["agreement"] == 1.0
    assert [r["round"] for r in result["rounds"]] == [1, 2]
    assert result["termination_reason"] == "rounds_completed"
    assert result["usage"]["calls"] == 6 == stub.calls
    assert result["usage"]["prompt_tokens"] == stub.prompt_tokens
    assert "round 1" in err and "solver_3" in err  # live progress on stderr
    assert db.exists()


def test_threads_and_show(
    stub: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    run_cli(
        [
            "solve",
            QUESTION,
            "--agents",
            "2",
            "--rounds",
            "1",
            "--thread",
            "abc",
            *stub_args(stub, db),
        ],
        capsys,
    )
    code, out, _ = run_cli(["threads", "--db", str(db), "--json"], capsys)
    assert code == 0
    rows = json.loads(out)
    assert [(r["thread_id"], r["status"], r["pattern"]) for r in rows] == [
        ("abc", "finished", "solver_debate")
    ]
    code, out, _ = run_cli(["show", "abc", "--db", str(db)], capsys)
    assert code == 0
    assert "solver_1" in out and "solver_2" in out and "answer 18" in out
    code, out, _ = run_cli(["show", "abc", "--db", str(db), "--json"], capsys)
    data = json.loads(out)
    assert len(data["transcript"]) == 2 and data["status"] == "finished"


def test_resume_finished_thread_prints_result(
    stub: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    run_cli(
        [
            "solve",
            QUESTION,
            "--agents",
            "2",
            "--rounds",
            "1",
            "--thread",
            "done",
            *stub_args(stub, db),
        ],
        capsys,
    )
    calls = stub.calls
    code, out, err = run_cli(["resume", "done", "--db", str(db), "--json"], capsys)
    assert code == 0
    assert "already finished" in err
    assert json.loads(out)["answer"] == "18"
    assert stub.calls == calls


def test_dead_endpoint_leaves_resumable_thread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    started = time.monotonic()
    code, out, err = run_cli(
        [
            "solve",
            QUESTION,
            "--agents",
            "2",
            "--rounds",
            "2",
            "--thread",
            "t",
            "--model",
            "stub",
            "--base-url",
            dead,
            "--db",
            str(db),
            "--max-retries",
            "0",
            "--timeout",
            "2",
            "--json",
        ],
        capsys,
    )
    assert code == 1
    line = one_error_line(err)
    assert dead in line and "unreachable" in line and "debategraph resume t" in line
    assert time.monotonic() - started < 10
    assert json.loads(out)["termination_reason"] == "error"
    code, out, _ = run_cli(["threads", "--db", str(db), "--json"], capsys)
    assert json.loads(out)[0]["status"] == "failed"
    # The endpoint comes back: resume finishes the same thread.
    with StubOpenAIServer(answer_18) as server:
        code, out, err = run_cli(
            ["resume", "t", "--db", str(db), "--base-url", server.url, "--json"], capsys
        )
        assert code == 0, err
        assert json.loads(out)["answer"] == "18"
        assert server.calls == 4


def test_resume_repeats_no_finished_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One solver's call fails in round 2; resume re-sends only that call."""
    failed: set[str] = set()
    others_saved: list[bool] = []
    db = tmp_path / "d.sqlite"

    def flaky(request: dict[str, Any]) -> dict[str, Any]:
        solver = solver_of(request)
        is_round_2 = "previous answer" in json.dumps(request["messages"])
        if solver == "solver_2" and is_round_2 and solver not in failed:
            failed.add(solver)
            # Fail only once the round's two other calls are answered and checkpointed.
            others_saved.append(wait_for_saved_tasks(str(db), "r", 2))
            raise RuntimeError("injected failure")
        return answer_18(request)

    with StubOpenAIServer(flaky) as server:
        code, _, err = run_cli(
            [
                "solve",
                QUESTION,
                "--agents",
                "3",
                "--rounds",
                "2",
                "--thread",
                "r",
                *stub_args(server, db),
            ],
            capsys,
        )
        assert code == 1, err
        assert others_saved == [True], "round 2's other calls were not saved in 60 s"
        assert "HTTP 500" in one_error_line(err)
        assert server.calls == 5  # 3 in round 1, 2 of 3 in round 2
        code, out, err = run_cli(["resume", "r", "--db", str(db), "--json"], capsys)
        assert code == 0, err
        assert server.calls == 6
        per_solver = [solver_of(r) for r in server.requests]
        assert per_solver.count("solver_1") == 2 and per_solver.count("solver_3") == 2
        assert json.loads(out)["usage"]["calls"] == 6


@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_ctrl_c_then_resume(tmp_path: Path) -> None:
    """Interrupted with a call in flight (held until the process has exited), then resumed.

    The 4th call is held by the model until the interrupted process is gone, so the
    signal lands mid-round however slowly the machine runs (not within a time window).
    """
    db = tmp_path / "d.sqlite"
    release = threading.Event()
    answered = itertools.count(1)

    def held(request: dict[str, Any]) -> dict[str, Any]:
        if next(answered) > 3:
            release.wait(60)
        return answer_18(request)

    with StubOpenAIServer(held, latency_s=0.05) as server:
        cmd = [
            sys.executable,
            "-m",
            "debategraph.cli",
            "solve",
            QUESTION,
            "--agents",
            "2",
            "--rounds",
            "3",
            "--thread",
            "k",
            *stub_args(server, db),
        ]
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=takes_ctrl_c,  # Ctrl-C as a terminal delivers it
        )
        deadline = time.monotonic() + 60
        while len(server.requests) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        release.set()
        assert proc.returncode == 130, err
        assert "Traceback" not in err
        assert "resumable" in one_error_line(err)
        done = subprocess.run(
            [sys.executable, "-m", "debategraph.cli", "resume", "k", "--db", str(db), "--json"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["termination_reason"] == "rounds_completed"
        assert result["usage"]["calls"] == 6
        assert server.calls <= 6 + 2  # at most the calls in flight at the interrupt are re-sent


def test_solve_a_multiple_choice_question_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--choice`` makes a multiple-choice question; ``--topology single`` one solver."""
    reply = {"reasoning": "Rome is in Italy", "answer": "(B)", "confidence": 0.8}
    with StubOpenAIServer(lambda request: reply) as server:
        args = ["solve", "Capital of Italy?", "--choice", "Paris", "--choice", "Rome"]
        args += ["--topology", "single", "--rounds", "1", "--json"]
        code, out, err = run_cli([*args, *stub_args(server, tmp_path / "d.sqlite")], capsys)
        assert server.calls == 1
        prompt = json.dumps(server.requests[0]["messages"])
    assert code == 0, err
    assert "A) Paris\\nB) Rome" in prompt
    result = json.loads(out)
    assert result["answer"] == "B"
    assert result["votes"] == {"B": 1}
    assert "1 solver alone" in err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["solve", "  "], "question is empty"),
        (["solve", QUESTION, "--agents", "1"], "agents must be at least 2, got 1"),
        (["solve", QUESTION, "--rounds", "0"], "rounds must be at least 1, got 0"),
        (["solve", QUESTION, "--topology", "mesh"], "unknown topology 'mesh'"),
        (["solve", QUESTION, "--choice", "only"], "--choice: give a list of 2 to 26 non-empty"),
        (["solve", QUESTION, *["--choice=x"] * 27], "--choice: give a list of 2 to 26 non-empty"),
        (
            ["solve", QUESTION, "--agents", "4", "--neighbours", "4"],
            "neighbours k=4 is out of range",
        ),
        (["solve", QUESTION, "--neighbours", "0"], "neighbours k=0 is out of range"),
        (["solve", QUESTION, "--token-budget", "0"], "token budget"),
        (["solve", QUESTION, "--view-chars", "10"], "view_chars must be at least 40"),
        (["solve", QUESTION, "--max-concurrency", "0"], "--max-concurrency 0"),
        (["solve", QUESTION, "--agents", "x"], "Invalid value for '--agents'"),
        (["solve", QUESTION, "--base-url", "http://127.0.0.1:9/v1"], "needs --model NAME"),
        (["solve", QUESTION, "--model", "m", "--base-url", "ftp://x"], "not an http(s) URL"),
        (["solve", QUESTION, "--db", "/nonexistent-dir/x.sqlite"], "does not exist"),
        (["solve", QUESTION, "--db", "/proc/debates.sqlite"], "cannot be opened"),  # unwritable
        (["resume", "nope"], "unknown thread id 'nope'"),
        (["show", "nope"], "unknown thread id 'nope'"),
        (["frobnicate"], "No such command"),
    ],
)
def test_bad_input_one_line_exit_2(
    args: list[str],
    needle: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    code, out, err = run_cli(args, capsys)
    assert code == 2, err
    assert needle in one_error_line(err)
    assert out == ""


@pytest.mark.parametrize(
    ("topology", "needle"),
    [
        (
            {
                "solver_1": ["solver_2"],
                "solver_2": ["solver_1"],
                "solver_3": ["solver_4"],
                "solver_4": ["solver_3"],
            },
            "disconnected",
        ),
        ({"a": ["b"], "b": ["ghost"]}, "unknown solver(s) ghost"),
        ({"a": ["a", "b"], "b": ["a"]}, "itself"),
        (["not", "a", "mapping"], "expected an object"),
    ],
)
def test_bad_custom_topology(
    topology: Any, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "topo.json"
    path.write_text(json.dumps(topology))
    code, _, err = run_cli(
        ["solve", QUESTION, "--topology", str(path), "--db", str(tmp_path / "d.sqlite")], capsys
    )
    assert code == 2
    assert needle in one_error_line(err)


def test_custom_topology_file_runs(
    stub: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "topo.json"
    path.write_text(json.dumps({"alice": ["bob"], "bob": ["carol"], "carol": ["alice"]}))
    code, out, err = run_cli(
        [
            "solve",
            QUESTION,
            "--topology",
            str(path),
            "--rounds",
            "2",
            "--json",
            *stub_args(stub, tmp_path / "d.sqlite"),
        ],
        capsys,
    )
    assert code == 0, err
    assert set(json.loads(out)["rounds"][0]["answers"]) == {"alice", "bob", "carol"}


def test_non_sqlite_db_is_refused_and_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "notes.txt"
    db.write_text("my precious notes\n")
    code, _, err = run_cli(["solve", QUESTION, "--db", str(db)], capsys)
    assert code == 2
    assert "not a SQLite database" in one_error_line(err)
    assert db.read_text() == "my precious notes\n"


def test_existing_thread_is_not_overwritten(
    stub: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    run_cli(
        [
            "solve",
            QUESTION,
            "--agents",
            "2",
            "--rounds",
            "1",
            "--thread",
            "x",
            *stub_args(stub, db),
        ],
        capsys,
    )
    code, _, err = run_cli(["solve", QUESTION, "--thread", "x", *stub_args(stub, db)], capsys)
    assert code == 2
    assert "already exists" in one_error_line(err)


@pytest.mark.slow  # make test-fast leaves it out: a Python process of its own
def test_usage_error_from_a_subprocess_has_no_traceback(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "debategraph.cli", "solve", "", "--db", str(tmp_path / "d.sqlite")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert proc.stderr.startswith("debategraph: error: question is empty")


def test_max_tokens_caps_every_call_and_a_bad_value_is_refused(
    stub: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    args = ["solve", "What is 9 + 9?", "--agents", "2", "--rounds", "1", "--max-tokens", "7"]
    code, _, err = run_cli([*args, *stub_args(stub, db)], capsys)
    assert code == 0, err
    assert len(stub.requests) == 2
    assert {r.get("max_completion_tokens", r.get("max_tokens")) for r in stub.requests} == {7}
    stub.reset_stats()
    args[-1] = "0"
    code, _, err = run_cli([*args, *stub_args(stub, tmp_path / "e.sqlite")], capsys)
    assert code == 2 and not stub.requests
    assert "max_tokens 0 must be a whole number of at least 1" in one_error_line(err)
