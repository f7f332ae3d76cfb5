"""One user's requests reach none of another's things, on every route the server serves.

Two real ``debategraph serve`` processes on one fresh PostgreSQL database, signed in
with the tokens of alice and bob: alice works on the first (a finished solver debate, a
debate paused after a round, an item in that thread's inbox and one in her own
``("users", "alice")`` namespace, an assistant of her own), bob on the second. For
every operation of the server's own OpenAPI document, :mod:`tests.owner_cases` makes
bob's valid request of his own (on a fresh thread, run, checkpoint, assistant and item
of his) and a variant of it per place a string goes and per thing of alice's it could
name (her thread, checkpoint, run, assistant, namespace, item key, user name), with
decoys beside a store namespace of hers; so a route Aegra adds later is tried too. Bob
follows up what he was given: he joins a run he started, and runs an assistant he made
that holds an id of hers.

Each response bob gets must be no 5xx and hold none of alice's secrets (markers planted
in her question, in what the solvers answered her, her thread's and assistant's
metadata, her items), nor an id of hers that he did not send, nor a namespace of hers
(a listing of threads or namespaces). What alice sees (each thread's state, runs and
metadata, her items, her assistant; each thread's history after each operation) must
be as it was, read after each of bob's requests that was not refused. Every hole found
is listed, by request and by what leaked or changed, before the test fails; alice's
items are put back after a change, so that later requests can still find them.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from debategraph.checkpoints import inbox_item, inbox_namespace
from tests.aegra_server import AegraServer, aegra_server, models_file
from tests.backends import fresh_database_as, require_module
from tests.conftest import solver_of, solvers_answer_18
from tests.groups import one_worker
from tests.openai_stub import StubOpenAIServer
from tests.owner_cases import (
    MODEL_CONTEXT,
    Case,
    Operation,
    Owner,
    Request,
    cases,
    operations,
)

pytestmark = [pytest.mark.timeout(480), pytest.mark.slow, one_worker(__name__)]

#: How long one request of bob's may take (a run on the stub model takes well under 1 s).
REQUEST_S = 30.0
#: How often a request is sent when the server says it is one too many (429).
TRIES = 5
ALICE = secrets.token_urlsafe(32)
#: Bob signs in as a new user for each operation that writes (``bob-1``...), so what one
#: operation's requests wrote (alice's ids, say, in his thread's metadata) is not in what
#: another lists; reads share ``bob``.
BOBS = {"bob": secrets.token_urlsafe(32)} | {
    f"bob-{n}": secrets.token_urlsafe(32) for n in range(1, 80)
}
#: Every secret of alice's starts so; nothing of bob's does.
SECRET = f"ALICE-{secrets.token_hex(6)}"
QUESTIONS = {
    "paused": f"{SECRET}-Q1 Natalia sold 48 clips in April and half as many in May. In all?",
    "finished": f"{SECRET}-Q2 A robe takes 2 bolts of blue fiber and half that much white?",
}
#: What the solvers answer a question of alice's: their reasoning, their answer.
REASONING = f"{SECRET}-R"
ANSWER = f"4{secrets.randbelow(10**8):08d}"
MARKERS = {
    "her paused thread's question": QUESTIONS["paused"],
    "her finished thread's question": QUESTIONS["finished"],
    "the solvers' reasoning for her": REASONING,
    "the solvers' answer to her": ANSWER,
    "her thread's metadata": f"{SECRET}-T",
    "her assistant's name": f"{SECRET}-N",
    "her assistant's metadata": f"{SECRET}-M",
    "her assistant's config": f"{SECRET}-C",
    "her inbox item's text": f"{SECRET}-I",
    "her users item's value": f"{SECRET}-U",
}
BOB_QUESTION = "BOB asks: Weng earns $12 an hour for babysitting. 50 minutes: how much?"


def responder(request: dict[str, Any]) -> Any:
    """Solvers answer 18, and a question of alice's with her own reasoning and answer."""
    reply = solvers_answer_18(request)
    if solver_of(request).startswith("solver_") and SECRET in json.dumps(request["messages"]):
        return {**reply, "reasoning": f"{reply['reasoning']} {REASONING}", "answer": ANSWER}
    return reply


