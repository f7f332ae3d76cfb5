"""The private LangGraph names in ``debategraph.compat`` still do what we rely on.

One test per name: it is still where compat imports it from, and it still behaves as
``checkpoints/maintenance.py`` uses it. A failure after a LangGraph upgrade names the
changed name; fix ``src/debategraph/compat.py`` (and maintenance.py if needed).
Runs a tiny graph (no model) on a SQLite checkpointer with the package's serializer.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.pregel import Pregel
from langgraph.types import Command, Send, interrupt
from pydantic import BaseModel

from debategraph import compat
from debategraph.checkpoints import open_checkpointer, thread_config
from debategraph.checkpoints.savers import serializer
from debategraph.state.records import Turn
from debategraph.state.reducers import transcript_channel

THREAD = "t"
Graph = Pregel[Any, Any, Any, Any]
Saver = BaseCheckpointSaver[Any]


def private(module: str, name: str) -> Any:
    """LangGraph's private ``module.name``, or a failure saying it moved."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        pytest.fail(
            f"{module}.{name} is gone in langgraph {version('langgraph')}"
            f" / langgraph-checkpoint {version('langgraph-checkpoint')} ({exc}):"
            " update src/debategraph/compat.py",
            pytrace=False,
        )


class State(TypedDict, total=False):
    transcript: Annotated[list[Turn], transcript_channel()]
    answer: str


def turn(agent: str, rnd: int) -> Turn:
    return Turn(agent=agent, content=f"{agent} speaks", stage="test", round=rnd)


def solver_a(state: State) -> State:
    return {"transcript": [turn("a", 1)]}


def solver_b(state: State) -> State:
    return {"transcript": [turn("b", 1)]}


def ask(state: State) -> State:
    return {"answer": str(interrupt("answer?")), "transcript": [turn("ask", 2)]}


def to_push(state: State) -> list[Send]:
    return [Send("push", {})]


def push(state: State) -> State:
    return {"transcript": [turn("push", 3)]}


@pytest.fixture
def run(tmp_path: Path) -> Iterator[tuple[Graph, Saver]]:
    """A finished run: parallel pull tasks, an interrupt resumed by a Command, a Send."""
    builder = StateGraph(State)
    builder.add_node("a", solver_a)
    builder.add_node("b", solver_b)
    builder.add_node("ask", ask)
    builder.add_node("push", push)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge(["a", "b"], "ask")
    builder.add_conditional_edges("ask", to_push, ["push"])
    builder.add_edge("push", END)
    with open_checkpointer(tmp_path / "compat.sqlite") as saver:
        graph = builder.compile(checkpointer=saver)
        graph.invoke({}, thread_config(THREAD))
        graph.invoke(Command(resume="yes"), thread_config(THREAD))
        assert [t.agent for t in graph.get_state(thread_config(THREAD)).values["transcript"]] == [
            "a",
            "b",
            "ask",
            "push",
        ]
        yield graph, saver


def latest(saver: Saver, thread_id: str = THREAD) -> CheckpointTuple:
    tup = saver.get_tuple(thread_config(thread_id))
    assert tup is not None
    return tup


def test_state_like() -> None:
    state_like = private("langgraph._internal._typing", "StateLike")
    assert compat.StateLike is state_like
    from langgraph.typing import InputT

    assert InputT.__bound__ == state_like, "StateGraph's type parameters have another bound"


def test_null_task_id(run: tuple[Graph, Saver]) -> None:
    null_task_id = private("langgraph._internal._constants", "NULL_TASK_ID")
    assert compat.NULL_TASK_ID is null_task_id
    assert isinstance(null_task_id, str) and null_task_id, "NULL_TASK_ID is no longer a str"

    # fork keeps, at the fork point, only the writes no task of the next step made: the
    # input of a Command (here: its resume value), tagged with NULL_TASK_ID.
    graph, saver = run
    snap = next(s for s in graph.get_state_history(thread_config(THREAD)) if s.next == ("ask",))
    tup = saver.get_tuple(snap.config)
    assert tup is not None
    tasks = {task.id for task in snap.tasks}
    outside = [(tid, value) for tid, _, value in tup.pending_writes or [] if tid not in tasks]
    assert outside == [(null_task_id, "yes")], (
        f"a Command's resume write is no longer stored under NULL_TASK_ID ({null_task_id!r}):"
        f" writes outside the step's tasks are {outside!r}; fork() filters on it"
    )


