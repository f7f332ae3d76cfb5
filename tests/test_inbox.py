"""A thread's inbox in LangGraph's store: interject into a running thread, and stop it.

Unit: the store (SQLite and Postgres, sync and async), the drain at a round boundary
(idempotent, deleting what it consumed, ``stop`` -> ``stopped``, no store -> nothing), on
``invoke`` and ``ainvoke``, and a stop in each pattern. Integration: a debate running in
one process takes ``debategraph interject`` and ``debategraph stop`` from another.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.memory import InMemoryStore

from debategraph import build_debate, build_discussion, build_solver_debate
from debategraph.checkpoints import open_checkpointer, open_store, thread_config
from debategraph.checkpoints.inbox import INTERJECT, STOP, InboxItem, aread, aremove, post, read
from debategraph.checkpoints.inbox import remove as remove_items
from debategraph.models import ModelSpec
from debategraph.nodes.rounds import drain, ended, open_round_node, round_router
from debategraph.runs.human import close_inbox
from debategraph.state.base import RunState
from debategraph.state.records import interjection
from tests.conftest import HOLD_S, debate_reply, one_error_line, run_cli, stub_args
from tests.openai_stub import StubOpenAIServer, default_responder
from tests.test_discussion import PAPER, TWO

CLI = [sys.executable, "-m", "debategraph.cli"]
NOTE = "Consider the price of a cup, zebra-7."
TOPIC = "Tea is better than coffee"


# --------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------


def test_post_read_remove_on_each_backend(checkpoint_url: str) -> None:
    with open_checkpointer(checkpoint_url), open_store(checkpoint_url) as store:
        first = post(store, "t.1", INTERJECT, "  hello  ")
        stop = post(store, "t.1", STOP, "ignored")
        other = post(store, "t%2E1", INTERJECT, "another thread")
        items = read(store, "t.1")
        assert [(i.key, i.kind, i.text) for i in items] == [
            (first, INTERJECT, "hello"),
            (stop, STOP, ""),
        ]
        assert len(first) == 32 and items[0].created <= items[1].created

        async def drain_async() -> list[InboxItem]:
            await aremove(store, "t.1", [first])
            return await aread(store, "t.1")

        assert [i.key for i in asyncio.run(drain_async())] == [stop]
        remove_items(store, "t.1", [stop])
        assert read(store, "t.1") == []
        assert [i.key for i in read(store, "t%2E1")] == [other]  # escaped: no clash


def test_post_refuses_an_unknown_kind_and_an_empty_interjection() -> None:
    store = InMemoryStore()
    with pytest.raises(ValueError, match="unknown inbox item kind 'pause'"):
        post(store, "t", "pause")
    with pytest.raises(ValueError, match="empty"):
        post(store, "t", INTERJECT, "   ")


# --------------------------------------------------------------------------
# The drain at a round boundary
# --------------------------------------------------------------------------


def test_drain_records_an_item_once_and_deletes_what_it_consumed() -> None:
    items = [
        InboxItem("a", INTERJECT, "first", 1.0),
        InboxItem("s", STOP, "", 2.0),
        InboxItem("b", INTERJECT, "second", 3.0),
    ]
    update, done = drain(items, {"transcript": []}, after_round=2)
    turns = update["transcript"]
    assert [(t.id, t.content, t.round, t.role) for t in turns] == [
        ("a", "first", 2, "user"),
        ("b", "second", 2, "user"),
    ]
    assert update["termination_reason"] == "stopped"
    assert done == ["s"]  # interjections stay until their step is saved
    again, done = drain(items[::2], {"transcript": turns}, after_round=3)
    assert again == {} and done == ["a", "b"]  # recorded: deleted, not recorded twice


def test_a_stop_asked_earlier_wins_over_a_close_condition() -> None:
    assert ended({"termination_reason": "stopped"}, "rounds_completed") == "stopped"
    assert ended({"termination_reason": "stopped"}, None) == "stopped"
    assert ended({}, "unanimous") == "unanimous"
    assert ended({"termination_reason": None}, None) is None


def loop_graph(rounds: int) -> StateGraph[Any, Any, Any, Any]:
    """The shared round loop alone: open_round -> close_round, ``rounds`` rounds."""

    def close_round(state: dict[str, Any]) -> dict[str, Any]:
        reason = ended(state, "rounds_completed" if state["round"] >= rounds else None)
        return {"termination_reason": reason} if reason else {}

    builder: StateGraph[Any, Any, Any, Any] = StateGraph(RunState)
    builder.add_node("open_round", open_round_node())
    builder.add_node("close_round", close_round)
    builder.add_edge(START, "open_round")
    builder.add_edge("open_round", "close_round")
    route, targets = round_router(END, pause_after_round=False)
    builder.add_conditional_edges("close_round", route, targets)
    return builder


Invoke = Callable[[Any, Any, Any], dict[str, Any]]


def sync_invoke(graph: Any, value: Any, config: Any) -> dict[str, Any]:
    out: dict[str, Any] = graph.invoke(value, config)
    return out


def async_invoke(graph: Any, value: Any, config: Any) -> dict[str, Any]:
    out: dict[str, Any] = asyncio.run(graph.ainvoke(value, config))
    return out


@pytest.mark.parametrize("run", [sync_invoke, async_invoke], ids=["invoke", "ainvoke"])
def test_open_round_drains_the_inbox(run: Invoke, checkpoint_url: str) -> None:
    with open_checkpointer(checkpoint_url) as saver, open_store(checkpoint_url) as store:
        graph = loop_graph(rounds=9).compile(
            checkpointer=saver, store=store, interrupt_before=["open_round"]
        )
        config = thread_config("loop")
        run(graph, {"transcript": [], "round": 0}, config)  # stops before round 1
        key = post(store, "loop", INTERJECT, NOTE)
        run(graph, None, config)  # round 1 records it; it stays until that is saved
        users = [t for t in graph.get_state(config).values["transcript"] if t.role == "user"]
        assert [(t.id, t.content, t.round) for t in users] == [(key, NOTE, 0)]
        assert [i.key for i in read(store, "loop")] == [key]
        run(graph, None, config)  # round 2: recorded, so deleted, not recorded again
        assert read(store, "loop") == []
        values = graph.get_state(config).values
        assert [t.id for t in values["transcript"] if t.role == "user"] == [key]
        post(store, "loop", STOP)
        out = run(graph, None, config)  # round 3 reads the stop and is the last
        assert out["termination_reason"] == "stopped" and out["round"] == 3
        assert not graph.get_state(config).next
        assert read(store, "loop") == []  # a stale stop would stop a later continuation


@pytest.mark.parametrize("run", [sync_invoke, async_invoke], ids=["invoke", "ainvoke"])
def test_without_a_store_or_a_thread_nothing_is_drained(run: Invoke) -> None:
    out = run(loop_graph(rounds=2).compile(), {"round": 0}, None)
    assert out["termination_reason"] == "rounds_completed"
    store = InMemoryStore()
    post(store, "t", STOP)
    out = run(loop_graph(rounds=2).compile(store=store), {"round": 0}, None)  # no thread
    assert out["termination_reason"] == "rounds_completed"
    assert [i.kind for i in read(store, "t")] == [STOP]


def any_reply(request: dict[str, Any]) -> Any:
    """Any schema's example answer; a moderator who keeps the debate open."""
    tools = request.get("tools") or []
    if tools and tools[0]["function"]["name"] == "ModeratorDecision":
        return debate_reply(request)
    return default_responder(request)


