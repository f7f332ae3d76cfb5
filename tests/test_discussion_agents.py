"""Open agents in the discussion: each persona (and the consensus writer) its own model,
tools or agent (issue 22).

Unit tests run each persona on its own scripted model (each model must get only its
persona's calls); integration tests run them on two stub OpenAI endpoints over HTTP,
through the Python API and through ``debategraph discuss --agents-file`` (stored with the
thread, so a resumed discussion calls the same endpoints).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool

from debategraph import ModelSpec, Persona, build_discussion, recursion_limit
from debategraph.cli.patterns.discussion import discuss_command
from debategraph.errors import UsageError
from debategraph.graphs.discussion import GRAPH_NAME
from debategraph.state.records import TOOL_STAGE, AgentSpec, Turn
from tests.backends import decoded_dump
from tests.conftest import one_error_line, run_cli, stub_args
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply
from tests.openai_stub import StubOpenAIServer, StubReply
from tests.test_discussion import PAPER, Script, phase_of, skip
from tests.test_discussion_truth import _agent, _tool, alice_clarifies, scripted

ALICE = {"name": "Alice", "focus": "methods"}
BOB = {"name": "Bob", "focus": "impact", "description": "Pragmatic."}
SECRET = "sk-discussion-secret-0123"


class NamedModel(ScriptedChatModel):
    """A scripted model with a name, so its calls are charged to a model of their own."""

    model_name: str = "scripted"


def own_model(script: Script, name: str) -> NamedModel:
    """A model of ``name`` answering as ``script`` does (its calls land in ``script``)."""
    model = NamedModel(respond=script.respond, model_name=name)
    script.model = model
    return model


def agents_of(script: Script) -> set[str]:
    return {agent for _, agent, _ in script.calls}


def turns(out: dict[str, Any], agent: str, role: str = "agent") -> list[Turn]:
    return [t for t in out["transcript_view"] if t.agent == agent and t.role == role]


def invoke_with_transcript(model: Any, **kwargs: Any) -> dict[str, Any]:
    """Run the graph and return its output plus its whole transcript (``transcript_view``)."""
    from langgraph.checkpoint.memory import InMemorySaver

    graph = build_discussion(model, **kwargs).compile(name=GRAPH_NAME, checkpointer=InMemorySaver())
    config: Any = {"recursion_limit": recursion_limit(graph), "configurable": {"thread_id": "t"}}
    out: dict[str, Any] = graph.invoke({"document": PAPER}, config)
    out["transcript_view"] = list(graph.get_state(config).values["transcript"])
    return out


# --------------------------------------------------------------------------
# Unit: scripted models
# --------------------------------------------------------------------------


def test_each_persona_calls_only_its_own_model() -> None:
    alice, bob, graph = Script(), Script(), Script()
    personas = [
        {**ALICE, "model": own_model(alice, "alice-model")},
        Persona(**BOB, model=own_model(bob, "bob-model")),
    ]
    out = invoke_with_transcript(own_model(graph, "graph-model"), personas=personas, max_rounds=1)
    assert out["termination_reason"] == "rounds_completed"
    # Every call a persona makes (choice, analysis, questions, answers, vote) is its own.
    assert agents_of(alice) == {"Alice"} and agents_of(bob) == {"Bob"}
    assert [s for s, _, _ in alice.calls] == [
        "SectionChoice",
        "Analysis",
        "Inquiry",
        "ResponseSet",
        "ConvergenceVote",
    ]
    # The graph's model writes only the consensus (the official has no model of its own).
    assert [(s, a) for s, a, _ in graph.calls] == [("ConsensusReport", "consensus")]
    assert {t.model for t in turns(out, "Alice")} == {"alice-model"}
    assert {t.model for t in turns(out, "Bob")} == {"bob-model"}
    assert [t.model for t in turns(out, "consensus")] == ["graph-model"]
    by_model = out["usage_by_model"]
    assert (by_model["alice-model"].calls, by_model["bob-model"].calls) == (5, 5)
    assert by_model["graph-model"].calls == 1
    assert out["usage_by_agent"]["Alice"].calls == 5
    assert out["usage"].calls == 11


def test_the_consensus_official_calls_its_own_model() -> None:
    personas_script, official = Script(Inquiry=skip), Script()
    out = invoke_with_transcript(
        own_model(personas_script, "graph-model"),
        personas=[ALICE, BOB],
        max_rounds=1,
        officials=[AgentSpec(name="Consensus", model=own_model(official, "strong-model"))],
    )
    assert [(s, a) for s, a, _ in official.calls] == [("ConsensusReport", "consensus")]
    assert "ConsensusReport" not in {s for s, _, _ in personas_script.calls}
    assert out["report"].fallback is None
    assert [t.model for t in turns(out, "consensus")] == ["strong-model"]
    assert out["usage_by_model"]["strong-model"].calls == 1
    assert out["usage_by_agent"]["consensus"].calls == 1


def test_officials_are_checked_when_the_graph_is_built() -> None:
    with pytest.raises(ValueError, match=r"a discussion has no official 'judge'.*consensus"):
        build_discussion(officials=[{"name": "judge", "model": "m@http://127.0.0.1:9/v1"}])
    with pytest.raises(ValueError, match="official 'Consensus' is given twice"):
        build_discussion(officials=[{"name": "consensus"}, {"name": "Consensus"}])
    with pytest.raises(ValueError, match="agent 'consensus': unknown tool 'abacus'"):
        build_discussion(officials=[{"name": "consensus", "tools": ["abacus"]}])
    bad = [{**ALICE, "tools": ["abacus"]}, BOB]
    with pytest.raises(ValueError, match=r"^agent 'Alice': unknown tool 'abacus'"):
        build_discussion(personas=bad)
    with pytest.raises(ValueError, match=r"persona .* is not valid .*modle"):
        build_discussion(personas=[{**ALICE, "modle": "m"}, BOB])


LOOKUPS: list[str] = []


@tool
def glossary(term: str) -> str:
    """Look a term up in the field's glossary."""
    LOOKUPS.append(term)
    return f"{term}: a graph in which every node has two neighbours"


