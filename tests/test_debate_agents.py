"""Open agents in the debate: each debater and official its own model, tools or agent.

Unit tests script every agent's model with :class:`ScriptedChatModel`; integration tests
put the debaters on two :class:`StubOpenAIServer` endpoints over HTTP and drive the CLI's
``--agents-file``.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool

from debategraph import build_debate, recursion_limit
from debategraph.checkpoints import open_checkpointer, read_run
from debategraph.nodes.debate import ARGUE_STAGE, JUDGE_STAGE, MODERATE_STAGE, SUMMARY_STAGE
from debategraph.state.debate import Debater, Verdict
from debategraph.state.records import TOOL_STAGE, Turn
from tests.backends import decoded_dump
from tests.conftest import one_error_line, run_cli, stub_args
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply
from tests.openai_stub import StubOpenAIServer, StubReply

TOPIC = "This house would ban homework."
REACT_WARNING = "ignore:create_react_agent has been moved"


def verdict_args(winner: str = "Alice") -> dict[str, Any]:
    return {
        "winner": winner,
        "scores": [{"debater": "Alice", "criterion": "logic", "score": 8}],
        "rationale": f"{winner} used the numbers.",
        "strongest": [{"debater": "Bob", "argument": "Practice builds habits."}],
    }


def system_of(messages: list[BaseMessage]) -> str:
    return str(messages[0].content)


def prompt_text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def arguing(marker: str) -> ScriptedChatModel:
    """A debater's model: its n-th argument is ``<marker-n> ...``."""
    count = [0]

    def respond(messages: list[BaseMessage]) -> AIMessage:
        count[0] += 1
        return text_reply(f"<{marker}-{count[0]}> homework matters either way")

    return ScriptedChatModel(respond=respond)


