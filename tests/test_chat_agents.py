"""Open agents in the group chat: each participant its own model, tools or agent; officials.

Fake models per participant (unit), two and more stub endpoints over HTTP (integration),
a ``create_react_agent`` with a tool chatting as a participant, an agent of one's own
that fails, the LLM selector and judge on models of their own, and ``--agents-file``
through the CLI (per-agent models kept across a resume; a malformed file's one line).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from debategraph import Participant, build_group_chat, recursion_limit
from debategraph.cli.patterns.group_chat import PATTERN
from debategraph.runs.results import result_of
from debategraph.state.records import TOOL_STAGE, Turn
from debategraph.strategies.selection import SelectionContext, selector_prompt
from debategraph.strategies.termination import RoundOutcome, check_steps, llm, regex
from tests.conftest import one_error_line, run_cli, stub_args
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply
from tests.openai_stub import StubOpenAIServer

TASK = "Write a haiku about rain"
APPROVAL = r"regex:\bAPPROVED\b@Reviewer"
SPEAKER_RE = re.compile(r"You are (\w+), one of the participants")
SELECTOR_SYSTEM = "You choose who speaks next"
JUDGE_SYSTEM = "You watch a conversation"


def speaker_of(system: str) -> str:
    found = SPEAKER_RE.search(system)
    return found.group(1) if found else "?"


class Voice:
    """One participant's own fake model: its n-th message, and every prompt it got."""

    def __init__(self, name: str, say: Callable[[int], str] | None = None) -> None:
        self.name = name
        self.say = say or (lambda n: f"{name} message {n}")
        self.model = ScriptedChatModel(respond=self.respond)

    @property
    def prompts(self) -> list[list[BaseMessage]]:
        return self.model.prompts

    def respond(self, messages: list[BaseMessage]) -> AIMessage:
        assert speaker_of(str(messages[0].content)) == self.name, messages[0].content
        return text_reply(self.say(len(self.prompts)))


def reviewer_approving_at(n: int) -> Voice:
    return Voice("Reviewer", lambda k: "APPROVED: it scans." if k >= n else f"Cut line {k}.")


def unused() -> ScriptedChatModel:
    """The chat's own model, which no call may reach (it has no reply)."""
    return ScriptedChatModel(responses=[])


def invoke(graph: Any, thread: str = "t") -> dict[str, Any]:
    cfg = {"configurable": {"thread_id": thread}, "recursion_limit": recursion_limit(graph)}
    out: dict[str, Any] = graph.invoke({"task": TASK}, cfg)
    return out


def transcript(graph: Any, thread: str = "t") -> list[Turn]:
    values = graph.get_state({"configurable": {"thread_id": thread}}).values
    return list(values["transcript"])


def prompt_text(prompt: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in prompt)


# -- each participant its own model --------------------------------------------------


def test_each_participant_calls_its_own_model_and_the_chats_model_none() -> None:
    writer, reviewer = Voice("Writer"), reviewer_approving_at(2)
    agents = [
        Participant(name="Writer", instructions="writes the haiku", model=writer.model),
        {"name": "Reviewer", "instructions": "says APPROVED", "model": reviewer.model},
    ]
    chat = unused()
    graph = build_group_chat(chat, agents=agents, until=[APPROVAL], max_rounds=6)
    out = invoke(graph.compile(checkpointer=InMemorySaver()))
    assert out["termination_reason"] == "matched"
    assert (len(writer.prompts), len(reviewer.prompts), len(chat.prompts)) == (2, 2, 0)
    assert set(out["usage_by_agent"]) == {"Writer", "Reviewer"}
    assert out["usage_by_model"]["ScriptedChatModel"].calls == 4


