"""Open agents in the meeting: each participant and official its own model, tools or agent.

Unit tests script every agent's model with :class:`ScriptedChatModel` (each model gets
only its agent's calls); integration tests put the agents on two
:class:`StubOpenAIServer` endpoints over HTTP and drive the CLI's ``--agents-file``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from debategraph import build_meeting, recursion_limit
from debategraph.checkpoints import open_checkpointer, read_run
from debategraph.models import ModelSpec
from debategraph.nodes.review import review_request
from debategraph.state.meeting import FinalDecision, Stage
from debategraph.state.records import TOOL_STAGE, AgentSpec, Participant, Turn
from tests.backends import decoded_dump
from tests.conftest import one_error_line, run_cli, stub_args
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply
from tests.openai_stub import StubOpenAIServer, StubReply, schema_of
from tests.test_cli_meeting import meeting_reply
from tests.test_cli_meeting import speaker_of as http_speaker

TOPIC = "Should we move the team to a four-day week?"
DECISION = {
    "decision": "Pilot it for a quarter.",
    "rationale": "Gains outweigh risks if support is covered.",
    "dissent": ["Support may suffer."],
    "next_steps": ["Draft a rota"],
}
#: Ann speaks in two stages (one agent, two sets of instructions); Bob and Cy debate.
STAGES = [
    {"name": "pitch", "participants": ["Ann: pitches the idea"], "max_rounds": 1},
    {"name": "debate", "participants": ["Bob: argues for", "Cy: argues against"], "max_rounds": 2},
    {"name": "wrap", "participants": ["Ann: sums up"], "max_rounds": 1},
]
SPEAKER_RE = re.compile(r"You are (.+?), a participant in a meeting")
ROTA_RESULT = "support: ROTA-SEVEN people"
RUN_KEY_VAR = "DG_MEETING_RUN_KEY"
RUN_KEY = "sk-meeting-run-key-5150"


class Labelled(ScriptedChatModel):
    """A scripted model with a name of its own (what turns and usage record as its model)."""

    model_name: str = "scripted"


def speaking(label: str) -> Labelled:
    """A speaker's model: its n-th message is ``<label-n> ...``."""
    count = [0]

    def respond(messages: list[BaseMessage]) -> AIMessage:
        count[0] += 1
        return text_reply(f"<{label}-{count[0]}> I have a point to make.")

    return Labelled(model_name=label, respond=respond)


def deciding(label: str, *controls: str) -> Labelled:
    """An official's model: the controller's ``controls`` in order, or the chair's decision."""
    replies = [tool_reply("RoundDecision", {"action": a, "reason": "Why not."}) for a in controls]
    return Labelled(model_name=label, responses=replies or [tool_reply("FinalDecision", DECISION)])


