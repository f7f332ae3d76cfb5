"""Durable debates through the CLI, on both checkpoint backends (SQLite and Postgres).

Pause at a round boundary and resume with or without an interjection, interject via
``update_state``, fork from history, prune, archive, export, and the bad inputs.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from debategraph import build_solver_debate
from debategraph.checkpoints import open_checkpointer, thread_config
from debategraph.nodes.review import review_request
from tests.backends import wait_for_saved_tasks
from tests.conftest import (
    answer_18,
    held_after,
    one_error_line,
    run_cli,
    solver_of,
    stub_args,
)
from tests.openai_stub import StubOpenAIServer

QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in total?"
NOTE = "Remember: May is half of April."
CLI = [sys.executable, "-m", "debategraph.cli"]
FORK_ARGS = ["fork", "orig", "--at"]


def user_prompts(server: StubOpenAIServer) -> list[tuple[str, str]]:
    """(solver, user-message text) for every request the stub received."""
    out = []
    for request in server.requests:
        text = " ".join(str(m["content"]) for m in request["messages"] if m["role"] == "user")
        out.append((solver_of(request), text))
    return out


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # the default archive for Postgres lands here
    return tmp_path


def solve_args(stub: StubOpenAIServer, db: str, thread: str, *extra: str) -> list[str]:
    return ["solve", QUESTION, "--agents", "3", "--thread", thread, *stub_args(stub, db, *extra)]


def test_pause_interject_approve(
    stub: StubOpenAIServer, checkpoint_url: str, in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = solve_args(stub, checkpoint_url, "p", "--rounds", "3", "--pause-after-round", "--json")
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    waiting = json.loads(out)
    assert waiting["status"] == "waiting"
    review = review_request(waiting["interrupt"])["args"]  # the HITLRequest's action
    assert review["round"] == 1
    assert review["answers"] == {f"solver_{i}": "18" for i in (1, 2, 3)}
    assert stub.calls == 3
    code, out, _ = run_cli(["threads", "--db", checkpoint_url, "--json"], capsys)
    assert json.loads(out)[0]["status"] == "waiting"

    code, out, err = run_cli(
        ["resume", "p", "--db", checkpoint_url, "--interject", NOTE, "--json"], capsys
    )
    assert code == 0, err
    assert review_request(json.loads(out)["interrupt"])["args"]["round"] == 2
    round_2 = user_prompts(stub)[3:6]
    assert {solver for solver, _ in round_2} == {"solver_1", "solver_2", "solver_3"}
    assert all(NOTE in text for _, text in round_2)  # every agent sees it

    code, out, err = run_cli(["resume", "p", "--db", checkpoint_url, "--approve", "--json"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["termination_reason"] == "rounds_completed"
    assert stub.calls == 9
    assert not any(NOTE in text for _, text in user_prompts(stub)[6:])  # consumed in round 2
    code, out, _ = run_cli(["show", "p", "--db", checkpoint_url, "--json"], capsys)
    users = [t for t in json.loads(out)["transcript"] if t["role"] == "user"]
    assert [(u["agent"], u["round"], u["content"]) for u in users] == [("user", 1, NOTE)]


def test_interject_command_on_a_waiting_thread(
    stub: StubOpenAIServer, checkpoint_url: str, in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_cli(solve_args(stub, checkpoint_url, "w", "--rounds", "2", "--pause-after-round"), capsys)
    code, _, err = run_cli(["interject", "w", NOTE, "--db", checkpoint_url], capsys)
    assert code == 0, err
    assert "read in round 2" in err
    code, out, _ = run_cli(["threads", "--db", checkpoint_url, "--json"], capsys)
    assert json.loads(out)[0]["status"] == "interrupted"  # the pause was answered
    code, out, err = run_cli(["resume", "w", "--db", checkpoint_url, "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["termination_reason"] == "rounds_completed"
    assert all(NOTE in text for _, text in user_prompts(stub)[3:6])


def test_interject_between_rounds_without_pausing(
    checkpoint_url: str, in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A thread that stopped at a round boundary takes an interjection via update_state."""
    with open_checkpointer(checkpoint_url) as saver, StubOpenAIServer(answer_18) as server:
        from debategraph.models import ModelSpec

        graph = build_solver_debate(
            ModelSpec(model="s", base_url=server.url), agents=2, max_rounds=2
        ).compile(checkpointer=saver, interrupt_before=["open_round"])
        config = thread_config("b")
        graph.invoke({"question": QUESTION}, config)  # stops before round 1
        graph.invoke(None, config)  # round 1, then stops before round 2
        assert graph.get_state(config).values["round"] == 1
    # The CLI did not start this thread, so use the graph API the CLI uses.
    from debategraph.checkpoints import thread_state
    from debategraph.nodes.rounds import BOUNDARY_NODES
    from debategraph.runs.human import interject

    with open_checkpointer(checkpoint_url) as saver, StubOpenAIServer(answer_18) as server:
        graph = build_solver_debate(
            ModelSpec(model="s", base_url=server.url), agents=2, max_rounds=2
        ).compile(checkpointer=saver)
        state = thread_state(graph, "b", BOUNDARY_NODES)
        assert state.at_round_boundary
        interject(graph, "b", NOTE, state, checkpoint_url)
        out = graph.invoke(None, config)
        assert out["termination_reason"] == "rounds_completed"
        assert all(NOTE in text for _, text in user_prompts(server))