def test_two_endpoints_over_http_each_get_only_their_participants_calls() -> None:
    def replies(body: dict[str, Any]) -> str:
        who = speaker_of(str(body["messages"][0]["content"]))
        drafts = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if who == "Reviewer":
            return "APPROVED, it scans." if drafts >= 1 else "Too long."
        return f"Rain on tin roofs, draft {drafts + 1}"

    with StubOpenAIServer(replies) as first, StubOpenAIServer(replies) as second:
        agents = [
            {"name": "Writer", "instructions": "writes", "model": f"stub@{first.url}"},
            {"name": "Reviewer", "instructions": "reviews", "model": f"stub@{second.url}"},
        ]
        graph = build_group_chat(unused(), agents=agents, until=[APPROVAL], max_rounds=8)
        compiled = graph.compile(checkpointer=InMemorySaver())
        out = invoke(compiled)
        sent = {
            "first": [speaker_of(r["messages"][0]["content"]) for r in first.requests],
            "second": [speaker_of(r["messages"][0]["content"]) for r in second.requests],
        }
        turns = [t for t in transcript(compiled) if t.role == "agent"]
        labels = {t.agent: t.model for t in turns}
        assert labels == {"Writer": f"stub@{first.url}", "Reviewer": f"stub@{second.url}"}
        by_model = {k: u.calls for k, u in out["usage_by_model"].items()}
        assert by_model == {f"stub@{first.url}": 2, f"stub@{second.url}": 2}
    assert out["termination_reason"] == "matched"
    assert sent == {"first": ["Writer", "Writer"], "second": ["Reviewer", "Reviewer"]}


# -- tools and agents of one's own ---------------------------------------------------


@tool
def count_syllables(line: str) -> int:
    """Count the syllables of a line (roughly: its vowel groups)."""
    return len(re.findall(r"[aeiouy]+", line.lower()))


