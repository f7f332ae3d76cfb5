"""`debategraph meeting` end to end against the stub server, and its bad inputs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from debategraph.nodes.review import review_request
from tests.conftest import one_error_line, run_cli, stub_args
from tests.openai_stub import StubOpenAIServer, schema_of

TOPIC = "Should we move the team to a four-day week?"
DECISION = {
    "decision": "Pilot it for a quarter.",
    "rationale": "Gains outweigh risks if support is covered.",
    "dissent": ["Support may suffer."],
    "next_steps": ["Draft a rota"],
}


def speaker_of(request: dict[str, Any]) -> str:
    system = str(request["messages"][0]["content"])
    found = re.match(r"You are (.+?), a participant", system)
    return found.group(1) if found else "?"


def meeting_reply(request: dict[str, Any]) -> Any:
    """Speakers talk; the controller continues once; the chair decides."""
    name = schema_of(request)
    if name == "RoundDecision":
        return {"action": "continue", "reason": "More to say."}
    if name == "FinalDecision":
        return DECISION
    return f"{speaker_of(request)} makes a point."


@pytest.fixture
def server() -> Any:
    with StubOpenAIServer(meeting_reply) as stub:
        yield stub


def test_meeting_json_result(
    server: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.sqlite"
    args = ["meeting", TOPIC, "--json", "--thread", "m"]
    code, out, err = run_cli([*args, *stub_args(server, db)], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["topic"] == TOPIC
    assert result["termination_reason"] == "completed"
    assert result["decision"] == DECISION
    assert [
        (d["stage"], d["stage_round"], d["action"], d["forced"]) for d in result["controller"]
    ] == [
        ("presentation", 1, "next_stage", True),
        ("discussion", 1, "continue", False),
        ("discussion", 2, "next_stage", True),
        ("summary", 1, "next_stage", True),
    ]
    transcript = result["transcript"]
    assert [(m["agent"], m["stage"], m["round"]) for m in transcript] == [
        ("Presenter", "presentation", 1),
        ("Advocate", "discussion", 2),
        ("Skeptic", "discussion", 2),
        ("Advocate", "discussion", 3),
        ("Skeptic", "discussion", 3),
        ("Summarizer", "summary", 4),
        ("chair", "decision", 4),
    ]
    first, second = transcript[:2]
    assert {"id", "agent_id", "reply_to", "timestamp", "content"} <= set(first)
    assert (first["agent_id"], first["content"]) == ("presenter", "Presenter makes a point.")
    assert second["reply_to"] == [first["id"]]
    assert result["usage"]["calls"] == 8  # 6 speeches, 1 controller call, the chair
    assert "stage discussion, round 1/2: controller → round 2" in err
    code, out, _ = run_cli(["threads", "--db", str(db), "--json"], capsys)
    assert [(r["pattern"], r["status"], r["question"]) for r in json.loads(out)] == [
        ("meeting", "finished", TOPIC)
    ]


def test_meeting_stages_file_and_pause(
    server: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stages = tmp_path / "stages.json"
    stages.write_text(
        json.dumps(
            [
                {"name": "pitch", "participants": ["Ann: pitches"], "goal": "Pitch it."},
                {"name": "talk", "participants": [{"name": "Bob", "instructions": "doubts"}]},
            ]
        ),
        encoding="utf-8",
    )
    db = str(tmp_path / "m.sqlite")
    args = ["meeting", TOPIC, "--stages", str(stages), "--rounds", "1"]
    args += ["--pause-after-round", "--thread", "p", "--json"]
    code, out, err = run_cli([*args, *stub_args(server, db)], capsys)
    assert code == 0, err
    waiting = json.loads(out)
    assert waiting["status"] == "waiting"
    assert review_request(waiting["interrupt"])["args"]["stage"] == "pitch"
    code, out, err = run_cli(
        ["resume", "p", "--db", db, "--interject", "Mind the budget.", "--json"], capsys
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["termination_reason"] == "completed"
    assert [m["agent"] for m in result["transcript"]] == ["Ann", "user", "Bob", "chair"]
    bob = [r for r in server.requests if speaker_of(r) == "Bob"]
    assert bob and "Mind the budget." in json.dumps(bob[0]["messages"])


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("files", "extra", "needle"),
    [
        ({}, ["--stages", "{tmp}/missing.yaml"], "missing.yaml: no such file"),
        ({"bad.yaml": "- name: a\n  participants: [x\n"}, ["--stages", "{tmp}/bad.yaml"], "line"),
        ({"bad.json": "[{\n"}, ["--stages", "{tmp}/bad.json"], "not valid JSON at line 2"),
        ({"empty.yaml": "[]\n"}, ["--stages", "{tmp}/empty.yaml"], "stages is empty"),
        (
            {"none.yaml": "- name: a\n  participants: []\n"},
            ["--stages", "{tmp}/none.yaml"],
            "stage 'a' has no participants",
        ),
        (
            {"dup.yaml": "- name: a\n  participants: [Ann, ann]\n"},
            ["--stages", "{tmp}/dup.yaml"],
            "duplicate participant name 'ann'",
        ),
        (
            {"st.yaml": "- {name: a, participants: [A]}\n- {name: A, participants: [B]}\n"},
            ["--stages", "{tmp}/st.yaml"],
            "duplicate stage name 'A'",
        ),
        (
            {"noname.yaml": "- {name: '', participants: [A]}\n"},
            ["--stages", "{tmp}/noname.yaml"],
            "stage 1 has no name",
        ),
        ({}, ["--rounds", "0"], "--rounds must be a whole number of at least 1, got 0"),
        ({}, ["--max-rounds", "0"], "--rounds must be a whole number of at least 1, got 0"),
        ({}, ["--rounds", "1", "--max-rounds", "1"], "give only --rounds"),
    ],
)
def test_meeting_bad_input(
    files: dict[str, str],
    extra: list[str],
    needle: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, text in files.items():
        write(tmp_path, name, text)
    db = tmp_path / "m.sqlite"
    args = [a.replace("{tmp}", str(tmp_path)) for a in extra]
    code, out, err = run_cli(["meeting", TOPIC, *args, "--db", str(db)], capsys)
    assert code == 2, err
    assert needle in one_error_line(err)
    assert out == ""
    assert not db.exists()  # nothing written


def test_meeting_empty_topic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "m.sqlite"
    code, out, err = run_cli(["meeting", " ", "--db", str(db)], capsys)
    assert code == 2
    assert "topic is empty" in one_error_line(err)
    assert out == "" and not db.exists()


def test_meeting_old_max_rounds_option_still_works(
    server: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--max-rounds`` is a hidden, deprecated spelling of ``--rounds``."""
    db = tmp_path / "m.sqlite"
    args = ["meeting", TOPIC, "--max-rounds", "1", "--json"]
    code, out, err = run_cli([*args, *stub_args(server, db)], capsys)
    assert code == 0, err
    assert "--max-rounds is deprecated: use --rounds" in err
    assert [d["forced"] for d in json.loads(out)["controller"]] == [True, True, True]
    code, out, _ = run_cli(["meeting", "--help"], capsys)
    assert code == 0 and "--rounds" in out and "--max-rounds" not in out
