"""Every pattern on Aegra (``debategraph serve``) over PostgreSQL, driven with ``langgraph-sdk``.

Real server processes (:mod:`tests.aegra_server`) on a fresh database of the test
PostgreSQL server; the models are stub OpenAI servers in this process, listed in the
operator's model list the servers start with and named per run through the run's
context. Two servers share the database: a thread moves from one to the other, and one
is killed with ``kill -9`` in the middle of a round and the other goes on from its last
checkpoint without repeating a finished model call.

Skipped without ``aegra-api`` or PostgreSQL, unless the real parts are required
(``.ci/run``): then they fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from debategraph import registry
from debategraph.checkpoints import inbox_item, inbox_namespace
from debategraph.graphs.inputs import check_input
from tests.aegra_server import AegraServer, aegra_server, healthy, models_file, serve_command
from tests.backends import fresh_database, require_module, wait_for_saved_tasks
from tests.conftest import answer_18, solver_of, solvers_answer_18
from tests.groups import one_worker
from tests.openai_stub import StubOpenAIServer
from tests.studio_server import closed_port, free_port, port_taken, stream_parts

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow, one_worker(__name__)]

WAIT_S = 60.0
NOTE = "Check the halving"
QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in all?"
DOCUMENT = (
    "# Tea and focus\n\n## Abstract\n\nWe study tea and attention in 40 adults.\n\n"
    "## Method\n\nA crossover trial of tea against water.\n\n"
    "## Results\n\nTea raised attention scores by 4%.\n"
)
#: A first input for each pattern, and the node its run ends with.
INPUTS: dict[str, dict[str, Any]] = {
    "solver_debate": {"question": QUESTION},
    "debate": {"topic": "Tea beats coffee"},
    "discussion": {"document": DOCUMENT},
    "group_chat": {"task": "Write a haiku about tea"},
    "meeting": {"topic": "Adopt a four-day week?"},
}


def require_server() -> None:
    require_module("aegra_api", "pip install -e '.[dev]' installs the serve extra (aegra-api)")
    require_module("langgraph_sdk", "pip install -e '.[dev]' installs langgraph-sdk")


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    require_server()
    with fresh_database("debategraph_serve") as url:
        yield url


@pytest.fixture(scope="module")
def shared_model() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(solvers_answer_18, latency_s=0.01) as stub:
        yield stub


@pytest.fixture
def model(shared_model: StubOpenAIServer) -> StubOpenAIServer:
    """The listed stub ``stub``, its requests and counts zeroed for this test.

    Every test waits for its runs to end, so what the counters hold is this test's only,
    whichever tests ran before it.
    """
    shared_model.reset_stats()
    return shared_model


@pytest.fixture(scope="module")
def stubs(shared_model: StubOpenAIServer) -> Iterator[dict[str, StubOpenAIServer]]:
    """Every stub the servers list, by model name: ``spare`` is per test."""
    with (
        StubOpenAIServer(solvers_answer_18) as other,
        StubOpenAIServer(solvers_answer_18) as spare,
    ):
        yield {"stub": shared_model, "other-model": other, "spare": spare}


@pytest.fixture(scope="module")
def models(stubs: dict[str, StubOpenAIServer], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The operator's model list every server of this module starts with."""
    urls = {name: stub.url for name, stub in stubs.items()}
    return models_file(tmp_path_factory.mktemp("models"), urls)


@pytest.fixture(scope="module")
def server(
    database: str, models: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AegraServer]:
    logdir = tmp_path_factory.mktemp("serve-a")
    with aegra_server(database, logdir=logdir, extra_args=("--models", str(models))) as running:
        yield running


@pytest.fixture(scope="module")
def second(
    database: str, server: AegraServer, models: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AegraServer]:
    """Another server process on the same database (started once the first is up)."""
    logdir = tmp_path_factory.mktemp("serve-b")
    with aegra_server(database, logdir=logdir, extra_args=("--models", str(models))) as running:
        yield running


@pytest.fixture
def spare(stubs: dict[str, StubOpenAIServer]) -> Iterator[StubOpenAIServer]:
    """A listed stub a test gives its own responder (set back after)."""
    stub = stubs["spare"]
    stub.reset_stats()
    yield stub
    stub.responder = solvers_answer_18


