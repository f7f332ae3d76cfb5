"""Composition: a debate as the agent of a ``langgraph-supervisor`` supervisor, against the stub.

Every pattern graph takes ``{"messages": [...]}`` and returns ``messages``, so a compiled
debate drops into ``create_supervisor([graph], model=...)`` as an agent. Two figures, each
printed with its target and PASS/FAIL:

1. As a supervisor's agent: one solver debate (4 solvers, ring, 3 rounds, no
   checkpointer) through the public API, the same compiled graph called (a) directly,
   ``graph.invoke({"question": ...})``, and (b) as the only agent of
   ``create_supervisor([graph], model=ChatOpenAI(model="boss", ...)).compile()``, invoked
   with ``{"messages": [("user", question)]}``; after a warm-up run of each, N runs of
   each (``--quick``: 2), alternating a and b, the order flipped every run. Every model
   call goes to one stub server at 200 ms per call; it routes by the request's model:
   ``stub`` (the debate's solvers) or ``boss`` (the supervisor: a ``transfer_to_panel``
   call first, then, once the tool result is in the conversation, a final text quoting
   the panel's answer). Counted by the stub, per run: the debate's calls (the same both
   ways: 12), the extra calls in b (the supervisor's own: 2), and that every debate call
   carried the user's question. Timed by the stub, per model: each supervisor call from
   its request's arrival to its reply sent. Overhead of b beyond the supervisor's own
   calls = (median wall b - median wall a - median of the supervisor's calls' stub time
   per run) / median wall a: what the supervisor's graph (its nodes, handoff tools, the
   client side of its two model calls) and the debate's messages input add; target < 5%.
   Beside it, the raw ratio wall b / wall a. Timing is advisory in ``--quick`` mode (the
   counts are not).
2. Messages never checkpointed: the same debate at zero latency, on fresh SQLite files
   (``open_checkpointer``), input (i) ``{"question": ...}`` and (ii) ``{"messages": ...}``
   directly, and (iii) as the supervisor's agent with the supervisor compiled on a SQLite
   checkpointer (the debate's rows: its ``panel:...`` checkpoint namespace). In the
   debate's rows, no pending write is to the ``messages`` channel, no checkpoint holds a
   ``messages`` value, and the run's outcome message (its text and its id) is in no
   checkpoint, write or metadata (blobs decoded with the project's serializer,
   ``msgpack+z1``, then searched as plain msgpack). Beside it, the debate's stored bytes
   per agent turn with (i) and (ii) input (and (i) run again, for the run-to-run spread):
   the ``messages`` output adds no row and no value to a turn, so ``checkpoint_bytes.py``'s
   bytes per agent turn are what they were. As information: the run's input as given,
   which LangGraph keeps once a run in the debate's input checkpoint (its ``__start__``
   value; as the agent, the supervisor's conversation so far).

The stub server (``tests/openai_stub.py``) runs in a process of its own (``--serve``), so
none of its work is counted as the client's.

Usage::

    .venv/bin/python benchmarks/composition.py [--quick] [--json out.json]
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import statistics
import subprocess
import sys
import time
import uuid
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

# benchmarks/ is on sys.path when run as a script. Only the standard library and these
# two are imported here: ``--serve`` (the stub server process) starts in a fraction of a
# second; debategraph and LangChain are imported by the figures that use them.
from harness import Figure, base_parser, fmt_runs, run_benchmark
from stub_process import StubProcess

REPO_ROOT = Path(__file__).resolve().parents[1]

QUESTION = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many "
    "clips in May. How many clips did Natalia sell altogether in April and May?"
)
ANSWER = "72"
REASONING = "April 48, May 48 / 2 = 24; 48 + 24 = 72 clips. Check: 72 - 48 = 24, half of 48."
SOLVERS = 4
ROUNDS = 3
LATENCY_S = 0.2
#: The model the debate's solvers call, and the one the supervisor calls.
DEBATE_MODEL = "stub"
BOSS = "boss"
#: The debate's name as the supervisor's agent (its handoff tool: ``transfer_to_panel``).
PANEL = "panel"
#: Model calls the supervisor makes: the handoff, then its final reply.
SUPERVISOR_CALLS = 2
#: Overhead of the supervisor beyond its own calls, as a share of the direct wall.
OVERHEAD_TARGET = 0.05

#: Problems seen that do not invalidate the figures; printed at the end.
WARNINGS: set[str] = set()


# --------------------------------------------------------------------------
# The stub server (a process of its own), routing by model
# --------------------------------------------------------------------------


def boss_reply(body: dict[str, Any]) -> Any:
    """The supervisor: hand off to the panel, then (a tool result in the conversation)
    answer ``Final: <the last message that is not a handoff's>``."""
    from tests.openai_stub import StubReply

    messages = body.get("messages") or []
    if any(m.get("role") == "tool" for m in messages):
        said = [
            m
            for m in messages
            if m.get("role") in {"assistant", "tool"}
            and m.get("content")
            and not str(m["content"]).startswith(("Transferring", "Successfully"))
        ]
        return f"Final: {said[-1].get('content') if said else ''}"
    return StubReply(tool_name=f"transfer_to_{PANEL}", tool_args={})