def test_missing(run: tuple[Graph, Saver]) -> None:
    missing = private("langgraph._internal._typing", "MISSING")
    assert compat.MISSING is missing
    assert missing is not None, "MISSING must be a sentinel distinct from None"

    # prune rebuilds a delta channel as from_checkpoint(seed or MISSING) + replay_writes.
    graph, saver = run
    spec = graph.channels["transcript"]
    assert isinstance(spec, DeltaChannel)
    history = saver.get_delta_channel_history(config=latest(saver).config, channels=["transcript"])[
        "transcript"
    ]
    assert "seed" not in history, (
        "get_delta_channel_history gives a 'seed' though no snapshot is stored:"
        " prune's default of MISSING for it may be wrong now"
    )
    channel = spec.from_checkpoint(missing)
    assert channel.get() == [], (
        "DeltaChannel.from_checkpoint(MISSING) no longer starts an empty channel:"
        f" got {channel.get()!r}; LangGraph's sentinel may be another object now"
    )
    channel.replay_writes(history["writes"])
    assert channel.get() == graph.get_state(thread_config(THREAD)).values["transcript"]


def test_delta_snapshot(run: tuple[Graph, Saver]) -> None:
    snapshot_type = private("langgraph.checkpoint.serde.types", "_DeltaSnapshot")
    assert compat.DeltaSnapshot is snapshot_type

    graph, saver = run
    value = graph.get_state(thread_config(THREAD)).values["transcript"]
    serde = serializer()
    back = serde.loads_typed(serde.dumps_typed(compat.DeltaSnapshot(value)))
    assert type(back) is compat.DeltaSnapshot, (
        f"DeltaSnapshot comes back from the checkpoint serializer as {type(back).__name__}"
    )
    assert back.value == value and all(type(t) is Turn for t in back.value)

    # Stored as prune stores it (in channel_values, no parent), it reads back as the full
    # value, and it ends the ancestor walk of a later checkpoint: it is the seed.
    tup = latest(saver)
    values = {**tup.checkpoint["channel_values"], "transcript": compat.DeltaSnapshot(value)}
    saver.put(
        {"configurable": {"thread_id": "copy", "checkpoint_ns": ""}},
        {**tup.checkpoint, "channel_values": values},
        tup.metadata,
        dict(tup.checkpoint["channel_versions"]),
    )
    assert graph.get_state(thread_config("copy")).values["transcript"] == value
    graph.update_state(thread_config("copy"), {"answer": "no"}, as_node="push")
    child = latest(saver, "copy")
    assert "transcript" not in child.checkpoint["channel_values"]
    history = saver.get_delta_channel_history(config=child.config, channels=["transcript"])
    seed = history["transcript"].get("seed")
    assert isinstance(seed, compat.DeltaSnapshot), (
        f"a stored DeltaSnapshot no longer ends the ancestor walk as its seed: {history!r}"
    )
    assert graph.get_state(thread_config("copy")).values["transcript"] == value


def test_task_path_str(run: tuple[Graph, Saver]) -> None:
    task_path_str = private("langgraph.pregel._algo", "task_path_str")
    assert compat.task_path_str is task_path_str

    # fork derives a write's task_path as task_path_str(task.path) of the checkpoint's
    # tasks ("" for NULL_TASK_ID) when it cannot read it with SQL: it must equal what
    # the saver stores.
    graph, saver = run
    assert isinstance(saver, SqliteSaver)
    with saver.cursor(transaction=False) as cur:
        cur.execute(
            "SELECT checkpoint_id, task_id, task_path FROM writes WHERE thread_id = ?",
            (THREAD,),
        )
        rows: list[tuple[str, str, str]] = cur.fetchall()
    kinds = {path.split(",")[0] for _, _, path in rows}
    assert {"~__pregel_pull", "~__pregel_push", ""} <= kinds  # pull, push (Send), null
    for checkpoint_id, task_id, stored in rows:
        config: RunnableConfig = {
            "configurable": {
                "thread_id": THREAD,
                "checkpoint_ns": "",
                "checkpoint_id": checkpoint_id,
            }
        }
        tasks = graph.get_state(config).tasks
        derived = {task.id: task_path_str(task.path) for task in tasks}.get(task_id, "")
        assert derived == stored, (
            f"task_path_str gives {derived!r} where the saver stored {stored!r}"
            f" (task paths {[task.path for task in tasks]!r})"
        )


# --------------------------------------------------------------------------
# The savers' tables: every table and column our SQL names, in LangGraph's schema
# --------------------------------------------------------------------------