@pytest.fixture
def stub_spec() -> Iterator[ModelSpec]:
    with StubOpenAIServer(any_reply) as server:
        yield ModelSpec(model="stub", base_url=server.url, timeout_s=10, max_retries=0)


PATTERNS: dict[str, tuple[Callable[[ModelSpec], Any], dict[str, Any], str]] = {
    "solver_debate": (
        lambda spec: build_solver_debate(spec, agents=2, max_rounds=4),
        {"question": "What is 2 + 2?"},
        "open_round",
    ),
    "debate": (
        lambda spec: build_debate(spec, max_rounds=4, moderator=True),
        {"topic": TOPIC},
        "open_round",
    ),
    "discussion": (
        lambda spec: build_discussion(spec, personas=TWO, max_rounds=4, threshold=1.0),
        {"document": PAPER},
        "open_iteration",
    ),
}


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_a_stop_ends_each_pattern_after_the_round_that_reads_it(
    name: str, stub_spec: ModelSpec
) -> None:
    build, graph_input, open_node = PATTERNS[name]
    store = InMemoryStore()
    graph = build(stub_spec).compile(
        checkpointer=InMemorySaver(), store=store, interrupt_before=[open_node]
    )
    config = thread_config("p")
    graph.invoke(graph_input, config)  # stops before round 1
    post(store, "p", STOP)
    out = asyncio.run(graph.ainvoke(None, config))  # round 1 reads it and is the last
    # Its close's own conditions may fire too (a stall, unanimity): the stop wins.
    assert out["termination_reason"] == "stopped"
    assert graph.get_state(config).values["round"] == 1
    assert not graph.get_state(config).next
    assert read(store, "p") == []


