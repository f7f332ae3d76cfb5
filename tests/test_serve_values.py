"""No value a signed-in client sends gets a 5xx from ``debategraph serve``: a 4xx, one line.

Each case is a value Aegra 0.6.0 answered with a 500 (most with the exception's text,
some quoting the SQL) before :mod:`debategraph.serve.guard` refused it: a body nested
thousands of levels deep, a thread metadata nested 900 deep (stored anyway, after which
the user's own ``GET /threads`` and ``threads/search`` failed every time), a NaN, a
temperature given as a string, ``config.configurable: null``, a state update as a node
the graph does not have, a history's ``checkpoint`` or ``metadata`` LangGraph cannot
read, a store filter operator it does not have, a thread's ``graph_id`` changed. Each
refusal is one line naming the value; the client's keep-alive connection carries its next
request, and the user's thread listings still answer.

A real ``debategraph serve`` on a fresh PostgreSQL database, users signing in with
tokens, a stub model for the one run that gives a thread its graph. Skipped without
``aegra-api`` or PostgreSQL, unless the real parts are required (``.ci/run``).
"""

from __future__ import annotations

import json
import re
import secrets
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from debategraph.serve import guard
from tests.aegra_server import AegraServer, aegra_server, models_file
from tests.backends import fresh_database, require_module
from tests.conftest import solvers_answer_18
from tests.groups import one_worker
from tests.openai_stub import StubOpenAIServer

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow, one_worker(__name__)]

WAIT_S = 60.0
QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in all?"
ALICE = secrets.token_urlsafe(32)
#: What a refusal may never show: a traceback, an exception's class, the database's text.
LEAKS = re.compile(r"Traceback|\b[A-Z]\w*(Error|Exception)\b|sqlalchemy|\[SQL|psycopg|asyncpg")
#: A body nested 5000 levels deep.
DEEP = b"[" * 5000 + b"]" * 5000


def nested(levels: int) -> dict[str, Any]:
    """An object nested ``levels`` deep (itself the first)."""
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def run_body(**fields: Any) -> dict[str, Any]:
    """A run of the solver debate on the stub model, with ``fields`` over it."""
    return {
        "assistant_id": "solver_debate",
        "input": {"question": QUESTION},
        "context": {"model": "stub"},
        **fields,
    }