def test_a_persona_with_a_tool_has_its_calls_recorded_before_its_turn() -> None:
    LOOKUPS.clear()
    insights = [
        {"content": f"Alice insight {n}", "importance": 0.6, "confidence": 0.7} for n in (1, 2)
    ]
    alice = NamedModel(
        model_name="alice-model",
        responses=[
            # Section choice: one glossary look-up, then the typed choice.
            tool_reply("glossary", {"term": "ring"}),
            text_reply("A ring is a sparse topology."),
            tool_reply("SectionChoice", {"section_ids": ["S2"], "reason": "the method"}),
            # Analysis, questions and vote: no tool needed, then the typed reply.
            text_reply("Ready."),
            tool_reply("Analysis", {"insights": insights}),
            text_reply("Nothing to ask."),
            tool_reply("Inquiry", {"questions": [], "skip_reason": "clear"}),
            text_reply("Close."),
            tool_reply("ConvergenceVote", {"score": 0.3, "reason": "some way apart"}),
        ],
    )
    others = Script(Inquiry=skip)
    alice_with_tool = Persona(**ALICE, model=alice, tools=[glossary], max_tool_calls=2)
    out = invoke_with_transcript(others.model, personas=[alice_with_tool, BOB], max_rounds=1)
    assert alice.remaining == 0 and LOOKUPS == ["ring"]
    transcript = out["transcript_view"]
    (call,) = [t for t in transcript if t.role == "tool"]
    assert (call.agent, call.stage, call.round, call.tool, call.arguments, call.reason) == (
        "Alice",
        TOOL_STAGE,
        0,
        "glossary",
        '{"term": "ring"}',
        None,
    )
    assert call.content == "ring: a graph in which every node has two neighbours"
    initial = transcript[transcript.index(call) + 1]
    assert (initial.agent, initial.stage, initial.model) == ("Alice", "initial", "alice-model")
    assert initial.usage.calls == 5  # the loop's two calls, the choice, the analysis
    # A tool call is no turn: not a vote, not in the other personas' prompts.
    assert out["convergence"][-1].agent_scores == {"Alice": 0.3, "Bob": 0.2}
    assert not any("two neighbours" in text for _, _, text in others.calls)
    assert out["usage_by_agent"]["Alice"].calls == 9
    assert out["usage_by_model"]["alice-model"].calls == 9
    assert [(s, a) for s, a, _ in others.calls if a == "Alice"] == []


def test_a_persona_can_be_an_agent_of_its_own() -> None:
    """A Runnable persona: its JSON replies are its typed fields (no structured call)."""
    seen: list[str] = []

    def reply(inputs: dict[str, Any]) -> dict[str, Any]:
        messages: list[BaseMessage] = inputs["messages"]
        task = str(messages[-1].content)
        schema = phase_of(task)
        seen.append(schema)
        fields = Script().handlers[schema]("Bob", task)
        return {"messages": [*messages, AIMessage(json.dumps(fields))]}

    bob = {**BOB, "agent": RunnableLambda(reply, name="bob_agent")}
    graph = Script(Inquiry=skip)
    out = invoke_with_transcript(graph.model, personas=[ALICE, bob], max_rounds=1)
    assert seen == ["SectionChoice", "Analysis", "Inquiry", "ConvergenceVote"]
    assert "Bob" not in agents_of(graph)
    assert {t.model for t in turns(out, "Bob")} == {"agent:bob_agent"}
    assert [i.content for i in out["insights"]["Bob"]] == ["Bob insight 1", "Bob insight 2"]


