"""A debate inside a parent graph streams each turn once, and its events reach astream_events.

Each pattern runs as the one node of a ``MessagesState`` app, in-process on the scripted
fake model (:mod:`tests.fake_model`): prose replies are text, structured ones the tool
call their schema asks for. With ``stream_mode="messages", subgraphs=True`` each agent
turn is one stream entry (one message id, the turn's), named after its agent, with
readable text (a solver's reasoning and answer, not its JSON); the outcome comes once,
named after the graph. The round, vote and outcome events reach ``astream_events`` as
``on_custom_event``.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langgraph.graph import END, START, MessagesState, StateGraph

from debategraph import (
    build_debate,
    build_discussion,
    build_group_chat,
    build_meeting,
    build_solver_debate,
)
from tests.fake_model import ScriptedChatModel, example_of, text_reply, tool_reply

TOPIC = "Cities should ban cars downtown"
DOCUMENT = "# Rain\n\n## Abstract\n\nRain falls.\n\n## Method\n\nWe watched it."


class AnySchemaModel(ScriptedChatModel):
    """Answers any structured request with its schema's example, any other with text."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, Any]:
        """Bind the schema the call asks for: its reply is that schema's example."""
        return self.bind(asked=tools[0])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        asked = kwargs.get("asked")
        system = str(messages[0].content)
        if asked is None:
            said = "APPROVED: it is good." if "Reviewer" in system.split(".")[0] else "I argue so."
            reply = text_reply(said)
        else:
            function = asked["function"]
            params = function["parameters"]
            args = example_of(params, params.get("$defs", {}))
            if function["name"] == "SolverReply":
                args = {"reasoning": "17 + 25 = 42", "answer": "42", "confidence": 0.9}
            reply = tool_reply(function["name"], args)
        return ChatResult(generations=[ChatGeneration(message=reply)])


#: Each pattern, small, and the text of its first message.
PATTERNS: dict[str, tuple[Callable[[Any], Any], str]] = {
    "solver_debate": (lambda m: build_solver_debate(m, agents=2, max_rounds=2), "What is 17+25?"),
    "debate": (lambda m: build_debate(m, max_rounds=1, judge=True), TOPIC),
    "group_chat": (
        lambda m: build_group_chat(
            m,
            agents=["Writer: writes the haiku.", "Reviewer: reviews it; says APPROVED."],
            until=[r"regex:\bAPPROVED\b@Reviewer"],
            max_rounds=4,
        ),
        "Write a haiku about rain",
    ),
    "discussion": (lambda m: build_discussion(m, max_rounds=1), DOCUMENT),
    "meeting": (lambda m: build_meeting(m, max_rounds=1), TOPIC),
}


def in_app(sub: Any) -> Any:
    return (
        StateGraph(MessagesState)
        .add_node("panel", sub)
        .add_edge(START, "panel")
        .add_edge("panel", END)
        .compile()
    )


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_each_turn_streams_once_under_its_id_and_name(pattern: str) -> None:
    build, text = PATTERNS[pattern]
    app = in_app(build(AnySchemaModel()).compile(name="panel"))
    entries: list[tuple[Any, dict[str, Any]]] = []
    final: dict[str, Any] = {}
    for _, mode, chunk in app.stream(
        {"messages": [HumanMessage(text)]},
        stream_mode=["messages", "values"],
        subgraphs=True,
    ):
        if mode == "messages":
            entries.append(chunk)
        else:
            final = chunk
    messages = final["messages"]
    turns = [m for m in messages if isinstance(m, AIMessage)]
    # One entry per message the parent holds (its own input aside), none twice, no other.
    ids = Counter(message.id for message, _ in entries)
    assert ids == Counter(m.id for m in turns), (pattern, ids)
    outcome = turns[-1]
    assert outcome.name == "panel" and outcome.id.startswith("outcome-")
    for message, meta in entries:
        assert message.name or meta.get("lc_agent_name"), (pattern, message)
        assert message.text.strip(), (pattern, message)
        assert not message.text.lstrip().startswith("{"), (pattern, message)  # no raw JSON
    # An agent's turn streams under its own name, whether its text streamed or not.
    by_id = {m.id: m for m in turns}
    for message, meta in entries:
        assert (message.name or meta.get("lc_agent_name")) == by_id[message.id].name


def test_custom_events_reach_astream_events() -> None:
    build, text = PATTERNS["solver_debate"]
    app = in_app(build(AnySchemaModel()).compile(name="panel"))

    async def events() -> list[dict[str, Any]]:
        return [
            event
            async for event in app.astream_events({"messages": [HumanMessage(text)]}, version="v2")
            if event["event"] == "on_custom_event"
        ]

    seen = asyncio.run(asyncio.wait_for(events(), 60))
    names = [event["name"] for event in seen]
    assert names == ["round", "votes", "round", "votes", "outcome"], names
    assert [e["data"]["round"] for e in seen if e["name"] == "votes"] == [1, 2]
    (outcome,) = [e["data"] for e in seen if e["name"] == "outcome"]
    assert outcome["graph"] == "panel" and outcome["text"].startswith("The answer is 42")