#: name -> (method, path ("{thread}": a thread that ran the solver debate, "{paused}": one
#: paused after its solvers' parallel step), body (JSON, or raw bytes), what the one line
#: says).
CASES: dict[str, tuple[str, str, Any, str]] = {
    # nesting: parsing recursed (a 500 and a reset connection); a stored one broke listings
    "a body 5000 deep: threads": ("POST", "/threads", DEEP, "the body is nested 5000 levels"),
    "a body 5000 deep: search": ("POST", "/threads/search", DEEP, "the body is nested 5000"),
    "a body 5000 deep: assistants": ("POST", "/assistants/search", DEEP, "the body is nested"),
    "a body 5000 deep: a run": ("POST", "/threads/{thread}/runs", DEEP, "the body is nested"),
    "a body 5000 deep: the store": ("PUT", "/store/items", DEEP, "the body is nested 5000"),
    "a body 5000 deep: a thread": ("PATCH", "/threads/{thread}", DEEP, "the body is nested"),
    "metadata 900 deep": (
        "POST",
        "/threads",
        {"metadata": nested(900)},
        "the body is nested 901 levels deep: at most 64",
    ),
    "metadata 40 deep": (
        "POST",
        "/threads",
        {"metadata": nested(40)},
        "metadata is nested 40 levels deep: at most 32",
    ),
    "metadata 40 deep, changed": (
        "PATCH",
        "/threads/{thread}",
        {"metadata": nested(40)},
        "metadata is nested 40 levels deep",
    ),
    "an assistant's metadata 40 deep": (
        "POST",
        "/assistants",
        {"graph_id": "debate", "metadata": nested(40)},
        "metadata is nested 40 levels deep",
    ),
    "metadata of 20 KB": (
        "POST",
        "/threads",
        {"metadata": {"notes": "x" * 20_000}},
        "metadata is 20,012 bytes as JSON: at most 16,384",
    ),
    # numbers
    "temperature 'NaN'": (
        "POST",
        "/threads/{thread}/runs",
        run_body(context={"model": "stub", "temperature": "NaN"}),
        "context: temperature 'NaN' must be a number from 0 to 2",
    ),
    "temperature 'inf' in configurable": (
        "POST",
        "/threads/{thread}/runs/wait",
        run_body(context=None, config={"configurable": {"model": "stub", "temperature": "inf"}}),
        "config.configurable: temperature 'inf' must be a number from 0 to 2",
    ),
    "temperature NaN": (
        "POST",
        "/threads/{thread}/runs",
        json.dumps(run_body(context={"model": "stub", "temperature": float("nan")})).encode(),
        "body.context.temperature is nan, which is not a JSON number",
    ),
    "metadata NaN": (
        "POST",
        "/threads",
        b'{"metadata": {"score": NaN}}',
        "body.metadata.score is nan",
    ),
    "a store value Infinity": (
        "PUT",
        "/store/items",
        b'{"namespace": ["users", "alice"], "key": "k", "value": {"x": [1, -Infinity]}}',
        "body.value.x[1] is -inf",
    ),
    # objects Aegra reads without looking
    "config.configurable null: a run": (
        "POST",
        "/threads/{thread}/runs",
        run_body(context=None, config={"configurable": None}),
        "config.configurable is null: give an object, or leave it out",
    ),
    "config.configurable null: an assistant": (
        "POST",
        "/assistants",
        {"graph_id": "debate", "config": {"configurable": None}},
        "config.configurable is null",
    ),
    "a state update as an unknown node": (
        "POST",
        "/threads/{thread}/state",
        {"values": {"question": "again?"}, "as_node": "nosuch"},
        "as_node 'nosuch' is not a node of graph 'solver_debate': one of __start__, ",
    ),
    "a state update after a parallel step, as no node": (
        "POST",
        "/threads/{paused}/state",
        {"values": {"question": "again?"}},
        "the thread's last step ran several nodes of graph 'solver_debate' at once",
    ),
    "a state value its reducer cannot take": (
        "POST",
        "/threads/{thread}/state",
        {"values": {"usage": 5}, "as_node": "aggregate"},
        "values.usage 5 does not fit the state of graph 'solver_debate': usage holds Usage",
    ),
    "a state value its reducer cannot take, in a list": (
        "POST",
        "/threads/{thread}/state",
        {"values": [{"question": "again?"}, {"decisions": [1]}], "as_node": "aggregate"},
        "values.decisions [1] does not fit the state of graph 'solver_debate': decisions holds",
    ),
    "a state update in a subgraph the graph does not have": (
        "POST",
        "/threads/{thread}/state",
        {"values": {"question": "again?"}, "as_node": "aggregate", "checkpoint_ns": "junk"},
        "checkpoint_ns 'junk' names a subgraph, and graph 'solver_debate' has none",
    ),
    "a history checkpoint_id that is a number": (
        "POST",
        "/threads/{thread}/history",
        {"checkpoint": {"checkpoint_id": 5}},
        "checkpoint.checkpoint_id must be a string, got 5",
    ),
    "a history checkpoint_ns that is a number": (
        "POST",
        "/threads/{thread}/history",
        {"checkpoint": {"checkpoint_ns": 3}},
        "checkpoint.checkpoint_ns must be a string, got 3",
    ),
    "a history checkpoint with a key of LangGraph's": (
        "POST",
        "/threads/{thread}/history",
        {"checkpoint": {"__pregel_checkpointer": "x"}},
        "checkpoint key '__pregel_checkpointer' is not one of its keys",
    ),
    "a history metadata filter": (
        "POST",
        "/threads/{thread}/history",
        {"metadata": {"step": 1}},
        "a history's metadata filter is not supported",
    ),
    "a history metadata filter: GET": (
        "GET",
        "/threads/{thread}/history?metadata=%7B%7D",
        None,
        "a history's metadata filter is not supported",
    ),
    "a store filter operator": (
        "POST",
        "/store/items/search",
        {"namespace_prefix": ["users", "alice"], "filter": {"x": {"$like": "a%"}}},
        "store filter 'x': operator '$like' is not one of $eq, $ne, $gt, $gte, $lt, $lte",
    ),
    # ids Aegra writes into a header (a run's Location): the connection was dropped
    "a thread id with a control character": (
        "POST",
        "/threads",
        {"thread_id": "\x01"},
        "thread id '\\x01' holds '\\x01' (U+0001): an id is printable ASCII without spaces",
    ),
    "a run on a thread id with a control character": (
        "POST",
        "/threads/%01/runs/stream",
        run_body(if_not_exists="create"),
        "thread id '\\x01' holds '\\x01' (U+0001)",
    ),
    "a thread id beyond Latin-1, by its alias": (
        "POST",
        "/threads",
        {"threadId": "wine-\U0001f377"},
        "thread id 'wine-\U0001f377' holds '\U0001f377' (U+1F377)",
    ),
    "an assistant id with a space": (
        "POST",
        "/assistants",
        {"graph_id": "debate", "assistant_id": "my assistant"},
        "assistant id 'my assistant' holds ' ' (U+0020)",
    ),
    "a thread's graph changed": (
        "PATCH",
        "/threads/{thread}",
        {"metadata": {"graph_id": "debate"}},
        "metadata.graph_id 'debate' is not the thread's graph ('solver_debate')",
    ),
}


