"""Threads saved by older code still list, show, export, resume and load as records.

``tests/data/saved_threads_v1.sqlite`` holds one small thread of each pattern, written by
``tests/data/make_saved_threads.py`` with the code of commit 4b93363, before the module
refactor. Its checkpoints name every pydantic record by the module path it had then
(``debategraph.state.records.Turn``, ``debategraph.state.debate.Verdict``,
``debategraph.documents.Document``, ...) and its blobs are deflated with the frozen
dictionary (``msgpack+z1``). These tests read it with the package as it is now.

Never regenerate the file with newer code (its point is its old bytes), and never write to
it: every test works on a copy.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from debategraph.state.debate import Verdict
from debategraph.state.records import Turn, Usage
from tests.conftest import run_cli
from tests.openai_stub import StubOpenAIServer, schema_of

SAVED = Path(__file__).parent / "data" / "saved_threads_v1.sqlite"
#: The file's hash as committed (0669a2c), pinned here: not computed from the file, so a
#: changed file fails instead of becoming the new reference.
SAVED_SHA256 = "21be7037d2ddcc9ae7967c32be718bac1cab2fc35e506b3e1acecbdc25dcf924"

#: thread id -> (pattern, status) as saved.
THREADS = {
    "t-solve": ("solver_debate", "finished"),
    "t-debate": ("debate", "finished"),
    "t-discuss": ("discussion", "finished"),
    "t-chat": ("group_chat", "waiting"),
    "t-meeting": ("meeting", "waiting"),
}
DEBATE_ARGUMENT = "Tea calms the mind and keeps you hydrated; coffee spikes anxiety and crashes."
INSIGHT = "Ring topologies match full ones at lower cost, so sparse debate is cheaper."
WRITER = "Rain on tin roofs, soft drums all night"
ANN = "Ann makes a point about the four-day week."
#: thread id -> text of the saved run that show and both exports must contain.
SAVED_TEXT = {
    "t-solve": ["Natalia sold 48 clips", "solver_1: 48/2 = 24, 48 + 24 = 72."],
    "t-debate": ["Tea is better than coffee", DEBATE_ARGUMENT, "Alice answered every point."],
    "t-discuss": ["Sparse Debate Helps", INSIGHT],
    "t-chat": ["Write a haiku about rain", WRITER],
    "t-meeting": ["Should we move the team to a four-day week?", ANN],
}
#: thread id -> the record classes (by name) its saved checkpoints and writes hold.
SAVED_RECORDS = {
    "t-solve": {"Turn", "Usage", "RoundRecord"},
    "t-debate": {"Turn", "Usage", "Verdict", "Score", "StrongestArgument", "WordCount"},
    "t-discuss": {
        "Turn",
        "Usage",
        "Document",
        "Section",
        "SectionChoice",
        "Insight",
        "ConvergenceRecord",
        "ConsensusReport",
        "ConsensusPoint",
        "DivergentView",
        "Position",
    },
    "t-chat": {"Turn", "Usage", "SelectionRecord"},
    "t-meeting": {"Turn", "Usage", "RoundDecision"},
}
DECISION = {
    "decision": "Pilot it for a quarter.",
    "rationale": "Gains outweigh risks if support is covered.",
    "dissent": ["Support may suffer."],
    "next_steps": ["Draft a rota"],
}


def reply(request: dict[str, Any]) -> Any:
    """The resumed chat's Reviewer approves; the meeting's Bob speaks, then the chair decides."""
    name = schema_of(request)
    if name == "RoundDecision":
        return {"action": "next_stage", "reason": "Said enough."}
    if name == "FinalDecision":
        return DECISION
    system = str(request["messages"][0]["content"])
    participant = re.match(r"You are (.+?), a participant", system)
    if participant:
        return f"{participant.group(1)} doubts the four-day week."
    return "APPROVED, it scans." if system.startswith("You are Reviewer,") else "Another draft."


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A copy of the saved file (reports and archives land in tmp_path too)."""
    monkeypatch.chdir(tmp_path)
    copy = tmp_path / SAVED.name
    shutil.copyfile(SAVED, copy)
    yield str(copy)
    assert hashlib.sha256(SAVED.read_bytes()).hexdigest() == SAVED_SHA256, "saved file changed"