def test_interject_mid_round_is_posted_refused_finished_and_empty(
    checkpoint_url: str, in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failed: set[str] = set()
    others_saved: list[bool] = []

    def flaky(request: dict[str, Any]) -> dict[str, Any]:
        round_2 = "previous answer" in json.dumps(request)
        if solver_of(request) == "solver_2" and round_2 and not failed:
            failed.add("x")
            others_saved.append(wait_for_saved_tasks(checkpoint_url, "m", 2))
            raise RuntimeError("injected")
        return answer_18(request)

    with StubOpenAIServer(flaky) as server:
        code, _, _ = run_cli(solve_args(server, checkpoint_url, "m", "--rounds", "3"), capsys)
        assert code == 1
        assert others_saved == [True], "round 2's other calls were not saved in 60 s"
        code, _, err = run_cli(["interject", "m", NOTE, "--db", checkpoint_url], capsys)
        assert code == 0, err  # to the inbox: read where the next round opens
        assert "sent to thread m" in err and "debategraph resume m" in err
        code, _, err = run_cli(["interject", "m", "  ", "--db", checkpoint_url], capsys)
        assert code == 2
        assert "empty" in one_error_line(err)
        server.reset_stats()
        code, _out, err = run_cli(["resume", "m", "--db", checkpoint_url, "--json"], capsys)
        assert code == 0, err
        # Round 3 opened after it and read it (one in its last round is refused at once:
        # tests/test_user_met_models.py).
        assert "not read" not in err
        assert any(NOTE in json.dumps(body) for body in server.requests)
        code, _, err = run_cli(["interject", "m", NOTE, "--db", checkpoint_url], capsys)
        assert code == 2
        assert "finished" in one_error_line(err) and "fork" in one_error_line(err)


@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_interject_while_running_goes_to_the_inbox(checkpoint_url: str, in_tmp: Path) -> None:
    sent = threading.Event()
    held = held_after(answer_18, lambda: len(server.requests), 4, sent)
    with StubOpenAIServer(held, latency_s=0.5) as server:
        args = solve_args(server, checkpoint_url, "r", "--rounds", "20")
        proc = subprocess.Popen(
            [sys.executable, "-m", "debategraph.cli", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 120
            while server.calls < 4 and time.monotonic() < deadline:
                time.sleep(0.05)
            done = subprocess.run(
                [*CLI, "interject", "r", NOTE, "--db", checkpoint_url],
                capture_output=True,
                text=True,
                timeout=60,
            )
        finally:
            sent.set()
            proc.terminate()
            proc.wait(timeout=60)
    assert done.returncode == 0, done.stderr
    assert "sent to running thread r" in done.stderr


def test_history_fork_with_interjection(
    stub: StubOpenAIServer, checkpoint_url: str, in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_cli(solve_args(stub, checkpoint_url, "orig", "--rounds", "3"), capsys)
    code, out, _ = run_cli(["show", "orig", "--db", checkpoint_url, "--json"], capsys)
    original = json.loads(out)
    code, out, err = run_cli(["history", "orig", "--db", checkpoint_url, "--json"], capsys)
    assert code == 0, err
    entries = json.loads(out)
    boundary = [e for e in entries if list(e["next"]) == ["open_round"] and e["round"] == 1]
    assert len(boundary) == 1
    at = boundary[0]["checkpoint_id"]
    calls = stub.calls
    code, out, err = run_cli(
        [
            *FORK_ARGS,
            at,
            "--thread",
            "branch",
            "--interject",
            NOTE,
            "--json",
            "--db",
            checkpoint_url,
        ],
        capsys,
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["thread_id"] == "branch"
    assert [r["round"] for r in result["rounds"]] == [1, 2, 3]
    assert stub.calls - calls == 6  # rounds 2 and 3 only
    assert all(NOTE in text for _, text in user_prompts(stub)[calls : calls + 3])
    code, out, _ = run_cli(["show", "orig", "--db", checkpoint_url, "--json"], capsys)
    assert json.loads(out) == original  # the original is intact
    code, out, _ = run_cli(["threads", "--db", checkpoint_url, "--json"], capsys)
    assert {r["thread_id"]: r["status"] for r in json.loads(out)} == {
        "orig": "finished",
        "branch": "finished",
    }


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["fork", "orig", "--at", "no-such-checkpoint"], "no-such-checkpoint"),
        (["fork", "ghost", "--at", "x"], "unknown thread id 'ghost'"),
        (["resume", "ghost"], "unknown thread id 'ghost'"),
        (["resume", "orig", "--approve", "--interject", "x"], "not both"),
        (["history", "ghost"], "unknown thread id 'ghost'"),
        (["export", "ghost"], "unknown thread id 'ghost'"),
        (["prune", "--keep-last", "0"], "0"),
    ],
)
def test_bad_input(
    args: list[str],
    needle: str,
    stub: StubOpenAIServer,
    checkpoint_url: str,
    in_tmp: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_cli(solve_args(stub, checkpoint_url, "orig", "--rounds", "1"), capsys)
    code, _out, err = run_cli([*args, "--db", checkpoint_url], capsys)
    assert code == 2, err
    assert needle in one_error_line(err)


@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_prune_keeps_kept_threads_usable(
    checkpoint_url: str, in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failed: set[str] = set()

    def flaky(request: dict[str, Any]) -> dict[str, Any]:
        if "u-" in json.dumps(request) and not failed:  # the unfinished thread's question
            failed.add("x")
            raise RuntimeError("injected")
        return answer_18(request)

    with StubOpenAIServer(flaky) as server:
        for i in range(3):
            code, _, err = run_cli(
                solve_args(server, checkpoint_url, f"f{i}", "--rounds", "3"), capsys
            )
            assert code == 0, err
        args = ["solve", f"u- {QUESTION}", "--agents", "2", "--rounds", "2", "--thread", "u"]
        code, _, _ = run_cli([*args, *stub_args(server, checkpoint_url)], capsys)
        assert code == 1
        before = {}
        for i in range(3):
            _, out, _ = run_cli(["show", f"f{i}", "--db", checkpoint_url, "--json"], capsys)
            before[i] = json.loads(out)
        code, out, err = run_cli(
            ["prune", "--keep-last", "1", "--db", checkpoint_url, "--json"], capsys
        )
        assert code == 0, err
        report = json.loads(out)
        assert report["threads_pruned"] == 3 and report["checkpoints_deleted"] > 0
        for i in range(3):
            _, out, _ = run_cli(["show", f"f{i}", "--db", checkpoint_url, "--json"], capsys)
            assert json.loads(out) == before[i]
            _, out, _ = run_cli(["history", f"f{i}", "--db", checkpoint_url, "--json"], capsys)
            assert len(json.loads(out)) == 1
        code, out, err = run_cli(["resume", "u", "--db", checkpoint_url, "--json"], capsys)
        assert code == 0, err
        assert json.loads(out)["termination_reason"] == "rounds_completed"


def test_archive_tables_written_and_queryable(
    stub: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    run_cli(solve_args(stub, str(db), "a", "--rounds", "2"), capsys)
    with sqlite3.connect(tmp_path / "d-archive.sqlite") as conn:  # beside the checkpoints
        debate = conn.execute(
            "SELECT pattern, json_extract(result, '$.answer'), termination_reason, calls "
            "FROM debates WHERE thread_id='a'"
        ).fetchone()
        assert debate == ("solver_debate", "18", "rounds_completed", 6)
        assert conn.execute("SELECT count(*) FROM messages WHERE thread_id='a'").fetchone() == (6,)
        by_agent = conn.execute(
            "SELECT key, calls FROM usage WHERE thread_id='a' AND scope='agent' ORDER BY key"
        ).fetchall()
        assert by_agent == [("solver_1", 2), ("solver_2", 2), ("solver_3", 2)]


def test_read_only_archive_loses_nothing(
    stub: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "d.sqlite")
    code, out, err = run_cli(
        solve_args(stub, db, "ro", "--rounds", "1", "--archive", "/proc/archive.sqlite"), capsys
    )
    assert code == 2
    line = one_error_line(err)
    assert "/proc/archive.sqlite" in line and "saved in" in line
    code, out, _ = run_cli(["threads", "--db", db, "--json"], capsys)
    assert json.loads(out)[0]["status"] == "finished"


def test_export_markdown_and_json(
    stub: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "d.sqlite")
    run_cli(solve_args(stub, db, "e", "--rounds", "2"), capsys)
    code, out, _ = run_cli(["export", "e", "--db", db], capsys)
    assert code == 0
    assert QUESTION in out and "Round 2" in out and "solver_3" in out
    target = tmp_path / "e.json"
    code, _, _ = run_cli(["export", "e", "--format", "json", "-o", str(target), "--db", db], capsys)
    assert code == 0
    assert len(json.loads(target.read_text())["transcript"]) == 6
    code, _, _err = run_cli(["export", "e", "--format", "pdf", "--db", db], capsys)
    assert code == 2


def test_corrupt_sqlite_file_is_refused_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "broken.sqlite"
    data = b"SQLite format 3\x00" + bytes(range(256)) * 8
    db.write_bytes(data)
    code, _, err = run_cli(["threads", "--db", str(db)], capsys)
    assert code == 2
    assert str(db) in one_error_line(err)
    assert db.read_bytes() == data


def test_unreachable_postgres_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    url = "postgresql://nobody:secret@127.0.0.1:9/none?connect_timeout=2"
    code, _, err = run_cli(["threads", "--db", url], capsys)
    assert code == 2
    line = one_error_line(err)
    assert "cannot connect" in line and "secret" not in line


def test_crash_resume_repeats_no_finished_call(
    checkpoint_url: str, in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A call fails mid-round; resume re-sends only it, and the finished debate is archived."""
    failed: set[str] = set()
    others_saved: list[bool] = []

    def flaky(request: dict[str, Any]) -> dict[str, Any]:
        round_2 = "previous answer" in json.dumps(request)
        if solver_of(request) == "solver_3" and round_2 and not failed:
            failed.add("x")
            # the other round-2 calls finish and are saved first: wait for it, no sleep
            others_saved.append(wait_for_saved_tasks(checkpoint_url, "c", 2))
            raise RuntimeError("injected crash")
        return answer_18(request)

    with StubOpenAIServer(flaky) as server:
        code, _, err = run_cli(solve_args(server, checkpoint_url, "c", "--rounds", "3"), capsys)
        assert others_saved == [True], "round 2's other calls were not saved in 60 s"
        assert code == 1 and "HTTP 500" in one_error_line(err)
        assert server.calls == 5
        code, out, _ = run_cli(["threads", "--db", checkpoint_url, "--json"], capsys)
        row = json.loads(out)[0]
        assert (row["status"], row["round"]) == ("failed", 2)
        assert "solver_3" in row["where"]
        code, out, err = run_cli(["resume", "c", "--db", checkpoint_url, "--json"], capsys)
        assert code == 0, err
        assert json.loads(out)["usage"]["calls"] == 9
        sent = [
            f"{solver}@{'r1' if 'previous' not in text else 'r2+'}"
            for solver, text in user_prompts(server)
        ]
        assert sent.count("solver_1@r2+") == 2  # rounds 2 and 3, never repeated
        assert sent.count("solver_3@r2+") == 3  # the failed call, its retry, round 3
    archive = in_tmp / "debates-archive.sqlite"
    if not checkpoint_url.startswith("postgres"):
        archive = Path(checkpoint_url).with_name("checkpoints-archive.sqlite")
    with sqlite3.connect(archive) as conn:
        assert conn.execute("SELECT calls FROM debates WHERE thread_id='c'").fetchone() == (9,)
