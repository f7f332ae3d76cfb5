"""The graphs of ``langgraph.json`` under ``langgraph dev`` (LangGraph Studio's server).

A real ``langgraph dev`` subprocess (see :mod:`tests.studio_server`) serves the repository's
``langgraph.json``; a ``langgraph-sdk`` client drives ``solver_debate`` the way Studio does:
the model comes from the run's context (pointed at the stub OpenAI server running in this
process), the run pauses at the round boundary with LangGraph's own ``interrupt_after``, a
human interjects with ``update_state(..., as_node="close_round")``, and a second run resumes
the thread on the server's own checkpointer.

The module runs twice: with the server's default serializer, and with
``LANGGRAPH_STRICT_MSGPACK=true`` (unregistered types blocked, as future LangGraph versions
will do by default), so the pydantic records in state must round-trip through the
allowlist LangGraph derives from the state schema.

Skipped when ``langgraph-cli[inmem]`` is not installed, unless the real parts are required
(``.ci/run`` exports ``DEBATEGRAPH_REQUIRE_REAL_PARTS=1``; see :mod:`tests.backends`): then
it fails.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.backends import require_module
from tests.conftest import debate_reply, solver_of
from tests.groups import one_worker
from tests.openai_stub import StubOpenAIServer
from tests.studio_server import CONFIG, StudioServer, stream_parts, studio_config, studio_server

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow, one_worker(__name__)]

GRAPH = "solver_debate"
APP = "panel_app"
REVIEWED = "reviewed_panel"
QUESTION = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in "
    "May. How many clips did Natalia sell altogether in April and May?"
)
NOTE = "Check the halving"
WAIT_S = 60.0  # any single wait on the server: an HTTP read, a run, a status change


def require_server() -> None:
    """Skip without ``langgraph-cli[inmem]`` (fail where the real parts are required)."""
    for module in ("langgraph_api", "langgraph_sdk"):
        require_module(module, "pip install -e '.[dev]' installs langgraph-cli[inmem]")


@pytest.fixture(scope="module", params=["default-serde", "strict-msgpack"])
def studio(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[StudioServer]:
    require_server()
    env = {"LANGGRAPH_STRICT_MSGPACK": "true" if request.param == "strict-msgpack" else "false"}
    workdir = tmp_path_factory.mktemp(f"studio-{request.param}")  # its log outlives the test
    # Beside the declared graphs, a user's app with a debate inside it.
    graphs = {
        **studio_config()["graphs"],
        APP: f"{Path(__file__).with_name('composition_app.py')}:app",
        REVIEWED: f"{Path(__file__).with_name('composition_app.py')}:reviewed",
    }
    with studio_server(workdir=workdir, env=env, config_overrides={"graphs": graphs}) as server:
        yield server


@pytest.fixture
def client(studio: StudioServer) -> Iterator[Any]:
    from langgraph_sdk import get_sync_client

    with get_sync_client(url=studio.url, api_key=None, timeout=WAIT_S) as sdk:
        yield sdk


def stub_context(stub: StubOpenAIServer) -> dict[str, Any]:
    return {"model": "stub", "base_url": stub.url, "max_retries": 0, "timeout_s": 30}


def declared_graphs() -> dict[str, dict[str, Any]]:
    """Graph id -> spec (``{"path": ..., "description": ...}``) from ``langgraph.json``."""
    graphs = json.loads(CONFIG.read_text())["graphs"]
    return {k: v if isinstance(v, dict) else {"path": v} for k, v in graphs.items()}


def assistant_of(client: Any, graph_id: str) -> dict[str, Any]:
    found = client.assistants.search(graph_id=graph_id, limit=10)
    system = [a for a in found if a["metadata"].get("created_by") == "system"]
    assert system, f"no assistant for graph {graph_id!r}: {found}"
    return dict(system[0])


def solvers_of(client: Any, graph_id: str = GRAPH) -> list[str]:
    """The solver nodes of the served graph (its drawing, as Studio shows it)."""
    drawing = client.assistants.get_graph(assistant_of(client, graph_id)["assistant_id"])
    return sorted(n["id"] for n in drawing["nodes"] if str(n["id"]).startswith("solver_"))


def settle(client: Any, thread_id: str) -> dict[str, Any]:
    """The thread once no run is in flight on it (runs finish asynchronously)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        thread = client.threads.get(thread_id)
        if thread["status"] != "busy":
            return dict(thread)
        assert time.monotonic() < deadline, f"thread {thread_id} still busy after {WAIT_S} s"
        time.sleep(0.1)


