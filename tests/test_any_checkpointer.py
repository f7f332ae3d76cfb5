"""Any LangGraph checkpointer a user builds resumes a paused pattern, strict msgpack too.

The user's own saver (LangGraph's ``InMemorySaver()``, ``SqliteSaver``, ``PostgresSaver``,
each with its default serializer, not the package's) holds a parent app with a solver
debate inside, paused after each round; compiling the pattern is all the user does. Each
backend runs under ``LANGGRAPH_STRICT_MSGPACK=true`` (see ``tests.backends``), and the
in-memory one also without it: every round review is answered (approve, the old
``interject``, a ``respond`` decision, a ``reject`` that stops the run), the records
come back as records, and LangGraph's serializer reports no type it revived unregistered
or blocked.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command
from pydantic import BaseModel

from debategraph import build_solver_debate
from debategraph.nodes.review import hitl_response
from debategraph.state.records import RoundRecord, Turn
from tests.backends import fresh_database, serde_events, strict_msgpack
from tests.fake_model import ScriptedChatModel, tool_reply

__all__ = ["serde_events", "strict_msgpack"]  # fixtures, used by name

QUESTION = "What is 3 + 5?"
SOLVER = {"reasoning": "3 and 5 make 8", "answer": "8", "confidence": 0.9}
FIRST, SECOND, STOP = "Count the apples again.", "Show the sum.", "Enough: it is 8."


class Unlisted(BaseModel):
    """A record no allowlist names: what a strict serializer must block."""

    x: int


@pytest.fixture(params=["memory", "memory-strict", "sqlite-strict", "postgres-strict"])
def user_saver(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[BaseCheckpointSaver[Any]]:
    """The checkpointer a user builds, with LangGraph's default serializer."""
    backend, _, strict = str(request.param).partition("-")
    if strict:
        request.getfixturevalue("strict_msgpack")
    if backend == "memory":
        yield InMemorySaver()
    elif backend == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(tmp_path / "user.sqlite", check_same_thread=False)
        try:
            yield SqliteSaver(conn)
        finally:
            conn.close()
    else:
        from langgraph.checkpoint.postgres import PostgresSaver

        with fresh_database() as url, PostgresSaver.from_conn_string(url) as saver:
            saver.setup()
            yield saver


def paused_panel(app: Any, config: Any) -> dict[str, Any]:
    """The panel's state where the parent waits (its review point)."""
    state = app.get_state(config, subgraphs=True)
    assert state.next == ("panel",)
    sub = state.tasks[0].state
    assert sub.next == ("human",)
    values: dict[str, Any] = sub.values
    return values


def test_the_strict_saver_is_strict(
    user_saver: BaseCheckpointSaver[Any], request: pytest.FixtureRequest
) -> None:
    """The fixture's strict savers block a record no allowlist names (so the test can fail)."""
    blob = user_saver.serde.dumps_typed(Unlisted(x=1))
    back = user_saver.serde.loads_typed(blob)
    assert back == ({"x": 1} if "strict" in request.node.callspec.id else Unlisted(x=1))


def test_a_paused_pattern_resumes_on_a_users_saver(
    user_saver: BaseCheckpointSaver[Any], serde_events: list[dict[str, Any]]
) -> None:
    model = ScriptedChatModel(respond=lambda prompt: tool_reply("SolverReply", SOLVER))
    panel = build_solver_debate(model, agents=2, max_rounds=5, pause_after_round=True)
    app = (
        StateGraph(MessagesState)
        .add_node("panel", panel.compile(name="panel"))
        .add_edge(START, "panel")
        .add_edge("panel", END)
        .compile(checkpointer=user_saver)
    )
    config: Any = {"configurable": {"thread_id": "user"}}
    out = app.invoke({"messages": [HumanMessage(QUESTION)]}, config)
    replies = [
        hitl_response("approve"),
        {"interject": FIRST},
        hitl_response("respond", SECOND),
        hitl_response("reject", STOP),
    ]
    for rnd, reply in enumerate(replies, start=1):
        assert "__interrupt__" in out, rnd
        values = paused_panel(app, config)
        # Revived as records, not as the dicts a blocked type comes back as.
        assert [r.round for r in values["rounds"]] == list(range(1, rnd + 1))
        assert all(isinstance(r, RoundRecord) for r in values["rounds"])
        assert all(isinstance(t, Turn) for t in values["transcript"])
        assert values["rounds"][-1].answers == {"solver_1": "8", "solver_2": "8"}
        out = app.invoke(Command(resume=reply), config)

    assert "__interrupt__" not in out
    humans = [m.content for m in out["messages"] if isinstance(m, HumanMessage)]
    assert humans == [QUESTION, FIRST, SECOND, STOP]
    assert out["messages"][-1].content.startswith("The answer is 8")
    # Rounds 1-4 ran, two solvers each; the reject stopped the run before round 5. Each
    # interjection reached both solvers in the round after it.
    prompts = ["\n".join(str(m.content) for m in p) for p in model.prompts]
    assert len(prompts) == 8
    assert [i for i, p in enumerate(prompts) if FIRST in p] == [4, 5]
    assert [i for i, p in enumerate(prompts) if SECOND in p] == [6, 7]
    assert not any(STOP in p for p in prompts)
    assert serde_events == []