def client_of(server: AegraServer) -> Any:
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=server.url, api_key=None, timeout=WAIT_S)


@pytest.fixture
def client(server: AegraServer) -> Iterator[Any]:
    with client_of(server) as sdk:
        yield sdk


def context_of(name: str = "stub", **more: Any) -> dict[str, Any]:
    """A run's context naming a model of the operator's list."""
    return {"model": name, **more}


def settle(client: Any, thread_id: str) -> dict[str, Any]:
    """The thread once no run of it is in flight."""
    deadline = time.monotonic() + WAIT_S
    while (thread := client.threads.get(thread_id))["status"] == "busy":
        assert time.monotonic() < deadline, f"thread {thread_id} still busy after {WAIT_S} s"
        time.sleep(0.1)
    return dict(thread)


stream = stream_parts


def paused_after_round_one(client: Any, context: dict[str, Any]) -> tuple[str, list[str]]:
    """A new solver debate, run through round 1 and paused at the round boundary.

    Returns:
        The thread, and the nodes its run updated.
    """
    thread_id = client.threads.create()["thread_id"]
    parts = stream(
        client,
        thread_id,
        "solver_debate",
        input=INPUTS["solver_debate"],
        context=context,
        interrupt_after=["close_round"],
    )
    return thread_id, updated(parts)


def updated(parts: list[tuple[str, Any]]) -> list[str]:
    return [node for event, data in parts if event == "updates" for node in data]


def user_turns(values: dict[str, Any]) -> list[tuple[str, str, int, str]]:
    return [
        (t["agent"], t["stage"], t["round"], t["content"])
        for t in values["transcript"]
        if t["role"] == "user" and t.get("stage") == "interject"
    ]


def prompts_with(stub: StubOpenAIServer, text: str, since: int = 0) -> int:
    return sum(text in json.dumps(r["messages"]) for r in stub.requests[since:])


# -- every pattern ------------------------------------------------------------------------


def test_the_server_serves_every_pattern(client: Any) -> None:
    served = {a["graph_id"] for a in client.assistants.search(limit=100)}
    assert served == {e.name for e in registry.BUILTIN}
    assert set(INPUTS) == served


#: The normal finish of each pattern's run on the stub (never ``error``): the solvers
#: run their rounds, the moderator settles the debate, the discussion's personas stop
#: moving (the stub's insights never change), the chat reaches its turn cap, the meeting
#: runs its stages.
FINISHES = {
    "solver_debate": "rounds_completed",
    "debate": "settled",
    "discussion": "stalled",
    "group_chat": "max_turns",
    "meeting": "completed",
}


@pytest.mark.parametrize("graph", list(INPUTS))
def test_every_pattern_runs_and_streams(client: Any, model: StubOpenAIServer, graph: str) -> None:
    thread_id = client.threads.create()["thread_id"]
    parts = stream(client, thread_id, graph, input=INPUTS[graph], context=context_of())
    nodes = updated(parts)
    assert len(nodes) >= 3, nodes  # streamed node by node, not one final value
    assert settle(client, thread_id)["status"] == "idle"
    values = client.threads.get_state(thread_id)["values"]
    assert values["termination_reason"] == FINISHES[graph], values.get("notes")
    assert values["transcript"], "no turn recorded"
    assert model.calls > 0
    assert {r["model"] for r in model.requests} == {"stub"}  # the run's context


# -- pause, interject, resume ---------------------------------------------------------------


def test_a_paused_run_is_resumed_with_an_interjection(client: Any, model: StubOpenAIServer) -> None:
    context = context_of()
    thread_id, nodes = paused_after_round_one(client, context)
    assert "aggregate" not in nodes
    assert settle(client, thread_id)["status"] == "interrupted"
    assert model.calls == 4  # round 1 only (the counters are this test's)
    assert client.threads.get_state(thread_id)["next"] == ["open_round"]

    # The human's interjection resumes the run: round 2 reads it, then it pauses again.
    since = len(model.requests)
    interjection = {"transcript": [{"role": "user", "content": NOTE}]}
    stream(
        client,
        thread_id,
        "solver_debate",
        command={"update": interjection},
        context=context,
        interrupt_after=["close_round"],
    )
    assert settle(client, thread_id)["status"] == "interrupted"
    state = client.threads.get_state(thread_id)
    assert state["values"]["round"] == 2
    assert user_turns(state["values"]) == [("user", "interject", 1, NOTE)]
    assert prompts_with(model, NOTE, since) == 4  # every solver of round 2 read it

    # No input: the run goes on from the thread's checkpoint to the end.
    parts = stream(client, thread_id, "solver_debate", input=None, context=context)
    assert updated(parts)[-1] == "aggregate"
    assert settle(client, thread_id)["status"] == "idle"
    values = client.threads.get_state(thread_id)["values"]
    assert values["round"] == 3 and values["termination_reason"] == "rounds_completed"
    assert model.calls == 12


