"""MCP both ways: ``debategraph mcp`` as a real MCP client sees it, and agents that use MCP tools.

One ``debategraph mcp`` process for the module, started by ``langchain-mcp-adapters``'
``MultiServerMCPClient`` over stdio against the stub model server, its session the
``mcp`` SDK's own client: the module's one conversation (:func:`conversation`) lists the
tools, calls each pattern's with a progress callback, sends bad inputs (each answered
with a tool error in one line, the server going on), and lets a LangGraph ReAct agent
call a debate through the tools ``langchain-mcp-adapters`` loads from that session. The
tests then read what it got. An agent of ours uses the tool of a tiny FastMCP server
(``tests/mcp_tool_server.py``), given in Python and in an agents file.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from debategraph import build_solver_debate
from debategraph.runs.account import Answered
from debategraph.runs.agents_file import read_agents_file
from debategraph.state.records import TOOL_STAGE, Participant
from tests.conftest import cli, solvers_answer_18
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply
from tests.groups import one_worker
from tests.openai_stub import StubOpenAIServer
from tests.test_solver_agents import answer, own_model, run

pytestmark = [pytest.mark.timeout(240), one_worker(__name__)]

#: Each pattern's text, and the rounds its call asks for.
CALLS = {
    "solver_debate": ({"question": "What is 6 * 3?", "rounds": 2, "agents": 2}),
    "debate": ({"topic": "Tea beats coffee", "rounds": 1}),
    "discussion": ({"document": "# A paper\n\n## Method\nWe count clips.", "rounds": 1}),
    "group_chat": ({"task": "Write a haiku about rain", "rounds": 2}),
    "meeting": ({"topic": "Adopt a four-day week?", "rounds": 1}),
}
#: Bad inputs, each with the one line its tool error must be.
BAD = {
    "rounds 0": (
        "solver_debate",
        {"question": "x", "rounds": 0},
        "solver_debate: field 'rounds': Input should be greater than or equal to 1 (got 0)",
    ),
    "an unknown field": (
        "debate",
        {"topic": "x", "colour": "red"},
        "debate: unknown field 'colour': allowed are topic, rounds, model",
    ),
    "an empty topic": ("meeting", {"topic": "  "}, "topic is empty"),
    "no text": ("group_chat", {}, "group_chat: field 'task' is missing"),
    "a model the endpoint does not serve": (
        "debate",
        {"topic": "x", "model": "gpt-4o", "rounds": 1},
        "--model: model 'gpt-4o' is not served by",
    ),
    "an unknown tool": ("vote", {"question": "x"}, "unknown tool 'vote': the tools are"),
}


@dataclass
class Conversation:
    """What the MCP client got from ``debategraph mcp``."""

    db: Path
    tools: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    progress: dict[str, list[tuple[float, float | None, str | None]]] = field(default_factory=dict)
    errors: dict[str, Any] = field(default_factory=dict)
    agent_messages: list[BaseMessage] = field(default_factory=list)


def react_model() -> ScriptedChatModel:
    """A ReAct agent's model: it asks the panel (a solver debate), then reports its answer."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:
            return tool_reply("solver_debate", {"question": "What is 9 + 9?", "rounds": 1})
        return text_reply(f"The panel says: {results[-1].text}")

    return ScriptedChatModel(respond=respond)


async def talk(stub: StubOpenAIServer, db: Path) -> Conversation:
    from langchain.agents import create_agent
    from langchain_mcp_adapters.client import MultiServerMCPClient
    from langchain_mcp_adapters.tools import load_mcp_tools

    args = ["-m", "debategraph.cli", "mcp", "--model", "stub", "--base-url", stub.url]
    args += ["--db", str(db), "--max-retries", "0"]
    servers: Any = {
        "debategraph": {
            "transport": "stdio",
            "command": sys.executable,
            "args": args,
            "env": dict(os.environ),
        }
    }
    seen = Conversation(db)
    async with MultiServerMCPClient(servers).session("debategraph") as session:
        seen.tools = {t.name: t for t in (await session.list_tools()).tools}
        for label, (tool, arguments, _) in BAD.items():
            seen.errors[label] = await session.call_tool(tool, arguments)
        for tool, arguments in CALLS.items():
            steps = seen.progress.setdefault(tool, [])

            async def progress(done: float, total: float | None, message: str | None) -> None:
                steps.append((done, total, message))  # noqa: B023  # awaited in this loop

            seen.results[tool] = await session.call_tool(
                tool, arguments, progress_callback=progress
            )
        agent = create_agent(react_model(), await load_mcp_tools(session))
        out = await agent.ainvoke({"messages": [("user", "What is 9 + 9? Ask the panel.")]})
        seen.agent_messages = out["messages"]
    return seen


@pytest.fixture(scope="module")
def conversation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Conversation]:
    db = tmp_path_factory.mktemp("mcp") / "debates.sqlite"
    with StubOpenAIServer(solvers_answer_18) as stub:
        yield asyncio.run(talk(stub, db))


def test_each_pattern_is_a_tool_described_by_its_registry_line(
    conversation: Conversation,
) -> None:
    from debategraph import registry

    assert list(conversation.tools) == registry.names()
    for entry in registry.entries():
        tool = conversation.tools[entry.name]
        assert tool.description == entry.description
        text = entry.schemas().text
        schema = tool.inputSchema
        assert schema["required"] == [text] and schema["additionalProperties"] is False
        assert all(p.get("description") for p in schema["properties"].values()), schema
        assert tool.outputSchema["properties"].keys() == Answered.model_fields.keys()
    assert "agents" in conversation.tools["solver_debate"].inputSchema["properties"]
    assert "agents" not in conversation.tools["debate"].inputSchema["properties"]