def text_of(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def speaker_of(messages: list[BaseMessage]) -> str | None:
    found = SPEAKER_RE.match(str(messages[0].content))
    return found.group(1) if found else None


def invoke(graph: Any, config: dict[str, Any] | None = None) -> dict[str, Any]:
    config = {**(config or {}), "recursion_limit": recursion_limit(graph)}
    out: dict[str, Any] = graph.invoke({"topic": TOPIC}, config)
    return out


# -- each agent its own model ----------------------------------------------------------


def test_each_speaker_and_official_calls_only_its_own_model(tmp_path: Path) -> None:
    ann, bob, cy = speaking("ann"), speaking("bob"), speaking("graph")
    controller, chair = deciding("controller-m", "continue"), deciding("chair-m")
    db = tmp_path / "m.sqlite"
    config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    with open_checkpointer(db) as saver:
        graph = build_meeting(
            cy,  # Cy has nothing of his own: the meeting's model
            stages=STAGES,
            agents=[{"name": "ann", "model": ann}, Participant(name="BOB", model=bob)],
            officials=[
                {"name": "controller", "model": controller},
                AgentSpec(name="Chair", model=chair),
            ],
        ).compile(checkpointer=saver)
        out = invoke(graph, config)
    assert out["termination_reason"] == "completed"
    assert out["decision"] == FinalDecision(**DECISION)
    # Each model got exactly its agent's calls: Ann's in both her stages.
    assert [speaker_of(p) for p in ann.prompts] == ["Ann", "Ann"]
    assert "Your role: pitches the idea" in text_of(ann.prompts[0])
    assert "Your role: sums up" in text_of(ann.prompts[1])  # her stage's instructions
    assert [speaker_of(p) for p in bob.prompts] == ["Bob", "Bob"]
    assert [speaker_of(p) for p in cy.prompts] == ["Cy", "Cy"]
    assert [str(p[0].content)[:18] for p in controller.prompts] == ["You run the agenda"]
    assert [str(p[0].content)[:9] for p in chair.prompts] == ["You chair"]
    assert controller.remaining == chair.remaining == 0
    # The checkpoint holds names and model labels only: a fresh saver reads it back.
    with open_checkpointer(db) as saver:
        reread = build_meeting(cy, stages=STAGES).compile(checkpointer=saver)
        turns: list[Turn] = reread.get_state(config).values["transcript"]
    assert [(t.agent, t.role, t.stage, t.model) for t in turns] == [
        ("Ann", "agent", "pitch", "ann"),
        ("Bob", "agent", "debate", "bob"),
        ("Cy", "agent", "debate", "graph"),
        ("controller", "system", "debate", "controller-m"),
        ("Bob", "agent", "debate", "bob"),
        ("Cy", "agent", "debate", "graph"),
        ("Ann", "agent", "wrap", "ann"),
        ("chair", "agent", "decision", "chair-m"),
    ]
    by_model = {k: v.calls for k, v in out["usage_by_model"].items()}
    assert by_model == {"ann": 2, "bob": 2, "graph": 2, "controller-m": 1, "chair-m": 1}
    assert {k: v.calls for k, v in out["usage_by_agent"].items()} == {
        "Ann": 2,
        "Bob": 2,
        "Cy": 2,
        "controller": 1,
        "chair": 1,
    }


def test_a_stage_record_keeps_its_participants_model_and_agents_give_instructions() -> None:
    ann = speaking("ann")
    stage = Stage(name="pitch", participants=(Participant(name="Ann", model=ann),), max_rounds=1)
    graph_model = deciding("graph")  # the chair, on the meeting's model
    graph = build_meeting(
        graph_model, stages=[stage], agents=[{"name": "ANN", "instructions": "speaks briefly"}]
    ).compile()
    out = invoke(graph)
    assert out["termination_reason"] == "completed"
    (prompt,) = ann.prompts
    assert "Your role: speaks briefly" in text_of(prompt)
    assert [str(p[0].content)[:9] for p in graph_model.prompts] == ["You chair"]


def test_one_agent_in_several_stages_is_given_its_model_once() -> None:
    ann = speaking("ann")
    stages = [
        {"name": "pitch", "participants": [{"name": "Ann", "model": ann}], "max_rounds": 1},
        {"name": "wrap", "participants": ["Ann: sums up"], "max_rounds": 1},
    ]
    graph_model = deciding("graph")
    out = invoke(build_meeting(graph_model, stages=stages).compile())
    assert out["termination_reason"] == "completed"
    assert [speaker_of(p) for p in ann.prompts] == ["Ann", "Ann"]  # in both stages
    assert len(graph_model.prompts) == 1  # the chair alone


# -- tools -----------------------------------------------------------------------------


@tool
def rota(team: str) -> str:
    """How many people a team has on its support rota."""
    return f"{team}: ROTA-SEVEN people"


def rota_user() -> Labelled:
    """Bob's model: asks the rota tool, then speaks."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return text_reply("<bob> Seven on the rota covers a four-day week.")
        return tool_reply("rota", {"team": "support"})

    return Labelled(model_name="bob", respond=respond)


def test_a_speakers_tool_calls_are_recorded_before_its_turn_and_read_by_no_one() -> None:
    bob, cy = rota_user(), speaking("cy")
    controller, chair = deciding("controller-m", "continue"), deciding("chair-m")
    stages = [{"name": "debate", "participants": ["Bob: argues for", "Cy: argues against"]}]
    graph = build_meeting(
        cy,
        stages=stages,
        max_rounds=2,
        pause_after_round=True,
        agents=[{"name": "Bob", "model": bob, "tools": [rota]}],
        officials=[{"name": "controller", "model": controller}, {"name": "chair", "model": chair}],
    ).compile(checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    out = invoke(graph, config)
    # The review after the round shows what was said, not the tool calls.
    review = review_request(out["__interrupt__"][0].value)["args"]
    assert set(review["messages"]) == {"Bob", "Cy"}
    assert review["messages"]["Bob"] == "<bob> Seven on the rota covers a four-day week."
    out = graph.invoke(Command(resume={"approve": True}), {**config, "recursion_limit": 100})
    assert out["termination_reason"] == "completed"
    turns: list[Turn] = graph.get_state(config).values["transcript"]
    assert [(t.agent, t.role, t.stage, t.round, t.tool, t.model) for t in turns] == [
        ("Bob", "tool", TOOL_STAGE, 1, "rota", None),
        ("Bob", "agent", "debate", 1, None, "bob"),
        ("Cy", "agent", "debate", 1, None, "cy"),
        ("controller", "system", "debate", 1, None, "controller-m"),
        ("Bob", "tool", TOOL_STAGE, 2, "rota", None),
        ("Bob", "agent", "debate", 2, None, "bob"),
        ("Cy", "agent", "debate", 2, None, "cy"),
        ("chair", "agent", "decision", 2, None, "chair-m"),
    ]
    call = turns[0]
    assert (call.content, call.arguments, call.reason) == (ROTA_RESULT, '{"team": "support"}', None)
    assert turns[1].usage.calls == 2  # the tool call's request and the speech
    # The tool's result went back to Bob's model within his turn, and nowhere else.
    assert ROTA_RESULT in [m.content for m in bob.prompts[1] if isinstance(m, ToolMessage)]
    assert "ROTA-SEVEN" not in text_of(bob.prompts[2])  # his next turn reads the conversation
    for prompt in [*cy.prompts, *controller.prompts, *chair.prompts]:
        assert "ROTA-SEVEN" not in text_of(prompt)
    tool_ids = {t.id for t in turns if t.role == "tool"}
    assert all(not tool_ids & set(t.reply_to) for t in turns)
    assert out["usage_by_agent"]["Bob"].calls == 4


# -- an agent of one's own ---------------------------------------------------------------


def test_an_agent_of_ones_own_speaks_and_its_failure_is_a_turn_with_the_reason() -> None:
    def own(inputs: dict[str, Any]) -> dict[str, Any]:
        asked = AIMessage("", tool_calls=[{"name": "lookup", "args": {"q": "rota"}, "id": "c1"}])
        found = ToolMessage("seven people", tool_call_id="c1")
        return {"messages": [*inputs["messages"], asked, found, AIMessage("<mine> Seven suffice.")]}

    def broken(inputs: dict[str, Any]) -> Any:
        raise ConnectionError("vector store down")

    cy = speaking("cy")
    stages = [{"name": "talk", "participants": ["Bob", "Dee", "Cy"], "max_rounds": 1}]
    agents = [
        {"name": "Bob", "agent": RunnableLambda(own, name="mine")},
        {"name": "Dee", "agent": RunnableLambda(broken, name="flaky")},
        {"name": "Cy", "model": cy},
    ]
    chair = deciding("chair-m")
    graph = build_meeting(
        ScriptedChatModel(responses=[]),
        stages=stages,
        agents=agents,
        officials=[{"name": "chair", "model": chair}],
    ).compile(checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    out = invoke(graph, config)
    assert out["termination_reason"] == "completed"
    turns: list[Turn] = graph.get_state(config).values["transcript"]
    assert [(t.agent, t.role, t.tool, t.content, t.reason, t.model) for t in turns[:4]] == [
        ("Bob", "tool", "lookup", "seven people", None, None),
        ("Bob", "agent", None, "<mine> Seven suffice.", None, "agent:mine"),
        (
            "Dee",
            "agent",
            None,
            "",
            "the agent failed: ConnectionError: vector store down",
            "agent:flaky",
        ),
        ("Cy", "agent", None, "<cy-1> I have a point to make.", None, "cy"),
    ]
    # Cy reads Bob's message, not his tool call, and nothing of Dee's failed turn.
    assert "Bob: <mine> Seven suffice." in text_of(cy.prompts[0])
    assert "seven people" not in text_of(cy.prompts[0])


# -- bad agents and officials ----------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"agents": [{"name": "Zed", "model": "m@http://h:1/v1"}]},
            "agents: no stage has a participant 'Zed': the participants are Ann, Bob, Cy",
        ),
        (
            {"agents": [{"name": "Chair", "model": "m@http://h:1/v1"}]},
            "agents: no stage has a participant 'Chair'; give the chair in officials=",
        ),
        ({"agents": [{"name": "ann"}, {"name": "ANN"}]}, "agents: 'ANN' is given twice"),
        ({"agents": "Ann"}, "agents must be a list of agent records, got 'Ann'"),
        ({"agents": [{"name": "Ann", "modle": "m"}]}, "(bad or missing: modle)"),
        ({"agents": [{"name": "Ann", "tools": ["abacus"]}]}, "unknown tool 'abacus'"),
        (
            {"agents": [{"name": "Ann", "model": "local", "tools": ["calculator"]}]},
            "agent 'Ann' has tools, but its model local cannot call tools",
        ),
        (
            {
                "stages": [
                    {"name": "a", "participants": [{"name": "Ann", "model": "m1@http://h:1/v1"}]},
                    {"name": "b", "participants": [{"name": "Ann", "model": "m2@http://h:1/v1"}]},
                ]
            },
            "participant 'Ann' has one model in stage 'a' and another in stage 'b'",
        ),
        (
            {
                "stages": [{"name": "a", "participants": [{"name": "Ann", "model": "m1"}]}],
                "agents": [{"name": "ann", "model": "m2"}],
            },
            "participant 'Ann' has one model in stage 'a' and another in agents",
        ),
        (
            {"officials": [{"name": "judge", "model": "m"}]},
            "a meeting has no official 'judge': its officials are controller, chair",
        ),
        ({"officials": [{"name": "chair"}, {"name": "Chair"}]}, "official 'Chair' is given twice"),
        (
            {"officials": [{"name": "chair", "model": "local", "tools": ["calculator"]}]},
            "agent 'chair' has tools, but its model local cannot call tools",
        ),
    ],
)
def test_bad_agents_and_officials_fail_at_build_time_in_one_line(
    kwargs: dict[str, Any], message: str
) -> None:
    model = ScriptedChatModel(responses=[])
    settings = {"stages": STAGES, **kwargs}
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        build_meeting(model, **settings)
    assert "\n" not in str(info.value)
    assert model.prompts == []


# -- two endpoints over HTTP -----------------------------------------------------------


def http_reply(request: dict[str, Any]) -> Any:
    """Speakers talk (the calculator's user calls it first); the officials decide."""
    if schema_of(request) == "calculator" and request["messages"][-1]["role"] != "tool":
        return StubReply(tool_args={"expression": "4 * 8"}, tool_name="calculator")
    return meeting_reply(request)


def asked(server: StubOpenAIServer) -> list[str]:
    """Who each request a server got was for: a speaker's name, or the schema asked for."""
    out = []
    for request in server.requests:
        name = schema_of(request)
        out.append(name if name in ("RoundDecision", "FinalDecision") else http_speaker(request))
    return out


@pytest.fixture
def endpoints() -> Iterator[tuple[StubOpenAIServer, StubOpenAIServer]]:
    with StubOpenAIServer(http_reply) as own, StubOpenAIServer(http_reply) as run:
        yield own, run


def test_two_endpoints_each_receive_only_their_agents_calls(
    endpoints: tuple[StubOpenAIServer, StubOpenAIServer],
) -> None:
    own, run = endpoints
    model = ModelSpec(model="stub", base_url=run.url, api_key="x", max_retries=0)
    graph = build_meeting(
        model,
        agents=[
            {"name": "Skeptic", "model": f"stub@{own.url}"},
            {"name": "Advocate", "tools": ["calculator"]},
        ],
        officials=[{"name": "chair", "model": {"model": "stub", "base_url": own.url}}],
    ).compile()
    out = invoke(graph)
    assert out["termination_reason"] == "completed"
    assert asked(own) == ["Skeptic", "Skeptic", "FinalDecision"]
    assert asked(run) == [
        "Presenter",
        "Advocate",  # asks the calculator
        "Advocate",  # speaks
        "RoundDecision",
        "Advocate",
        "Advocate",
        "Summarizer",
    ]
    assert out["decision"] == FinalDecision(**DECISION)
    assert set(out["usage_by_model"]) == {f"stub@{own.url}", f"stub@{run.url}"}
    assert out["usage_by_model"][f"stub@{own.url}"].calls == 3


def test_a_calculator_over_http_is_recorded_before_the_turn(
    endpoints: tuple[StubOpenAIServer, StubOpenAIServer],
) -> None:
    _, run = endpoints
    model = ModelSpec(model="stub", base_url=run.url, api_key="x", max_retries=0)
    graph = build_meeting(
        model, max_rounds=1, agents=[{"name": "Advocate", "tools": ["calculator"]}]
    ).compile(checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    invoke(graph, config)
    turns: list[Turn] = graph.get_state(config).values["transcript"]
    advocate = [t for t in turns if t.agent == "Advocate"]
    assert [(t.role, t.tool, t.content) for t in advocate] == [
        ("tool", "calculator", "32"),
        ("agent", None, "Advocate makes a point."),
    ]
    assert advocate[1].model == f"stub@{run.url}"
    skeptic = next(t for t in turns if t.agent == "Skeptic")
    assert advocate[0].id not in skeptic.reply_to and advocate[1].id in skeptic.reply_to
    tool_request = run.requests[2]  # the Advocate's speech, after its tool call
    assert [m["role"] for m in tool_request["messages"]][-2:] == ["assistant", "tool"]


# -- the CLI's --agents-file -----------------------------------------------------------


def agents_yaml(tmp_path: Path, own: StubOpenAIServer) -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(
        "# the skeptic and the chair on their own endpoint\n"
        f"- name: skeptic\n  model: stub@{own.url}\n"
        "- name: Advocate\n  tools: [calculator]\n"
        f"- name: chair\n  model: {{model: stub, base_url: '{own.url}'}}\n",
        encoding="utf-8",
    )
    return path


def test_cli_agents_file_puts_agents_on_their_endpoints_and_resume_keeps_them(
    endpoints: tuple[StubOpenAIServer, StubOpenAIServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    checkpoint_url: str,
) -> None:
    own, run = endpoints
    monkeypatch.setenv(RUN_KEY_VAR, RUN_KEY)  # the run's model's key, named by variable
    db = checkpoint_url
    file = agents_yaml(tmp_path, own)
    args = ["meeting", TOPIC, "--agents-file", str(file), "--pause-after-round"]
    args += ["--thread", "t", "--json", "--api-key-env", RUN_KEY_VAR]
    code, out, err = run_cli([*args, *stub_args(run, db)], capsys)
    assert code == 0, err
    assert json.loads(out)["status"] == "waiting"
    with open_checkpointer(db) as saver:
        stored = read_run(saver, "t")
    assert stored is not None
    assert stored.settings["agents"] == [
        {"name": "skeptic", "model": f"stub@{own.url}"},
        {"name": "Advocate", "tools": ["calculator"]},
    ]
    assert stored.settings["officials"] == [
        {"name": "chair", "model": {"model": "stub", "base_url": own.url}}
    ]
    assert asked(own) == []  # the presenter alone has spoken
    statuses = []
    for _ in range(3):  # each resume rebuilds the graph from the stored settings
        code, out, err = run_cli(["resume", "t", "--db", str(db), "--approve", "--json"], capsys)
        assert code == 0, err
        result = json.loads(out)
        statuses.append(result.get("status"))
    assert statuses == ["waiting", "waiting", None]  # the last resume finishes it
    assert result["termination_reason"] == "completed"
    assert asked(own) == ["Skeptic", "Skeptic", "FinalDecision"]
    assert asked(run).count("Skeptic") == 0 and asked(run).count("Advocate") == 4
    assert set(result["usage_by_model"]) == {f"stub@{own.url}", f"stub@{run.url}"}
    assert result["decision"] == DECISION
    # Every resume sent the run's key to its endpoint; no stored row holds it.
    assert run.keys and set(run.keys) == {f"Bearer {RUN_KEY}"}
    stored = decoded_dump(db)
    assert "Pilot it" in stored and RUN_KEY_VAR in stored  # the checkpoints, decoded
    assert RUN_KEY not in stored


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (
            "- name: Skeptic\n  model: stub@http://127.0.0.1:9/v1\n"
            "- name: Advocate\n  modle: gpt\n",
            "{path} line 3: unknown field 'modle'",
        ),
        ("- name: Skeptic\n  tools: [abacus]\n", "{path} line 1: agent 'Skeptic'"),
        ("- name: Skeptic\n  max_tool_calls: 0\n", "{path} line 1: field 'max_tool_calls'"),
        ("- name: Skeptic\n  model: ''\n", "{path} line 1: agent 'Skeptic': model is empty"),
        (
            "- name: Skeptic\n- name: chair\n  model: {model: m, api_key: sk-secret}\n",
            "{path} line 2: agent 'chair': model has an 'api_key'",
        ),
        (
            "- name: Zed\n  model: m@http://127.0.0.1:9/v1\n",
            "{path}: agents: no stage has a participant 'Zed': the participants are "
            "Presenter, Advocate, Skeptic, Summarizer",
        ),
        ("- name: skeptic\n- name: Skeptic\n", "{path} line 2: two agents are named 'Skeptic'"),
    ],
)
def test_cli_a_bad_agents_file_names_file_line_and_field(
    text: str, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(text, encoding="utf-8")
    db = tmp_path / "m.sqlite"
    args = ["meeting", TOPIC, "--agents-file", str(path), "--db", str(db)]
    code, out, err = run_cli(args, capsys)
    assert code == 2, err
    line = one_error_line(err)
    assert f"--agents-file {needle.format(path=path)}" in line
    assert "sk-secret" not in err
    assert out == "" and not db.exists()


def test_cli_agents_file_applies_beside_a_stages_file(
    endpoints: tuple[StubOpenAIServer, StubOpenAIServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    own, run = endpoints
    stages = tmp_path / "stages.yaml"
    stages.write_text(
        "- {name: pitch, participants: ['Ann: pitches'], max_rounds: 1}\n"
        "- {name: wrap, participants: ['Ann: sums up', 'Bob: doubts'], max_rounds: 1}\n",
        encoding="utf-8",
    )
    agents = tmp_path / "agents.json"
    agents.write_text(json.dumps([{"name": "ann", "model": f"stub@{own.url}"}]), encoding="utf-8")
    db = tmp_path / "m.sqlite"
    args = ["meeting", TOPIC, "--stages", str(stages), "--agents-file", str(agents), "--json"]
    code, out, err = run_cli([*args, *stub_args(run, db)], capsys)
    assert code == 0, err
    assert asked(own) == ["Ann", "Ann"]
    assert asked(run) == ["Bob", "FinalDecision"]
    assert [(m["agent"], m["model"]) for m in json.loads(out)["transcript"]] == [
        ("Ann", f"stub@{own.url}"),
        ("Ann", f"stub@{own.url}"),
        ("Bob", f"stub@{run.url}"),
        ("chair", f"stub@{run.url}"),
    ]
