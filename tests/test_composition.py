"""A debate is an agent: each pattern inside the LangGraph apps people build, over HTTP.

Every model call here goes through ``langchain-openai`` to the stub server
(``tests/openai_stub.py``): the patterns' agents call model ``stub``, the apps' own
agents (a supervisor, a ReAct agent, a swarm's assistant) call model ``boss``, whose
replies are scripted from the conversation it is sent. The four ways: a node of a
``MessagesState`` graph, an agent of ``langgraph-supervisor`` and ``langgraph-swarm``, a
tool of ``create_react_agent``; and, inside a parent, a pause after a round resumed with
an interjection, streams, a parent's own context schema, and the drawing Studio shows.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph.types import Command
from langgraph_supervisor import create_supervisor
from langgraph_swarm import create_handoff_tool, create_swarm

from debategraph import (
    as_tool,
    build_debate,
    build_discussion,
    build_group_chat,
    build_meeting,
    build_solver_debate,
    recursion_limit,
)
from debategraph.models import ModelSpec
from debategraph.nodes.review import review_request
from tests.groups import one_worker
from tests.openai_stub import StubOpenAIServer, StubReply, default_responder, schema_of

QUESTION = "What is 17 + 25?"
TOPIC = "Cities should ban cars downtown"
TASK = "Write a haiku about rain"
DOCUMENT = "# Rain\n\n## Abstract\n\nRain falls.\n\n## Method\n\nWe watched it."
NOTE = "Please check the units."
PATTERN_CALL = "stub"

# create_react_agent is what langgraph-supervisor, langgraph-swarm and this issue name;
# LangGraph 1.x marks it as moved to langchain.agents (not a dependency here).
pytestmark = [
    pytest.mark.filterwarnings("ignore:create_react_agent has been moved"),
    one_worker(__name__),
]
BOSS = "boss"


class Stub:
    """One stub server for the patterns' agents and the apps' own agents.

    ``boss`` requests (a supervisor, a ReAct agent, a swarm's assistant) call the tool
    named by :attr:`boss_tool` with :attr:`boss_args` until a tool result is in the
    conversation, then answer in words, quoting that result. Pattern requests: solvers
    answer 42, prose gets a short text (the reviewer of a chat says APPROVED).
    """

    def __init__(self) -> None:
        self.boss_tool = "transfer_to_panel"
        self.boss_args: dict[str, Any] = {}
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.server = StubOpenAIServer(self.respond)

    def respond(self, body: dict[str, Any]) -> Any:
        with self._lock:
            self.requests.append(body)
        if body.get("model") == BOSS:
            return self.boss(body)
        if schema_of(body) in {"SolverReply", "ChoiceReply"}:
            return {"reasoning": "17 + 25 = 42", "answer": "42", "confidence": 0.9}
        if schema_of(body) is not None:
            return default_responder(body)
        system = str(body["messages"][0].get("content", ""))
        if "Reviewer" in system.split(".")[0]:
            return "APPROVED: the haiku is good."
        return "Ann argues that traffic and noise fall when cars leave."

    def boss(self, body: dict[str, Any]) -> Any:
        messages = body["messages"]
        results = [m for m in messages if m.get("role") == "tool"]
        if results:
            said = [
                m
                for m in messages
                if m.get("role") in {"assistant", "tool"}
                and m.get("content")
                and not str(m["content"]).startswith(("Transferring", "Successfully"))
            ]
            return f"Final: {said[-1].get('content')}"
        return StubReply(tool_name=self.boss_tool, tool_args=dict(self.boss_args))

    def calls(self, model: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r.get("model") == model]


@pytest.fixture(scope="module")
def stub() -> Iterator[Stub]:
    s = Stub()
    with s.server:
        yield s


@pytest.fixture()
def fresh(stub: Stub) -> Stub:
    stub.requests.clear()
    stub.boss_tool, stub.boss_args = "transfer_to_panel", {}
    return stub


def spec(stub: Stub) -> ModelSpec:
    return ModelSpec(model=PATTERN_CALL, base_url=stub.server.url, timeout_s=10, max_retries=0)


def boss(stub: Stub) -> ChatOpenAI:
    return ChatOpenAI(model=BOSS, base_url=stub.server.url, api_key="x", timeout=10, max_retries=0)


#: Every pattern, built small on the stub, with the input its own key takes.
PATTERNS: dict[str, tuple[Callable[[ModelSpec], Any], str, str]] = {
    "solver_debate": (
        lambda m: build_solver_debate(m, agents=3, max_rounds=2),
        "question",
        QUESTION,
    ),
    "debate": (lambda m: build_debate(m, max_rounds=2, judge=True), "topic", TOPIC),
    "group_chat": (
        lambda m: build_group_chat(
            m,
            agents=["Writer: writes the haiku.", "Reviewer: reviews it; says APPROVED."],
            until=[r"regex:\bAPPROVED\b@Reviewer"],
            max_rounds=4,
        ),
        "task",
        TASK,
    ),
    "discussion": (lambda m: build_discussion(m, max_rounds=1), "document", DOCUMENT),
    "meeting": (lambda m: build_meeting(m, max_rounds=1), "topic", TOPIC),
}


def panel(stub: Stub, pattern: str = "solver_debate", **settings: Any) -> Any:
    build, _, _ = PATTERNS[pattern]
    if settings:
        return {
            "solver_debate": build_solver_debate,
            "debate": build_debate,
        }[pattern](spec(stub), **settings).compile(name="panel")
    return build(spec(stub)).compile(name="panel")


def ai_names(messages: list[Any]) -> list[str | None]:
    return [m.name for m in messages if isinstance(m, AIMessage)]


def in_app(sub: Any, saver: Any = None, context_schema: Any = None) -> Any:
    """A ``MessagesState`` app whose one node, ``panel``, is ``sub``."""
    return (
        StateGraph(MessagesState, context_schema=context_schema)
        .add_node("panel", sub)
        .add_edge(START, "panel")
        .add_edge("panel", END)
        .compile(checkpointer=saver)
    )


# --- every pattern returns its content ---------------------------------------------------


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_every_pattern_returns_its_transcript_and_messages(fresh: Stub, pattern: str) -> None:
    build, key, text = PATTERNS[pattern]
    out = build(spec(fresh)).compile(name=pattern).invoke({key: text})
    turns = out["transcript"]
    agent_turns = [t for t in turns if t.role == "agent"]
    assert agent_turns, out
    messages = out["messages"]
    assert messages and isinstance(messages[-1], AIMessage)
    # One message per agent turn (and tool call), named after its agent, with its id.
    by_id = {m.id: m for m in messages}
    for turn in agent_turns:
        message = by_id[turn.id]
        assert message.name == turn.agent.replace(" ", "_")
        assert message.response_metadata["debategraph"]["round"] == turn.round
    assert [m.id for m in messages[: len(agent_turns)]] == [t.id for t in agent_turns]
    # The last one states the outcome, named after the compiled graph.
    outcome = messages[-1]
    assert outcome.name == pattern
    assert outcome.response_metadata["debategraph"]["stage"] == "outcome"
    if pattern == "solver_debate":
        assert outcome.content.startswith("The answer is 42: 3 of 3 solvers"), outcome
    elif pattern == "group_chat":
        assert outcome.content.startswith("APPROVED"), outcome
        assert outcome.response_metadata["debategraph"]["agent"] == "Reviewer"
    assert fresh.calls(PATTERN_CALL)


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_messages_in_become_the_patterns_input(fresh: Stub, pattern: str) -> None:
    build, key, text = PATTERNS[pattern]
    graph = build(spec(fresh)).compile(name=pattern)
    out = graph.invoke({"messages": [HumanMessage("earlier"), AIMessage("ok"), HumanMessage(text)]})
    assert out["transcript"]
    if key != "document":
        state_key = out.get(key, None) if key in out else None
        assert state_key in (None, text)
    prompts = json.dumps([r["messages"] for r in fresh.calls(PATTERN_CALL)])
    probe = text.split("\n")[-1] if key == "document" else text
    assert probe in prompts
    assert "earlier" not in prompts


def test_both_messages_and_the_key_the_key_wins_with_a_note(fresh: Stub) -> None:
    graph = panel(fresh)
    out = graph.invoke({"question": QUESTION, "messages": [HumanMessage("What is 1 + 1?")]})
    assert out["question"] == QUESTION
    assert "both question and messages were given: question wins, messages not read" in out["notes"]
    assert "1 + 1" not in json.dumps(fresh.calls(PATTERN_CALL)[0]["messages"])


@pytest.mark.parametrize(
    ("messages", "line"),
    [
        ([AIMessage("no human here")], "question is empty: messages has no human message"),
        ([HumanMessage("   ")], "question is empty: messages has no human message"),
        ([], 'question is empty: give the problem text, e.g. "2+3?"'),
    ],
)
def test_messages_with_no_human_message_get_the_patterns_line(
    fresh: Stub, messages: list[Any], line: str
) -> None:
    with pytest.raises(ValueError) as err:
        panel(fresh).invoke({"messages": messages})
    assert str(err.value).startswith(line)
    assert "\n" not in str(err.value)
    assert not fresh.calls(PATTERN_CALL)


# --- 1. a node of a MessagesState graph ----------------------------------------------------


#: Each pattern's first agents, in the order they speak, and its outcome's start.
SPOKEN: dict[str, tuple[list[str], str, tuple[str, ...]]] = {
    "solver_debate": (["solver_1", "solver_2", "solver_3"], "panel", ("The answer is 42",)),
    "debate": (
        ["Affirmative", "Negative", "Affirmative", "Negative"],
        "panel",
        ("It is a tie", "Affirmative wins", "Negative wins"),
    ),
    "group_chat": (["Writer", "Reviewer"], "panel", ("APPROVED",)),
}


@pytest.mark.parametrize("pattern", list(SPOKEN))
def test_a_node_of_a_messages_state_graph(fresh: Stub, pattern: str) -> None:
    build, _, text = PATTERNS[pattern]
    app = in_app(build(spec(fresh)).compile(name="panel"))
    out = app.invoke({"messages": [HumanMessage(text)]})
    messages = out["messages"]
    assert isinstance(messages[0], HumanMessage) and messages[0].content == text
    assert len([m for m in messages if isinstance(m, HumanMessage)]) == 1  # not sent back
    speakers, last, outcome = SPOKEN[pattern]
    assert ai_names(messages)[: len(speakers)] == speakers
    assert messages[-1].name == last
    assert messages[-1].content.startswith(outcome)


# --- 2. an agent of a supervisor ---------------------------------------------------------


@pytest.mark.parametrize("pattern", ["solver_debate", "debate", "group_chat"])
def test_an_agent_of_create_supervisor(fresh: Stub, pattern: str) -> None:
    build, _, text = PATTERNS[pattern]
    agent = build(spec(fresh)).compile(name="panel")
    app = create_supervisor(
        [agent], model=boss(fresh), prompt="Hand hard questions to the panel."
    ).compile()
    out = app.invoke({"messages": [HumanMessage(text)]})
    messages = out["messages"]
    # The panel's answer comes back as its last message, then the handoff back, then the
    # supervisor's reply quoting it.
    panel_reply = next(
        m for m in messages if isinstance(m, AIMessage) and m.name not in {"supervisor", None}
    )
    assert isinstance(messages[-1], AIMessage) and messages[-1].name == "supervisor"
    assert messages[-1].content.startswith("Final: ")
    assert any(
        isinstance(m, ToolMessage) and m.name == "transfer_back_to_supervisor" for m in messages
    )
    assert messages[-1].content == f"Final: {panel_reply.content}"
    # The supervisor made its two calls; the panel its own, and read the user's text.
    assert len(fresh.calls(BOSS)) == 2
    assert text.split("\n")[0] in json.dumps(fresh.calls(PATTERN_CALL)[0]["messages"])


# --- 3. an agent of a swarm ---------------------------------------------------------------


@pytest.mark.parametrize("pattern", list(SPOKEN))
def test_an_agent_of_create_swarm(fresh: Stub, pattern: str) -> None:
    build, _, text = PATTERNS[pattern]
    assistant = create_react_agent(
        boss(fresh), [create_handoff_tool(agent_name="panel")], name="assistant"
    )
    app = create_swarm(
        [assistant, build(spec(fresh)).compile(name="panel")], default_active_agent="assistant"
    ).compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "swarm"}}
    out = app.invoke({"messages": [HumanMessage(text)]}, config)
    assert out["active_agent"] == "panel"
    speakers, last, outcome = SPOKEN[pattern]
    assert isinstance(out["messages"][-1], AIMessage) and out["messages"][-1].name == last
    assert out["messages"][-1].content.startswith(outcome)
    assert set(speakers) <= set(ai_names(out["messages"]))
    assert len(fresh.calls(BOSS)) == 1
    assert text in json.dumps(fresh.calls(PATTERN_CALL)[0]["messages"])


# --- 4. a tool of a ReAct agent ------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["solver_debate", "debate", "group_chat"])
def test_a_tool_of_create_react_agent(fresh: Stub, pattern: str) -> None:
    build, key, text = PATTERNS[pattern]
    tool = as_tool(build(spec(fresh)).compile(name="panel"), description="Ask the panel.")
    fresh.boss_tool, fresh.boss_args = "panel", {key: text}
    agent = create_react_agent(boss(fresh), [tool])
    out = agent.invoke({"messages": [HumanMessage(f"Ask the panel: {text}")]})
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert result.name == "panel" and result.status == "success"
    assert result.artifact["termination_reason"] and result.artifact["transcript"]
    assert out["messages"][-1].content == f"Final: {result.content}"
    assert key in fresh.calls(BOSS)[0]["tools"][0]["function"]["parameters"]["required"]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        ({"question": "  "}, 'question is empty: give the problem text, e.g. "2+3?"'),
        ({"question": QUESTION, "choices": ["only one"]}, "choices must be"),
        ({"question": QUESTION, "bogus": 1}, "argument 'bogus': Extra inputs are not permitted"),
        ({}, "argument 'question': Field required"),
    ],
)
def test_refused_tool_arguments_come_back_as_the_tools_result(
    fresh: Stub, args: dict[str, Any], line: str
) -> None:
    fresh.boss_tool, fresh.boss_args = "panel", args
    agent = create_react_agent(boss(fresh), ToolNode([as_tool(panel(fresh))]))
    out = agent.invoke({"messages": [HumanMessage("Ask the panel.")]})
    message = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert message.content.startswith(line), message.content
    assert out["messages"][-1].content == f"Final: {message.content}"
    assert "\n" not in message.content and "Traceback" not in message.content
    assert not fresh.calls(PATTERN_CALL)


def test_as_tool_refuses_what_is_not_a_compiled_pattern_graph(fresh: Stub) -> None:
    with pytest.raises(ValueError, match="as_tool takes a compiled graph a debategraph"):
        as_tool(build_debate(spec(fresh)))
    with pytest.raises(ValueError, match="tool name 'ask the panel' is not allowed"):
        as_tool(panel(fresh), name="ask the panel")


# --- inside a parent, everything still works ----------------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
def saver(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Any]:
    if request.param == "memory":
        yield InMemorySaver()
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(str(tmp_path / "parent.sqlite")) as sqlite:
        yield sqlite


def parent_app(stub: Stub, saver: Any, **settings: Any) -> Any:
    sub = build_solver_debate(spec(stub), agents=3, max_rounds=2, **settings).compile(name="panel")
    return in_app(sub, saver)


def test_a_pause_inside_the_subgraph_pauses_the_parent_and_resumes_with_an_interjection(
    fresh: Stub, saver: Any
) -> None:
    app = parent_app(fresh, saver, pause_after_round=True)
    config: Any = {"configurable": {"thread_id": "parent"}}
    out = app.invoke({"messages": [HumanMessage(QUESTION)]}, config)
    (pause,) = out["__interrupt__"]
    assert review_request(pause.value)["args"]["round"] == 1
    state = app.get_state(config, subgraphs=True)
    assert state.next == ("panel",)
    sub = state.tasks[0].state
    assert sub.values["question"] == QUESTION and sub.next == ("human",)
    assert len(fresh.calls(PATTERN_CALL)) == 3
    out = app.invoke(Command(resume={"interject": NOTE}), config)
    round_two = fresh.calls(PATTERN_CALL)[3:]
    assert len(round_two) == 3 and all(NOTE in json.dumps(r["messages"]) for r in round_two)
    messages = out["messages"]
    assert any(isinstance(m, HumanMessage) and m.content == NOTE for m in messages)
    assert messages[-1].content.startswith("The answer is 42: 3 of 3 solvers")
    # The parent's checkpointer holds the subgraph's thread.
    assert app.get_state(config).next == ()


def test_streams_show_rounds_agents_and_events_inside_a_parent(fresh: Stub) -> None:
    app = parent_app(fresh, InMemorySaver())
    config: Any = {"configurable": {"thread_id": "stream"}}
    seen: dict[str, list[Any]] = {"updates": [], "messages": [], "custom": []}
    for namespace, mode, chunk in app.stream(
        {"messages": [HumanMessage(QUESTION)]},
        config,
        stream_mode=["updates", "messages", "custom"],
        subgraphs=True,
    ):
        seen[mode].append((namespace, chunk))
    inner = [ns for ns, _ in seen["updates"] if ns and ns[0].startswith("panel:")]
    nodes = [next(iter(chunk)) for ns, chunk in seen["updates"] if ns]
    assert inner and nodes.count("close_round") == 2
    agents = {m.name or meta.get("lc_agent_name") for _, (m, meta) in seen["messages"]}
    assert {"solver_1", "solver_2", "solver_3"} <= agents
    events = [chunk for _, chunk in seen["custom"]]
    assert [e["round"] for e in events if e["event"] == "round"] == [1, 2]
    votes = [e for e in events if e["event"] == "votes"]
    assert [v["votes"] for v in votes] == [{"42": 3}, {"42": 3}]
    (outcome,) = [e for e in events if e["event"] == "outcome"]
    assert outcome["text"].startswith("The answer is 42")


@dataclass
class ParentContext:
    user: str


def test_a_parent_with_its_own_context_schema(fresh: Stub) -> None:
    seen: list[str] = []

    def greet(state: MessagesState, runtime: Any) -> dict[str, Any]:
        seen.append(runtime.context.user)
        return {}

    app = (
        StateGraph(MessagesState, context_schema=ParentContext)
        .add_node("greet", greet)
        .add_node("panel", panel(fresh))
        .add_edge(START, "greet")
        .add_edge("greet", "panel")
        .add_edge("panel", END)
        .compile()
    )
    out = app.invoke({"messages": [HumanMessage(QUESTION)]}, context=ParentContext("ann"))
    assert seen == ["ann"]
    assert out["messages"][-1].content.startswith("The answer is 42")


def test_the_drawing_studio_shows_has_the_debate_inside_the_app(fresh: Stub) -> None:
    app = parent_app(fresh, None)
    drawn = app.get_graph(xray=1).draw_mermaid()
    for node in ("take_input", "open_round", "close_round", "aggregate", "respond"):
        assert f"panel\\3a{node}" in drawn or f"panel:{node}" in drawn, drawn


def test_no_recursion_limit_to_pass(fresh: Stub) -> None:
    graph = build_group_chat(spec(fresh), max_rounds=3000).compile(name="long_chat")
    assert graph.config["recursion_limit"] == recursion_limit(graph) > 10_007
    # A caller's own limit still wins.
    short = panel(fresh)
    with pytest.raises(Exception, match="Recursion limit of 3 reached"):
        short.invoke({"question": QUESTION}, {"recursion_limit": 3})


def test_a_chats_later_messages_become_its_next_message(fresh: Stub) -> None:
    build, _, _ = PATTERNS["group_chat"]
    chat = build(spec(fresh)).compile(checkpointer=InMemorySaver(), name="chat")
    config: Any = {"configurable": {"thread_id": "chat"}}
    first = chat.invoke({"messages": [HumanMessage(TASK)]}, config)
    assert first["task"] == TASK and first["termination_reason"] == "matched"
    later = [HumanMessage(TASK), first["messages"][-1], HumanMessage("Shorter, please.")]
    out = chat.invoke({"messages": later}, config)
    humans = [t.content for t in out["transcript"] if t.role == "user"]
    assert humans == [TASK, "Shorter, please."]
    assert out["task"] == TASK and out["termination_reason"] == "matched"
    assert len([t for t in out["transcript"] if t.role == "agent"]) == 4


def test_a_run_paused_before_it_read_its_messages_still_has_them(fresh: Stub, saver: Any) -> None:
    """The messages input is saved until the run reads it: a pause (or crash) before loses none."""
    graph = panel(fresh).builder.compile(checkpointer=saver, name="panel")
    config: Any = {"configurable": {"thread_id": "early"}}
    graph.invoke({"messages": [HumanMessage(QUESTION)]}, config, interrupt_before=["take_input"])
    assert graph.get_state(config).next == ("take_input",)
    out = graph.invoke(None, config)
    assert out["question"] == QUESTION
    assert out["messages"][-1].content.startswith("The answer is 42")
    # Once read, no checkpoint holds them, nor the reply.
    assert "messages" not in graph.get_state(config).values


def test_a_new_question_on_a_thread_that_answered_one_is_refused(fresh: Stub) -> None:
    graph = panel(fresh).builder.compile(checkpointer=InMemorySaver(), name="panel")
    config: Any = {"configurable": {"thread_id": "one-question"}}
    graph.invoke({"messages": [HumanMessage(QUESTION)]}, config)
    calls = len(fresh.calls(PATTERN_CALL))
    with pytest.raises(ValueError) as err:
        graph.invoke({"messages": [HumanMessage("What is 1 + 1?")]}, config)
    assert str(err.value) == (
        "this solver_debate thread has run on its question ('What is 17 + 25?'): "
        "a new question ('What is 1 + 1?') needs a new thread"
    )
    assert len(fresh.calls(PATTERN_CALL)) == calls


def test_what_the_graph_refuses_comes_back_as_the_tools_result_too(fresh: Stub) -> None:
    build, _, _ = PATTERNS["group_chat"]
    tool = as_tool(build(spec(fresh)).compile(name="chat"))
    line = tool.invoke({"task": TASK, "speaker": "nobody"})
    assert line == "speaker 'nobody' is not an agent of this chat: use one of Writer, Reviewer"
    assert tool.invoke({"task": "  "}) == "task is empty: give what the chat is about"
    assert "on the first invocation" in tool.args["task"]["description"]
    assert not fresh.calls(PATTERN_CALL)


def test_a_graph_built_without_a_model_refuses_a_parents_own_context(fresh: Stub) -> None:
    app = in_app(
        build_solver_debate(agents=3, max_rounds=1).compile(name="panel"), None, ParentContext
    )
    with pytest.raises(ValueError, match=r"context is a ParentContext, not debategraph\.Context"):
        app.invoke({"messages": [HumanMessage(QUESTION)]}, context=ParentContext("ann"))


def test_decisions_stream_as_they_happen(fresh: Stub) -> None:
    graph = build_debate(spec(fresh), max_rounds=2, moderator=True).compile(name="debate")
    events = list(graph.stream({"topic": TOPIC}, stream_mode="custom"))
    kinds = [e["event"] for e in events]
    # The stub's moderator settles the debate after round 1.
    assert kinds == ["round", "decision", "outcome"], events
    assert events[1]["agent"] == "moderator" and events[1]["round"] == 1
    assert events[1]["settled"] is True and events[2]["termination_reason"] == "settled"


@pytest.mark.parametrize(
    ("pattern", "build"),
    [
        ("debate", lambda m: build_debate(m, max_rounds=2, judge=True, pause_after_round=True)),
        (
            "group_chat",
            lambda m: build_group_chat(
                m,
                agents=["Writer: writes the haiku.", "Reviewer: reviews it; says APPROVED."],
                until=[r"regex:\bAPPROVED\b@Reviewer"],
                max_rounds=4,
                pause_after_round=True,
            ),
        ),
    ],
)
def test_other_patterns_pause_inside_a_parent_and_take_an_interjection(
    fresh: Stub, pattern: str, build: Callable[[ModelSpec], Any]
) -> None:
    _, _, text = PATTERNS[pattern]
    app = in_app(build(spec(fresh)).compile(name="panel"), InMemorySaver())
    config: Any = {"configurable": {"thread_id": pattern}}
    out = app.invoke({"messages": [HumanMessage(text)]}, config)
    assert review_request(out["__interrupt__"][0].value) is not None
    before = len(fresh.calls(PATTERN_CALL))
    out = app.invoke(Command(resume={"interject": NOTE}), config)
    while "__interrupt__" in out:
        out = app.invoke(Command(resume={"approve": True}), config)
    after = fresh.calls(PATTERN_CALL)[before:]
    assert after and NOTE in json.dumps(after[0]["messages"])
    assert any(isinstance(m, HumanMessage) and m.content == NOTE for m in out["messages"])
    assert out["messages"][-1].content.startswith(SPOKEN[pattern][2])