def test_the_saved_file_is_the_one_committed() -> None:
    assert hashlib.sha256(SAVED.read_bytes()).hexdigest() == SAVED_SHA256


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(reply) as stub:
        yield stub


def cli_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> Any:
    code, out, err = run_cli([*args, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


def test_threads_lists_the_five_saved_threads(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    rows = cli_json(["threads", "--db", db], capsys)
    assert {r["thread_id"]: (r["pattern"], r["status"]) for r in rows} == THREADS
    code, out, err = run_cli(["threads", "--db", db], capsys)
    assert code == 0, err
    for thread_id, (pattern, status) in THREADS.items():
        assert re.search(rf"{thread_id}\s+{pattern}\s+{status}\b", out), out


@pytest.mark.parametrize("thread_id", list(THREADS))
def test_show_and_export_a_saved_thread(
    thread_id: str, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = THREADS[thread_id][1]
    code, shown, err = run_cli(["show", thread_id, "--db", db], capsys)
    assert code == 0, err
    shown_json = cli_json(["show", thread_id, "--db", db], capsys)
    assert (shown_json["thread_id"], shown_json["status"]) == (thread_id, status)
    code, markdown, err = run_cli(["export", thread_id, "--db", db, "--format", "md"], capsys)
    assert code == 0, err
    assert markdown.startswith("# ") and f"`{thread_id}`" in markdown
    code, exported, err = run_cli(["export", thread_id, "--db", db, "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(exported)["thread_id"] == thread_id
    for text in SAVED_TEXT[thread_id]:
        assert text in shown and text in markdown, text
        assert text in json.dumps(shown_json) and text in exported, text
    if thread_id == "t-debate":
        assert shown_json["verdict"]["winner"] == "Alice"
        assert "winner Alice" in shown and "Winner: Alice" in markdown
    if thread_id == "t-solve":
        assert "answer 72" in shown


def resume_args(thread_id: str, server: StubOpenAIServer, db: str) -> list[str]:
    """``resume`` with the stub's model flags (as ``stub_args``; resume has no retries flag)."""
    return ["resume", thread_id, "--db", db, "--model", "stub", "--base-url", server.url]


def resume_to_the_end(
    thread_id: str, server: StubOpenAIServer, db: str, capsys: pytest.CaptureFixture[str]
) -> dict[str, Any]:
    """Approve the paused thread until it finishes; return its result."""
    result: dict[str, Any] = {"status": "waiting"}
    for _ in range(5):
        if result.get("status") != "waiting":
            break
        result = cli_json([*resume_args(thread_id, server, db), "--approve"], capsys)
    assert result.get("status") != "waiting", result
    return result


def test_paused_chat_resumes_to_the_end(
    db: str, server: StubOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = cli_json(["show", "t-chat", "--db", db], capsys)["transcript"]
    assert [(t["agent"], t["content"]) for t in saved] == [
        ("user", "Write a haiku about rain"),
        ("Writer", WRITER),
    ]
    result = resume_to_the_end("t-chat", server, db, capsys)
    assert result["termination_reason"] == "matched"
    assert [(t["agent"], t["content"]) for t in result["transcript"]] == [
        ("user", "Write a haiku about rain"),
        ("Writer", WRITER),
        ("Reviewer", "APPROVED, it scans."),
    ]
    after = cli_json(["show", "t-chat", "--db", db], capsys)
    assert after["status"] == "finished"
    assert after["transcript"][: len(saved)] == saved  # the saved turns, ids and all
    assert len(after["transcript"]) == len(saved) + 1
    assert server.calls == 1  # only the Reviewer: the Writer's saved turn is not redone
    assert WRITER in json.dumps(server.requests[0]["messages"])
    rows = cli_json(["threads", "--db", db], capsys)
    assert {r["thread_id"]: r["status"] for r in rows}["t-chat"] == "finished"
    code, out, err = run_cli(["export", "t-chat", "--db", db, "--format", "md"], capsys)
    assert code == 0, err
    assert WRITER in out and "APPROVED, it scans." in out


def test_paused_meeting_resumes_to_the_end(
    db: str, server: StubOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = cli_json(["show", "t-meeting", "--db", db], capsys)["transcript"]
    assert [(t["agent"], t["content"]) for t in saved] == [("Ann", ANN)]
    result = resume_to_the_end("t-meeting", server, db, capsys)
    assert result["termination_reason"] == "completed"
    assert result["decision"] == DECISION
    assert [(t["agent"], t["content"]) for t in result["transcript"]][:2] == [
        ("Ann", ANN),
        ("Bob", "Bob doubts the four-day week."),
    ]
    assert [t["agent"] for t in result["transcript"]] == ["Ann", "Bob", "chair"]
    assert result["transcript"][0]["id"] == saved[0]["id"]
    after = cli_json(["show", "t-meeting", "--db", db], capsys)
    assert after["status"] == "finished"
    assert after["transcript"][: len(saved)] == saved  # Ann's saved turn, id and all
    assert [(d["stage"], d["action"]) for d in result["controller"]] == [
        ("pitch", "next_stage"),  # saved before the pause
        ("talk", "next_stage"),
    ]
    assert ANN in json.dumps(server.requests[0]["messages"])  # Bob read Ann's saved turn
    rows = cli_json(["threads", "--db", db], capsys)
    assert {r["thread_id"]: r["status"] for r in rows}["t-meeting"] == "finished"


def records_in(value: Any) -> Iterator[BaseModel]:
    """Every pydantic record in a loaded value, nested ones too."""
    if isinstance(value, BaseModel):
        yield value
        for name in type(value).model_fields:
            yield from records_in(getattr(value, name))
    elif isinstance(value, dict):
        for item in value.values():
            yield from records_in(item)
    elif isinstance(value, list | tuple | set | frozenset):  # tuples: delta snapshots too
        for item in value:
            yield from records_in(item)


def test_saved_records_load_as_their_classes(db: str) -> None:
    """Every record in every saved checkpoint and write comes back as its class, not a dict."""
    from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener

    import debategraph
    from debategraph.checkpoints import open_checkpointer, read_run, thread_config

    events: list[Any] = []
    unregister = register_serde_event_listener(events.append)
    try:
        with open_checkpointer(db) as saver:
            for thread_id, expected in SAVED_RECORDS.items():
                records: list[BaseModel] = []
                for saved in saver.list(thread_config(thread_id)):
                    records += records_in(saved.checkpoint["channel_values"])
                    records += records_in([value for _, _, value in saved.pending_writes or []])
                assert {type(r).__name__ for r in records} >= expected, thread_id
                turns = [r for r in records if isinstance(r, Turn)]
                assert turns and all(isinstance(t.usage, Usage) for t in turns), thread_id
                assert any(isinstance(r, Usage) for r in records), thread_id
                if thread_id == "t-debate":
                    verdicts = [r for r in records if isinstance(r, Verdict)]
                    assert [v.winner for v in verdicts] == ["Alice"]
                    assert any(t.agent == "Alice" and t.content == DEBATE_ARGUMENT for t in turns)

            run = read_run(saver, "t-debate")  # the state as the debate graph reads it
            assert run is not None and run.pattern == "debate"
            graph = debategraph.build_debate(**run.settings).compile(checkpointer=saver)
            values = graph.get_state(thread_config("t-debate")).values
    finally:
        unregister()
    assert isinstance(values["transcript"][0], Turn)
    assert values["transcript"][0].content == DEBATE_ARGUMENT
    assert isinstance(values["verdict"], Verdict) and values["verdict"].winner == "Alice"
    assert isinstance(values["usage"], Usage)
    assert events == []  # LangGraph blocked no type and rebuilt every one it met