# -- the servers -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Servers:
    """Alice's server and bob's: two processes on one database."""

    alice: AegraServer
    bob: AegraServer


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    require_module("aegra_api", "pip install -e '.[dev]' installs the serve extra (aegra-api)")
    require_module("langgraph_sdk", "pip install -e '.[dev]' installs langgraph-sdk")
    folder = tmp_path_factory.mktemp("operator")
    users = {"alice": ALICE, **BOBS}
    (folder / "tokens.yaml").write_text("".join(f"{u}: {t}\n" for u, t in users.items()))
    with (
        StubOpenAIServer(responder) as model,
        fresh_database_as("debategraph_owners") as (url, _password),
    ):
        models_file(folder, {"stub": model.url})
        args = ("--models", str(folder / "models.yaml"), "--tokens", str(folder / "tokens.yaml"))
        with (
            aegra_server(url, logdir=folder, extra_args=args) as first,
            aegra_server(url, logdir=folder, extra_args=args) as second,
        ):
            yield Servers(first, second)


def sdk(server: AegraServer, token: str) -> Any:
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=server.url, api_key=token, timeout=REQUEST_S)


# -- alice's things, and bob's ---------------------------------------------------------------


def finished_run(client: Any, thread_id: str, question: str, **kwargs: Any) -> str:
    """A run of the solver debate on the stub model, waited for to its end: its id."""
    run = client.runs.create(
        thread_id, "solver_debate", input={"question": question}, context=MODEL_CONTEXT, **kwargs
    )
    client.runs.join(thread_id, run["run_id"])
    return str(run["run_id"])


def settled(condition: Callable[[], bool], what: str) -> None:
    """Wait for Aegra to write a thread's status, which it does after the run's end."""
    deadline = time.monotonic() + REQUEST_S
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not settle"
        time.sleep(0.05)


def checkpoint_of(client: Any, thread_id: str) -> str:
    return str(client.threads.get_state(thread_id)["checkpoint"]["checkpoint_id"])


def alice_things(alice: Any) -> tuple[Owner, dict[str, str]]:
    """Alice's threads, runs, items and assistant, and every id of hers (by what it is)."""
    note = {"note": MARKERS["her thread's metadata"]}
    paused = alice.threads.create(metadata=note)["thread_id"]
    finished = alice.threads.create(metadata=note)["thread_id"]
    runs = {
        "paused": finished_run(alice, paused, QUESTIONS["paused"], interrupt_after=["close_round"]),
        "finished": finished_run(alice, finished, QUESTIONS["finished"]),
    }
    for thread in (paused, finished):
        settled(lambda t=thread: alice.threads.get(t)["status"] != "busy", thread)
    assert alice.threads.get_state(paused)["next"] == ["open_round"]  # paused after a round
    done = alice.threads.get_state(finished)["values"]
    assert done["termination_reason"] == "rounds_completed", done
    # the planted markers are where bob would find them
    assert REASONING in json.dumps(done) and ANSWER in json.dumps(done["rounds"])
    inbox = tuple(inbox_namespace(paused))
    inbox_key, value = inbox_item("interject", MARKERS["her inbox item's text"])
    alice.store.put_item(list(inbox), inbox_key, value)
    users_key = f"notes-{secrets.token_hex(4)}"
    alice.store.put_item(["users", "alice"], users_key, {"text": MARKERS["her users item's value"]})
    assistant = alice.assistants.create(
        "solver_debate",
        config={"tags": [MARKERS["her assistant's config"]]},
        context=MODEL_CONTEXT,
        metadata={"note": MARKERS["her assistant's metadata"]},
        name=MARKERS["her assistant's name"],
    )["assistant_id"]
    threads = {"paused": paused, "finished": finished}
    owner = Owner(
        "alice",
        threads,
        {label: checkpoint_of(alice, t) for label, t in threads.items()},
        runs,
        assistant,
        (("inbox", inbox, inbox_key), ("users", ("users", "alice"), users_key)),
        prefixes=(("debategraph",), ("debategraph", "inbox"), ("users",)),
    )
    ids = {f"her {label} thread's id": t for label, t in threads.items()}
    ids |= {f"her {label} thread's run id": r for label, r in runs.items()}
    ids |= {"her assistant's id": assistant, "her inbox key": inbox_key, "her item key": users_key}
    for label, thread in threads.items():
        for n, state in enumerate(alice.threads.get_history(thread, limit=1000)):
            ids[f"her {label} thread's checkpoint {n}"] = state["checkpoint"]["checkpoint_id"]
    return owner, ids