def test_sqlite_tables_are_langgraphs(tmp_path: Path) -> None:
    """LangGraph's own ``SqliteSaver.setup()`` makes every column ``tables.py`` names,
    and the lean saver's ``writes`` table has exactly LangGraph's columns and key."""
    import sqlite3

    from debategraph.checkpoints import backends
    from debategraph.checkpoints.tables import SQLITE_COLUMNS

    def schema(conn: sqlite3.Connection, table: str) -> dict[str, int]:
        return {row[1]: row[5] for row in conn.execute(f"PRAGMA table_info({table})")}

    theirs = sqlite3.connect(tmp_path / "langgraph.sqlite", check_same_thread=False)
    SqliteSaver(theirs).setup()
    for table, columns in SQLITE_COLUMNS.items():
        missing = columns - set(schema(theirs, table))
        assert not missing, f"LangGraph's SQLite table {table} has no column(s) {missing}"
    ours = sqlite3.connect(tmp_path / "ours.sqlite")
    ours.executescript(backends._SETUP_SQL)
    assert schema(ours, "writes") == schema(theirs, "writes")  # names and primary key


def test_postgres_tables_are_langgraphs(tmp_path: Path) -> None:
    """LangGraph's own ``PostgresSaver.setup()`` makes every column ``tables.py`` names."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    from debategraph.checkpoints.tables import POSTGRES_COLUMNS
    from tests.backends import drop_database, postgres_admin_url, with_database

    admin = postgres_admin_url()  # skips without a server (fails where one is required)
    name = f"debategraph_compat_{tmp_path.name[-12:].lower().replace('-', '_')}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        with PostgresSaver.from_conn_string(with_database(admin, name)) as saver:
            saver.setup()
            with saver._cursor() as cur:
                cur.execute(
                    "SELECT table_name, column_name FROM information_schema.columns"
                    " WHERE table_schema = current_schema()"
                )
                found: dict[str, set[str]] = {}
                for row in cur.fetchall():
                    found.setdefault(row["table_name"], set()).add(row["column_name"])
        for table, columns in POSTGRES_COLUMNS.items():
            missing = columns - found.get(table, set())
            assert not missing, f"LangGraph's Postgres table {table} has no column(s) {missing}"
    finally:
        drop_database(admin, name)


def test_lean_client_names_hold() -> None:
    """Every private name the lean client calls is there and takes what it passes."""
    problems = compat.lean_client_problems()
    assert problems == (), (
        f"langchain-openai {version('langchain-openai')} / langchain-core "
        f"{version('langchain-core')} changed what the lean client needs: {problems}; "
        "update src/debategraph/compat.py (the lean client is off until then)"
    )


@pytest.fixture
def fresh_choice(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The libraries checked afresh, and the lean client not switched off (as by
    ``make test-stock-client``)."""
    from debategraph.models.binding import LEAN_CLIENT_ENV

    monkeypatch.delenv(LEAN_CLIENT_ENV, raising=False)
    compat.lean_client_problems.cache_clear()
    yield
    compat.lean_client_problems.cache_clear()