# --------------------------------------------------------------------------
# The CLI: another process interjects into a running debate, and stops it
# --------------------------------------------------------------------------


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # the default archive for Postgres lands here
    return tmp_path


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60)


@contextlib.contextmanager
def running(args: list[str]) -> Iterator[subprocess.Popen[str]]:
    """``debategraph ARGS`` in a process of its own, killed on the way out if still alive."""
    proc = subprocess.Popen(
        [*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def prompt_text(request: dict[str, Any]) -> str:
    return json.dumps(request["messages"])


class Held:
    """A stub's replies, held at two points until the test has acted: events, not clocks.

    The run waits in its requests until the interjection has been sent, and in the
    first request that reads ``note`` until the stop has been sent, so neither arrives
    after the run has finished, however busy the machine (a slow ``debategraph
    interject`` used to find the run over).

    Args:
        reply: The replies.
        note: The interjection's text.
    """

    def __init__(self, reply: Callable[[dict[str, Any]], Any], note: str) -> None:
        self.reply = reply
        self.note = note
        self.interjected = threading.Event()
        self.stop_sent = threading.Event()

    def __call__(self, request: dict[str, Any]) -> Any:
        read = self.note in prompt_text(request)
        (self.stop_sent if read else self.interjected).wait(HOLD_S)
        return self.reply(request)


@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_interject_into_and_stop_a_running_debate(
    checkpoint_url: str, in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Debaters speak in turn (Alice, Bob): request ``2 * (r - 1) + i`` is round ``r``'s."""
    held = Held(debate_reply, NOTE)
    with StubOpenAIServer(held, latency_s=0.3) as server:
        args = ["debate", TOPIC, "--rounds", "30", "--thread", "t", "--json"]
        with running([*args, *stub_args(server, checkpoint_url)]) as proc:
            wait_for(lambda: len(server.requests) >= 1, "the debate to start")
            sent = cli("interject", "t", NOTE, "--db", checkpoint_url)
            held.interjected.set()
            assert sent.returncode == 0, sent.stderr
            assert "sent to running thread t" in sent.stderr, sent.stderr
            assert len(sent.stderr.strip().splitlines()) == 1
            wait_for(
                lambda: any(NOTE in prompt_text(r) for r in list(server.requests)),
                "a debater to read the interjection",
            )
            stopped = cli("stop", "t", "--db", checkpoint_url)
            held.stop_sent.set()
            assert stopped.returncode == 0, stopped.stderr
            assert "stop sent to running thread t" in stopped.stderr, stopped.stderr
            out, err = proc.communicate(timeout=120)
        requests = list(server.requests)
    assert proc.returncode == 0, err
    result = json.loads(out)
    assert result["termination_reason"] == "stopped"
    _, shown, _ = run_cli(["show", "t", "--db", checkpoint_url, "--json"], capsys)
    users = [t for t in json.loads(shown)["transcript"] if t["role"] == "user"]
    assert [u["content"] for u in users] == [NOTE]
    after = users[0]["round"]  # recorded after this round: read by the next one's debaters
    next_round = requests[2 * after : 2 * after + 2]
    assert len(next_round) == 2 and all(NOTE in prompt_text(r) for r in next_round)
    assert not any(NOTE in prompt_text(r) for r in requests[: 2 * after])
    # The stop came after the interjection was read: it ended the run after a later round.
    assert after + 1 < result["rounds_completed"] < 30
    assert len(requests) == 2 * result["rounds_completed"]


def test_interject_and_stop_a_thread_stopped_mid_round(
    checkpoint_url: str, in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failed: list[int] = []

    def flaky(request: dict[str, Any]) -> Any:
        if not failed and "You are Negative" in json.dumps(request["messages"][:1]):
            failed.append(1)
            raise RuntimeError("injected")
        return debate_reply(request)

    with StubOpenAIServer(flaky) as server:
        args = ["debate", TOPIC, "--rounds", "5", "--thread", "m", "--json"]
        code, _, err = run_cli([*args, *stub_args(server, checkpoint_url)], capsys)
        assert code == 1, err  # Negative's first turn failed: round 1 is half done
        code, _, err = run_cli(["interject", "m", NOTE, "--db", checkpoint_url], capsys)
        assert code == 0, err
        assert "sent to thread m" in err and "debategraph resume m" in err
        code, _, err = run_cli(["stop", "m", "--db", checkpoint_url], capsys)
        assert code == 0, err
        assert "when it continues" in err
        code, out, err = run_cli(["resume", "m", "--db", checkpoint_url, "--json"], capsys)
        assert code == 0, err
        result = json.loads(out)
        assert result["termination_reason"] == "stopped"
        assert result["rounds_completed"] == 2  # round 1 finished, round 2 read both
        round_2 = [prompt_text(r) for r in server.requests[-2:]]
        assert all(NOTE in text for text in round_2)


def test_interject_and_stop_bad_input(
    checkpoint_url: str, in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for args in (["interject", "nope", NOTE], ["stop", "nope"]):
        code, _, err = run_cli([*args, "--db", checkpoint_url], capsys)
        assert code == 2
        assert "unknown thread id 'nope'" in one_error_line(err)
    with StubOpenAIServer(debate_reply) as server:
        args = ["debate", TOPIC, "--rounds", "1", "--thread", "f", "--json"]
        code, _, err = run_cli([*args, *stub_args(server, checkpoint_url)], capsys)
        assert code == 0, err
    code, _, err = run_cli(["interject", "f", " ", "--db", checkpoint_url], capsys)
    assert code == 2
    assert "interjection text is empty" in one_error_line(err)
    code, _, err = run_cli(["interject", "f", NOTE, "--db", checkpoint_url], capsys)
    assert code == 2
    assert "thread f is finished" in one_error_line(err) and "fork" in one_error_line(err)
    code, _, err = run_cli(["stop", "f", "--db", checkpoint_url], capsys)
    assert code == 2
    assert "thread f is finished: there is nothing to stop" in one_error_line(err)
    with open_store(checkpoint_url) as store:
        assert read(store, "f") == []  # nothing was posted


def test_a_finished_run_empties_its_inbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The last boundary's interjection would stay in the store: the finish deletes it."""
    db = str(tmp_path / "done.sqlite")
    with StubOpenAIServer(debate_reply) as server:
        args = ["debate", TOPIC, "--rounds", "2", "--pause-after-round", "--thread", "w"]
        code, _, err = run_cli([*args, *stub_args(server, db)], capsys)
        assert code == 0, err
        with open_store(db) as store:  # as a client of LangGraph's server would
            post(store, "w", INTERJECT, NOTE)
        code, _, err = run_cli(["resume", "w", "--db", db, "--approve"], capsys)
        assert code == 0, err
        assert all(NOTE in prompt_text(r) for r in server.requests[2:])
    assert "not read" not in err
    with open_store(db) as store:
        assert read(store, "w") == []


def test_close_inbox_names_interjections_that_came_too_late() -> None:
    store = InMemoryStore()
    read_one = post(store, "t", INTERJECT, "read")
    post(store, "t", INTERJECT, "too late")
    post(store, "t", STOP)
    recorded = [interjection("read", after_round=1, id=read_one)]
    assert close_inbox(store, "t", recorded) == ["too late"]
    assert read(store, "t") == []


def _open_at_once(db: Path, opener: Callable[[Path], Any], start: threading.Barrier) -> str:
    """Open ``db`` with ``opener`` once every thread is ready; what failed, or ``""``."""
    start.wait()
    try:
        with opener(db):
            return ""
    except Exception as exc:  # noqa: BLE001 (returned, named by the assertion)
        return f"{type(exc).__name__}: {exc}"


def test_many_openers_of_a_new_file_at_once_all_get_it(tmp_path: Path) -> None:
    """Eight stores and eight savers open one new file at the same moment: none fails.

    Each runs LangGraph's migrations; unlocked, two would run the same one and one would
    fail recording it (``UNIQUE constraint failed: store_migrations.v``, ``duplicate column
    name``) or find the new file locked while it turns WAL on: the durability benchmark's
    processes sharing one ``--db`` met it on a busy machine (unlocked, about half of such
    trials here fail).
    """
    from concurrent.futures import ThreadPoolExecutor

    openers: list[Callable[[Path], Any]] = [open_store, open_checkpointer] * 8
    with ThreadPoolExecutor(len(openers)) as pool:
        for trial in range(10):
            db = tmp_path / f"shared-{trial}.sqlite"
            start = threading.Barrier(len(openers))
            failed = [f for f in pool.map(_open_at_once, [db] * 16, openers, [start] * 16) if f]
            assert failed == [], (trial, failed)