def respond(body: dict[str, Any]) -> Any:
    """``boss`` requests get the supervisor's replies; a solver's typed reply, answer 72."""
    from tests.openai_stub import schema_of

    if body.get("model") == BOSS:
        return boss_reply(body)
    if schema_of(body) is not None:
        return {"reasoning": REASONING, "answer": ANSWER, "confidence": 0.8}
    return f"The answer is {ANSWER}."


def serve(latency_s: float) -> None:
    """Serve until standard input closes (``--serve``); see :mod:`stub_process`.

    Each ``stats`` line read is answered with ``STATS <json>``: per model, ``calls``
    answered, ``seconds`` (the sum, over its requests, of arrival to reply sent) and
    ``with_question`` (requests whose messages carry :data:`QUESTION`); ``max_in_flight``;
    then the counts are reset. The timing wraps the test stub's ``_handle_chat`` (which
    sends the reply ``latency_s`` after the request's arrival), so it is the stub's own
    clock from arrival to the reply's last byte written.
    """
    sys.path.insert(0, str(REPO_ROOT))
    from tests.openai_stub import StubOpenAIServer

    calls: Counter[str] = Counter()
    seconds: dict[str, float] = {}
    with_question: Counter[str] = Counter()

    class TimedStub(StubOpenAIServer):
        """The stub, timing each request from its arrival to its reply sent, per model."""

        def _handle_chat(self, handler: Any, body: dict[str, Any]) -> None:
            model = str(body.get("model"))
            try:
                super()._handle_chat(handler, body)
            finally:
                spent = time.monotonic() - getattr(handler, "arrived", time.monotonic())
                carried = QUESTION in json.dumps(body.get("messages"))
                with self._lock:
                    calls[model] += 1
                    seconds[model] = seconds.get(model, 0.0) + spent
                    with_question[model] += carried

    with TimedStub(respond, latency_s=latency_s) as server:
        print(f"URL {server.url}", flush=True)
        for line in sys.stdin:
            if line.strip() != "stats":
                continue
            with server._lock:
                stats = {
                    "calls": dict(calls),
                    "seconds": dict(seconds),
                    "with_question": dict(with_question),
                    "answered": server.calls,
                    "max_in_flight": server.max_in_flight,
                }
                calls.clear()
                seconds.clear()
                with_question.clear()
            server.reset_stats()
            print(f"STATS {json.dumps(stats)}", flush=True)


@contextlib.contextmanager
def stub(latency_s: float) -> Iterator[StubProcess]:
    """Start the stub server process (``--serve``); stop it on exit."""
    cmd = [sys.executable, __file__, "--serve", "--latency", str(latency_s)]
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("URL "):
            raise RuntimeError(f"stub server did not start: {line!r}")
        yield StubProcess(line.split()[1], proc)
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


# --------------------------------------------------------------------------
# The debate and its supervisor
# --------------------------------------------------------------------------