def bob_things(http: httpx.Client, user: str) -> Owner:
    """Bob's own: a thread with a finished run, its checkpoint, an assistant, two items.

    Args:
        http: Bob's client, signed in as ``user``.
        user: Which of bob's accounts.
    """
    thread = ok(http, "POST", "/threads", {})["thread_id"]
    body = {"assistant_id": "solver_debate", "input": {"question": BOB_QUESTION}}
    run = ok(http, "POST", f"/threads/{thread}/runs", {**body, "context": MODEL_CONTEXT})
    ok(http, "GET", f"/threads/{thread}/runs/{run['run_id']}/join")
    checkpoint = ok(http, "GET", f"/threads/{thread}/state")["checkpoint"]["checkpoint_id"]
    tags = [f"bob-{secrets.token_hex(4)}"]  # Aegra makes one per user, graph and config
    graph = {"graph_id": "solver_debate", "context": MODEL_CONTEXT, "config": {"tags": tags}}
    assistant = ok(http, "POST", "/assistants", graph)["assistant_id"]
    key = f"bob-{secrets.token_hex(4)}"
    mine = ["users", user]
    ok(http, "PUT", "/store/items", {"namespace": mine, "key": key, "value": {}})
    inbox = tuple(inbox_namespace(thread))
    inbox_key, value = inbox_item("interject", "from bob")
    ok(http, "PUT", "/store/items", {"namespace": list(inbox), "key": inbox_key, "value": value})
    return Owner(
        user,
        {"own": thread},
        {"own": checkpoint},
        {"own": run["run_id"]},
        assistant,
        (("users", tuple(mine), key), ("inbox", inbox, inbox_key)),
        question=BOB_QUESTION,
    )


def ok(http: httpx.Client, method: str, path: str, body: Any = None) -> Any:
    """A request of bob's that must succeed (his own things): its JSON."""
    reply = send(http, Request(method, path, body=body))
    assert reply.let_through, (method, path, reply.status, reply.text)
    return reply.data()


# -- what alice sees -------------------------------------------------------------------------


def seen_by_alice(alice: Any, owner: Owner, *, history: bool) -> dict[str, Any]:
    """Everything of alice's, as she reads it (an error read as its class).

    Args:
        alice: Her client.
        owner: Her things.
        history: Whether to read each thread's whole history too (any write also moves
            the state's checkpoint: the history is read after each operation).
    """
    from langgraph_sdk.errors import APIStatusError

    reads: dict[str, Callable[[], Any]] = {}
    for label, thread in owner.threads.items():
        reads[f"her {label} thread"] = lambda t=thread: _some(
            alice.threads.get(t), "metadata", "status", "updated_at"
        )
        reads[f"her {label} thread's state"] = lambda t=thread: _some(
            alice.threads.get_state(t), "values", "next", "checkpoint"
        )
        if history:
            reads[f"her {label} thread's history"] = lambda t=thread: [
                s["checkpoint"]["checkpoint_id"] for s in alice.threads.get_history(t, limit=1000)
            ]
        reads[f"her {label} thread's runs"] = lambda t=thread: [
            _some(r, "run_id", "status", "updated_at") for r in alice.runs.list(t)
        ]
    for label, namespace, _ in owner.items:
        reads[f"her {label} items"] = lambda n=namespace: [
            _some(i, "key", "value", "updated_at")
            for i in alice.store.search_items(list(n))["items"]
        ]
    reads["her assistant"] = lambda: _some(
        alice.assistants.get(owner.assistant), "config", "context", "metadata", "name", "version"
    )
    reads["her threads"] = lambda: sorted(t["thread_id"] for t in alice.threads.search(limit=100))
    seen = {}
    for name, read in reads.items():
        try:
            seen[name] = patiently(read)
        except APIStatusError as exc:
            seen[name] = f"{type(exc).__name__}"
    return seen


def patiently(call: Callable[[], Any]) -> Any:
    """A call of alice's, made again when the server says when (429, ``Retry-After``)."""
    from langgraph_sdk.errors import RateLimitError

    for _ in range(TRIES - 1):
        try:
            return call()
        except RateLimitError as exc:
            time.sleep(float(exc.response.headers.get("retry-after", 1)))
    return call()


def put_back(alice: Any, items: dict[tuple[str, ...], dict[str, Any]]) -> None:
    """Alice's items as they were (a takeover reads her inbox empty), for the next requests."""
    for (*namespace, key), value in items.items():
        patiently(lambda n=namespace, k=key, v=value: alice.store.put_item(n, k, v))