def calculating(expression: str, marker: str) -> ScriptedChatModel:
    """A debater's model that calls the calculator once, then argues."""
    count = [0]

    def respond(messages: list[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            count[0] += 1
            return text_reply(f"<{marker}-{count[0]}> the sums favour me")
        return tool_reply("calculator", {"expression": expression})

    return ScriptedChatModel(respond=respond)


def unused() -> ScriptedChatModel:
    """The graph's model, where every agent has its own: no call may reach it."""
    return ScriptedChatModel(responses=[])


def invoke(graph: Any, config: dict[str, Any] | None = None) -> dict[str, Any]:
    config = {**(config or {}), "recursion_limit": recursion_limit(graph)}
    out: dict[str, Any] = graph.invoke({"topic": TOPIC}, config)
    return out


def run_debate(
    debaters: list[Any], tmp_path: Path, **settings: Any
) -> tuple[dict[str, Any], list[Turn], ScriptedChatModel]:
    """Run a debate on a SQLite checkpointer; its output, transcript and the graph's model."""
    model = settings.pop("model", None) or unused()
    with open_checkpointer(tmp_path / "d.sqlite") as saver:
        graph = build_debate(model, debaters=debaters, **settings).compile(checkpointer=saver)
        config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
        out = invoke(graph, config)
        turns: list[Turn] = graph.get_state(config).values["transcript"]
    return out, turns, model


# -- each agent its own model ----------------------------------------------------------


def test_each_debater_and_each_official_call_their_own_model(tmp_path: Path) -> None:
    alice, bob = arguing("alice"), arguing("bob")
    judge = ScriptedChatModel(responses=[tool_reply("Verdict", verdict_args())])
    moderator = ScriptedChatModel(
        responses=[
            tool_reply("ModeratorDecision", {"settled": False, "leading": "Bob", "reason": "r"})
        ]
    )
    debaters = [
        Debater(name="Alice", side="for the motion", model=alice),
        {"name": "Bob", "side": "against the motion", "model": bob},
    ]
    officials = [{"name": "judge", "model": judge}, {"name": "Moderator", "model": moderator}]
    out, turns, graph_model = run_debate(
        debaters, tmp_path, max_rounds=2, judge=True, moderator=True, officials=officials
    )
    assert graph_model.prompts == []
    assert [system_of(p).split(",")[0] for p in alice.prompts] == ["You are Alice"] * 2
    assert [system_of(p).split(",")[0] for p in bob.prompts] == ["You are Bob"] * 2
    assert [system_of(p).split(" ")[:2] for p in judge.prompts] == [["You", "judge"]]
    assert [system_of(p).split(" ")[:2] for p in moderator.prompts] == [["You", "moderate"]]
    assert out["verdict"] == Verdict.model_validate(verdict_args())
    assert [(t.agent, t.stage, t.model) for t in turns] == [
        ("Alice", ARGUE_STAGE, "ScriptedChatModel"),
        ("Bob", ARGUE_STAGE, "ScriptedChatModel"),
        ("moderator", MODERATE_STAGE, "ScriptedChatModel"),
        ("Alice", ARGUE_STAGE, "ScriptedChatModel"),
        ("Bob", ARGUE_STAGE, "ScriptedChatModel"),
        ("judge", JUDGE_STAGE, "ScriptedChatModel"),
    ]
    assert out["usage_by_model"]["ScriptedChatModel"].calls == 6
    assert set(out["usage_by_agent"]) == {"Alice", "Bob", "moderator", "judge"}


def test_an_official_without_its_own_model_uses_the_graphs(tmp_path: Path) -> None:
    judge = ScriptedChatModel(responses=[tool_reply("Verdict", verdict_args("Bob"))])
    summarizer = ScriptedChatModel(respond=lambda m: text_reply("<summary> both argued"))
    graph_model = arguing("graph")
    debaters = [
        {"name": "Alice", "side": "for", "model": arguing("alice")},
        "Bob:against",
    ]
    out, turns, _ = run_debate(
        debaters,
        tmp_path,
        model=graph_model,
        max_rounds=3,
        history="window",
        keep_last=1,
        judge=True,
        officials=[{"name": "judge", "model": judge}, {"name": "summarizer", "model": summarizer}],
    )
    assert out["verdict"].winner == "Bob"
    # Bob, a plain debater, argues on the graph's model; nothing else calls it.
    assert [system_of(p).split(",")[0] for p in graph_model.prompts] == ["You are Bob"] * 3
    assert summarizer.prompts and all(
        system_of(p).startswith("You summarise") for p in summarizer.prompts
    )
    assert out["summary"] == "<summary> both argued"
    assert {t.agent for t in turns if t.stage == SUMMARY_STAGE} == {"summarizer"}


# -- tools -----------------------------------------------------------------------------


def test_a_debaters_tool_calls_are_recorded_before_its_argument_and_shown_to_nobody(
    tmp_path: Path,
) -> None:
    alice = calculating("1234 * 2", "alice")
    judge = ScriptedChatModel(responses=[tool_reply("Verdict", verdict_args())])
    debaters = [
        {"name": "Alice", "side": "for", "model": alice, "tools": ["calculator"]},
        {"name": "Bob", "side": "against", "model": arguing("bob")},
    ]
    out, turns, _ = run_debate(
        debaters, tmp_path, max_rounds=2, judge=True, officials=[{"name": "judge", "model": judge}]
    )
    assert [(t.agent, t.role, t.stage, t.round) for t in turns] == [
        ("Alice", "tool", TOOL_STAGE, 1),
        ("Alice", "agent", ARGUE_STAGE, 1),
        ("Bob", "agent", ARGUE_STAGE, 1),
        ("Alice", "tool", TOOL_STAGE, 2),
        ("Alice", "agent", ARGUE_STAGE, 2),
        ("Bob", "agent", ARGUE_STAGE, 2),
        ("judge", "agent", JUDGE_STAGE, 2),
    ]
    call = turns[0]
    assert (call.tool, call.arguments, call.content, call.reason) == (
        "calculator",
        '{"expression": "1234 * 2"}',
        "2468",
        None,
    )
    assert turns[1].content == "<alice-1> the sums favour me"
    assert turns[1].usage.calls == 2  # the call that asked for the tool, and the argument
    # Alice's model got the result; the others never see it.
    assert any(isinstance(m, ToolMessage) and m.content == "2468" for m in alice.prompts[1])
    everyone_else = [*judge.prompts]
    assert everyone_else and all("2468" not in prompt_text(p) for p in everyone_else)
    # Word counts and rounds count arguments only.
    assert [(w.debater, w.round, w.words) for w in out["word_counts"]] == [
        ("Alice", 1, 5),
        ("Bob", 1, 5),
        ("Alice", 2, 5),
        ("Bob", 2, 5),
    ]
    assert out["rounds_completed"] == 2
    assert out["termination_reason"] == "rounds_completed"


def test_the_opponent_reads_the_argument_not_the_tool_call(tmp_path: Path) -> None:
    bob = arguing("bob")
    debaters = [
        {
            "name": "Alice",
            "side": "for",
            "model": calculating("777 + 1", "alice"),
            "tools": "calculator",
        },
        {"name": "Bob", "side": "against", "model": bob},
    ]
    run_debate(debaters, tmp_path, max_rounds=2)
    first = prompt_text(bob.prompts[0])
    assert "<alice-1> the sums favour me" in first
    assert all(
        "778" not in prompt_text(p) and "calculator" not in prompt_text(p) for p in bob.prompts
    )


# -- agents of one's own ---------------------------------------------------------------


@tool
def homework_hours(grade: int) -> str:
    """Hours of homework a week at a school grade."""
    return f"grade {grade}: {grade * 0.5:g} hours a week"


def react_reply(messages: list[BaseMessage]) -> AIMessage:
    """The react agent's model: look the hours up, then argue from them."""
    if isinstance(messages[-1], ToolMessage):
        return AIMessage(f"<react> {messages[-1].content} is too much for a child.")
    return tool_reply("homework_hours", {"grade": 6})


def react_agent() -> Any:
    """A ``create_react_agent`` with a tool, on a scripted model (stateless, reusable)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="create_react_agent has been moved")
        from langgraph.prebuilt import create_react_agent

        return create_react_agent(ScriptedChatModel(respond=react_reply), [homework_hours])


#: For ``--agents-file`` (``agent: tests.test_debate_agents:REACT_AGENT``).
REACT_AGENT = react_agent()


@pytest.mark.filterwarnings(REACT_WARNING)
def test_a_react_agent_with_a_tool_debates_and_its_tool_calls_are_recorded(
    tmp_path: Path,
) -> None:
    bob = arguing("bob")
    debaters = [
        {"name": "Alice", "side": "for", "agent": react_agent()},
        {"name": "Bob", "side": "against", "model": bob},
    ]
    out, turns, _ = run_debate(debaters, tmp_path, max_rounds=2)
    assert [(t.agent, t.role, t.stage, t.round) for t in turns] == [
        ("Alice", "tool", TOOL_STAGE, 1),
        ("Alice", "agent", ARGUE_STAGE, 1),
        ("Bob", "agent", ARGUE_STAGE, 1),
        ("Alice", "tool", TOOL_STAGE, 2),
        ("Alice", "agent", ARGUE_STAGE, 2),
        ("Bob", "agent", ARGUE_STAGE, 2),
    ]
    call, argument = turns[0], turns[1]
    assert (call.tool, call.arguments, call.content) == (
        "homework_hours",
        '{"grade": 6}',
        "grade 6: 3 hours a week",
    )
    assert argument.content == "<react> grade 6: 3 hours a week is too much for a child."
    assert argument.model == "agent:LangGraph"
    assert "agent:LangGraph" in out["usage_by_model"]
    # Bob reads Alice's argument, never her tool call as a message of its own.
    assert f"from Alice (for):\n{argument.content}" in prompt_text(bob.prompts[0])
    assert all(prompt_text(p).count("grade 6: 3 hours") == 1 for p in bob.prompts[:1])
    assert [w.debater for w in out["word_counts"]] == ["Alice", "Bob", "Alice", "Bob"]


def test_a_debaters_agent_that_raises_loses_its_turn_and_the_debate_goes_on(
    tmp_path: Path,
) -> None:
    def fail(inputs: dict[str, Any]) -> Any:
        raise ConnectionError("vector store down")

    bob = arguing("bob")
    debaters = [
        {"name": "Alice", "side": "for", "agent": RunnableLambda(fail, name="broken")},
        {"name": "Bob", "side": "against", "model": bob},
    ]
    out, turns, _ = run_debate(debaters, tmp_path, max_rounds=3)
    assert out["termination_reason"] == "rounds_completed"
    assert out["rounds_completed"] == 3
    alice = [t for t in turns if t.agent == "Alice"]
    assert [(t.content, t.reason, t.model) for t in alice] == [
        ("", "the agent failed: ConnectionError: vector store down", "agent:broken")
    ] * 3
    assert [t.content for t in turns if t.agent == "Bob"] == [
        "<bob-1> homework matters either way",
        "<bob-2> homework matters either way",
        "<bob-3> homework matters either way",
    ]
    # Bob never reads an empty argument: each round he opens with his own case.
    assert all(
        "No opposing argument has been made to you yet" in prompt_text(p) for p in bob.prompts
    )


def test_every_agent_failing_ends_the_round_as_empty(tmp_path: Path) -> None:
    def fail(inputs: dict[str, Any]) -> Any:
        return {"messages": []}

    debaters = [
        {"name": "Alice", "side": "for", "agent": RunnableLambda(fail)},
        {"name": "Bob", "side": "against", "agent": RunnableLambda(fail)},
    ]
    out, turns, _ = run_debate(debaters, tmp_path, max_rounds=3)
    assert out["termination_reason"] == "error"
    assert [t.reason for t in turns] == ["the agent returned no messages"] * 2


# -- bad records -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"officials": [{"name": "referee", "model": "m"}]}, "a debate has no official 'referee'"),
        (
            {"officials": [{"name": "judge", "model": "m"}]},
            "official 'judge' is given a record, but",
        ),
        (
            {"officials": [{"name": "summarizer", "model": "m"}], "judge": True},
            "set history='window'",
        ),
        ({"officials": {"name": "judge"}, "judge": True}, "officials must be a list"),
        (
            {"debaters": [{"name": "Ann", "side": "for", "modle": "m"}, "Bob:against"]},
            "bad or missing: modle",
        ),
        (
            {"debaters": [{"name": "Ann", "side": "for", "tools": ["abacus"]}, "Bob:against"]},
            "agent 'Ann': unknown tool 'abacus'",
        ),
        (
            {
                "debaters": [
                    {"name": "Ann", "side": "for", "model": "local", "tools": "calculator"},
                    "B:c",
                ]
            },
            "agent 'Ann' has tools, but its model local cannot call tools",
        ),
        (
            {
                "debaters": [
                    {
                        "name": "Ann",
                        "side": "for",
                        "model": {"model": "m", "api_key_env": "DG_NO_KEY"},
                    },
                    "Bob:against",
                ]
            },
            "agent 'Ann': model m: its API key variable DG_NO_KEY is not set",
        ),
        (
            {"debaters": [{"name": "Ann", "side": "for", "agent": 42}, "Bob:against"]},
            "agent 'Ann': agent 42 is not a LangChain Runnable",
        ),
    ],
)
def test_bad_agent_records_are_refused_when_the_graph_is_built(
    settings: dict[str, Any], says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DG_NO_KEY", raising=False)
    with pytest.raises(ValueError) as err:
        build_debate(unused(), **settings)
    assert says in str(err.value)
    assert "\n" not in str(err.value)


# -- two endpoints over HTTP -----------------------------------------------------------


def last_is_tool_result(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    return bool(messages) and messages[-1].get("role") == "tool"


def system_text(body: dict[str, Any]) -> str:
    return str((body.get("messages") or [{}])[0].get("content"))


def chosen_tool(body: dict[str, Any]) -> str | None:
    tools = body.get("tools") or []
    return tools[0]["function"]["name"] if tools else None


def endpoint_a(body: dict[str, Any]) -> Any:
    """Alice's endpoint: she multiplies first, then argues."""
    if chosen_tool(body) == "calculator" and not last_is_tool_result(body):
        return StubReply(tool_args={"expression": "48 * 3"}, tool_name="calculator")
    return StubReply(content="<alice> 144 hours a year is too much")


def endpoint_b(body: dict[str, Any]) -> Any:
    """Bob's and the judge's endpoint."""
    if chosen_tool(body) == "Verdict":
        return verdict_args("Bob")
    if chosen_tool(body) == "ModeratorDecision":
        return {"settled": False, "leading": "tie", "reason": "Close."}
    return "<bob> practice builds habits"


@pytest.fixture
def endpoints() -> Iterator[tuple[StubOpenAIServer, StubOpenAIServer]]:
    # Each lists the models named there: the CLI refuses one its endpoint does not list.
    with (
        StubOpenAIServer(endpoint_a, models=("alice-m",)) as a,
        StubOpenAIServer(endpoint_b, models=("bob-m", "judge-m")) as b,
    ):
        yield a, b


def who_called(server: StubOpenAIServer) -> list[tuple[str, str]]:
    """``(model, first words of the system prompt)`` of every request the server got."""
    return [(r["model"], " ".join(system_text(r).split()[:3])) for r in server.requests]


def test_two_endpoints_each_receive_only_their_agents_calls(
    endpoints: tuple[StubOpenAIServer, StubOpenAIServer], tmp_path: Path
) -> None:
    a, b = endpoints
    debaters = [
        {"name": "Alice", "side": "for", "model": f"alice-m@{a.url}", "tools": ["calculator"]},
        {"name": "Bob", "side": "against", "model": {"model": "bob-m", "base_url": b.url}},
    ]
    officials = [{"name": "judge", "model": f"judge-m@{b.url}"}]
    out, turns, graph_model = run_debate(
        debaters, tmp_path, max_rounds=2, judge=True, officials=officials
    )
    assert graph_model.prompts == []
    # Alice: per round a call asking for the tool and one arguing, all on endpoint A.
    assert who_called(a) == [("alice-m", "You are Alice,")] * 4
    assert who_called(b) == [("bob-m", "You are Bob,")] * 2 + [("judge-m", "You judge a")]
    assert [(t.agent, t.role, t.model) for t in turns] == [
        ("Alice", "tool", None),
        ("Alice", "agent", f"alice-m@{a.url}"),
        ("Bob", "agent", f"bob-m@{b.url}"),
        ("Alice", "tool", None),
        ("Alice", "agent", f"alice-m@{a.url}"),
        ("Bob", "agent", f"bob-m@{b.url}"),
        ("judge", "agent", f"judge-m@{b.url}"),
    ]
    assert turns[0].content == "144"
    assert out["verdict"].winner == "Bob"
    by_model = out["usage_by_model"]
    assert {k: v.calls for k, v in by_model.items()} == {
        f"alice-m@{a.url}": 4,
        f"bob-m@{b.url}": 2,
        f"judge-m@{b.url}": 1,
    }
    # Bob's requests never carry Alice's tool call or its result.
    assert all("48 * 3" not in json.dumps(r) for r in b.requests)


# -- the CLI's --agents-file -----------------------------------------------------------


def write_agents(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def run_stub() -> Iterator[StubOpenAIServer]:
    """The run's own endpoint (``--base-url``): agents with a model of their own skip it."""
    with StubOpenAIServer(endpoint_b) as server:
        yield server


def test_cli_agents_file_puts_each_agent_on_its_model_and_resume_keeps_them(
    endpoints: tuple[StubOpenAIServer, StubOpenAIServer],
    run_stub: StubOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    checkpoint_url: str,
) -> None:
    a, b = endpoints
    monkeypatch.setenv("DG_TEST_BOB_KEY", "sk-bob-secret-4711")
    agents = write_agents(
        tmp_path,
        f"""\
agents:
  - name: Alice
    side: for the motion
    model: alice-m@{a.url}
    tools: [calculator]
  - name: Bob
    side: against the motion
    model:
      model: bob-m
      base_url: {b.url}
      api_key_env: DG_TEST_BOB_KEY
  - name: judge
    model: judge-m@{b.url}
""",
    )
    db = checkpoint_url
    args = ["debate", TOPIC, "--agents-file", str(agents), "--rounds", "2", "--judge"]
    args += ["--pause-after-round", "--thread", "t", "--json"]
    code, out, err = run_cli([*args, *stub_args(run_stub, db)], capsys)
    assert code == 0, err
    assert json.loads(out)["status"] == "waiting"
    assert who_called(a) == [("alice-m", "You are Alice,")] * 2
    assert who_called(b) == [("bob-m", "You are Bob,")]

    with open_checkpointer(db) as saver:
        run = read_run(saver, "t")
    assert run is not None
    assert run.settings["debaters"][0]["model"] == f"alice-m@{a.url}"
    assert run.settings["debaters"][1]["model"] == {
        "model": "bob-m",
        "base_url": b.url,
        "api_key_env": "DG_TEST_BOB_KEY",
    }
    assert run.settings["officials"] == [{"name": "judge", "model": f"judge-m@{b.url}"}]

    code, out, err = run_cli(["resume", "t", "--db", str(db), "--approve", "--json"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert (result["termination_reason"], result["winner"]) == ("rounds_completed", "Bob")
    assert who_called(a) == [("alice-m", "You are Alice,")] * 4
    assert who_called(b) == [("bob-m", "You are Bob,")] * 2 + [("judge-m", "You judge a")]
    assert run_stub.requests == []

    code, out, err = run_cli(["show", "t", "--db", str(db)], capsys)
    assert code == 0, err
    assert 'calculator({"expression": "48 * 3"}) -> 144' in out
    code, out, err = run_cli(["export", "t", "--db", str(db)], capsys)
    assert code == 0, err
    assert '**Alice** _(tool)_ `calculator({"expression": "48 * 3"}) -> 144`' in out
    # The key went to Bob's endpoint, is named by its variable, and nothing holds it.
    assert "Bearer sk-bob-secret-4711" in b.keys
    assert "sk-bob-secret-4711" not in out
    stored = decoded_dump(db)
    assert "48 * 3" in stored and "DG_TEST_BOB_KEY" in stored  # the checkpoints, decoded
    written = [p for p in tmp_path.iterdir() if p.is_file()]
    assert all("sk-bob-secret-4711" not in decoded_dump(p) for p in [db, *written])


@pytest.mark.filterwarnings(REACT_WARNING)
def test_cli_react_agent_from_the_agents_file_debates_and_show_and_export_its_tool_calls(
    run_stub: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = write_agents(
        tmp_path,
        """\
- name: Alice
  side: for
  agent: tests.test_debate_agents:REACT_AGENT
- {name: Bob, side: against}
""",
    )
    db = tmp_path / "d.sqlite"
    args = ["debate", TOPIC, "--agents-file", str(agents), "--rounds", "1", "--thread", "r"]
    code, out, err = run_cli([*args, "--json", *stub_args(run_stub, db)], capsys)
    assert code == 0, err
    assert json.loads(out)["termination_reason"] == "rounds_completed"
    assert [" ".join(system_text(r).split()[:3]) for r in run_stub.requests] == ["You are Bob,"]
    line = 'homework_hours({"grade": 6}) -> grade 6: 3 hours a week'
    code, out, err = run_cli(["show", "r", "--db", str(db)], capsys)
    assert code == 0, err
    assert line in out
    assert out.index(line) < out.index("<react> grade 6")
    code, out, err = run_cli(["export", "r", "--db", str(db)], capsys)
    assert code == 0, err
    assert f"**Alice** _(tool)_ `{line}`" in out


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("- name: Ann\n  side: for\n- name: Bob\n  model: m\n", "line 3: field 'side' is missing"),
        (
            "- {name: Ann, side: for}\n- {name: Bob, side: against, modle: m}\n",
            "line 2: unknown field 'modle'",
        ),
        (
            "- {name: Ann, side: for}\n- {name: Bob, side: against, tools: [abacus]}\n",
            "line 2: agent 'Bob': unknown tool 'abacus'",
        ),
        ("- {name: Ann, side: for}\n- Bob:against\n", "line 2: an agent must be a mapping"),
        (
            "- {name: Ann, side: for}\n- {name: ann, side: against}\n",
            "line 2: two agents are named 'ann' (also line 1)",
        ),
        ("- {name: judge, model: m}\n", "it names no debater"),
    ],
)
def test_cli_a_malformed_agents_file_gets_one_line_naming_file_line_and_field(
    text: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = write_agents(tmp_path, text)
    args = ["debate", TOPIC, "--agents-file", str(agents), "--db", str(tmp_path / "d.sqlite")]
    code, out, err = run_cli(args, capsys)
    assert code == 2, err
    line = one_error_line(err)
    assert f"--agents-file {agents}" in line
    assert says in line
    assert out == ""


@pytest.mark.parametrize(
    ("extra", "text", "says"),
    [
        (
            ["--debater", "Ann:for", "--debater", "Bob:against"],
            "- {name: Ann, side: for}\n- {name: Bob, side: against}\n",
            "give the debaters with --debater or with --agents-file, not both",
        ),
        (
            [],
            "- {name: Ann, side: for}\n- {name: Bob, side: against}\n- {name: judge, model: m}\n",
            "official 'judge' is given a record, but this debate has no judge: set judge=True "
            "(--judge)",
        ),
    ],
)
def test_cli_agents_file_conflicts_get_one_line(
    extra: list[str], text: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = write_agents(tmp_path, text)
    args = ["debate", TOPIC, "--agents-file", str(agents), *extra]
    code, out, err = run_cli([*args, "--db", str(tmp_path / "d.sqlite")], capsys)
    assert code == 2, err
    assert says in one_error_line(err)
    assert out == ""


@pytest.mark.filterwarnings(REACT_WARNING)
def test_an_agent_graph_keeps_no_checkpoints_in_the_debates_thread(tmp_path: Path) -> None:
    """A user's compiled graph runs without a checkpointer of its own: the debate's
    thread holds only the debate's steps (not every step of every turn, with its
    prompt), under the CLI's ``durability="sync"`` streaming too."""
    import asyncio

    debaters = [
        {"name": "Alice", "side": "for", "agent": react_agent()},
        {"name": "Bob", "side": "against", "model": arguing("bob")},
    ]
    graph_db = tmp_path / "t.sqlite"
    with open_checkpointer(str(graph_db)) as saver:
        graph = build_debate(debaters=debaters, max_rounds=1).compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "t"}, "recursion_limit": recursion_limit(graph)}

        async def stream() -> None:
            modes: Any = ["updates", "messages"]
            async for _ in graph.astream(
                {"topic": "T"}, config, stream_mode=modes, durability="sync"
            ):
                pass

        asyncio.run(stream())
        turns = graph.get_state(config).values["transcript"]
        namespaces = {c.config["configurable"]["checkpoint_ns"] for c in saver.list(config)}
    assert [(t.agent, t.role, t.reason) for t in turns][:2] == [
        ("Alice", "tool", None),
        ("Alice", "agent", None),
    ]
    assert namespaces == {""}
