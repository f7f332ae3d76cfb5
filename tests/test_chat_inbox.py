"""A running chat takes an interjection and a stop from other processes, through its inbox."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from debategraph import build_group_chat, recursion_limit
from debategraph.checkpoints.inbox import INTERJECT, STOP, post, read
from debategraph.checkpoints.serde import serializer
from tests.conftest import run_cli, stub_args
from tests.fake_model import ScriptedChatModel, text_reply
from tests.openai_stub import StubOpenAIServer
from tests.test_inbox import Held, cli, prompt_text, running, wait_for

NOTE = "Mention the rain gauge."
PAIR = ["Writer: writes", "Reviewer: reviews"]


def test_stop_from_the_inbox_ends_a_chat_between_turns() -> None:
    store = InMemoryStore()
    model = ScriptedChatModel(respond=lambda messages: text_reply("more"))
    graph = build_group_chat(model, agents=PAIR, max_rounds=10).compile(
        checkpointer=InMemorySaver(serde=serializer()), store=store, interrupt_before=["select"]
    )
    config = {"configurable": {"thread_id": "c"}, "recursion_limit": recursion_limit(graph)}
    graph.invoke({"task": "t"}, config)  # paused before turn 1's speaker is chosen
    post(store, "c", INTERJECT, NOTE)
    post(store, "c", STOP)
    graph.invoke(None, config)  # turn 1 runs; turn 2's open_round reads both
    out = graph.invoke(None, config)
    while graph.get_state(config).next:
        out = graph.invoke(None, config)
    assert out["termination_reason"] == "stopped"
    assert out["termination_detail"] == "a stop was requested"
    assert out["is_complete"] is True
    assert len(out["selections"]) == 1  # the stop came before turn 2's speaker was chosen
    humans = [t.content for t in graph.get_state(config).values["transcript"] if t.role == "user"]
    assert humans == ["t", NOTE]
    assert [i.kind for i in read(store, "c")] == [INTERJECT]  # deleted at the next drain


def chat_reply(request: dict[str, Any]) -> str:
    return "Another draft about the rain."


@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_interject_into_a_running_chat_reaches_the_next_speaker_then_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "c.sqlite")
    held = Held(chat_reply, NOTE)
    with StubOpenAIServer(held, latency_s=0.3) as server:
        args = ["chat", "Write about rain.", "--rounds", "40", "--thread", "c", "--json"]
        with running([*args, *stub_args(server, db)]) as proc:
            wait_for(lambda: len(server.requests) >= 1, "the chat to start")
            sent = cli("interject", "c", NOTE, "--db", db)
            held.interjected.set()
            assert sent.returncode == 0, sent.stderr
            assert "sent to running thread c" in sent.stderr
            wait_for(
                lambda: any(NOTE in prompt_text(r) for r in list(server.requests)),
                "a speaker to read the interjection",
            )
            stopped = cli("stop", "c", "--db", db)
            held.stop_sent.set()
            assert stopped.returncode == 0, stopped.stderr
            out, err = proc.communicate(timeout=120)
        requests = list(server.requests)
    assert proc.returncode == 0, err
    result = json.loads(out)
    assert result["termination_reason"] == "stopped"
    assert result["termination_detail"] == "a stop was requested"
    assert result["turns"] < 40
    humans = [m for m in result["transcript"] if m["role"] == "user"]
    assert [h["content"] for h in humans] == ["Write about rain.", NOTE]
    _, shown, _ = run_cli(["show", "c", "--db", db, "--json"], capsys)
    recorded = next(t for t in json.loads(shown)["transcript"] if t["content"] == NOTE)
    # Recorded after turn N: turn N + 1 (request N, 0-based) is the first to read it.
    after = recorded["round"]
    assert NOTE in prompt_text(requests[after])
    assert not any(NOTE in prompt_text(r) for r in requests[:after])


def test_interject_or_stop_a_finished_chat_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "c.sqlite")
    with StubOpenAIServer(chat_reply) as server:
        code, _, err = run_cli(
            ["chat", "t", "--rounds", "2", "--thread", "f", *stub_args(server, db)], capsys
        )
    assert code == 0, err
    for args in (["interject", "f", NOTE], ["stop", "f"], ["stop", "ghost"]):
        code, _, err = run_cli([*args, "--db", db], capsys)
        assert code == 2
        assert "finished" in err or "unknown thread id 'ghost'" in err
