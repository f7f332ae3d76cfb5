"""Graphs run async: ``ainvoke`` on the package's checkpointers, calls all in flight.

Every node has a sync and a native async path (``debategraph.nodes.dual``); these tests
run the same graphs both ways, on SQLite and Postgres, and check at the HTTP server how
many model calls were in flight at once: a round's calls all, a run's ``max_concurrency``
or the process's :func:`~debategraph.models.set_call_limit` at most.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest
from langchain_core.messages import BaseMessage

from debategraph import build_debate, build_solver_debate, recursion_limit
from debategraph.checkpoints import open_checkpointer
from debategraph.models import ModelSpec, bind_model, call_limit, set_call_limit
from debategraph.models.binding import for_running_loop
from tests.conftest import run_cli, stub_args
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply
from tests.openai_stub import InGroups, StubOpenAIServer

T = TypeVar("T")
QUESTION = "What is 6 times 12?"
REPLY = {"reasoning": "6 x 12 = 72", "answer": "72", "confidence": 0.9}
LATENCY_S = 0.3


def run(coro: Coroutine[Any, Any, T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, 60.0)

    return asyncio.run(bounded())


@pytest.fixture
def slow() -> Iterator[StubOpenAIServer]:
    """A server that answers every solver after :data:`LATENCY_S`."""
    with StubOpenAIServer(lambda body: dict(REPLY), latency_s=LATENCY_S) as server:
        yield server


@pytest.fixture
def no_call_limit() -> Iterator[None]:
    yield
    set_call_limit(None)


def spec(server: StubOpenAIServer) -> ModelSpec:
    return ModelSpec(model="stub", base_url=server.url, timeout_s=30, max_retries=0)


def config(rounds: int, **extra: Any) -> dict[str, Any]:
    return {
        "configurable": {"thread_id": uuid.uuid4().hex},
        "recursion_limit": recursion_limit(build_solver_debate(agents=6, max_rounds=rounds)),
        **extra,
    }


def solver_model() -> ScriptedChatModel:
    """A scripted model whose answer depends only on the prompt (same both ways)."""

    def respond(messages: list[BaseMessage]) -> Any:
        who = str(messages[0].content).split(",")[0].removeprefix("You are ")
        refined = "previous answer" in str(messages[-1].content)
        answer = "72" if refined or who != "solver_3" else "70"
        return tool_reply("SolverReply", {"reasoning": f"{who} works", "answer": answer})

    return ScriptedChatModel(respond=respond)


def test_ainvoke_and_invoke_give_the_same_debate(checkpoint_url: str) -> None:
    builder = build_solver_debate(solver_model(), agents=4, max_rounds=2)
    with open_checkpointer(checkpoint_url) as saver:
        graph = builder.compile(checkpointer=saver, name="solver_debate")
        sync_config, async_config = config(2), config(2)
        by_invoke = graph.invoke({"question": QUESTION}, sync_config)
        by_ainvoke = run(graph.ainvoke({"question": QUESTION}, async_config))
        for out in (by_invoke, by_ainvoke):
            out.pop("started_at", None)
            out["rounds"] = [r.answers for r in out["rounds"]]
            out["usage"] = out["usage"].total_tokens
            out["usage_by_agent"] = {a: u.calls for a, u in out["usage_by_agent"].items()}
            out["usage_by_model"] = {m: u.calls for m, u in out["usage_by_model"].items()}
            # Records and messages have ids and times of their own: compare what they say.
            out["transcript"] = [(t.agent, t.round, t.answer) for t in out["transcript"]]
            out["messages"] = [(m.name, m.content) for m in out["messages"]]
        assert by_invoke == by_ainvoke  # all but the timings
        assert by_ainvoke["answer"] == "72"
        assert by_ainvoke["termination_reason"] == "rounds_completed"
        # Read back through the async saver methods too: the same checkpoints either way.
        states = [run(graph.aget_state(sync_config)), graph.get_state(async_config)]
        turns = [[(t.agent, t.answer) for t in s.values["transcript"]] for s in states]
        assert turns[0] == turns[1] and len(turns[0]) == 8
        history = run(_history(graph, async_config))
        assert len(history) == len(list(graph.get_state_history(sync_config)))


async def _history(graph: Any, cfg: dict[str, Any]) -> list[Any]:
    return [snapshot async for snapshot in graph.aget_state_history(cfg)]


def test_prose_nodes_stream_their_tokens_async(tmp_path: Path) -> None:
    model = ScriptedChatModel(
        respond=lambda messages: text_reply("I argue the point in a few words here.")
    )
    graph = build_debate(model, max_rounds=1).compile(name="debate")

    async def stream() -> tuple[list[str], dict[str, Any]]:
        tokens: list[str] = []
        final: dict[str, Any] = {}
        async for mode, chunk in graph.astream(
            {"topic": "Tea or coffee?"}, {"recursion_limit": 20}, stream_mode=["messages", "values"]
        ):
            if mode == "messages":
                tokens.append(str(chunk[0].content))
            else:
                final = chunk
        return tokens, final

    tokens, final = run(stream())
    assert "".join(tokens).count("I argue the point") == 2  # both debaters, streamed
    assert [t.agent for t in final["transcript"]] == ["Affirmative", "Negative"]


def test_a_rounds_calls_are_all_in_flight_at_once(tmp_path: Path) -> None:
    # The stub answers none of the 18 calls until all 18 are in flight: however long
    # the 3 runs' first steps take on a loaded machine, overlap is an event, not a time.
    with (
        StubOpenAIServer(InGroups(18, 18, lambda body: dict(REPLY))) as slow,
        open_checkpointer(tmp_path / "c.sqlite") as saver,
    ):
        graph = build_solver_debate(spec(slow), agents=6, max_rounds=1).compile(
            checkpointer=saver, name="solver_debate"
        )

        async def three() -> list[dict[str, Any]]:
            # One worker in the loop's default thread pool, whatever the CPU count (its
            # default size grows with it): a call made through that pool could not overlap.
            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="default-pool")
            asyncio.get_running_loop().set_default_executor(pool)
            return await asyncio.gather(
                *(graph.ainvoke({"question": QUESTION}, config(1)) for _ in range(3))
            )

        outs = run(three())
    assert [o["answer"] for o in outs] == ["72"] * 3
    assert slow.calls == 18
    # 18 calls at once through a 1-worker default pool: no thread pool in between.
    assert slow.max_in_flight == 18


def test_sync_invoke_runs_a_rounds_calls_concurrently(
    slow: StubOpenAIServer, tmp_path: Path
) -> None:
    slow.responder = InGroups(4, 4, slow.responder)  # answered once all 4 are in flight
    with open_checkpointer(tmp_path / "c.sqlite") as saver:
        graph = build_solver_debate(spec(slow), agents=4, max_rounds=1).compile(
            checkpointer=saver, name="solver_debate"
        )
        assert graph.invoke({"question": QUESTION}, config(1))["answer"] == "72"
    assert slow.max_in_flight == 4


def test_max_concurrency_bounds_one_run(slow: StubOpenAIServer, tmp_path: Path) -> None:
    slow.responder = InGroups(2, 4, slow.responder)  # answered two at a time
    with open_checkpointer(tmp_path / "c.sqlite") as saver:
        graph = build_solver_debate(spec(slow), agents=4, max_rounds=1).compile(
            checkpointer=saver, name="solver_debate"
        )
        out = run(graph.ainvoke({"question": QUESTION}, config(1, max_concurrency=2)))
    assert out["answer"] == "72"
    assert slow.max_in_flight == 2


def test_call_limit_bounds_every_run_of_the_process(
    slow: StubOpenAIServer, tmp_path: Path, no_call_limit: None
) -> None:
    set_call_limit(3)
    assert call_limit() == 3
    answer = slow.responder
    slow.responder = InGroups(3, 8, answer)  # 2 runs x 4 calls, answered three at a time
    with open_checkpointer(tmp_path / "c.sqlite") as saver:
        graph = build_solver_debate(spec(slow), agents=4, max_rounds=1).compile(
            checkpointer=saver, name="solver_debate"
        )

        async def two() -> list[dict[str, Any]]:
            return await asyncio.gather(
                *(graph.ainvoke({"question": QUESTION}, config(1)) for _ in range(2))
            )

        assert [o["answer"] for o in run(two())] == ["72", "72"]
        assert slow.max_in_flight == 3
        slow.reset_stats()
        slow.responder = InGroups(3, 4, answer)
        assert graph.invoke({"question": QUESTION}, config(1))["answer"] == "72"
        assert slow.max_in_flight == 3  # the sync path keeps the same cap


def test_call_limit_refuses_less_than_one(no_call_limit: None) -> None:
    with pytest.raises(ValueError, match=r"call limit must be at least 1 .* got 0"):
        set_call_limit(0)
    assert call_limit() is None


def test_a_binding_works_from_a_second_event_loop() -> None:
    with StubOpenAIServer(lambda body: dict(REPLY)) as server:
        binding = bind_model(spec(server))
        graph = build_solver_debate(binding, agents=2, max_rounds=1).compile(name="solver_debate")
        for _ in range(2):  # each asyncio.run has its own loop; pooled connections do not
            assert run(graph.ainvoke({"question": QUESTION}, config(1)))["answer"] == "72"
        assert server.calls == 4


def test_cli_has_every_call_of_a_round_in_flight(
    slow: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "cli.sqlite"
    slow.responder = InGroups(5, 10, slow.responder)  # each round's 5 calls, together
    code, out, err = run_cli(
        ["solve", QUESTION, "--agents", "5", "--rounds", "2", "--json", *stub_args(slow, db)],
        capsys,
    )
    assert code == 0, err
    assert json.loads(out)["answer"] == "72"
    assert slow.calls == 10
    assert slow.max_in_flight == 5


def test_a_loops_http_client_is_closed_when_the_loop_ends() -> None:
    with StubOpenAIServer(lambda body: dict(REPLY)) as server:
        binding = bind_model(spec(server))

        async def per_loop() -> Any:
            mine = for_running_loop(binding)
            assert mine is for_running_loop(binding)  # one per loop
            assert mine.chat is not binding.chat
            await mine.chat.ainvoke("hi")
            return mine.chat.http_async_client

        client = run(per_loop())
        assert client.is_closed  # asyncio.run closed it with the loop: nothing left open
        assert for_running_loop(binding) is binding  # outside any loop: as built


def test_building_a_graph_loads_no_model_client() -> None:
    """Nodes get both paths when a graph is built; the model stack waits for a first call."""
    code = (
        "import sys\n"
        "from debategraph.graphs.solver_debate import build_solver_debate\n"
        "from debategraph.graphs.debate import build_debate\n"
        "build_solver_debate(None).compile(); build_debate(None, judge=True).compile()\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'langchain_openai'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