def stream_run(client: Any, thread_id: str, **kwargs: Any) -> list[tuple[str, Any]]:
    """Stream one run (``updates`` mode); return its ``(event, data)`` parts, errors raised."""
    return stream_parts(client, thread_id, GRAPH, **kwargs)


def nodes_updated(parts: list[tuple[str, Any]]) -> set[str]:
    return {node for event, data in parts if event == "updates" for node in data}


def test_declared_graphs_are_served(client: Any) -> None:
    declared = declared_graphs()
    assert GRAPH in declared
    # every built-in pattern is declared (Studio shows only what is declared), compiled
    # by the one module that compiles graphs for Studio
    from debategraph.registry import BUILTIN

    patterns = {entry.name for entry in BUILTIN}
    assert patterns <= set(declared), f"not in langgraph.json: {sorted(patterns - set(declared))}"
    paths = {str(spec["path"]).rpartition(":")[0] for spec in declared.values()}
    assert paths == {"./src/debategraph/graphs/studio.py"}
    served = {a["graph_id"]: a for a in client.assistants.search(limit=100)}
    assert set(declared) | {APP, REVIEWED} == set(served), (sorted(declared), sorted(served))
    for graph_id, spec in declared.items():
        assert served[graph_id]["description"] == spec.get("description"), graph_id
        assert spec.get("description"), f"{graph_id}: give it a description for Studio"
        schemas = client.assistants.get_schemas(served[graph_id]["assistant_id"])
        # Studio's run form: the model endpoint is set per run through the context; a
        # key by the variable that holds it, never the key itself
        context = schemas["context_schema"]["properties"]
        assert {"model", "base_url", "api_key_env", "temperature"} <= set(context), graph_id
        assert "api_key" not in context, graph_id
        assert all(field.get("description") for field in context.values()), graph_id
        assert "\n" not in schemas["input_schema"]["description"], graph_id
    assert solvers_of(client) == ["solver_1", "solver_2", "solver_3", "solver_4"]
    assert set(schemas_of(client)["input_schema"]["properties"]) == {
        "question",
        "choices",
        "answer_kind",
        "messages",
    }


def schemas_of(client: Any, graph_id: str = GRAPH) -> dict[str, Any]:
    return dict(client.assistants.get_schemas(assistant_of(client, graph_id)["assistant_id"]))


def test_pause_interject_resume(client: Any, stub: StubOpenAIServer) -> None:
    solvers = solvers_of(client)
    context = stub_context(stub)
    thread_id = client.threads.create()["thread_id"]

    # Round 1, then LangGraph's own pause after the round boundary (Studio offers it too).
    parts = stream_run(
        client,
        thread_id,
        input={"question": QUESTION},
        context=context,
        interrupt_after=["close_round"],
    )
    seen = nodes_updated(parts)
    assert set(solvers) | {"open_round", "close_round", "__interrupt__"} <= seen, seen
    assert "aggregate" not in seen
    assert settle(client, thread_id)["status"] == "interrupted"
    assert stub.calls == len(solvers)  # round 1 only
    assert {r["model"] for r in stub.requests} == {"stub"}  # the run's context reached the graph

    state = client.threads.get_state(thread_id)
    assert state["next"] == ["open_round"]
    values = state["values"]
    assert values["round"] == 1
    assert values["rounds"] == [
        {
            "round": 1,
            "answers": dict.fromkeys(solvers, "18"),
            "usage": values["rounds"][0]["usage"],
        }
    ]
    # Turn records come back over the API as plain JSON objects with every field.
    assert [t["agent"] for t in values["transcript"]] == solvers
    first = values["transcript"][0]
    assert isinstance(first, dict)
    assert {"id", "role", "content", "stage", "round", "usage", "answer"} <= set(first)
    assert (first["role"], first["round"], first["answer"]) == ("agent", 1, "18")

    # A human interjects as if close_round had written it; the thread stays at the boundary.
    client.threads.update_state(
        thread_id, {"transcript": [{"role": "user", "content": NOTE}]}, as_node="close_round"
    )
    state = client.threads.get_state(thread_id)
    assert state["next"] == ["open_round"]
    note = state["values"]["transcript"][-1]
    assert (note["agent"], note["role"], note["stage"], note["round"], note["content"]) == (
        "user",
        "user",
        "interject",
        1,
        NOTE,
    )

    # Resume: a second run on the thread, no input, same context, no pause.
    before = len(stub.requests)
    parts = stream_run(client, thread_id, input=None, context=context)
    assert "aggregate" in nodes_updated(parts)
    assert settle(client, thread_id)["status"] == "idle"

    final = client.threads.get_state(thread_id)
    assert final["next"] == []
    values = final["values"]
    assert values["answer"] == "18"
    assert values["termination_reason"] == "rounds_completed"
    assert values["votes"] == {"18": len(solvers)}
    assert [r["round"] for r in values["rounds"]] == [1, 2, 3]
    assert values["usage"]["calls"] == 3 * len(solvers)
    assert sum(1 for t in values["transcript"] if t["role"] == "user") == 1

    later = stub.requests[before:]
    assert len(later) == 2 * len(solvers)  # rounds 2 and 3; round 1 was not called again
    round_2 = later[: len(solvers)]
    assert sorted(solver_of(r) for r in round_2) == solvers
    for request in round_2:
        assert NOTE in json.dumps(request["messages"]), solver_of(request)


