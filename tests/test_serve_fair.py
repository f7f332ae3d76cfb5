"""Fair shares on ``debategraph serve``: each user's requests, runs, bodies and tokens.

Real ``debategraph serve`` processes on fresh PostgreSQL databases, with an operator's
models file whose ``limits`` are small enough to reach in a test; clients are
``langgraph-sdk`` and plain HTTP. Runs are held in flight by a stub model that answers
only once the test lets it (an event, not a clock). Also: the ``Host`` allow-list (a
rebound name is refused) and an error boundary that answers one line with an id.

Skipped without ``aegra-api`` or PostgreSQL, unless the real parts are required.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.aegra_server import AegraServer, aegra_server, models_file
from tests.backends import fresh_database, require_module
from tests.conftest import solvers_answer_18
from tests.groups import one_worker
from tests.openai_stub import StubOpenAIServer

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow, one_worker(__name__)]

WAIT_S = 60.0
QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in all?"
USERS = {name: secrets.token_urlsafe(32) for name in ("alice", "bob", "carol", "dave")}
LIMITS = {"runs_in_flight": 1, "requests_per_minute": 40, "body_bytes": 5000}


class Gate:
    """A stub model's replies held until the test opens the gate."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.open.set()

    def __call__(self, body: dict[str, Any]) -> Any:
        self.open.wait(WAIT_S)
        return solvers_answer_18(body)


@pytest.fixture(scope="module")
def gate() -> Gate:
    return Gate()


@pytest.fixture(scope="module")
def model(gate: Gate) -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(gate) as stub:
        yield stub


def operator_files(
    folder: Path, model: StubOpenAIServer, limits: dict[str, Any]
) -> tuple[str, ...]:
    path = models_file(folder, {"stub": model.url})
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "limits": limits}))
    (folder / "tokens.yaml").write_text("".join(f"{u}: {t}\n" for u, t in USERS.items()))
    return ("--models", str(path), "--tokens", str(folder / "tokens.yaml"))


@pytest.fixture(scope="module")
def server(
    model: StubOpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AegraServer]:
    require_module("aegra_api", "pip install -e '.[dev]' installs the serve extra (aegra-api)")
    folder = tmp_path_factory.mktemp("fair")
    args = (*operator_files(folder, model, LIMITS), "--allowed-host", "debates.example")
    with fresh_database() as url, aegra_server(url, logdir=folder, extra_args=args) as running:
        yield running


def headers(user: str, **more: str) -> dict[str, str]:
    return {"x-api-key": USERS[user], **more}


def one_line(response: httpx.Response) -> str:
    assert "Traceback" not in response.text, response.text
    message = str(response.json()["message"])
    assert message and "\n" not in message, response.text
    return message


def new_thread(server: AegraServer, user: str) -> str:
    made = httpx.post(f"{server.url}/threads", json={}, headers=headers(user), timeout=WAIT_S)
    assert made.status_code == 200, made.text
    return str(made.json()["thread_id"])


RUN = {
    "assistant_id": "solver_debate",
    "input": {"question": QUESTION},
    "context": {"model": "stub"},
}


def test_a_user_past_their_request_rate_waits_and_others_do_not(server: AegraServer) -> None:
    with httpx.Client(base_url=server.url, timeout=WAIT_S) as client:
        answers = [
            client.post("/threads/search", json={}, headers=headers("carol")).status_code
            for _ in range(LIMITS["requests_per_minute"] + 1)
        ]
        assert answers[:-1] == [200] * LIMITS["requests_per_minute"]
        refused = client.post("/threads/search", json={}, headers=headers("carol"))
        assert refused.status_code == 429
        assert int(refused.headers["retry-after"]) >= 1
        assert "at most 40 a minute" in one_line(refused)
        # the same connection, another user: served
        assert client.post("/threads/search", json={}, headers=headers("bob")).status_code == 200


def test_a_body_over_the_limit_is_refused_unread(server: AegraServer) -> None:
    thread = new_thread(server, "alice")
    big = {**RUN, "input": {"question": "x" * 10_000}}
    declared = httpx.post(
        f"{server.url}/threads/{thread}/runs", json=big, headers=headers("alice"), timeout=WAIT_S
    )
    assert declared.status_code == 413
    assert one_line(declared) == "the request body is over the server's limit of 5,000 bytes"

    def chunks() -> Iterator[bytes]:  # no Content-Length: read until it is too much
        text = json.dumps(big).encode()
        for start in range(0, len(text), 1000):
            yield text[start : start + 1000]

    streamed = httpx.post(
        f"{server.url}/threads/{thread}/runs",
        content=chunks(),
        headers=headers("alice", **{"content-type": "application/json"}),
        timeout=WAIT_S,
    )
    assert streamed.status_code == 413
    runs = httpx.get(
        f"{server.url}/threads/{thread}/runs", headers=headers("alice"), timeout=WAIT_S
    )
    assert runs.json() == []  # nothing was run