@pytest.mark.usefixtures("fresh_choice")
def test_a_changed_name_turns_the_lean_client_off(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from langchain_openai import ChatOpenAI

    from debategraph.models.binding import client_class
    from debategraph.models.client import LeanChatOpenAI

    assert client_class() is LeanChatOpenAI

    def renamed(self: Any, reply: Any) -> Any:  # a release renames the parameter
        raise AssertionError("not called")

    monkeypatch.setattr(ChatOpenAI, "_create_chat_result", renamed)
    compat.lean_client_problems.cache_clear()
    with caplog.at_level("DEBUG", logger="debategraph.models.binding"):
        assert client_class() is ChatOpenAI
    assert compat.lean_client_problems() == (
        "langchain_openai.ChatOpenAI._create_chat_result no longer takes (self, response)",
    )
    assert [r.getMessage() for r in caplog.records] == [
        "stock ChatOpenAI, not the lean client: langchain_openai.ChatOpenAI."
        "_create_chat_result no longer takes (self, response)"
    ]


@pytest.mark.usefixtures("fresh_choice")
def test_a_missing_name_turns_the_lean_client_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_openai.chat_models import base

    monkeypatch.delattr(base, "_handle_openai_api_error")
    assert compat.lean_client_problems() == (
        "langchain_openai.chat_models.base._handle_openai_api_error is gone",
    )


@pytest.mark.usefixtures("fresh_choice")
def test_the_lean_client_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_openai import ChatOpenAI

    from debategraph.models import ModelSpec, get_chat_model
    from debategraph.models.binding import LEAN_CLIENT_ENV, client_class
    from debategraph.models.client import LeanChatOpenAI

    monkeypatch.setenv(LEAN_CLIENT_ENV, "0")
    assert client_class() is ChatOpenAI
    chat = get_chat_model(ModelSpec(model="m", base_url="http://127.0.0.1:9/v1")).chat
    assert type(chat) is ChatOpenAI and not isinstance(chat, LeanChatOpenAI)


def test_aegra_names() -> None:
    """The Aegra names the server uses are still there and still do what is relied on."""
    assert callable(private("aegra_api.config", "_resolve_config_path"))
    assert callable(private("aegra_api.core.orm", "_get_session_maker"))
    assert compat.aegra_config_path() is None or compat.aegra_config_path().name.endswith(".json")


def test_aegra_storage_is_what_its_routes_get(monkeypatch: pytest.MonkeyPatch) -> None:
    """Aegra's routes and runs read the checkpointer and store ``set_aegra_storage`` sets."""
    from aegra_api.core.database import db_manager

    monkeypatch.setattr(db_manager, "_checkpointer", None)
    monkeypatch.setattr(db_manager, "_store", None)
    saver, store = object(), object()
    compat.set_aegra_storage(saver, store)
    assert compat.aegra_storage() == (saver, store)
    assert db_manager.get_checkpointer() is saver
    assert db_manager.get_store() is store


def test_infer_as_node_is_what_update_state_asks() -> None:
    """LangGraph's own inference: the node that wrote last, ``None`` for two at once."""
    from typing import TypedDict

    from langgraph.graph import StateGraph
    from langgraph.pregel import Pregel

    class S(TypedDict):
        x: int

    graph = StateGraph(S)
    graph.add_node("a", lambda s: {"x": 1})
    graph.add_node("b", lambda s: {"x": 1})
    graph.add_edge("__start__", "a")
    graph.add_edge("__start__", "b")
    compiled = graph.compile()
    assert callable(getattr(Pregel, "_infer_as_node", None))
    assert compat.infer_as_node(compiled, {"a": {"x": 2}, "b": {"x": 1}}) == "a"
    assert compat.infer_as_node(compiled, {"a": {"x": 2}, "b": {"x": 2}}) is None


def test_aegra_accessors_reach_their_names() -> None:
    """Each ``aegra_*`` accessor still finds the Aegra (and langgraph_sdk) name it reads."""
    from langgraph_sdk import Auth

    assert "_authenticate_handler" in Auth.__slots__  # what aegra_authenticate_handler reads
    assert compat.aegra_thread_table().__tablename__ == "thread"
    assert compat.aegra_assistant_table().__tablename__ == "assistant"
    assert compat.aegra_run_table().__tablename__ == "runs"
    thread_create, assistant_create = compat.aegra_create_models()
    assert thread_create.model_validate({"threadId": "t"}).thread_id == "t"
    assert "assistant_id" in assistant_create.model_fields
    assert compat.aegra_active_run("no such run") is None
    assert compat.aegra_resolve_assistant_id("other", ["debate"]) == "other"


class Planted(BaseModel):
    """A record no serializer knows (importable by its module and name, as stored)."""

    x: int


def test_allow_msgpack_types_is_what_every_serializer_revives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A type added is revived by a strict serializer, and by a permissive one silently."""
    from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    module = importlib.import_module("langgraph.checkpoint.serde._msgpack")
    safe = private("langgraph.checkpoint.serde._msgpack", "SAFE_MSGPACK_TYPES")
    assert isinstance(safe, frozenset) and ("datetime", "datetime") in safe
    monkeypatch.setattr(module, "SAFE_MSGPACK_TYPES", safe)  # as it was, after the test
    strict = JsonPlusSerializer(allowed_msgpack_modules=None)
    blob = strict.dumps_typed(Planted(x=1))
    assert strict.loads_typed(blob) == {"x": 1}  # blocked: its fields come back
    compat.allow_msgpack_types([Planted])
    events: list[Any] = []
    unregister = register_serde_event_listener(events.append)
    try:
        assert strict.loads_typed(blob) == Planted(x=1)
        assert JsonPlusSerializer(allowed_msgpack_modules=True).loads_typed(blob) == Planted(x=1)
    finally:
        unregister()
    assert events == []  # neither blocked nor revived unregistered (the warning)