@pytest.fixture(scope="module")
def model() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(solvers_answer_18) as stub:
        yield stub


@pytest.fixture(scope="module")
def server(model: StubOpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    require_module("aegra_api", "pip install -e '.[dev]' installs the serve extra (aegra-api)")
    require_module("langgraph_sdk", "pip install -e '.[dev]' installs langgraph-sdk")
    folder = tmp_path_factory.mktemp("operator")
    models_file(folder, {"stub": model.url})
    (folder / "tokens.yaml").write_text(f"alice: {ALICE}\n")
    args = ("--models", str(folder / "models.yaml"), "--tokens", str(folder / "tokens.yaml"))
    with (
        fresh_database("debategraph_values") as url,
        aegra_server(url, logdir=folder, extra_args=args) as running,
    ):
        yield running


@pytest.fixture(scope="module")
def thread(server: AegraServer) -> str:
    """A thread of alice's that ran the solver debate (so it has a graph and checkpoints)."""
    with client(server) as http:
        thread_id = str(http.post("/threads", json={}).json()["thread_id"])
        done = http.post(f"/threads/{thread_id}/runs/wait", json=run_body())
        assert done.status_code == 200 and done.json()["answer"] == "18", done.text
    return thread_id


@pytest.fixture(scope="module")
def paused(server: AegraServer) -> str:
    with client(server) as http:
        return paused_thread(http)


def paused_thread(http: httpx.Client) -> str:
    """A thread of alice's paused before ``close_round``: its solvers ran in parallel last."""
    thread_id = str(http.post("/threads", json={}).json()["thread_id"])
    body = run_body(interrupt_before=["close_round"])
    done = http.post(f"/threads/{thread_id}/runs/wait", json=body)
    assert done.status_code == 200, done.text
    state = http.get(f"/threads/{thread_id}/state").json()
    assert state["next"] == ["close_round"], state
    return thread_id


def client(server: AegraServer) -> httpx.Client:
    """Alice's client: one connection, kept alive."""
    return httpx.Client(
        base_url=server.url,
        headers={"x-api-key": ALICE},
        timeout=WAIT_S,
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
    )


def connection(response: httpx.Response) -> Any:
    """The client's end of the connection a response came on."""
    return response.extensions["network_stream"].get_extra_info("client_addr")


def sent(http: httpx.Client, method: str, path: str, body: Any) -> httpx.Response:
    if isinstance(body, bytes):
        headers = {"content-type": "application/json"}
        return http.request(method, path, content=body, headers=headers)
    return http.request(method, path, json=body)


@pytest.mark.parametrize("case", list(CASES))
def test_a_value_aegra_fails_on_gets_a_4xx_in_one_line(
    server: AegraServer, thread: str, paused: str, case: str
) -> None:
    method, path, body, line = CASES[case]
    with client(server) as http:
        before = http.get("/threads")
        assert before.status_code == 200, before.text
        refused = sent(http, method, path.format(thread=thread, paused=paused), body)
        assert refused.status_code in (400, 403, 404, 409, 413, 422), refused.text
        assert not LEAKS.search(refused.text), refused.text
        message = str(refused.json()["message"])
        assert "\n" not in message and message.startswith(line), message
        # the same connection carries the next request, and the listings still answer
        listed = http.get("/threads")
        assert listed.status_code == 200, listed.text
        assert connection(listed) == connection(before)
        searched = http.post("/threads/search", json={"limit": 100})
        assert searched.status_code == 200, searched.text
        assert thread in {t["thread_id"] for t in searched.json()}


def test_what_a_client_may_send_still_works(server: AegraServer, thread: str) -> None:
    """The values beside each refused one: they are answered, not refused."""
    with client(server) as http:
        as_solver = {"values": {"question": "again?"}, "as_node": "solver_1"}
        resumed = http.post(f"/threads/{paused_thread(http)}/state", json=as_solver)
        assert resumed.status_code == 200, resumed.text
        inferred = http.post(f"/threads/{thread}/state", json={"values": {"notes": ["n"]}})
        assert inferred.status_code == 200, inferred.text
        state = http.get(f"/threads/{thread}/state").json()
        checkpoint = state["checkpoint"]  # {thread_id, checkpoint_ns, checkpoint_id}
        history = http.post(f"/threads/{thread}/history", json={"checkpoint": checkpoint})
        assert history.status_code == 200 and history.json(), history.text
        unchanged = {"metadata": {"graph_id": "solver_debate", "note": "mine"}}
        patched = http.patch(f"/threads/{thread}", json=unchanged)
        assert patched.status_code == 200, patched.text
        updated = http.post(f"/threads/{thread}/state", json={"values": {}, "as_node": "aggregate"})
        assert updated.status_code == 200, updated.text
        chosen = str(uuid.uuid4())  # an id of the client's own: printable ASCII
        named = http.post("/threads", json={"thread_id": chosen, "metadata": {"n": 1}})
        assert named.status_code == 200 and named.json()["thread_id"] == chosen, named.text
        made = http.post("/threads", json={"metadata": nested(32)})
        assert made.status_code == 200, made.text
        ran = http.post(
            f"/threads/{made.json()['thread_id']}/runs/wait",
            json=run_body(config=None, context={"model": "stub", "temperature": 0.5}),
        )
        assert ran.status_code == 200 and ran.json()["answer"] == "18", ran.text
        found = http.post(
            "/store/items/search",
            json={"namespace_prefix": ["users", "alice"], "filter": {"x": {"$gte": 1}}},
        )
        assert found.status_code == 200, found.text
        assert http.get("/threads").status_code == 200


def test_the_server_log_shows_no_failure(server: AegraServer, thread: str) -> None:
    """Run last in the module: no request above ended in a 500."""
    log = Path(server.log_path).read_text(errors="replace")
    assert '" 500' not in log, server.log_tail()
    assert "returned without completing response" not in log, server.log_tail()  # dropped


# -- in process: the checks themselves never recurse -----------------------------------------


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        (b"1", 0),
        (b"{}", 1),
        (b'{"a": "[[[{{{", "b": [[1]]}', 3),
        (b'["\\"[", [2]]', 2),  # an escaped quote does not end the string
        (b'["\\\\", [2]]', 2),  # an escaped backslash does not escape the quote
        (b'["[[[', 1),  # a string left open runs to the end
        (b"[" * 100_000, 100_000),
    ],
)
def test_nesting_counts_the_brackets_outside_strings(text: bytes, depth: int) -> None:
    assert guard.nesting(text) == depth


def test_a_deep_body_is_refused_without_parsing_it() -> None:
    assert guard.body_refusal(b"[" * 64 + b"]" * 64) is None
    assert guard.body_refusal(b"[" * 65 + b"]" * 65) == (
        "the body is nested 65 levels deep: at most 64"
    )
    assert guard.parse(DEEP) == (False, None)  # not parsed: parsing it would recurse
    # quotes that never close cannot make the scan quadratic
    assert guard.nesting(b'"' + b'\\"' * 200_000 + b"[") == 0
    # a parsed body deeper than Python's recursion limit is walked without recursing
    assert guard.refusal("POST", "/threads", b"", {"metadata": nested(5000)}) == (
        "metadata is nested 5000 levels deep: at most 32"
    )