def test_a_user_has_so_many_runs_in_flight_and_others_are_not_held(
    server: AegraServer, gate: Gate, model: StubOpenAIServer
) -> None:
    first, second = new_thread(server, "alice"), new_thread(server, "alice")
    gate.open.clear()
    try:
        held = httpx.post(
            f"{server.url}/threads/{first}/runs", json=RUN, headers=headers("alice"), timeout=WAIT_S
        )
        assert held.status_code == 200, held.text
        deadline = time.monotonic() + WAIT_S
        while model.in_flight == 0:  # the run is calling the model: it is in flight
            assert time.monotonic() < deadline
            time.sleep(0.02)
        refused = httpx.post(
            f"{server.url}/threads/{second}/runs",
            json=RUN,
            headers=headers("alice"),
            timeout=WAIT_S,
        )
        assert refused.status_code == 429
        assert int(refused.headers["retry-after"]) >= 1
        assert "you have 1 runs in flight" in one_line(refused)
        others = new_thread(server, "bob")
        theirs = httpx.post(
            f"{server.url}/threads/{others}/runs", json=RUN, headers=headers("bob"), timeout=WAIT_S
        )
        assert theirs.status_code == 200, theirs.text
    finally:
        gate.open.set()
    for user, thread, run in (("alice", first, held.json()), ("bob", others, theirs.json())):
        joined = httpx.get(
            f"{server.url}/threads/{thread}/runs/{run['run_id']}/join",
            headers=headers(user),
            timeout=WAIT_S,
        )
        assert joined.status_code == 200
    # her run has ended: her place is back
    again = httpx.post(
        f"{server.url}/threads/{second}/runs/wait",
        json=RUN,
        headers=headers("alice"),
        timeout=WAIT_S,
    )
    assert again.status_code == 200, again.text
    assert again.json()["answer"] == "18"


def test_a_refused_run_gives_its_place_back(server: AegraServer) -> None:
    """A run request refused after its place was taken (here by Aegra) holds no place."""
    thread = new_thread(server, "dave")
    for _ in range(3):
        missing = httpx.post(
            f"{server.url}/threads/{thread}/runs",
            json={**RUN, "assistant_id": "00000000-0000-0000-0000-000000000000"},
            headers=headers("dave"),
            timeout=WAIT_S,
        )
        assert missing.status_code == 404, missing.text
    ran = httpx.post(
        f"{server.url}/threads/{thread}/runs/wait",
        json=RUN,
        headers=headers("dave"),
        timeout=WAIT_S,
    )
    assert ran.status_code == 200 and ran.json()["answer"] == "18", ran.text


# -- the Host allow-list -----------------------------------------------------------------


def test_a_rebound_name_is_refused(server: AegraServer) -> None:
    """A page at attacker.example rebound to 127.0.0.1 sends its own name as Host and Origin."""
    port = server.url.rsplit(":", 1)[1]
    rebound = f"attacker.example:{port}"
    form = httpx.post(
        f"{server.url}/threads",
        content=b"{}",
        headers={
            "Host": rebound,
            "Origin": f"http://{rebound}",
            "Content-Type": "text/plain",
            **headers("alice"),
        },
        timeout=WAIT_S,
    )
    assert form.status_code == 403
    assert one_line(form) == (
        f"host '{rebound}' is not one this server answers to: the operator allows it with "
        "serve --allowed-host NAME"
    )
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"debates.example:{port}"):
        ok = httpx.post(
            f"{server.url}/threads/search", json={}, headers={"Host": host, **headers("bob")}
        )
        assert ok.status_code == 200, (host, ok.text)


# -- tokens per day ----------------------------------------------------------------------


def test_a_run_past_the_users_tokens_for_the_day_stops_resumable(
    model: StubOpenAIServer, tmp_path: Path
) -> None:
    require_module("aegra_api", "pip install -e '.[dev]' installs the serve extra (aegra-api)")
    from langgraph_sdk import get_sync_client

    limits = {"tokens_per_day": 400}
    args = operator_files(tmp_path, model, limits)
    with fresh_database() as url, aegra_server(url, logdir=tmp_path, extra_args=args) as running:
        alice = get_sync_client(url=running.url, api_key=USERS["alice"], timeout=WAIT_S)
        thread = alice.threads.create()["thread_id"]
        model.reset_stats()
        alice.runs.wait(
            thread, "solver_debate", input={"question": QUESTION}, context={"model": "stub"}
        )
        calls = model.calls
        assert 0 < calls < 12, calls  # stopped before the debate's 12 calls
        run = alice.runs.list(thread)[0]
        assert run["status"] == "error"
        state = alice.threads.get_state(thread)
        assert state["next"], state  # paused at the node that stopped: resumable
        # the next run of hers stops at once, with the line; another user's goes on
        again = httpx.post(
            f"{running.url}/threads/{thread}/runs/wait",
            json={"assistant_id": "solver_debate", "context": {"model": "stub"}},
            headers=headers("alice"),
            timeout=WAIT_S,
        )
        assert model.calls == calls
        log = running.log_path.read_text(errors="replace")
        assert "has used" in log and "of 400 tokens today (UTC)" in log, log[-2000:]
        assert again.status_code in (200, 409, 422), again.text
        bob = get_sync_client(url=running.url, api_key=USERS["bob"], timeout=WAIT_S)
        theirs = bob.threads.create()["thread_id"]
        bob.runs.wait(
            theirs, "solver_debate", input={"question": QUESTION}, context={"model": "stub"}
        )
        assert model.calls > calls