# -- the inbox, through the server's store ------------------------------------------------


def start_in_background(client: Any, graph: str, name: str) -> tuple[str, str]:
    thread_id = client.threads.create()["thread_id"]
    run = client.runs.create(thread_id, graph, input=INPUTS[graph], context=context_of(name))
    return thread_id, run["run_id"]


class Held:
    """A responder that holds every call until released, then answers 18.

    A test writes to a running thread's inbox while round 1's first call is held: the
    write lands before round 2 opens however long it takes, with no clock to beat.
    """

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: dict[str, Any]) -> Any:
        self.arrived.set()
        self.release.wait(WAIT_S)
        return solvers_answer_18(request)


@pytest.fixture
def held(spare: StubOpenAIServer) -> Iterator[Held]:
    """``spare`` holding its calls (:class:`Held`), released after the test at the latest."""
    gate = Held()
    spare.responder = gate
    yield gate
    gate.release.set()


def write_while_round_one_runs(client: Any, held: Held, kind: str, text: str = "") -> str:
    """Start a solver debate on ``spare``, post to its inbox while round 1 is held, wait.

    Returns:
        The thread, its run finished.
    """
    thread_id, run_id = start_in_background(client, "solver_debate", "spare")
    assert held.arrived.wait(WAIT_S), "round 1 never called the model"
    key, value = inbox_item(kind, text)
    client.store.put_item(list(inbox_namespace(thread_id)), key, value)
    held.release.set()  # round 1 ends only now: the item is in the inbox when round 2 opens
    client.runs.join(thread_id, run_id)
    return thread_id


def test_an_interjection_reaches_a_running_thread_through_the_store(
    client: Any, spare: StubOpenAIServer, held: Held
) -> None:
    thread_id = write_while_round_one_runs(client, held, "interject", NOTE)
    values = client.threads.get_state(thread_id)["values"]
    assert user_turns(values) == [("user", "interject", 1, NOTE)]
    assert prompts_with(spare, NOTE, 4) == 4  # every solver of the next round read it
    assert prompts_with(spare, NOTE, 0) == 4  # round 1 had started without it
    # read once: the item left the inbox
    found = client.store.search_items(list(inbox_namespace(thread_id)))
    assert found["items"] == []


def test_a_stop_reaches_a_running_thread_through_the_store(
    client: Any, spare: StubOpenAIServer, held: Held
) -> None:
    thread_id = write_while_round_one_runs(client, held, "stop")
    values = client.threads.get_state(thread_id)["values"]
    assert values["termination_reason"] == "stopped"
    # read where round 2 opens, it ends the run after that round: no round 3
    assert [r["round"] for r in values["rounds"]] == [1, 2] and spare.calls == 8


# -- models per agent -----------------------------------------------------------------------


def test_each_agent_gets_its_own_model_through_the_context(
    client: Any, model: StubOpenAIServer, stubs: dict[str, StubOpenAIServer]
) -> None:
    other = stubs["other-model"]
    other.reset_stats()
    context = context_of(agent_models={"solver_2": "other-model"})
    thread_id = client.threads.create()["thread_id"]
    before = len(model.requests)
    stream(client, thread_id, "solver_debate", input=INPUTS["solver_debate"], context=context)
    assert {solver_of(r) for r in other.requests} == {"solver_2"}
    assert {r["model"] for r in other.requests} == {"other-model"}
    assert len(other.requests) == 3  # one call a round
    mine = model.requests[before:]
    assert {solver_of(r) for r in mine} == {"solver_1", "solver_3", "solver_4"}


# -- bad input ------------------------------------------------------------------------------