def make_panel(url: str, checkpointer: Any = None) -> Any:
    """The debate on the stub at ``url``, compiled as :data:`PANEL` on ``checkpointer``."""
    from debategraph import build_solver_debate
    from debategraph.models import ModelSpec

    spec = ModelSpec(model=DEBATE_MODEL, base_url=url, timeout_s=30, max_retries=0)
    graph = build_solver_debate(spec, agents=SOLVERS, max_rounds=ROUNDS)
    return graph.compile(name=PANEL, checkpointer=checkpointer)


def supervise(url: str, panel: Any, checkpointer: Any = None) -> Any:
    """A supervisor on the stub at ``url`` (model :data:`BOSS`) whose only agent is
    ``panel``, compiled on ``checkpointer``."""
    from langchain_openai import ChatOpenAI
    from langgraph_supervisor import create_supervisor

    boss = ChatOpenAI(model=BOSS, base_url=url, api_key="x", timeout=30, max_retries=0)
    with warnings.catch_warnings():  # langgraph-supervisor builds on create_react_agent
        warnings.filterwarnings("ignore", message="create_react_agent has been moved")
        return create_supervisor(
            [panel], model=boss, prompt="Hand questions to the panel, then report its answer."
        ).compile(checkpointer=checkpointer)


def check_direct(out: dict[str, Any]) -> str:
    """Refuse a direct run that did not complete its rounds; its outcome message's text."""
    if out.get("termination_reason") != "rounds_completed" or len(out["rounds"]) != ROUNDS:
        raise RuntimeError(f"the debate went wrong: {out.get('termination_reason')}")
    if out.get("answer") != ANSWER:
        WARNINGS.add(f"the debate's answer is {out.get('answer')!r}, expected {ANSWER!r}")
    return str(out["messages"][-1].content)


def check_supervised(out: dict[str, Any]) -> str:
    """Refuse a supervised run whose supervisor did not end quoting the panel's outcome
    (the message the debate ends with, its metadata's stage ``outcome``); its text."""
    from langchain_core.messages import AIMessage

    messages = out["messages"]
    last = messages[-1]
    outcome = next(
        (
            m.content
            for m in messages
            if isinstance(m, AIMessage)
            and m.response_metadata.get("debategraph", {}).get("stage") == "outcome"
        ),
        None,
    )
    if not isinstance(last, AIMessage) or last.name != "supervisor" or outcome is None:
        raise RuntimeError(f"the supervisor's run went wrong: {messages}")
    if last.content != f"Final: {outcome}":
        raise RuntimeError(f"the supervisor did not quote the panel: {last.content!r}")
    if not str(outcome).startswith(f"The answer is {ANSWER}"):
        WARNINGS.add(f"the panel's outcome through the supervisor is {outcome!r}")
    return str(outcome)


# --------------------------------------------------------------------------
# Figure 1: a debate as a supervisor's agent, beside the debate called directly
# --------------------------------------------------------------------------