def test_configurable_also_reaches_the_context(client: Any, stub: StubOpenAIServer) -> None:
    """Older clients send ``config={"configurable": ...}``; the server mirrors it to context."""
    thread_id = client.threads.create()["thread_id"]
    out = client.runs.wait(
        thread_id,
        GRAPH,
        input={"question": QUESTION},
        config={"configurable": stub_context(stub)},
    )
    assert out["answer"] == "18", out
    assert stub.calls == 3 * len(solvers_of(client))
    assert {r["model"] for r in stub.requests} == {"stub"}


def test_a_round_review_as_agent_chat_ui_sees_and_answers_it(
    client: Any, stub: StubOpenAIServer
) -> None:
    """``useStream``'s view of a paused run passes agent-chat-ui's interrupt detector (its
    buttons); the human's ``respond`` decision resumes the run and reaches round 2."""
    from debategraph.nodes.review import RESPONSE_SCHEMA
    from tests.test_review import is_agent_inbox_interrupt_schema

    context = stub_context(stub)
    thread_id = client.threads.create()["thread_id"]
    values = [
        part.data
        for part in client.runs.stream(
            thread_id, REVIEWED, input={"question": QUESTION}, context=context, stream_mode="values"
        )
        if part.event == "values"
    ]
    interrupts = values[-1]["__interrupt__"]  # what useStream reads as stream.interrupt
    assert is_agent_inbox_interrupt_schema(interrupts), interrupts
    (action,) = interrupts[0]["value"]["action_requests"]
    assert (action["name"], action["args"]["round"]) == ("round_review", 1)
    assert settle(client, thread_id)["status"] == "interrupted"
    assert stub.calls == 2  # round 1: two solvers
    (pending,) = client.threads.get_state(thread_id)["interrupts"]
    assert pending["response_schema"] == RESPONSE_SCHEMA  # the replies a UI may send

    reply = {"decisions": [{"type": "respond", "message": NOTE}]}
    out = client.runs.wait(thread_id, REVIEWED, command={"resume": reply}, context=context)
    assert out["termination_reason"] == "rounds_completed" and out["answer"] == "18", out
    round_2 = stub.requests[2:]
    assert len(round_2) == 2 and all(NOTE in json.dumps(r["messages"]) for r in round_2)
    transcript = client.threads.get_state(thread_id)["values"]["transcript"]
    assert [(t["role"], t["round"], t["content"]) for t in transcript if t["role"] == "user"] == [
        ("user", 1, NOTE)
    ]


def test_server_log_is_clean(studio: StudioServer) -> None:
    """No tracebacks or errors in the server's log (the runs above went through it)."""
    log = re.sub(r"\x1b\[[0-9;]*m", "", studio.log_path.read_text(errors="replace"))
    assert "Traceback" not in log, studio.log_tail()
    assert "[error" not in log, studio.log_tail()