def test_each_tool_answers_with_the_outcome_its_account_and_a_listed_thread(
    conversation: Conversation,
) -> None:
    listed = {
        row["thread_id"]: row
        for row in json.loads(cli("threads", "--db", str(conversation.db), "--json"))
    }
    for tool, result in conversation.results.items():
        assert not result.isError, (tool, result.content)
        answered = Answered.model_validate(result.structuredContent)
        assert answered.pattern == tool and answered.answer.strip(), answered
        assert answered.rounds >= 1 and answered.termination_reason != "unknown", answered
        assert result.content[0].text.startswith(answered.answer)
        assert f"thread {answered.thread_id}" in result.content[0].text
        row = listed[answered.thread_id]
        assert (row["pattern"], row["status"]) == (tool, "finished"), row
    solved = Answered.model_validate(conversation.results["solver_debate"].structuredContent)
    assert (solved.answer, solved.votes, solved.agreement) == (
        "The answer is 18: 2 of 2 solvers gave it (plurality).",
        {"18": 2},
        1.0,
    )
    assert (
        solved.account
        == "2 rounds of at most 2; votes 18 x2 (agreement 1.00); ended: rounds_completed"
    )
    shown = cli("show", solved.thread_id, "--db", str(conversation.db), "--json")
    assert json.loads(shown)["answer"] == "18"


def test_progress_comes_round_by_round(conversation: Conversation) -> None:
    assert conversation.progress["solver_debate"] == [
        (0.0, 2.0, "round 1 of 2 opened"),
        (0.5, 2.0, "round 1 of 2: votes 18 x2"),
        (1.0, 2.0, "round 2 of 2 opened"),
        (1.5, 2.0, "round 2 of 2: votes 18 x2"),
        (2.0, 2.0, "done: rounds_completed"),
    ]
    chat = conversation.progress["group_chat"]
    assert [m for _, _, m in chat][:2] == ["turn 1 of 2 opened", "turn 2 of 2 opened"]
    for tool, steps in conversation.progress.items():
        done = [p for p, _, _ in steps]
        assert done == sorted(set(done)) and steps[-1][2].startswith("done: "), (tool, steps)


@pytest.mark.parametrize("label", list(BAD))
def test_a_bad_input_is_the_tools_error_in_one_line(conversation: Conversation, label: str) -> None:
    result = conversation.errors[label]
    (content,) = result.content
    assert result.isError and "\n" not in content.text and "Traceback" not in content.text
    assert content.text.startswith(BAD[label][2]), content.text


def test_a_react_agent_asks_a_debate_through_langchain_mcp_adapters(
    conversation: Conversation,
) -> None:
    calls = [m for m in conversation.agent_messages if isinstance(m, ToolMessage)]
    assert [m.name for m in calls] == ["solver_debate"]
    assert calls[0].text.startswith("The answer is 18: 4 of 4 solvers gave it"), calls[0].text
    assert conversation.agent_messages[-1].text.startswith("The panel says: The answer is 18")


# -- agents that use MCP tools ---------------------------------------------------------------

TOOL_SERVER = Path(__file__).with_name("mcp_tool_server.py")


def adds_then_answers(solver: str) -> ScriptedChatModel:
    """A solver's model that asks the MCP server's ``add`` once, then answers with its sum."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        step = (len(model.prompts) - 1) % 3
        if step == 0:
            return tool_reply("add", {"a": 48, "b": 24})
        if step == 1:
            return text_reply(f"The server says {results[-1].content}.")
        return answer(solver, "72")

    model = ScriptedChatModel(respond=respond)
    return model


def test_agents_use_mcp_tools_given_in_python_and_in_an_agents_file(tmp_path: Path) -> None:
    from langchain_mcp_adapters.client import MultiServerMCPClient

    server = {"command": sys.executable, "args": [str(TOOL_SERVER)]}
    loaded = asyncio.run(
        MultiServerMCPClient({"arith": {"transport": "stdio", **server}}).get_tools()
    )
    roster = tmp_path / "agents.yaml"
    entry = f"{{command: {sys.executable}, args: [{TOOL_SERVER}], tools: [add]}}"
    roster.write_text(f"- name: Bo\n  tools:\n    - {entry}\n")
    (bo,) = read_agents_file(str(roster), Participant).agents
    agents: list[Any] = [
        {"name": "Ada", "model": adds_then_answers("Ada"), "tools": loaded},
        {**bo, "model": adds_then_answers("Bo")},
        "Cy",
    ]
    out = run(build_solver_debate(own_model("Cy"), agents=agents, max_rounds=1))
    for solver in ("Ada", "Bo"):
        call, turn = [t for t in out["transcript"] if t.agent == solver]
        assert (call.role, call.stage, call.tool, call.arguments) == (
            "tool",
            TOOL_STAGE,
            "add",
            '{"a": 48, "b": 24}',
        )
        assert (call.content, call.reason) == ("48 + 24 = 72", None)
        assert (turn.role, turn.round) == ("agent", 1)
    assert out["answer"] == "72"


def test_an_agents_files_mcp_server_entry_is_checked_in_one_line(tmp_path: Path) -> None:
    from debategraph.errors import UsageError

    roster = tmp_path / "agents.yaml"
    cases = {
        "{cmd: python}": ": unknown field 'cmd': allowed are command, args, url, tools",
        "{url: 'http://x/mcp', command: x}": ": give the server's command (stdio) or its url",
        "{url: 'ftp://x'}": " field 'url': String should match pattern",
    }
    for entry, says in cases.items():
        roster.write_text(f"- name: Bo\n  tools: [{entry}]\n")
        with pytest.raises(UsageError) as refused:
            read_agents_file(str(roster), Participant)
        assert f"line 1: agent 'Bo': MCP server entry{says}" in str(refused.value), refused.value
