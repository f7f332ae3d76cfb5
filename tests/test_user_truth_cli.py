"""What the CLI shows a user is true (issue 20: items 3, 5, 6 and part of 8).

Ids are whole where a user types them back and a unique prefix is enough; one wall time
per thread everywhere; ``show`` labels the answer and the reasoning and says where they
disagree; each turn once; ``threads`` fits 80 columns; a finished run says how to read
its transcript. Driven as a user would: ``debategraph`` against the stub endpoint (in a
process of its own where the terminal's width matters).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DEBATE_ARGUMENT, debate_reply, one_error_line, run_cli, stub_args
from tests.openai_stub import StubOpenAIServer

QUESTION = "Natalia sold clips to 48 of her friends in April, and half as many in May. Total?"
LONG_QUESTION = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many "
    "clips in May. How many clips did Natalia sell altogether in April and May?"
)
#: A solver whose reasoning states another answer than its answer field.
DISAGREEING = {"reasoning": "1. The answer is 48", "answer": "48.5", "confidence": 0.7}


def cli80(*args: str) -> subprocess.CompletedProcess[str]:
    """``debategraph ARGS`` in its own process, on an 80-column terminal."""
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, "-m", "debategraph.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def solve(
    server: StubOpenAIServer,
    db: Path,
    thread: str,
    capsys: pytest.CaptureFixture[str],
    *extra: str,
    question: str = QUESTION,
) -> tuple[str, str]:
    args = ["solve", question, "--agents", "2", "--rounds", "2", "--thread", thread]
    code, out, err = run_cli([*args, *stub_args(server, db), *extra], capsys)
    assert code == 0, err
    return out, err


# -- item 3: checkpoint ids can be copied back --------------------------------------------


def test_history_shows_whole_ids_at_80_columns_and_fork_takes_a_prefix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(lambda request: DISAGREEING) as server:
        solve(server, db, "t", capsys)
        code, out, _ = run_cli(["history", "t", "--db", str(db), "--json"], capsys)
        assert code == 0
        ids = [entry["checkpoint_id"] for entry in json.loads(out)]

        shown = cli80("history", "t", "--db", str(db))
        assert shown.returncode == 0, shown.stderr
        assert all(len(line) <= 80 for line in shown.stdout.splitlines()), shown.stdout
        for checkpoint in ids:  # every id whole, on one line, ready to copy
            assert checkpoint in shown.stdout, shown.stdout
        assert "fork t --at CHECKPOINT" in shown.stderr

        target = ids[len(ids) // 2]
        prefix = _unique_prefix(target, ids)
        assert len(prefix) < len(target)
        code, out, err = run_cli(
            ["fork", "t", "--at", prefix, "--thread", "f", "--db", str(db), "--json"], capsys
        )
        assert code == 0, err
        assert f"at checkpoint {target} into thread f" in err
        assert json.loads(out)["termination_reason"] == "rounds_completed"

        common = os.path.commonprefix(ids)  # noqa: RUF071 (ids are strings, not paths)
        assert common, ids  # ids of one thread share a time prefix
        code, _, err = run_cli(
            ["fork", "t", "--at", common, "--thread", "g", "--db", str(db)], capsys
        )
        assert code == 2
        line = one_error_line(err)
        assert f"matches {len(ids)} checkpoints" in line and "history t" in line

        code, _, err = run_cli(
            ["fork", "t", "--at", "zzzz", "--thread", "g", "--db", str(db)], capsys
        )
        assert code == 2
        assert "has no checkpoint 'zzzz'" in one_error_line(err)


def _unique_prefix(target: str, ids: list[str]) -> str:
    for n in range(1, len(target) + 1):
        if sum(other.startswith(target[:n]) for other in ids) == 1:
            return target[:n]
    return target


# -- item 5: one wall time per thread ------------------------------------------------------


def test_one_wall_time_per_thread_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(lambda request: DISAGREEING, latency_s=0.2) as server:
        out, _ = solve(server, db, "w", capsys, "--json")
    solved = json.loads(out)["wall_s"]
    assert solved >= 0.4  # two rounds of 0.2 s calls

    code, out, _ = run_cli(["show", "w", "--db", str(db), "--json"], capsys)
    assert code == 0
    shown = json.loads(out)["wall_s"]
    code, out, _ = run_cli(["export", "w", "--db", str(db), "--format", "json"], capsys)
    assert code == 0
    exported = json.loads(out)["wall_s"]
    code, out, _ = run_cli(["resume", "w", "--db", str(db), "--json"], capsys)
    assert code == 0
    resumed = json.loads(out)["wall_s"]
    assert shown == exported == resumed == pytest.approx(solved, abs=0.001)

    code, out, _ = run_cli(["show", "w", "--db", str(db)], capsys)
    assert code == 0
    assert f"{solved:.1f}s wall" in out
    code, out, _ = run_cli(["export", "w", "--db", str(db), "--format", "md"], capsys)
    assert code == 0
    meta = out.splitlines()[2]
    assert f"wall time {solved:.1f} s" in meta
    # The summed call time is labelled as such, never as the thread's time.
    assert re.search(r"model time \(sum of calls\) \d+\.\d s", meta), meta


# -- item 6: show says which field is the answer -------------------------------------------


def test_show_labels_the_answer_and_the_reasoning_that_disagrees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(lambda request: DISAGREEING) as server:
        solve(server, db, "s", capsys)
    code, out, _ = run_cli(["show", "s", "--db", str(db)], capsys)
    assert code == 0
    turns = [line for line in out.splitlines() if "solver_" in line]
    assert len(turns) == 4, out
    for line in turns:
        assert "answer 48.5 (reasoning says 48)" in line, out
    assert out.count("reasoning: 1. The answer is 48") == 4, out


def test_show_does_not_flag_reasoning_that_agrees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reply = {"reasoning": "48 / 2 = 24. The answer is 72.", "answer": "72", "confidence": 0.9}
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(lambda request: reply) as server:
        solve(server, db, "a", capsys)
    code, out, _ = run_cli(["show", "a", "--db", str(db)], capsys)
    assert code == 0
    assert out.count("answer 72") >= 4 and "reasoning says" not in out, out


# -- item 8: each turn once; threads at 80 columns; how to read a finished run ----------


def test_show_prints_each_debate_turn_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(debate_reply) as server:
        args = ["debate", "Tea beats coffee", "--rounds", "2", "--thread", "d"]
        code, _, err = run_cli([*args, *stub_args(server, db)], capsys)
        assert code == 0, err
    code, out, _ = run_cli(["show", "d", "--db", str(db), "--json"], capsys)
    spoken = [t for t in json.loads(out)["transcript"] if t["content"] == DEBATE_ARGUMENT]
    assert spoken
    code, out, _ = run_cli(["show", "d", "--db", str(db)], capsys)
    assert code == 0
    assert out.count(DEBATE_ARGUMENT) == len(spoken), out


@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_threads_fit_80_columns_one_line_per_thread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(lambda request: DISAGREEING) as server:
        solve(server, db, "a1b2c3d4e5f6", capsys, question=LONG_QUESTION)
    with StubOpenAIServer(debate_reply) as server:
        args = ["debate", LONG_QUESTION, "--rounds", "1", "--thread", "deb-7"]
        code, _, err = run_cli([*args, *stub_args(server, db)], capsys)
        assert code == 0, err
    listed = cli80("threads", "--db", str(db))
    assert listed.returncode == 0, listed.stderr
    lines = [line for line in listed.stdout.splitlines() if line.strip()]
    assert all(len(line) <= 80 for line in lines), listed.stdout
    rows = {_row_of(lines, thread): thread for thread in ("a1b2c3d4e5f6", "deb-7")}
    assert len(rows) == 2
    assert len(lines) == 4, listed.stdout  # the head, its rule, one line per thread
    row = _row_of(lines, "a1b2c3d4e5f6")
    assert "solver_debate" in row.split() and "finished" in row.split(), row
    assert "debate" in _row_of(lines, "deb-7").split()


def _row_of(lines: list[str], thread: str) -> str:
    found = [line for line in lines if line.split() and line.split()[0] == thread]
    assert len(found) == 1, lines
    return found[0]


def test_a_finished_run_says_how_to_read_its_transcript(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(lambda request: DISAGREEING) as server:
        out, err = solve(server, db, "h", capsys)
        assert f"transcript: debategraph show h --db {db}" in err
        assert f"export: debategraph export h --db {db} --format md" in err
        assert "answer 48.5" in out
        out, err = solve(server, db, "j", capsys, "--json")
    result: dict[str, Any] = json.loads(out)  # --json: the result alone, no hint
    assert result["thread_id"] == "j"
    assert "transcript:" not in err
