"""The shared core of open agents: model specs, the tool loop, bring-your-own agents.

Each pattern's tests show its agents with models, tools and agents of their own; these
test the one place that does the work (``nodes/agent.py``, ``models/loops.py``,
``models/spec.py``, ``nodes/tools.py``, the calculator) with exact scripted replies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from pydantic import BaseModel, ValidationError

from debategraph.errors import UsageError
from debategraph.models import ModelSpec, bind_model
from debategraph.models.loops import CAP_REACHED
from debategraph.models.spec import parse_model
from debategraph.nodes.agent import Agent, agent_of, officials_of, recorded
from debategraph.nodes.tools import resolve_tools
from debategraph.state.base import charge_update
from debategraph.state.records import TOOL_STAGE, AgentSpec, Participant, Turn
from debategraph.strategies.calculator import CalculatorError, calculate
from tests.conftest import run_cli, stub_args
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply
from tests.openai_stub import StubOpenAIServer

PROMPT = [SystemMessage("You solve."), HumanMessage("What is 48 + 24?")]


class Reply(BaseModel):
    """A typed answer."""

    reasoning: str
    answer: str


def call(name: str, args: dict[str, Any]) -> AIMessage:
    return tool_reply(name, args)


# -- model specs -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "model", "base_url"),
    [
        ("local", "local", None),
        ("local:/models/x.gguf", "local:/models/x.gguf", None),
        ("gpt-4o-mini", "gpt-4o-mini", None),
        ("openai:gpt-4o-mini", "gpt-4o-mini", None),
        ("qwen2.5:7b@http://127.0.0.1:11434/v1", "qwen2.5:7b", "http://127.0.0.1:11434/v1"),
        ({"model": "m", "base_url": "http://h:1/v1", "timeout": 5}, "m", "http://h:1/v1"),
    ],
)
def test_model_specs_name_the_model_and_its_endpoint(
    given: Any, model: str, base_url: str | None
) -> None:
    spec = parse_model(given, "agent 'a'")
    assert isinstance(spec, ModelSpec)
    assert (spec.model, spec.base_url) == (model, base_url)


def test_a_model_mapping_takes_its_fields_and_names_its_key_by_variable() -> None:
    spec = parse_model(
        {"model": "m", "api_key_env": "MY_KEY", "temperature": 0.1, "max_tokens": 9}, "a"
    )
    assert (spec.api_key_env, spec.temperature, spec.max_tokens) == ("MY_KEY", 0.1, 9)
    assert spec.label == "m"


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("", "model is empty"),
        ("m@ftp://x", "is not an http(s) URL"),
        ({"model": "m", "api_key": "sk-secret"}, "give 'api_key_env'"),
        ({"model": "m", "colour": 1}, "unknown model field 'colour'"),
        ({"base_url": "http://h/v1"}, "needs 'model'"),
        ({"model": "m", "temperature": "hot"}, "'temperature' must be a number"),
        ({"model": "m", "timeout": -1}, "timeout -1 must be > 0"),
        (3, "is not a model spec"),
    ],
)
def test_a_bad_model_spec_gets_one_line_naming_the_agent(given: Any, says: str) -> None:
    with pytest.raises(ValueError, match=r"^agent 'ann'") as err:
        parse_model(given, "agent 'ann'")
    assert says in str(err.value)
    assert "\n" not in str(err.value)
    assert "sk-secret" not in str(err.value)


def test_a_missing_key_variable_is_named_with_the_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DG_TEST_KEY", raising=False)
    member = Participant(name="ann", model={"model": "m", "api_key_env": "DG_TEST_KEY"})
    with pytest.raises(ValueError, match=r"agent 'ann'.*DG_TEST_KEY is not set"):
        agent_of(member, None)
    monkeypatch.setenv("DG_TEST_KEY", "sk-live-123")
    agent = agent_of(member, None)
    assert bind_model(agent.own).chat.openai_api_key.get_secret_value() == "sk-live-123"  # type: ignore[attr-defined]


def test_an_agent_record_refuses_fields_it_does_not_know() -> None:
    with pytest.raises(ValidationError, match="modle"):
        Participant(name="ann", modle="gpt")  # type: ignore[call-arg]


def test_tools_on_an_embedded_model_are_refused_when_the_graph_is_built() -> None:
    with pytest.raises(ValueError, match="agent 'ann' has tools, but its model local"):
        agent_of(Participant(name="ann", model="local", tools=["calculator"]), None)


def test_unknown_tools_and_agents_are_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"unknown tool 'abacus'.*calculator"):
        agent_of(Participant(name="ann", tools=["abacus"]), None)
    with pytest.raises(ValueError, match="agent 'ann': agent 42 is not a LangChain Runnable"):
        agent_of(Participant(name="ann", agent=42), None)
    with pytest.raises(ValueError, match="cannot import 'no_such_module'"):
        agent_of(Participant(name="ann", agent="no_such_module:x"), None)


def test_officials_are_checked_by_name() -> None:
    allowed = {"judge": "gives the verdict", "moderator": "keeps order"}
    got = officials_of([{"name": "Judge", "model": "m@http://h:1/v1"}], allowed, "a debate")
    assert list(got) == ["judge"]
    with pytest.raises(ValueError, match=r"a debate has no official 'referee'.*judge, moderator"):
        officials_of([{"name": "referee"}], allowed, "a debate")
    with pytest.raises(ValueError, match="official 'judge' is given twice"):
        officials_of([{"name": "judge"}, {"name": "judge"}], allowed, "a debate")


# -- the calculator ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("48 + 48 / 2", "72"),
        ("0.1 + 0.2", "0.3"),
        ("(1 + 2) ** 3 % 5", "2"),
        ("-7 // 2", "-4"),
        ("2 ^ 10", "1024"),
        ("10 ** -3", "0.001"),
        ("2 / 3", "2/3 (about 0.666666666667)"),
    ],
)
def test_the_calculator_is_exact(expression: str, value: str) -> None:
    assert calculate(expression) == value


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        ("1 / 0", "division by zero"),
        ("5 % 0", "division by zero"),
        ("0 ** -1", "division by zero"),
        ("9 ** 9 ** 9", "result too large"),
        ("2 ** 0.5", "not a whole number"),
        ("__import__('os').system('true')", "is not arithmetic"),
        ("x + 1", "is not arithmetic"),
        ("1e999", "not a finite number"),
        ("1" * 600, "at most 500"),
        ("+".join(["1"] * 150), "more than 200 parts"),
        ("", "is empty"),
    ],
)
def test_the_calculator_refuses_what_has_no_value(expression: str, says: str) -> None:
    with pytest.raises(CalculatorError, match=None) as err:
        calculate(expression)
    assert says in str(err.value)


# -- the tool loop -------------------------------------------------------------------


def tools_agent(model: ScriptedChatModel, cap: int = 4, tools: Any = ("calculator",)) -> Agent:
    return agent_of(
        Participant(name="ann", tools=list(tools), max_tool_calls=cap), bind_model(model)
    )


def test_a_tool_loop_runs_the_calls_then_answers_with_their_results() -> None:
    model = ScriptedChatModel(
        responses=[
            call("calculator", {"expression": "48 + 24"}),
            text_reply("I have it."),
            tool_reply("Reply", {"reasoning": "48 + 24 = 72", "answer": "72"}),
        ]
    )
    result = tools_agent(model).ask(None, Reply, PROMPT)
    assert result.value == Reply(reasoning="48 + 24 = 72", answer="72")
    (record,) = result.records
    assert (record.tool, record.arguments, record.content, record.reason) == (
        "calculator",
        '{"expression": "48 + 24"}',
        "72",
        None,
    )
    assert result.usage.calls == 3
    tool_message = next(m for m in model.prompts[1] if isinstance(m, ToolMessage))
    assert tool_message.content == "72"


def test_a_tool_that_raises_gives_the_agent_its_error() -> None:
    @tool
    def broken(x: int) -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    model = ScriptedChatModel(
        responses=[
            call("broken", {"x": 1}),
            call("calculator", {"expression": "1/0"}),
            text_reply("Nothing works."),
        ]
    )
    result = tools_agent(model, tools=[broken, "calculator"]).say(None, PROMPT)
    assert result.text == "Nothing works."
    assert [r.reason for r in result.records] == [
        "RuntimeError: disk on fire",
        "CalculatorError: division by zero",
    ]
    assert "Error: RuntimeError: disk on fire" in [m.content for m in model.prompts[1]]


def test_a_tool_loop_that_hits_its_cap_is_recorded_and_the_agent_answers_without_tools() -> None:
    model = ScriptedChatModel(
        responses=[
            call("calculator", {"expression": "1+1"}),
            call("calculator", {"expression": "2+2"}),
            tool_reply("Reply", {"reasoning": "enough", "answer": "4"}),
        ]
    )
    result = tools_agent(model, cap=1).ask(None, Reply, PROMPT)
    assert result.value is not None and result.value.answer == "4"
    assert [r.reason for r in result.records] == [None, CAP_REACHED.format(cap=1)]
    assert model.bound_tool_choice == "Reply"  # the answer is asked for without the tools


def test_recorded_puts_the_tool_calls_before_the_turn_and_charges_the_model() -> None:
    model = ScriptedChatModel(
        responses=[call("calculator", {"expression": "6*7"}), text_reply("42.")]
    )
    result = tools_agent(model).say(None, PROMPT)
    turn = Turn(agent="ann", content=result.text, stage="argue", round=2, usage=result.usage)
    records = recorded(result, turn)
    assert [(r.agent, r.role, r.stage, r.round) for r in records] == [
        ("ann", "tool", TOOL_STAGE, 2),
        ("ann", "agent", "argue", 2),
    ]
    assert records[-1].model == "ScriptedChatModel"
    charge = charge_update(records)
    assert charge["usage_by_model"]["ScriptedChatModel"].calls == 2


# -- agents of one's own -------------------------------------------------------------


def byo(reply: Any) -> RunnableLambda[Any, Any]:
    def run(inputs: dict[str, Any]) -> Any:
        return reply(inputs) if callable(reply) else reply

    return RunnableLambda(run, name="mine")


def test_an_agent_of_ones_own_makes_the_turn_and_its_tool_calls_are_recorded() -> None:
    def answer(inputs: dict[str, Any]) -> dict[str, Any]:
        asked = AIMessage("", tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1"}])
        found = ToolMessage("x is 3", tool_call_id="c1")
        return {"messages": [*inputs["messages"], asked, found, AIMessage("x is 3, I say.")]}

    agent = agent_of(Participant(name="ann", agent=byo(answer)), None)
    result = agent.say(None, PROMPT)
    assert (result.text, result.model) == ("x is 3, I say.", "agent:mine")
    (record,) = result.records
    assert (record.tool, record.content, record.arguments) == ("search", "x is 3", '{"q": "x"}')
    assert result.usage.calls == 2


def test_an_agent_of_ones_own_that_fails_loses_its_turn_with_the_reason() -> None:
    def fail(inputs: dict[str, Any]) -> Any:
        raise ConnectionError("vector store down")

    for runnable, reason in [
        (byo(fail), "the agent failed: ConnectionError: vector store down"),
        (byo({"messages": []}), "the agent returned no messages"),
        (byo({"answer": 1}), "the agent returned no messages"),
    ]:
        result = agent_of(Participant(name="ann", agent=runnable), None).say(None, PROMPT)
        assert (result.text, result.reason) == ("", reason)


def test_typed_fields_of_an_agent_of_ones_own_are_read_with_the_structured_call() -> None:
    reader = ScriptedChatModel(responses=[tool_reply("Reply", {"reasoning": "r", "answer": "7"})])
    agent = agent_of(
        Participant(name="ann", agent=byo({"messages": [AIMessage("It is 7.")]})),
        bind_model(reader),
    )
    result = agent.ask(None, Reply, PROMPT)
    assert result.value == Reply(reasoning="r", answer="7")
    assert reader.prompts[0][-1].content == "It is 7."
    as_json = byo({"messages": [AIMessage('{"reasoning": "j", "answer": "8"}')]})
    result = agent_of(Participant(name="ann", agent=as_json), None).ask(None, Reply, PROMPT)
    assert result.value == Reply(reasoning="j", answer="8")  # no call: it wrote the JSON


def test_an_agents_own_model_comes_before_the_graphs() -> None:
    graph_model = ScriptedChatModel(responses=[text_reply("graph")])
    own = ScriptedChatModel(responses=[text_reply("own")])
    agent = agent_of(Participant(name="ann", model=own), bind_model(graph_model))
    assert agent.say(None, PROMPT).text == "own"
    assert Agent("bob", bind_model(graph_model)).say(None, PROMPT).text == "graph"


def test_resolve_tools_wraps_functions_and_refuses_two_of_one_name() -> None:
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    (wrapped,) = resolve_tools([add], "agent 'ann'")
    assert wrapped.name == "add"
    with pytest.raises(ValueError, match="two tools are named 'calculator'"):
        resolve_tools(["calculator", "calculator"], "agent 'ann'")


def test_a_tool_loop_on_a_model_without_tool_calls_is_refused_in_one_line() -> None:
    binding = bind_model(ScriptedChatModel(responses=[]))._replace(tool_calls=False, name="local")
    member = Participant(name="ann", tools=["calculator"])
    with pytest.raises(ValueError, match="agent 'ann' has tools, but its model local cannot"):
        agent_of(member, binding)  # when the graph is built, where its model is known
    agent = Agent("ann", binding, tools=resolve_tools(member.tools, "ann"))
    with pytest.raises(UsageError, match="agent 'ann' has tools, but model local cannot call"):
        agent.say(None, PROMPT)  # else (a run's context names it) at the first call


def test_agent_spec_takes_one_tool_or_many() -> None:
    assert AgentSpec(name="a", tools="calculator").tools == ("calculator",)
    assert AgentSpec(name="a", tools=None).tools == ()


# -- the agents file -----------------------------------------------------------------


def test_one_agents_file_reader_splits_officials_and_names_lines(tmp_path: Any) -> None:
    from debategraph.runs.agents_file import read_agents_file

    path = tmp_path / "roster.yaml"
    path.write_text(
        "agents:\n"
        "  - Writer: drafts the text\n"
        "  - name: Reviewer\n"
        "    model: m@http://127.0.0.1:9/v1\n"
        "    tools: [calculator]\n"
        "  - name: Selector\n"
        "    model: {model: big, base_url: 'http://127.0.0.1:9/v1'}\n",
        encoding="utf-8",
    )
    roster = read_agents_file(str(path), Participant, {"selector"}, text_form=True)
    assert roster.agents[0] == "Writer: drafts the text"
    assert roster.agents[1]["tools"] == ["calculator"]
    assert [o["name"] for o in roster.officials] == ["Selector"]
    path.write_text("- name: a\n- name: b\n  colour: red\n- name: A\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"roster.yaml line 2: unknown field 'colour'"):
        read_agents_file(str(path), Participant)
    path.write_text("- name: a\n- name: b\n- name: A\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"line 3: two agents are named 'A' \(also line 1\)"):
        read_agents_file(str(path), Participant)
    path.write_text("- name: a\n  model: {model: m, api_key: sk-x}\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"line 1: agent 'a'.*api_key_env") as err:
        read_agents_file(str(path), Participant)
    assert "sk-x" not in str(err.value)


# -- what a review found -------------------------------------------------------------


@pytest.mark.parametrize(
    "given",
    [
        "gpt@https://user:sk-SECRET@host/v1",
        "gpt@https://host/v1?api-key=sk-SECRET",
        {"model": "gpt", "base_url": "https://host/v1?token=sk-SECRET"},
    ],
)
def test_a_key_in_a_base_url_is_refused_without_repeating_it(given: Any) -> None:
    with pytest.raises(ValueError, match="may not carry a user, password or key") as err:
        parse_model(given, "agent 'ann'")
    assert "SECRET" not in str(err.value)


def test_a_model_name_may_hold_an_at_sign() -> None:
    spec = parse_model("team@corp/model@http://127.0.0.1:9/v1", "a")
    assert (spec.model, spec.base_url) == ("team@corp/model", "http://127.0.0.1:9/v1")


def test_a_bare_model_name_is_at_the_runs_endpoint_and_others_get_no_run_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RUN_KEY", "sk-run-key")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-key")
    spec = ModelSpec(model="run-model", base_url="http://127.0.0.1:7/v1", api_key_env="RUN_KEY")
    run = bind_model(spec)
    same = agent_of(Participant(name="ann", model="other-model"), run).binding(None)
    assert (same.name, same.endpoint) == ("other-model@http://127.0.0.1:7/v1", run.endpoint)
    assert same.chat.openai_api_key.get_secret_value() == "sk-run-key"  # type: ignore[attr-defined]
    away = agent_of(Participant(name="bob", model="m@http://127.0.0.1:8/v1"), run).binding(None)
    assert away.chat.openai_api_key.get_secret_value() == "not-needed"  # type: ignore[attr-defined]


def test_openai_api_key_goes_only_to_the_endpoint_it_is_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The run's own model too: a base URL named without a key gets no key."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert ModelSpec(model="m", base_url="http://127.0.0.1:9/v1").key() is None
    assert ModelSpec(model="m").key() == "sk-openai-key"
    assert ModelSpec(model="m", base_url="https://api.openai.com/v1/").key() == "sk-openai-key"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert ModelSpec(model="m", base_url="http://127.0.0.1:9/v1").key() == "sk-openai-key"
    assert ModelSpec(model="m", base_url="https://api.openai.com/v1").key() is None
    monkeypatch.setenv("MINE", "sk-mine")
    assert ModelSpec(model="m", base_url="http://x:1/v1", api_key_env="MINE").key() == "sk-mine"


def test_the_calculator_never_overflows_into_a_crash() -> None:
    assert calculate("9" * 499) == "9" * 499
    assert calculate("10 ** 1000 / 7").endswith("(about 1.42857142857e+999)")
    assert calculate("1 / (3 * 10 ** 999)").endswith("(about 3.33333333333e-1000)")
    assert len(calculate("2 ** 4000")) == 1205  # 4001 bits is allowed


def test_a_tool_that_is_not_a_name_is_one_line() -> None:
    from debategraph.nodes.tools import check_tool_names

    with pytest.raises(ValueError, match="tool 1 is not a tool's name"):
        check_tool_names([1], "agent 'ann'")  # type: ignore[list-item]


def test_invalid_tool_call_arguments_are_recorded_not_run() -> None:
    bad = AIMessage(
        "",
        invalid_tool_calls=[
            {"name": "calculator", "args": "{oops", "id": "c1", "error": "bad JSON"}
        ],
    )
    model = ScriptedChatModel(responses=[bad, text_reply("No tools, then.")])
    result = tools_agent(model).say(None, PROMPT)
    assert result.text == "No tools, then."
    (record,) = result.records
    assert (record.tool, record.reason) == ("calculator", "invalid arguments: bad JSON")


def test_an_agent_returning_only_its_new_messages_has_its_tool_calls_recorded() -> None:
    asked = AIMessage("", tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1"}])
    reply = {"messages": [asked, ToolMessage("x is 3", tool_call_id="c1"), AIMessage("3.")]}
    result = agent_of(Participant(name="ann", agent=byo(reply)), None).say(None, PROMPT[:1])
    assert (result.text, [r.tool for r in result.records]) == ("3.", ["search"])


def test_tools_of_a_stage_participant_are_refused_on_the_embedded_model() -> None:
    from debategraph.runs.agents import own_agents, refuse_tools_on_embedded

    settings = {
        "stages": [
            {"name": "Debate", "participants": [{"name": "Ann", "tools": ["calculator"]}]},
        ],
        "officials": [{"name": "chair", "model": "m@http://h:1/v1"}],
        "agents": [{"name": "Bob", "model": "local"}, {"name": "Cy", "model": "m"}],
    }
    with pytest.raises(UsageError, match="agent 'Ann' has tools"):
        refuse_tools_on_embedded(settings)
    assert own_agents(settings) == ["cy"]  # Bob is on the embedded model, the chair no speaker


def test_the_cli_sends_a_key_only_where_it_was_named(
    stub: StubOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--api-key-env`` names the endpoint's key; ``OPENAI_API_KEY`` stays with OpenAI."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-for-openai")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("GATEWAY_KEY", "sk-for-the-gateway")
    db = tmp_path / "d.sqlite"
    code, _, err = run_cli(["solve", "2+3?", *stub_args(stub, db)], capsys)
    assert code == 0, err
    assert set(stub.keys) == {"Bearer not-needed"}  # not OpenAI's key
    stub.reset_stats()
    args = ["solve", "2+3?", *stub_args(stub, db), "--api-key-env", "GATEWAY_KEY"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert set(stub.keys) == {"Bearer sk-for-the-gateway"}