def _some(record: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: record.get(k) for k in keys}


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What differs, one short line each."""
    lines = []
    for name in before.keys() & after.keys():
        old, new = before[name], after[name]
        if old == new:
            continue
        if name.endswith("state") and isinstance(old, dict) and isinstance(new, dict):
            question = (new.get("values") or {}).get("question")
            lines.append(f"{name} changed (its question now {_short(question)})")
        elif isinstance(old, list) and isinstance(new, list):
            lines.append(f"{name} changed ({len(old)} -> {len(new)} entries)")
        else:
            lines.append(f"{name} changed ({_short(old)} -> {_short(new)})")
    return sorted(lines)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= 100 else text[:97] + "..."


# -- bob's requests --------------------------------------------------------------------------


@dataclass
class Reply:
    """What bob got: the status (``None``: no answer) and the body."""

    status: int | None
    text: str

    @property
    def let_through(self) -> bool:
        return self.status is not None and self.status < 300

    def data(self) -> Any:
        try:
            return json.loads(self.text)
        except ValueError:
            return None


def send(http: httpx.Client, request: Request) -> Reply:
    """One request of bob's, read to its end (a stream too), again when the server says when.

    A 429 (a user's fair share of the server) says nothing of whose things are reached:
    the request is made again after its ``Retry-After``.
    """
    for _ in range(TRIES):
        try:
            response = http.request(
                request.method,
                request.path,
                params=request.params,
                headers=request.headers,
                json=request.body,
            )
        except httpx.TimeoutException:
            return Reply(None, f"no answer in {REQUEST_S:.0f} s")
        except httpx.TransportError as exc:
            return Reply(None, f"no answer: {type(exc).__name__}: {exc}")
        if response.status_code != 429:
            break
        time.sleep(float(response.headers.get("retry-after", 1)))
    return Reply(response.status_code, response.text)


def follow_ups(
    http: httpx.Client, request: Request, reply: Reply, ids: dict[str, str]
) -> list[tuple[str, Request]]:
    """What bob does next with what he got: joins his run; runs an assistant holding hers."""
    data = reply.data()
    if request.method == "GET" or not reply.let_through or not isinstance(data, dict):
        return []
    found = []
    if {"run_id", "thread_id"} <= data.keys() and data.get("status") in ("pending", "running"):
        join = Request("GET", f"/threads/{data['thread_id']}/runs/{data['run_id']}/join")
        found.append(("then bob joins the run", join))
    held = json.dumps([data.get("config"), data.get("context")], default=str)
    if "graph_id" in data and "assistant_id" in data and any(i in held for i in ids.values()):
        thread = ok(http, "POST", "/threads", {})["thread_id"]
        body = {"assistant_id": data["assistant_id"], "input": {"question": BOB_QUESTION}}
        run = Request("POST", f"/threads/{thread}/runs/wait", body=body)
        found.append(("then bob runs the assistant", run))
    return found


@dataclass
class Findings:
    """Every hole found, and what bob sent.

    Attributes:
        holes: Request -> what leaked or changed (one line each in the report).
        refused: Bob's baselines that were refused (their variants would test nothing).
        sent: How many requests bob sent.
        said: The ids of alice's that bob sent in this operation's requests so far.
    """

    holes: dict[str, list[str]] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    sent: int = 0
    said: set[str] = field(default_factory=set)

    def add(self, where: str, line: str) -> None:
        self.holes.setdefault(where, []).append(line)

    def report(self) -> list[str]:
        """One line per request that found a hole."""
        return [f"{where}: {'; '.join(lines)}" for where, lines in self.holes.items()]


def check_reply(
    findings: Findings,
    case: Case,
    what: str,
    request: Request,
    reply: Reply,
    her: Owner,
    ids: dict[str, str],
) -> None:
    """No 5xx, an answer, no secret of alice's, no id or namespace of hers not sent.

    An id of hers that bob sent earlier in the operation may come back in his own things
    (his thread's metadata holds what he put there); a namespace of hers never does.
    """
    prefix = f"{what}: " if what else ""
    if reply.status is None or reply.status >= 500:
        findings.add(case.name, f"{prefix}{reply.status or 'no answer'}: {_short(reply.text)}")
    asked = request.text()
    got = [name for name, marker in MARKERS.items() if marker in reply.text]
    got += [
        f"{name} (not sent)"
        for name, value in ids.items()
        if value in reply.text and value not in asked and value not in findings.said
    ]
    for label, namespace, _ in her.items:
        pattern = r"\s*,\s*".join(re.escape(json.dumps(part)) for part in namespace)
        if re.search(pattern, reply.text) and not re.search(pattern, asked):
            got.append(f"her {label} namespace {list(namespace)}")
    if got:
        findings.add(case.name, f"{prefix}bob got {', '.join(got)} ({reply.status})")
    findings.said |= {v for v in ids.values() if v in asked}


@dataclass
class Session:
    """Alice's things and what she sees of them; bob's client and his accounts."""

    alice: Any
    http: httpx.Client
    doc: dict[str, Any]
    her: Owner
    ids: dict[str, str]
    items: dict[tuple[str, ...], dict[str, Any]]
    accounts: Iterator[tuple[str, str]]
    findings: Findings = field(default_factory=Findings)
    seen: dict[str, Any] = field(default_factory=dict)
    reader: Owner | None = None

    def bob(self, op: Operation) -> Owner:
        """Bob's things for the operation: shared for a read, new ones (a new account) else."""
        if op.method == "GET" and self.reader is not None:
            self.http.headers["x-api-key"] = BOBS[self.reader.user]
            return self.reader
        user, token = next(self.accounts)
        self.http.headers["x-api-key"] = token
        bob = bob_things(self.http, user)
        if op.method == "GET":
            self.reader = bob
        return bob

    def changed(self, *, history: bool) -> list[str]:
        """What changed of alice's since the last look (her items then put back)."""
        now = seen_by_alice(self.alice, self.her, history=history)
        lines = changes(self.seen, now)
        if lines:
            put_back(self.alice, self.items)
            now = seen_by_alice(self.alice, self.her, history=history)
        self.seen |= now
        return lines

    def exercise(self, op: Operation) -> None:
        """Every request of the operation, each response checked; alice's things after."""
        findings = self.findings
        findings.said = set()
        for case in cases(self.doc, op, self.bob(op), self.her):
            reply = send(self.http, case.request)
            findings.sent += 1
            if case.field == "baseline" and not reply.let_through:
                findings.refused.append(f"{case.name}: {reply.status} {_short(reply.text)}")
            check_reply(findings, case, "", case.request, reply, self.her, self.ids)
            for what, then in follow_ups(self.http, case.request, reply, self.ids):
                check_reply(findings, case, what, then, send(self.http, then), self.her, self.ids)
        if lines := self.changed(history=True):
            self.replay(op, lines)

    def replay(self, op: Operation, lines: list[str]) -> None:
        """The operation again, as a new account, alice's things read after each request.

        Reading them after each of bob's requests every time would take more reads of
        hers than the server lets one user make a minute: they are read so only where an
        operation changed something, to tell which request did.
        """
        found = False
        for case in cases(self.doc, op, self.bob(op), self.her):
            reply = send(self.http, case.request)
            for _, then in follow_ups(self.http, case.request, reply, self.ids):
                send(self.http, then)
            for line in self.changed(history=False):
                self.findings.add(case.name, line)
                found = True
        if not found:  # it did not happen again: the operation's requests are named
            for line in lines:
                self.findings.add(f"{op.name} (one of its requests)", line)
        self.seen = seen_by_alice(self.alice, self.her, history=True)  # histories too


def test_bob_reaches_nothing_of_alices_on_any_route(servers: Servers) -> None:
    # a new connection per request: a 500 closes one, and a reused one would fail the next
    http = httpx.Client(
        base_url=servers.bob.url, headers={"connection": "close"}, timeout=REQUEST_S
    )
    with sdk(servers.alice, ALICE) as alice, http:
        her, ids = alice_things(alice)
        items = {
            (*namespace, key): alice.store.get_item(list(namespace), key)["value"]
            for _, namespace, key in her.items
        }
        http.headers["x-api-key"] = BOBS["bob"]
        doc = ok(http, "GET", "/openapi.json")
        ops = operations(doc)
        assert len(ops) >= 30, [o.name for o in ops]  # the document was read
        session = Session(alice, http, doc, her, ids, items, iter(BOBS.items()))
        session.seen = seen_by_alice(alice, her, history=True)
        assert not session.changed(history=True)  # reading them changes nothing
        for op in ops:
            session.exercise(op)
    findings = session.findings
    report = []
    if findings.refused:
        report += ["bob's own requests were refused, so their variants test nothing:"]
        report += findings.refused
    if findings.holes:
        report += [f"{len(findings.holes)} of bob's {findings.sent} requests found a hole:"]
        report += findings.report()
    if report:
        pytest.fail("\n".join(report), pytrace=False)