# --------------------------------------------------------------------------
# Integration: two endpoints over HTTP
# --------------------------------------------------------------------------


def with_calculator(respond: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
    """A responder whose tool loops call the calculator once, then answer as ``respond``."""

    def answer(body: dict[str, Any]) -> Any:
        if _tool(body) != "calculator":
            return respond(body)
        if body["messages"][-1].get("role") == "tool":
            return "The sum is known."
        return StubReply(tool_args={"expression": "6 * 7"}, tool_name="calculator")

    return answer


def test_two_endpoints_each_get_only_their_personas_calls() -> None:
    responder = with_calculator(scripted(vote=0.2, consensus="point", ask=alice_clarifies))
    with (
        StubOpenAIServer(responder) as one,
        StubOpenAIServer(responder) as two,
        StubOpenAIServer(responder) as graph_server,
    ):
        personas = [
            {**ALICE, "model": f"stub@{one.url}", "tools": ["calculator"]},
            {**BOB, "model": {"model": "stub", "base_url": two.url, "timeout": 30}},
        ]
        officials = [{"name": "consensus", "model": f"stub@{two.url}"}]
        label_one, label_two = f"stub@{one.url}", f"stub@{two.url}"
        spec = ModelSpec(model="stub", base_url=graph_server.url, max_retries=0)
        out = invoke_with_transcript(spec, personas=personas, officials=officials, max_rounds=1)
    assert {_agent(body) for body in one.requests} == {"Alice"}
    assert {_agent(body) for body in two.requests} == {"Bob", "consensus"}
    assert graph_server.requests == []
    assert {_tool(b) for b in one.requests} >= {"calculator", "SectionChoice", "Inquiry"}
    assert "calculator" not in {_tool(b) for b in two.requests}
    transcript = out["transcript_view"]
    alice_records = [t for t in transcript if t.agent == "Alice"]
    # Each of Alice's turns follows the calculator calls its tool loops made (her first
    # turn took two calls, a section choice and an analysis).
    assert [t.role for t in alice_records] == ["tool", "tool", "agent"] + ["tool", "agent"] * 2
    assert {(t.tool, t.content) for t in alice_records if t.role == "tool"} == {
        ("calculator", "42")
    }
    assert {t.model for t in alice_records if t.role == "agent"} == {label_one}
    assert {t.model for t in turns(out, "Bob")} == {label_two}
    assert set(out["usage_by_model"]) == {label_one, label_two}
    assert out["usage_by_model"][label_one].calls == len(one.requests)
    assert out["usage_by_model"][label_two].calls == len(two.requests)
    assert len(out["report"].consensus_points) == 1


# --------------------------------------------------------------------------
# The command line: --agents-file
# --------------------------------------------------------------------------


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    path = tmp_path / "paper.md"
    path.write_text(PAPER)
    return path


def agents_yaml(one: str, two: str) -> str:
    return f"""\
# Alice on one endpoint with the calculator; Bob and the consensus writer on another.
- name: Alice
  focus: methods
  model: stub@{one}
  tools: [calculator]
- name: Bob
  focus: impact
  model:
    model: stub
    base_url: {two}
    api_key_env: DG_DISCUSS_KEY
- name: consensus
  model: stub@{two}
"""


def test_agents_file_gives_each_persona_its_endpoint_and_resume_keeps_them(
    paper: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    checkpoint_url: str,
) -> None:
    monkeypatch.setenv("DG_DISCUSS_KEY", SECRET)
    monkeypatch.chdir(tmp_path)  # resume writes its report where it runs
    responder = with_calculator(scripted(vote=0.0, consensus="point", ask=alice_clarifies))
    db = checkpoint_url
    agents = tmp_path / "agents.yaml"
    with (
        StubOpenAIServer(responder) as one,
        StubOpenAIServer(responder) as two,
        StubOpenAIServer(responder) as graph_server,
    ):
        agents.write_text(agents_yaml(one.url, two.url))
        args = ["discuss", str(paper), "--agents-file", str(agents), "--rounds", "2"]
        args += ["--pause-after-round", "--thread", "p", "--report", str(tmp_path / "r.md")]
        code, out, err = run_cli([*args, "--json", *stub_args(graph_server, db)], capsys)
        assert code == 0, err
        assert json.loads(out)["status"] == "waiting"
        first = (len(one.requests), len(two.requests))
        assert first[0] > 0 and first[1] > 0
        # Resumed with nothing but the thread: the stored settings name each endpoint.
        code, out, err = run_cli(["resume", "p", "--db", db, "--approve", "--json"], capsys)
        assert code == 0, err
        result = json.loads(out)
        assert Path(result["report_file"]).exists()
        assert len(one.requests) > first[0] and len(two.requests) > first[1]
        assert {_agent(body) for body in one.requests} == {"Alice"}
        assert {_agent(body) for body in two.requests} == {"Bob", "consensus"}
        assert graph_server.requests == []
        labels = {f"stub@{one.url}", f"stub@{two.url}"}
    assert set(result["usage_by_model"]) == labels
    assert result["termination_reason"] == "rounds_completed"
    assert result["iterations_completed"] == 2
    assert len(result["report"]["consensus_points"]) == 1
    code, out, _ = run_cli(["threads", "--db", db, "--json"], capsys)
    assert [(r["pattern"], r["status"]) for r in json.loads(out)] == [("discussion", "finished")]
    code, out, _ = run_cli(["export", "p", "--db", db], capsys)
    assert code == 0 and 'calculator({"expression": "6 * 7"}) -> 42' in out
    # The key went to Bob's endpoint, is named by its variable, and nothing holds it.
    assert f"Bearer {SECRET}" in two.keys
    stored = decoded_dump(db)
    assert "6 * 7" in stored and "DG_DISCUSS_KEY" in stored  # the checkpoints, decoded
    for written in [db, *tmp_path.iterdir()]:
        assert SECRET not in decoded_dump(written), written


def test_discuss_command_puts_the_agents_files_entries_in_its_settings(
    paper: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DG_DISCUSS_KEY", SECRET)
    agents = tmp_path / "agents.yaml"
    agents.write_text(agents_yaml("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"))
    settings = discuss_command(paper, agents_file=str(agents)).settings
    assert settings["personas"] == [
        {
            "name": "Alice",
            "focus": "methods",
            "model": "stub@http://127.0.0.1:1/v1",
            "tools": ["calculator"],
        },
        {
            "name": "Bob",
            "focus": "impact",
            "model": {
                "model": "stub",
                "base_url": "http://127.0.0.1:2/v1",
                "api_key_env": "DG_DISCUSS_KEY",
            },
        },
    ]
    assert settings["officials"] == [{"name": "consensus", "model": "stub@http://127.0.0.1:2/v1"}]
    assert json.loads(json.dumps(settings)) == settings  # stored with the thread as JSON
    # Only the consensus writer: the default personas, its own model.
    agents.write_text("- name: Consensus\n  model: strong@http://127.0.0.1:3/v1\n")
    only = discuss_command(paper, agents_file=str(agents)).settings
    assert only["personas"] is None
    assert only["officials"] == [{"name": "Consensus", "model": "strong@http://127.0.0.1:3/v1"}]
    graph = build_discussion(**only).compile()
    assert "consensus" in graph.nodes
    # Without the file: the settings as before.
    assert "officials" not in discuss_command(paper).settings


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            "- name: Alice\n  focus: methods\n- name: Bob\n  model: stub@http://127.0.0.1:9/v1\n",
            "line 3: field 'focus' is missing",
        ),
        (
            "- name: Alice\n  focus: methods\n\n- name: Bob\n  focus: impact\n  modle: gpt\n",
            "line 4: unknown field 'modle'",
        ),
        (
            "- name: Alice\n  focus: methods\n  tools: [abacus]\n- name: Bob\n  focus: x\n",
            "line 1: agent 'Alice': unknown tool 'abacus'",
        ),
        (
            "- name: Alice\n  focus: methods\n- name: consensus\n  focus: reports\n",
            "line 3: unknown field 'focus'",
        ),
    ],
)
def test_a_malformed_agents_file_names_the_file_line_and_field(
    text: str, says: str, paper: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = tmp_path / "agents.yaml"
    agents.write_text(text)
    code, out, err = run_cli(
        ["discuss", str(paper), "--agents-file", str(agents), "--db", str(tmp_path / "d.db")],
        capsys,
    )
    assert code == 2, err
    line = one_error_line(err)
    assert f"--agents-file {agents} {says}" in line, line
    assert out == ""


def test_persona_and_agents_file_together_are_refused(
    paper: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    personas = tmp_path / "personas.json"
    personas.write_text(json.dumps([ALICE, BOB]))
    agents = tmp_path / "agents.yaml"
    agents.write_text(agents_yaml("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"))
    with pytest.raises(UsageError, match="--persona and --agents-file both list the personas"):
        discuss_command(paper, persona=personas, agents_file=str(agents))
    args = ["discuss", str(paper), "--persona", str(personas), "--agents-file", str(agents)]
    code, _, err = run_cli([*args, "--db", str(tmp_path / "d.db")], capsys)
    assert code == 2
    assert "give only one" in one_error_line(err)
    # --persona alone still works as before.
    assert discuss_command(paper, persona=personas).settings["personas"] == [ALICE, BOB]