def react_model() -> ScriptedChatModel:
    """A model that first asks for the syllable count, then writes its message."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        if messages[-1].type == "tool":
            return text_reply(f"Rain on tin roofs ({messages[-1].content} syllables).")
        call = {"name": "count_syllables", "args": {"line": "rain on tin roofs"}, "id": "c1"}
        return AIMessage(content="", tool_calls=[call])

    return ScriptedChatModel(respond=respond)


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved:DeprecationWarning")
def test_a_react_agent_with_a_tool_chats_and_its_tool_calls_are_recorded_before_it() -> None:
    from langgraph.prebuilt import create_react_agent

    writer = create_react_agent(react_model(), [count_syllables])
    reviewer = reviewer_approving_at(2)
    agents = [
        Participant(name="Writer", instructions="writes", agent=writer),
        Participant(name="Reviewer", instructions="reviews", model=reviewer.model),
    ]
    graph = build_group_chat(unused(), agents=agents, until=[APPROVAL], max_rounds=6)
    compiled = graph.compile(checkpointer=InMemorySaver())
    out = invoke(compiled)
    turns = transcript(compiled)
    assert [(t.agent, t.role) for t in turns] == [
        ("user", "user"),
        ("Writer", "tool"),
        ("Writer", "agent"),
        ("Reviewer", "agent"),
        ("Writer", "tool"),
        ("Writer", "agent"),
        ("Reviewer", "agent"),
    ]
    call, message = turns[1], turns[2]
    assert (call.stage, call.tool, call.content, call.round) == (
        TOOL_STAGE,
        "count_syllables",
        "4",
        1,
    )
    assert json.loads(call.arguments or "") == {"line": "rain on tin roofs"}
    assert message.content == "Rain on tin roofs (4 syllables)."
    assert message.model == "agent:LangGraph" and turns[3].model == "ScriptedChatModel"
    # Tool calls are no turns: the chat took four, sequentially, and ended on approval.
    assert out["termination_reason"] == "matched"
    assert [s.agent for s in out["selections"]] == ["Writer", "Reviewer", "Writer", "Reviewer"]
    # The reviewer reads the writer's messages, never its tool calls.
    for prompt in reviewer.prompts:
        text = prompt_text(prompt)
        assert "Rain on tin roofs (4 syllables)." in text
        assert "count_syllables" not in text and "Writer: 4" not in text
    assert all(m.type != "tool" for p in reviewer.prompts for m in p)


def test_a_participant_with_the_calculator_records_its_calls() -> None:
    def respond(messages: list[BaseMessage]) -> AIMessage:
        if messages[-1].type == "tool":
            return text_reply(f"Five lines of 7 syllables: {messages[-1].content} in all.")
        return tool_reply("calculator", {"expression": "5 * 7"})

    counter = ScriptedChatModel(respond=respond)
    reviewer = reviewer_approving_at(1)
    agents = [
        {"name": "Counter", "instructions": "counts", "model": counter, "tools": ["calculator"]},
        {"name": "Reviewer", "instructions": "reviews", "model": reviewer.model},
    ]
    graph = build_group_chat(unused(), agents=agents, until=[APPROVAL], max_rounds=4)
    compiled = graph.compile(checkpointer=InMemorySaver())
    invoke(compiled)
    call, message = transcript(compiled)[1:3]
    assert (call.role, call.agent, call.tool, call.content) == (
        "tool",
        "Counter",
        "calculator",
        "35",
    )
    assert message.content == "Five lines of 7 syllables: 35 in all."
    assert "calculator" not in prompt_text(reviewer.prompts[0])


def test_an_agent_that_returns_no_messages_loses_its_turn_and_the_chat_goes_on() -> None:
    silent = RunnableLambda(lambda inputs: {"messages": []}, name="silent")
    reviewer = Voice("Reviewer")
    agents = [
        Participant(name="Writer", instructions="writes", agent=silent),
        Participant(name="Reviewer", instructions="reviews", model=reviewer.model),
    ]
    graph = build_group_chat(unused(), agents=agents, max_rounds=4)
    compiled = graph.compile(checkpointer=InMemorySaver())
    out = invoke(compiled)
    assert out["termination_reason"] == "max_turns"
    turns = [t for t in transcript(compiled) if t.role == "agent"]
    assert [(t.agent, t.content, t.reason) for t in turns] == [
        ("Writer", "", "the agent returned no messages"),
        ("Reviewer", "Reviewer message 1", None),
        ("Writer", "", "the agent returned no messages"),
        ("Reviewer", "Reviewer message 2", None),
    ]
    assert turns[0].model == "agent:silent"
    assert [s.agent for s in out["selections"]] == ["Writer", "Reviewer"] * 2


def test_agents_bad_model_tools_or_agent_are_refused_when_the_graph_is_built() -> None:
    for bad, says in [
        ({"name": "Writer", "tools": ["abacus"]}, "abacus"),
        ({"name": "Writer", "agent": 42}, "is not a LangChain Runnable"),
        ({"name": "Writer", "model": 42}, "is not a model spec"),
        ({"name": "Writer", "color": "red"}, "bad or missing: color"),
    ]:
        with pytest.raises(ValueError, match=says):
            build_group_chat(unused(), agents=[bad, "Reviewer: reviews"])


# -- officials: the selector and the judge -------------------------------------------


def test_an_llm_selector_with_its_own_model_gets_the_selector_calls_only() -> None:
    picks = iter(["Reviewer", "the Writer, please", "Reviewer"])
    selector = ScriptedChatModel(respond=lambda messages: text_reply(next(picks)))
    writer, reviewer = Voice("Writer"), reviewer_approving_at(2)
    agents = [
        {"name": "Writer", "instructions": "writes", "model": writer.model},
        {"name": "Reviewer", "instructions": "reviews", "model": reviewer.model},
    ]
    graph = build_group_chat(
        unused(),
        agents=agents,
        selection="llm",
        first_speaker="Writer",
        until=[APPROVAL],
        max_rounds=6,
        officials=[{"name": "selector", "model": selector}],
    )
    out = invoke(graph.compile(checkpointer=InMemorySaver()))
    assert [(s.agent, s.method) for s in out["selections"]] == [
        ("Writer", "initial"),
        ("Reviewer", "llm"),
        ("Writer", "llm"),
        ("Reviewer", "llm"),
    ]
    assert len(selector.prompts) == 3
    assert all(str(p[0].content).startswith(SELECTOR_SYSTEM) for p in selector.prompts)
    assert (len(writer.prompts), len(reviewer.prompts)) == (2, 2)
    assert out["usage_by_agent"]["selector"].calls == 3


def test_an_llm_judge_with_its_own_model_gets_the_judge_calls_only() -> None:
    verdicts = iter([False, True])
    judge = ScriptedChatModel(
        respond=lambda messages: tool_reply(
            "Judgement", {"done": next(verdicts), "reason": "the reviewer is happy"}
        )
    )
    writer, reviewer = Voice("Writer"), Voice("Reviewer")
    graph = build_group_chat(
        unused(),
        agents=[
            Participant(name="Writer", model=writer.model),
            Participant(name="Reviewer", model=reviewer.model),
        ],
        until=["llm:Has the reviewer approved?@Reviewer"],
        max_rounds=8,
        officials=[{"name": "Judge", "model": judge}],
    )
    out = invoke(graph.compile(checkpointer=InMemorySaver()))
    assert out["termination_reason"] == "judged"
    assert len(judge.prompts) == 2
    assert all(str(p[0].content).startswith(JUDGE_SYSTEM) for p in judge.prompts)
    assert (len(writer.prompts), len(reviewer.prompts)) == (2, 2)
    assert out["usage_by_agent"]["judge"].calls == 2


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"officials": [{"name": "moderator", "model": "m"}]}, "has no official 'moderator'"),
        ({"officials": [{"name": "selector", "model": "m"}]}, "selection is 'sequential'"),
        ({"officials": [{"name": "judge", "model": "m"}]}, "no llm: termination asks a judge"),
        (
            {"selection": "llm", "officials": [{"name": "selector"}, {"name": "Selector"}]},
            "given twice",
        ),
        ({"officials": {"name": "selector"}}, "must be a list"),
    ],
)
def test_officials_are_checked(settings: dict[str, Any], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        build_group_chat(unused(), agents=["Writer: w", "Reviewer: r"], **settings)


# -- the conversation's view leaves tool calls out -------------------------------------


def said(agent: str, content: str, role: str = "agent") -> Turn:
    return Turn(agent=agent, role=role, content=content, stage="chat", round=1)  # type: ignore[arg-type]


def finished(steps: Any) -> Any:
    """What steps that make no call return."""
    try:
        next(steps)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("a step was yielded")


def test_strategies_take_no_tool_call_for_a_message_or_a_turn() -> None:
    turns = [
        said("Writer", "draft one"),
        said("Reviewer", "cut it"),
        said("Writer", "draft two"),
        said("Reviewer", "APPROVED", role="tool"),  # a tool's result is no message
    ]
    context = SelectionContext(names=("Writer", "Reviewer"), turns=turns)
    assert (context.last_speaker, context.in_a_row()) == ("Writer", 1)
    assert context.after(context.last_speaker) == "Reviewer"
    prompt = prompt_text(selector_prompt(context, keep_last=2))
    assert "Reviewer: cut it" in prompt and "APPROVED" not in prompt
    outcome = RoundOutcome(round=3, turns=turns)
    assert finished(check_steps(regex("APPROVED", "Reviewer"), outcome)) is None
    assert finished(check_steps(regex("draft two", "Writer"), outcome)) is not None

    asked: list[str] = []

    def ask(schema: type[Any], messages: list[BaseMessage]) -> Any:
        asked.append(prompt_text(messages))
        return SimpleNamespace(value=None)
        yield

    assert finished(check_steps(llm("Approved?", "Writer"), outcome, ask)) is None
    assert len(asked) == 1 and "draft two" in asked[0] and "APPROVED" not in asked[0]
    assert finished(check_steps(llm("Approved?", "Reviewer"), outcome, ask)) is None
    assert len(asked) == 1  # the judge of the reviewer waits for the reviewer's message


# -- the CLI: --agents-file -----------------------------------------------------------


class Endpoint:
    """A stub endpoint's replies for the chat's agents and its selector."""

    def __init__(self) -> None:
        self.selections = 0

    def __call__(self, body: dict[str, Any]) -> str:
        system = str(body["messages"][0]["content"])
        if system.startswith(SELECTOR_SYSTEM):
            self.selections += 1
            return "Reviewer" if self.selections % 2 else "I pick Writer."
        who = speaker_of(system)
        drafts = sum(1 for m in body["messages"] if "Rain on tin" in str(m.get("content")))
        if who == "Reviewer":
            return "APPROVED, it scans." if drafts >= 2 else "Too long."
        return f"Rain on tin roofs, draft {drafts + 1}"


@pytest.fixture
def endpoints() -> Iterator[dict[str, StubOpenAIServer]]:
    names = ("writer", "reviewer", "selector", "run")
    servers = {n: StubOpenAIServer(Endpoint()) for n in names}
    for server in servers.values():
        server.start()
    try:
        yield servers
    finally:
        for server in servers.values():
            server.stop()


def agents_yaml(servers: dict[str, StubOpenAIServer]) -> str:
    return (
        "agents:\n"
        "  - name: Writer\n"
        "    instructions: writes haiku\n"
        f"    model: stub@{servers['writer'].url}\n"
        "  - name: Reviewer\n"
        "    instructions: says APPROVED when it is good\n"
        "    model:\n"
        "      model: stub\n"
        f"      base_url: {servers['reviewer'].url}\n"
        "      temperature: 0\n"
        "  - name: selector\n"
        f"    model: stub@{servers['selector'].url}\n"
    )


def test_cli_agents_file_gives_each_agent_and_the_selector_its_model_across_a_resume(
    endpoints: dict[str, StubOpenAIServer], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(agents_yaml(endpoints))
    db = str(tmp_path / "c.sqlite")
    args = ["chat", TASK, "--agents-file", str(path), "--select", "llm", "--first", "Writer"]
    args += ["--until", APPROVAL, "--rounds", "8", "--pause-after-round", "--thread", "m"]
    code, out, err = run_cli([*args, "--json", *stub_args(endpoints["run"], db)], capsys)
    assert code == 0, err
    assert json.loads(out)["status"] == "waiting"
    assert len(endpoints["writer"].requests) == 1 and not endpoints["reviewer"].requests
    # Each resume rebuilds the chat from the settings stored with the thread.
    while json.loads(out).get("status") == "waiting":
        code, out, err = run_cli(["resume", "m", "--db", db, "--approve", "--json"], capsys)
        assert code == 0, err
    result = json.loads(out)
    assert result["termination_reason"] == "matched"
    sent = {
        name: [
            "selector"
            if str(r["messages"][0]["content"]).startswith(SELECTOR_SYSTEM)
            else speaker_of(str(r["messages"][0]["content"]))
            for r in server.requests
        ]
        for name, server in endpoints.items()
    }
    assert sent == {
        "writer": ["Writer", "Writer"],
        "reviewer": ["Reviewer", "Reviewer"],
        "selector": ["selector"] * 3,
        "run": [],
    }
    assert endpoints["reviewer"].requests[0]["temperature"] == 0
    assert [m["agent"] for m in result["transcript"]] == [
        "user",
        "Writer",
        "Reviewer",
        "Writer",
        "Reviewer",
    ]
    writer_model = f"stub@{endpoints['writer'].url}"
    assert set(result["usage_by_model"]) == {
        writer_model,
        f"stub@{endpoints['reviewer'].url}",
        f"stub@{endpoints['selector'].url}",
    }
    assert result["usage_by_agent"]["selector"]["calls"] == 3
    code, out, _ = run_cli(["show", "m", "--db", db], capsys)
    assert code == 0 and writer_model in out


def test_cli_agents_file_settings_hold_the_entries_as_given(
    endpoints: dict[str, StubOpenAIServer], tmp_path: Path
) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(agents_yaml(endpoints))
    launch = PATTERN.command(TASK, agents_file=str(path), select="llm", agent=["Editor: edits"])
    assert [a if isinstance(a, str) else a["name"] for a in launch.settings["agents"]] == [
        "Editor: edits",
        "Writer",
        "Reviewer",
    ]
    assert launch.settings["officials"] == [
        {"name": "selector", "model": f"stub@{endpoints['selector'].url}"}
    ]
    json.dumps(launch.settings)  # stored with the thread
    assert PATTERN.described.describe(launch.settings).startswith(
        "Editor, Writer, Reviewer, llm selection"
    )


def test_cli_agents_file_of_names_and_instructions_reads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text("- Writer: writes haiku\n- name: Reviewer\n  instructions: reviews\n- Editor\n")
    launch = PATTERN.command(TASK, agents_file=str(path))
    assert launch.settings["agents"] == [
        "Writer: writes haiku",
        {"name": "Reviewer", "instructions": "reviews"},
        "Editor",
    ]
    assert "officials" not in launch.settings
    assert PATTERN.described.describe(launch.settings).startswith(
        "Writer, Reviewer, Editor, sequential"
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            "- name: Writer\n  instructions: w\n- name: Reviewer\n  max_tool_calls: many\n",
            "line 3: field 'max_tool_calls'",
        ),
        (
            "- name: Writer\n- name: Reviewer\n  toolz: [calculator]\n",
            "line 2: unknown field 'toolz'",
        ),
        (
            "- name: Writer\n  tools: [abacus]\n- name: Reviewer\n",
            "line 1: agent 'Writer'",
        ),
        (
            "- name: Writer\n- name: Reviewer\n- name: judge\n  model: {model: m, api_key: k}\n",
            "line 3: agent 'judge'",
        ),
        ("- name: Writer\n- name: writer\n", "line 2: two agents are named 'writer'"),
    ],
)
def test_cli_a_malformed_agents_file_is_one_line_naming_file_line_and_field(
    text: str,
    says: str,
    endpoints: dict[str, StubOpenAIServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(text)
    args = ["chat", TASK, "--agents-file", str(path)]
    code, _, err = run_cli([*args, *stub_args(endpoints["run"], tmp_path / "c.sqlite")], capsys)
    line = one_error_line(err)
    assert code == 2
    assert f"--agents-file {path} {says}" in line
    assert "api_key: k" not in line and all(not s.requests for s in endpoints.values())


def test_cli_an_official_given_but_off_is_refused_in_one_line(
    endpoints: dict[str, StubOpenAIServer], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(agents_yaml(endpoints))
    args = ["chat", TASK, "--agents-file", str(path)]  # sequential selection
    code, _, err = run_cli([*args, *stub_args(endpoints["run"], tmp_path / "c.sqlite")], capsys)
    assert code == 2
    assert "official 'selector' is given, but selection is 'sequential'" in one_error_line(err)


def test_cli_result_lists_the_tool_calls() -> None:
    call = Turn(
        agent="Writer",
        role="tool",
        content="35",
        stage=TOOL_STAGE,
        round=1,
        tool="calculator",
        arguments='{"expression": "5 * 7"}',
    )
    values = {"task": TASK, "transcript": [call, said("Writer", "35 in all")]}
    summary = result_of(PATTERN.described, "t1", values, 1.0)
    assert summary["turns"] == 1
    assert [m["content"] for m in summary["transcript"]] == ["35 in all"]
    assert summary["tool_calls"] == [
        {
            "agent": "Writer",
            "round": 1,
            "tool": "calculator",
            "arguments": '{"expression": "5 * 7"}',
            "result": "35",
            "error": None,
        }
    ]
    assert "tool_calls" not in result_of(
        PATTERN.described, "t1", {"task": TASK, "transcript": []}, 1.0
    )
