"""`debategraph debate` end to end against the stub server, and its bad inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import debate_reply, one_error_line, run_cli, stub_args
from tests.openai_stub import StubOpenAIServer

TOPIC = "Tea is better than coffee"


@pytest.fixture
def server() -> Any:
    with StubOpenAIServer(debate_reply) as stub:
        yield stub


def test_debate_json_result_and_streamed_turns(
    server: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    args = ["debate", TOPIC, "--debater", "Alice:for", "--debater", "Bob:against"]
    args += ["--rounds", "2", "--moderator", "--judge", "--json", "--thread", "d"]
    code, out, err = run_cli([*args, *stub_args(server, db)], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["topic"] == TOPIC
    assert result["winner"] == "Alice"
    assert result["rounds_completed"] == 2
    assert result["termination_reason"] == "rounds_completed"
    assert [w["debater"] for w in result["words"]] == ["Alice", "Bob", "Alice", "Bob"]
    assert result["usage"]["calls"] == 6  # 4 turns, 1 moderator (not after the last round), judge
    code, out, _ = run_cli(["threads", "--db", str(db), "--json"], capsys)
    assert [(r["pattern"], r["status"], r["question"]) for r in json.loads(out)] == [
        ("debate", "finished", TOPIC)
    ]
    code, out, _ = run_cli(["export", "d", "--db", str(db)], capsys)
    assert "Round 2" in out and "Alice" in out and "Bob" in out


def test_debate_pause_and_interject(
    server: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "d.sqlite")
    args = ["debate", TOPIC, "--rounds", "2", "--pause-after-round", "--thread", "p", "--json"]
    code, out, err = run_cli([*args, *stub_args(server, db)], capsys)
    assert code == 0, err
    assert json.loads(out)["status"] == "waiting"
    code, out, err = run_cli(
        ["resume", "p", "--db", db, "--interject", "Talk about sleep.", "--json"], capsys
    )
    assert code == 0, err
    assert json.loads(out)["termination_reason"] == "rounds_completed"
    later = [json.dumps(r["messages"]) for r in server.requests[2:]]
    assert later and all("Talk about sleep." in text for text in later)


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--debater", "Solo:for"], "at least 2 debaters"),
        (["--debater", "Ann:for", "--debater", "ann:against"], "ann"),
        (["--debater", "Ann:for", "--debater", "Bob:against", "--first", "Zed"], "Zed"),
        (["--rounds", "0"], "0"),
        (["--words", "5"], "5"),
        (["--history", "sometimes"], "sometimes"),
    ],
)
def test_debate_bad_input(
    extra: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(["debate", TOPIC, *extra, "--db", str(tmp_path / "d.sqlite")], capsys)
    assert code == 2, err
    assert needle in one_error_line(err)
    assert out == ""


def test_debate_empty_topic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["debate", " ", "--db", str(tmp_path / "d.sqlite")], capsys)
    assert code == 2
    assert "topic is empty" in one_error_line(err)