BAD_INPUTS = [
    ("solver_debate", {"question": "   "}),
    ("solver_debate", {"questoin": "2+3?"}),
    ("solver_debate", {"question": 5}),
    ("solver_debate", {"question": "2+3?", "choices": ["only one"]}),
    ("debate", {"topic": ""}),
    ("discussion", {"document": " "}),
    ("meeting", {}),
    ("group_chat", {"task": "t", "reset": "yes"}),
]


@pytest.mark.parametrize(("graph", "values"), BAD_INPUTS)
@pytest.mark.parametrize("route", ["runs", "runs/stream", "runs/wait"])
def test_a_bad_input_gets_a_4xx_with_the_clis_line(
    server: AegraServer, client: Any, graph: str, values: dict[str, Any], route: str
) -> None:
    with pytest.raises(ValueError) as expected:
        check_input(graph, values)
    thread_id = client.threads.create()["thread_id"]
    response = httpx.post(
        f"{server.url}/threads/{thread_id}/{route}",
        json={"assistant_id": graph, "input": values},
        timeout=WAIT_S,
    )
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["message"] == str(expected.value)
    assert "\n" not in body["message"] and "Traceback" not in response.text
    assert client.runs.list(thread_id) == []  # refused before a run was made
    assert client.threads.get(thread_id)["status"] == "idle"