def studio_debate_reply(request: dict[str, Any]) -> Any:
    """:func:`debate_reply` for Studio's debaters: the judge misspells Negative."""
    reply = debate_reply(request)
    if isinstance(reply, dict) and "winner" in reply:
        return {
            **reply,
            "winner": "Negatve",  # misspelt: read as Negative
            "scores": [{"debater": "Negative", "criterion": "evidence", "score": 8}],
            "strongest": [{"debater": "Affirmative", "argument": "Tea calms the mind."}],
        }
    return reply


def test_debate_pause_interject_verdict(client: Any) -> None:
    """A debate run in Studio: pause at the round boundary, interject, resume, read the verdict."""
    with StubOpenAIServer(studio_debate_reply) as stub:
        context = stub_context(stub)
        thread_id = client.threads.create()["thread_id"]
        parts = [
            (part.event, part.data)
            for part in client.runs.stream(
                thread_id,
                "debate",
                input={"topic": "Tea is better than coffee"},
                context=context,
                stream_mode=["updates"],
                interrupt_after=["close_round"],
            )
        ]
        assert not [data for event, data in parts if event == "error"]
        assert {"Affirmative", "Negative", "close_round"} <= nodes_updated(parts)
        assert settle(client, thread_id)["status"] == "interrupted"
        state = client.threads.get_state(thread_id)
        assert state["values"]["round"] == 1
        assert [t["agent"] for t in state["values"]["transcript"]] == ["Affirmative", "Negative"]

        client.threads.update_state(
            thread_id, {"transcript": [{"role": "user", "content": NOTE}]}, as_node="close_round"
        )
        before = len(stub.requests)
        parts = [
            (part.event, part.data)
            for part in client.runs.stream(
                thread_id, "debate", input=None, context=context, stream_mode=["updates"]
            )
        ]
        assert not [data for event, data in parts if event == "error"]
        assert settle(client, thread_id)["status"] == "idle"
        values = client.threads.get_state(thread_id)["values"]
        assert values["termination_reason"] == "rounds_completed"
        # The judge named Negative (misspelt): that is the verdict, not a tie or a fallback.
        verdict = values["verdict"]
        assert verdict["winner"] == "Negative", verdict
        assert not verdict.get("fallback"), verdict
        assert [s["debater"] for s in verdict["scores"]] == ["Negative"], verdict
        assert "winner 'Negatve' read as 'Negative'" in verdict["notes"], verdict
        assert values["rounds_completed"] == 3
        round_2 = [r for r in stub.requests[before:] if not r.get("tools")][:2]
        assert len(round_2) == 2
        assert all(NOTE in json.dumps(r["messages"]) for r in round_2)


def test_a_debate_inside_a_users_app(client: Any, stub: StubOpenAIServer) -> None:
    """Studio draws the debate inside the app, and a run streams its rounds and its answer."""
    assistant = assistant_of(client, APP)["assistant_id"]
    drawing = client.assistants.get_graph(assistant, xray=True)
    ids = {str(node["id"]) for node in drawing["nodes"]}
    inner = {"take_input", "open_round", "solver_1", "close_round", "aggregate", "respond"}
    assert {f"panel:{node}" for node in inner} <= ids, sorted(ids)
    thread_id = client.threads.create()["thread_id"]
    parts = stream_parts(
        client,
        thread_id,
        APP,
        input={"messages": [{"role": "user", "content": QUESTION}]},
        context=stub_context(stub),
        stream_subgraphs=True,
    )
    inner_updates = [
        node for event, data in parts if event.startswith("updates|panel:") for node in data
    ]
    assert inner_updates.count("close_round") == 2, parts
    assert settle(client, thread_id)["status"] == "idle"
    messages = client.threads.get_state(thread_id)["values"]["messages"]
    assert messages[0]["content"] == QUESTION
    assert [m["name"] for m in messages[1:4]] == ["solver_1", "solver_2", "solver_3"]
    assert messages[-1]["content"].startswith("The answer is 18: 3 of 3 solvers gave it")
    assert stub.calls == 6 and {r["model"] for r in stub.requests} == {"stub"}
