"""A debate's outcome in a parent: named after the graph, handed back, failures as tool errors.

In-process on the scripted fake model (:mod:`tests.fake_model`): the panel's agents on
:class:`~tests.test_parent_streams.AnySchemaModel`, the apps' own agent (a swarm's
assistant, a ReAct agent) on a :class:`~tests.fake_model.ScriptedChatModel` that calls
the tool it is told to until a tool's reply is in its conversation, then answers
quoting it.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent
from langgraph_swarm import create_handoff_tool, create_swarm

from debategraph import as_tool, build_debate, build_group_chat, build_solver_debate
from debategraph.graphs.inputs import check_input
from debategraph.models import ModelSpec
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply
from tests.test_parent_streams import AnySchemaModel

pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
QUESTION = "What is 17 + 25?"


def boss(tool: str, args: dict[str, Any] | None = None) -> ScriptedChatModel:
    """An app's agent: calls ``tool`` until a tool replied since the user spoke, then answers."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        since = messages[max(i for i, m in enumerate(messages) if m.type == "human") :]
        if since[0].text == "Thanks!":
            return text_reply("Glad to help.")
        if not any(m.type == "tool" for m in since):
            return tool_reply(tool, dict(args or {}))
        said = [m for m in since if m.type in {"ai", "tool"} and m.text]
        quoted = [m.text for m in said if not m.text.startswith(("Successfully", "Transfer"))]
        return text_reply(f"Final: {quoted[-1]}")

    return ScriptedChatModel(respond=respond)


def test_the_outcome_is_one_message_named_after_the_compiled_graph() -> None:
    out = (
        build_debate(AnySchemaModel(), max_rounds=1, judge=True)
        .compile()
        .invoke({"topic": "Tea beats coffee"})
    )
    messages = out["messages"]
    assert [m.name for m in messages].count("debate") == 1  # the pattern's name by default
    outcome = messages[-1]
    assert outcome.name == "debate" and outcome.response_metadata["debategraph"]["agent"] == "judge"
    assert [m.name for m in messages].count("judge") == 1  # the judge's own turn, once


def test_a_group_chat_ends_in_an_outcome_message_too() -> None:
    chat = build_group_chat(
        AnySchemaModel(),
        agents=["Writer: writes.", "Reviewer: says APPROVED."],
        until=[r"regex:\bAPPROVED\b@Reviewer"],
        max_rounds=4,
    ).compile(name="haiku_chat")
    messages = chat.invoke({"task": "A haiku"})["messages"]
    assert messages[-1].name == "haiku_chat"
    assert messages[-1].text == messages[-2].text and messages[-2].name == "Reviewer"


def test_a_swarm_panel_hands_back_to_the_assistant() -> None:
    assistant_model = boss("transfer_to_panel")
    assistant = create_react_agent(
        assistant_model, [create_handoff_tool(agent_name="panel")], name="assistant"
    )
    panel = build_solver_debate(AnySchemaModel(), agents=2, max_rounds=1).compile(
        name="panel", hand_back="assistant"
    )
    app = create_swarm([assistant, panel], default_active_agent="assistant").compile(
        checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "swarm"}}
    out = app.invoke({"messages": [HumanMessage(QUESTION)]}, config)
    assert out["active_agent"] == "assistant"
    outcome = next(m for m in out["messages"] if m.name == "panel" and m.tool_calls)
    assert outcome.text.startswith("The answer is 42")
    handed = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.name for m in handed] == ["transfer_to_panel", "transfer_to_assistant"]
    assert out["messages"][-1].text == f"Final: {outcome.text}"
    assert len(assistant_model.prompts) == 2  # it handed off, then answered
    # The user's next turn goes to the assistant, not the panel.
    again = app.invoke({"messages": [HumanMessage("Thanks!")]}, config)
    assert again["messages"][-1].text == "Glad to help." and again["active_agent"] == "assistant"
    assert len(assistant_model.prompts) == 3


def test_hand_back_is_checked_when_the_graph_is_compiled() -> None:
    with pytest.raises(ValueError, match="hand_back must name the swarm's agent"):
        build_solver_debate(AnySchemaModel()).compile(hand_back="  ")


def test_a_model_failure_comes_back_as_the_tools_error() -> None:
    dead = ModelSpec(
        model="gone", base_url="http://127.0.0.1:9/v1", timeout_s=5, max_retries=0, patience_s=0
    )
    panel = as_tool(build_solver_debate(dead, agents=2, max_rounds=1).compile(name="panel"))
    agent = create_react_agent(boss("panel", {"question": QUESTION}), [panel])
    out = agent.invoke({"messages": [HumanMessage(f"Ask the panel: {QUESTION}")]})
    (result,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert result.status == "error" and result.name == "panel"
    assert result.text.startswith("agent solver_"), result.text
    assert "\n" not in result.text and "Traceback" not in result.text
    assert out["messages"][-1].text == f"Final: {result.text}"


@pytest.mark.parametrize("graph_input", [QUESTION, [QUESTION]])
def test_messages_may_be_one_string(graph_input: Any) -> None:
    check_input("solver_debate", {"messages": graph_input})
    graph = build_solver_debate(AnySchemaModel(), agents=2, max_rounds=1).compile()
    out = graph.invoke({"messages": graph_input})
    assert out["question"] == QUESTION
    assert out["messages"][-1].text.startswith("The answer is 42")


def test_messages_that_are_no_messages_are_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"^messages must be a string \(one human message\) or"):
        check_input("solver_debate", {"messages": 42})