def test_the_cli_gives_the_same_line(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import run_cli

    code, _, err = run_cli(["solve", "   ", "--model", "stub", "--base-url", "http://x/v1"], capsys)
    with pytest.raises(ValueError) as expected:
        check_input("solver_debate", {"question": "   "})
    assert code == 2
    assert err.strip() == f"debategraph: error: {expected.value}"


def test_a_stateless_run_is_checked_too(server: AegraServer) -> None:
    response = httpx.post(
        f"{server.url}/runs/wait",
        json={"assistant_id": "debate", "input": {"motion": "x"}},
        timeout=WAIT_S,
    )
    assert response.status_code == 422
    assert response.json()["message"] == (
        "unknown input field 'motion' for debate: it takes topic, messages"
    )


# -- refused at start -----------------------------------------------------------------------


def run_serve(*args: str, db: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        serve_command(db, free_port(), *args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_config_naming_an_unknown_graph_is_refused_at_start(
    database: str, tmp_path: Path
) -> None:
    config = tmp_path / "aegra.json"
    config.write_text(json.dumps({"graphs": {"debate": "x.py:debate", "poll": "./poll.py:g"}}))
    done = run_serve("--config", str(config), db=database, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"debategraph: error: {config} names graph 'poll', which debategraph does not have: "
        "its graphs are solver_debate, debate, discussion, group_chat, meeting"
    ]


def test_a_langgraph_json_is_served_as_aegra_reads_it(tmp_path: Path) -> None:
    from debategraph.serve import serve_config

    config = json.loads((Path(__file__).parents[1] / "langgraph.json").read_text())
    served = serve_config(config, "langgraph.json")
    assert set(served["graphs"]) == set(config["graphs"])
    for graph_id, path in served["graphs"].items():
        file, _, variable = path.rpartition(":")
        assert variable == graph_id and Path(file).is_file()  # Aegra's "path:variable" form
    assert served["http"] == {"app": registry.SERVE_APP, "cors": {"allow_origins": []}}


def test_an_unreachable_database_is_named_in_one_line(tmp_path: Path) -> None:
    url = f"postgresql://someone:secret@127.0.0.1:{closed_port()}/nowhere"
    done = run_serve(db=url, cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(
        "debategraph: error: database postgresql://someone:***@127.0.0.1:"
    ), lines
    assert "/nowhere is unreachable: " in lines[0] and "secret" not in done.stderr


def test_aegra_itself_refuses_an_unknown_graph_at_start(database: str, tmp_path: Path) -> None:
    """Started by ``aegra serve``/uvicorn instead: the mounted app refuses the config."""
    config = dict(registry.aegra_json(str(Path(__file__).parents[1] / registry.STUDIO_MODULE)))
    config["graphs"] = {**config["graphs"], "poll": "./poll.py:graph"}
    (tmp_path / "aegra.json").write_text(json.dumps(config))
    env = {**os.environ, "DATABASE_URL": database, "AEGRA_CONFIG": str(tmp_path / "aegra.json")}
    done = subprocess.run(
        [sys.executable, "-m", "uvicorn", "aegra_api.main:app", "--port", str(free_port())],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "names graph 'poll', which debategraph does not have" in done.stdout + done.stderr


def test_a_taken_port_is_tried_again(
    database: str,
    models: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A port taken between picking and binding it (another worker) costs a retry only."""
    import tests.studio_server as starter  # the one start-and-wait of the suite's servers

    taken = closed_port()  # held here: the server cannot bind it
    picks = [taken]
    monkeypatch.setattr(starter, "free_port", lambda: picks.pop() if picks else free_port())
    logdir = tmp_path_factory.mktemp("serve-retry")
    with aegra_server(database, logdir=logdir, extra_args=("--models", str(models))) as running:
        assert picks == [] and not running.url.endswith(f":{taken}")
        assert healthy(running.url)
    first = logdir / f"serve-{taken}.log"
    assert port_taken(first.read_text(errors="replace")), first.read_text(errors="replace")


# -- two servers on one database -------------------------------------------------------------


def test_a_thread_moves_between_two_servers(
    client: Any, second: AegraServer, model: StubOpenAIServer
) -> None:
    context = context_of()
    thread_id, _ = paused_after_round_one(client, context)
    settle(client, thread_id)
    with client_of(second) as other:
        # read through the other process
        assert other.threads.get(thread_id)["status"] == "interrupted"
        assert other.threads.get_state(thread_id)["values"]["round"] == 1
        # interjected and continued through it
        stream(
            other,
            thread_id,
            "solver_debate",
            command={"update": {"transcript": [{"role": "user", "content": NOTE}]}},
            context=context,
        )
        assert settle(other, thread_id)["status"] == "idle"
    values = client.threads.get_state(thread_id)["values"]  # and read back through the first
    assert values["termination_reason"] == "rounds_completed"
    assert user_turns(values) == [("user", "interject", 1, NOTE)]
    assert model.calls == 12


class Hang:
    """A responder whose round-2 calls of two solvers hang until released.

    The other two solvers answer round 2 at once, so when the server is killed the round
    has two finished calls (saved as pending writes) and two in flight.
    """

    HUNG = frozenset({"solver_3", "solver_4"})

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.hanging = 0
        self.release = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Any:
        solver = solver_of(request)
        with self.lock:
            self.calls[solver] += 1
            hang = self.calls[solver] == 2 and solver in self.HUNG and not self.release.is_set()
            self.hanging += hang
        if hang:
            self.release.wait(WAIT_S)
        return answer_18(request)


def test_a_killed_server_leaves_a_thread_the_other_finishes(
    database: str,
    server: AegraServer,
    client: Any,
    models: Path,
    spare: StubOpenAIServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    hang = Hang()
    spare.responder = hang
    logdir = tmp_path_factory.mktemp("serve-killed")
    with (
        aegra_server(database, logdir=logdir, extra_args=("--models", str(models))) as doomed,
        client_of(doomed) as sdk,
    ):
        thread_id, _ = start_in_background(sdk, "solver_debate", "spare")
        deadline = time.monotonic() + WAIT_S
        while hang.hanging < 2:
            assert time.monotonic() < deadline, f"round 2 never hung: {hang.calls}"
            time.sleep(0.02)
        # solver_1 and solver_2 answered round 2 and their writes are saved
        assert wait_for_saved_tasks(database, thread_id, 2)
        doomed.kill()
        hang.release.set()
        assert hang.calls == Counter(dict.fromkeys(["solver_1", "solver_2"], 2)) + Counter(
            dict.fromkeys(Hang.HUNG, 2)
        )

        # The other server goes on from the last checkpoint: no input.
        run = client.runs.create(
            thread_id, "solver_debate", input=None, context=context_of("spare")
        )
        client.runs.join(thread_id, run["run_id"])
        values = client.threads.get_state(thread_id)["values"]
        assert values["termination_reason"] == "rounds_completed"
        assert [r["round"] for r in values["rounds"]] == [1, 2, 3]
        # Only the two calls in flight at the kill were made again; round 1 and the two
        # finished calls of round 2 were not.
        assert hang.calls == {"solver_1": 3, "solver_2": 3, "solver_3": 4, "solver_4": 4}
        assert settle(client, thread_id)["status"] == "idle"