def figure_supervisor(workdir: Path, *, runs: int, quick: bool) -> Figure:
    """Figure 1: the supervisor's cost over calling the debate directly."""
    walls: dict[str, list[float]] = {"direct": [], "agent": []}
    boss_s: list[float] = []
    calls: dict[str, Counter[str]] = {"direct": Counter(), "agent": Counter()}
    problems: list[str] = []
    in_flight: dict[str, int] = {}
    expected = {"direct": {DEBATE_MODEL: SOLVERS * ROUNDS}}
    expected["agent"] = {**expected["direct"], BOSS: SUPERVISOR_CALLS}
    with stub(LATENCY_S) as server:
        panel = make_panel(server.url)
        supervisor = supervise(server.url, panel)

        def direct() -> float:
            started = time.perf_counter()
            out = panel.invoke({"question": QUESTION})
            wall = time.perf_counter() - started
            check_direct(out)
            return wall

        def agent() -> float:
            started = time.perf_counter()
            out = supervisor.invoke({"messages": [("user", QUESTION)]})
            wall = time.perf_counter() - started
            check_supervised(out)
            return wall

        way = {"direct": direct, "agent": agent}
        direct()  # warm-up: imports, connections, caches
        agent()
        server.take_stats()
        for i in range(runs):
            for kind in ("direct", "agent") if i % 2 == 0 else ("agent", "direct"):
                walls[kind].append(way[kind]())
                stats = server.take_stats()
                calls[kind].update(stats["calls"])
                in_flight[kind] = max(in_flight.get(kind, 0), stats["max_in_flight"])
                if kind == "agent":
                    boss_s.append(float(stats["seconds"].get(BOSS, 0.0)))
                if stats["calls"] != expected[kind]:
                    problems.append(f"run {i + 1} {kind}: calls {stats['calls']}")
                debate_calls = stats["calls"].get(DEBATE_MODEL, 0)
                if stats["with_question"].get(DEBATE_MODEL, 0) != debate_calls:
                    problems.append(f"run {i + 1} {kind}: a debate call without the question")
    w_a = statistics.median(walls["direct"])
    w_b = statistics.median(walls["agent"])
    w_boss = statistics.median(boss_s)
    overhead = w_b - w_a - w_boss
    share = overhead / w_a
    ratio = w_b / w_a
    per_run = {kind: {m: n // runs for m, n in c.items()} for kind, c in calls.items()}
    debate = {kind: per_run[kind].get(DEBATE_MODEL, 0) for kind in per_run}
    extra = sum(per_run["agent"].values()) - sum(per_run["direct"].values())
    counted = not problems and debate["direct"] == debate["agent"] and extra == SUPERVISOR_CALLS
    timed = share < OVERHEAD_TARGET
    label = f"median of {runs}" if runs > 1 else "1 run"
    critical = ROUNDS * LATENCY_S
    return Figure(
        number=1,
        name="As a supervisor's agent",
        setup=f"a solver debate ({SOLVERS} solvers, ring, {ROUNDS} rounds, no checkpointer) "
        "called directly (invoke {question}) and as the only agent of create_supervisor "
        "(invoke {messages}), runs alternating; one stub server process at "
        f"{LATENCY_S * 1000:.0f} ms per call for the debate's and the supervisor's calls",
        rows=[
            (f"wall direct ({label})", f"{w_a:.3f} s   (runs: {fmt_runs(walls['direct'])})"),
            (
                f"wall as the agent ({label})",
                f"{w_b:.3f} s   (runs: {fmt_runs(walls['agent'])})",
            ),
            (
                "model calls per run",
                f"direct: {debate['direct']} (the debate's); as the agent: "
                f"{debate['agent']} the debate's + {per_run['agent'].get(BOSS, 0)} the "
                f"supervisor's (model {BOSS})",
            ),
            (
                "counts",
                f"the debate's calls the same both ways, every one carrying the question; "
                f"{extra} extra, the supervisor's own"
                if counted
                else "; ".join(problems) or f"debate calls {debate}, {extra} extra",
            ),
            (
                f"supervisor's calls ({label})",
                f"{w_boss:.3f} s   (its {SUPERVISOR_CALLS} requests, arrival to reply sent, "
                f"timed by the stub; runs: {fmt_runs(boss_s)})",
            ),
            (
                "overhead beyond them",
                f"{overhead * 1000:.1f} ms = {share:.1%} of the direct wall   (wall as the "
                "agent - wall direct - the supervisor's calls at the stub: what its graph, "
                "the client side of its calls and the messages input add)",
            ),
            ("info: raw ratio", f"{ratio:.3f}   (wall as the agent / wall direct)"),
            (
                "info: direct wall",
                f"{w_a / critical:.3f}x the debate's critical path ({ROUNDS} rounds x "
                f"{LATENCY_S * 1000:.0f} ms); max calls in flight {in_flight}",
            ),
        ],
        target=f"the debate's calls the same both ways and only the supervisor's "
        f"{SUPERVISOR_CALLS} extra; overhead beyond the supervisor's calls < "
        f"{OVERHEAD_TARGET:.0%} of the direct wall",
        # The counts never depend on timing: a wrong count fails even in --quick mode.
        passed=counted and timed,
        advisory=quick and counted,
        headline=f"+{extra} calls (the supervisor's own), +{share:.1%} wall beyond its calls "
        f"({overhead * 1000:.1f} ms over {w_a:.3f} s direct; raw ratio {ratio:.3f})",
        values={
            "wall_direct_s": w_a,
            "wall_agent_s": w_b,
            "runs_direct_s": walls["direct"],
            "runs_agent_s": walls["agent"],
            "supervisor_calls_s": w_boss,
            "supervisor_calls_runs_s": boss_s,
            "overhead_s": overhead,
            "overhead_share": share,
            "ratio": ratio,
            "calls_per_run": per_run,
            "debate_calls": debate,
            "extra_calls": extra,
            "count_problems": problems,
            "max_in_flight": in_flight,
        },
        why=f"the supervisor adds {overhead * 1000:.1f} ms beyond its calls' time at the stub "
        "(its graph's supersteps, its handoff tools, building and parsing its two requests); "
        "what would reach it: a quieter machine, or fewer supersteps in the supervisor",
    )


# --------------------------------------------------------------------------
# Figure 2: the messages output is never checkpointed
# --------------------------------------------------------------------------


def search(
    db: Path, needles: Sequence[str], own: Any
) -> tuple[dict[str, int], list[str], dict[str, int], list[str]]:
    """What a checkpoint file holds of the ``messages`` channel and of ``needles``.

    Args:
        db: The SQLite file.
        needles: Strings to look for in every checkpoint, pending write and metadata
            (blobs decoded, searched as plain msgpack).
        own: ``checkpoint_ns -> bool``: whether a row is the debate's.

    Returns:
        The debate's rows: ``checkpoints``, ``writes``, ``messages_writes`` (writes to
        ``messages``), ``messages_values`` (checkpoints holding a ``messages`` value),
        ``messages_versions`` (checkpoints versioning it: a version only) and ``bytes``
        (checkpoint blobs, metadata and write values), ``input_bytes`` and
        ``input_messages`` (the run's input as given, which LangGraph keeps in its input
        checkpoint's ``__start__`` value: plain msgpack bytes, messages in it); where a
        needle was found
        (``table.column``) in the debate's rows; and the same counts and places for the
        other rows (a supervisor's: where its own ``messages`` are, they must be found).
    """
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from debategraph.checkpoints.backends import METADATA_TABLE
    from debategraph.checkpoints.serde import serializer

    serde = serializer()
    plain = JsonPlusSerializer(allowed_msgpack_modules=None)
    found: dict[bool, list[str]] = {True: [], False: []}
    counts: dict[bool, Counter[str]] = {True: Counter(), False: Counter()}
    raw = [n.encode() for n in needles]

    def look(mine: bool, where: str, data: bytes) -> None:
        places = [f"{where} ({n.decode()[:16]}...)" for n in raw if n in data]
        found[mine].extend(p for p in places if p not in found[mine])

    conn = sqlite3.connect(db)
    try:
        for ns, type_, blob, metadata in conn.execute(
            "SELECT checkpoint_ns, type, checkpoint, metadata FROM checkpoints"
        ):
            mine = bool(own(ns))
            c = counts[mine]
            c["checkpoints"] += 1
            c["bytes"] += len(blob or b"") + len(metadata or b"")
            checkpoint = serde.loads_typed((type_, blob))
            c["messages_values"] += "messages" in checkpoint["channel_values"]
            c["messages_versions"] += "messages" in checkpoint["channel_versions"]
            given = checkpoint["channel_values"].get("__start__")
            if isinstance(given, dict):  # the input checkpoint: the run's input as given
                c["input_bytes"] += len(plain.dumps_typed(given)[1])
                c["input_messages"] += len(given.get("messages") or [])
            look(mine, "checkpoints.checkpoint", plain.dumps_typed(checkpoint)[1])
            look(mine, "checkpoints.metadata", bytes(metadata or b""))
        for ns, channel, type_, value in conn.execute(
            "SELECT checkpoint_ns, channel, type, value FROM writes"
        ):
            mine = bool(own(ns))
            c = counts[mine]
            c["writes"] += 1
            c["bytes"] += len(value or b"")
            c["messages_writes"] += channel == "messages"
            look(mine, "writes.value", plain.dumps_typed(serde.loads_typed((type_, value)))[1])
        for (value,) in conn.execute(f"SELECT value FROM {METADATA_TABLE}"):
            look(True, f"{METADATA_TABLE}.value", str(value).encode())
    finally:
        conn.close()
    return dict(counts[True]), found[True], dict(counts[False]), found[False]


def figure_storage(workdir: Path) -> Figure:
    """Figure 2: no debate checkpoint or write holds ``messages``; bytes per turn alike."""
    from debategraph.checkpoints import open_checkpointer

    turns = SOLVERS * ROUNDS
    runs: dict[str, dict[str, Any]] = {}
    with stub(0.0) as server:
        # "question again": the same input once more, to show the bytes' run-to-run spread.
        for kind in ("question", "messages", "supervisor", "question again"):
            db = workdir / f"storage-{kind}.sqlite"
            config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}}
            with open_checkpointer(db) as saver:
                if kind == "supervisor":
                    supervisor = supervise(server.url, make_panel(server.url), checkpointer=saver)
                    out = supervisor.invoke({"messages": [("user", QUESTION)]}, config)
                    outcome = check_supervised(out)
                else:
                    graph = make_panel(server.url, checkpointer=saver)
                    given: dict[str, Any] = {"question": QUESTION}
                    if kind == "messages":
                        given = {"messages": [("user", QUESTION)]}
                    out = graph.invoke(given, config)
                    outcome = check_direct(out)
            message_id = ""
            if kind != "supervisor":
                message_id = str(out["messages"][-1].id or "")
            else:  # the panel's outcome message, as the supervisor received it
                ids = [m.id for m in out["messages"] if m.content == outcome and m.id]
                message_id = str(ids[0]) if ids else ""
            needles = [outcome, *([message_id] if message_id else [])]

            def own(ns: str, kind: str = kind) -> bool:
                return ns.startswith(f"{PANEL}:") if kind == "supervisor" else True

            debate, found, others, control = search(db, needles, own)
            runs[kind] = {
                "debate": debate,
                "found": found,
                "others": others,
                "found_in_others": control,
                "needles": needles,
            }
            server.take_stats()
    checked = ("messages", "supervisor", "question")
    # A messages input is saved until the run reads it: in the one checkpoint before its
    # first step (a pause or crash there keeps it). Beyond that, nothing.
    unread = {"messages": 1, "supervisor": 1, "question": 0}
    stored = {
        k: runs[k]["debate"].get("messages_writes", 0)
        + max(0, runs[k]["debate"].get("messages_values", 0) - unread[k])
        + len(runs[k]["found"])
        for k in checked
    }
    parent = runs["supervisor"]["others"]
    control = runs["supervisor"]["found_in_others"]
    # The search must find the outcome where it is kept (the supervisor's conversation).
    passed = (
        not any(stored.values())
        and all(runs[k]["debate"].get("writes") for k in checked)
        and len(control) >= 1
    )
    total = {k: runs[k]["debate"]["bytes"] for k in ("question", "messages", "question again")}
    per_turn = {k: b / turns for k, b in total.items()}
    spread = total["question again"] - total["question"]
    delta = total["messages"] - total["question"]

    def inputs(kind: str) -> str:
        d = runs[kind]["debate"]
        n = d.get("input_messages", 0)
        return f"{d.get('input_bytes', 0):,} B ({n} message{'' if n == 1 else 's'})"

    def row(kind: str) -> str:
        d = runs[kind]["debate"]
        text = (
            f"{d.get('messages_writes', 0)} of {d.get('writes', 0)} writes to messages, "
            f"{d.get('messages_values', 0)} of {d.get('checkpoints', 0)} checkpoints with a "
            f"messages value (the input, until read: {unread[kind]} allowed); outcome text and "
            "id found: "
            f"{', '.join(runs[kind]['found']) or 'nowhere'}"
        )
        return text

    return Figure(
        number=2,
        name="Messages never checkpointed",
        setup=f"the same debate ({SOLVERS} solvers, ring, {ROUNDS} rounds, zero latency) on "
        "fresh SQLite files (open_checkpointer): input {question} and {messages} directly, "
        "and as the agent of a supervisor compiled on the SQLite saver (the debate's "
        f"{PANEL}:... namespace); every checkpoint, write and metadata decoded and searched",
        rows=[
            ("input {messages}", row("messages")),
            ("as the supervisor's agent", row("supervisor")),
            ("input {question}", row("question")),
            (
                "stored per agent turn",
                f"{per_turn['messages']:,.0f} B with input {{messages}}, "
                f"{per_turn['question']:,.0f} B with {{question}}   (in all {total['messages']:,} "
                f"B vs {total['question']:,} B, {delta:+,} B, {delta / turns:+.1f} B a turn; "
                f"{{question}} run again: {spread:+,} B (ids, timestamps); checkpoint blobs, "
                f"metadata and write values of the debate's {turns} agent turns, model text "
                "included)",
            ),
            (
                "info: the supervisor's rows",
                f"{parent.get('messages_writes', 0)} writes to messages, "
                f"{parent.get('messages_values', 0)} of {parent.get('checkpoints', 0)} "
                "checkpoints with a messages value: its own MessagesState, the panel's answer "
                f"in its conversation; the search found it there: {', '.join(control) or 'no'}",
            ),
            (
                "info: the input as given",
                "kept once a run in the debate's input checkpoint (LangGraph's __start__ "
                f"value, plain msgpack): {inputs('messages')} with input {{messages}}, "
                f"{inputs('supervisor')} as the agent (the supervisor's conversation so far), "
                f"{inputs('question')} with {{question}}",
            ),
            (
                "info: versions",
                f"{runs['messages']['debate'].get('messages_versions', 0)} of "
                f"{runs['messages']['debate'].get('checkpoints', 0)} debate checkpoints "
                "carry a version number for messages (a channel version, no value)",
            ),
        ],
        target="no debate checkpoint but the one before the run reads its messages input, "
        "no pending write and no metadata holds the messages channel; the run's reply (the "
        "outcome message's text, its id) is nowhere in the debate's rows; the same search "
        "finds it in the supervisor's own rows",
        passed=passed,
        headline=(
            "the reply never checkpointed (no write, the outcome message nowhere in the "
            "debate's rows); a messages input in one checkpoint, until read"
            if passed
            else f"messages stored: {stored}"
        )
        + f"; stored per agent turn {per_turn['messages']:,.0f} B with input {{messages}} "
        f"vs {per_turn['question']:,.0f} B with {{question}}",
        values={
            "runs": runs,
            "stored_messages": stored,
            "bytes_per_turn": per_turn,
            "bytes_delta": delta,
            "turns": turns,
        },
        notes=[
            "checkpoint_bytes.py measures bytes per agent turn beyond the text at 100 rounds "
            "through the CLI (docs/benchmarks.md: 2,031 B); a messages input or output adds "
            "no row and no value to a turn, so that figure is unchanged by them"
        ],
    )


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the figures (or serve the stub); 1 if a counting figure fails, else 0."""
    parser = base_parser(__doc__)
    parser.add_argument("--serve", action="store_true", help="serve the stub (internal)")
    parser.add_argument("--latency", type=float, default=0.0, help="with --serve")
    parser.add_argument("--runs", type=int, help="runs of each way in figure 1 (default 5)")
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.latency)
        return 0
    quick: bool = args.quick
    runs = args.runs or (2 if quick else 5)
    return run_benchmark(
        "debategraph composition benchmark",
        [
            lambda workdir: figure_supervisor(workdir, runs=runs, quick=quick),
            figure_storage,
        ],
        args=args,
        quick_note="quick mode: 2 runs of each way; the timing figure is advisory (its "
        "counts are not)",
        warnings=lambda: WARNINGS,
    )


if __name__ == "__main__":
    sys.exit(main())
