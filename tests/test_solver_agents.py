"""Open agents in the solver debate: solvers with models, tools and agents of their own.

Unit tests script each solver's own model (:class:`~tests.fake_model.ScriptedChatModel`);
integration tests put solvers on two stub endpoints over HTTP, and drive ``debategraph
solve`` with ``--tools calculator`` and ``--agents-file`` through the CLI.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver

from debategraph import build_solver_debate, recursion_limit
from debategraph.checkpoints.savers import serializer
from debategraph.cli.patterns.solver_debate import PATTERN as SOLVE
from debategraph.errors import UsageError
from debategraph.nodes.solver_debate import make_close_round, solver_debate_setup
from debategraph.runs.agents import refuse_tools_on_embedded
from debategraph.state.records import TOOL_STAGE, Participant, Turn, Usage
from tests.backends import decoded_dump
from tests.conftest import held_after, one_error_line, run_cli, solver_of
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply
from tests.openai_stub import StubOpenAIServer, StubReply
from tests.studio_server import closed_port

QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in total?"
SECRET = "sk-test-SECRET"
KEY_VAR = "DG_SOLVER_TEST_KEY"


def answer(solver: str, value: str = "72", **usage: int) -> AIMessage:
    """A solver's typed answer, naming the solver in its reasoning."""
    args = {"reasoning": f"{solver}: 48 + 24 = {value}", "answer": value, "confidence": 0.9}
    return tool_reply("SolverReply", args, **usage)


def own_model(solver: str, value: str = "72") -> ScriptedChatModel:
    """A solver's own model: answers only calls whose system prompt names that solver."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        named = re.search(r"You are (\S+),", str(messages[0].content))
        assert named is not None and named.group(1) == solver, messages[0].content
        return answer(solver, value, prompt_tokens=10, completion_tokens=5)

    return ScriptedChatModel(respond=respond)


def run(graph: Any, question: str = QUESTION) -> dict[str, Any]:
    """Run a graph to its end: its state's values (the transcript, the usage by model)."""
    compiled = graph.compile(checkpointer=InMemorySaver(serde=serializer()))
    config: RunnableConfig = {
        "configurable": {"thread_id": "t"},
        "recursion_limit": recursion_limit(compiled),
    }
    compiled.invoke({"question": question}, config)
    values: dict[str, Any] = compiled.get_state(config).values
    return values


def system_of(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


# --------------------------------------------------------------------------
# Unit: a scripted model per solver
# --------------------------------------------------------------------------


def test_each_solver_calls_its_own_model_and_a_plain_name_the_graphs() -> None:
    models = {name: own_model(name) for name in ("Ada", "Bo")}
    graph_model = own_model("Cy", "70")
    agents: list[Any] = [
        Participant(name="Ada", model=models["Ada"]),
        {"name": "Bo", "model": models["Bo"]},
        "Cy",
    ]
    out = run(build_solver_debate(graph_model, agents=agents, max_rounds=2))
    # Each model answered its solver's calls only (its respond asserts it): one a round.
    assert [len(m.prompts) for m in (models["Ada"], models["Bo"], graph_model)] == [2, 2, 2]
    assert out["answer"] == "72" and out["votes"] == {"72": 2, "70": 1}
    assert [r.answers for r in out["rounds"]] == [{"Ada": "72", "Bo": "72", "Cy": "70"}] * 2
    assert {t.model for t in out["transcript"] if t.stage == "solve"} == {"ScriptedChatModel"}
    assert out["usage_by_model"]["ScriptedChatModel"].calls == 6
    assert {a: u.calls for a, u in out["usage_by_agent"].items()} == {"Ada": 2, "Bo": 2, "Cy": 2}


def test_a_solvers_instructions_are_added_to_its_system_prompt() -> None:
    model = own_model("Ada")
    other = own_model("Bo")
    agents: list[Any] = [
        {"name": "Ada", "model": model, "instructions": "Check units twice."},
        "Bo",
    ]
    run(build_solver_debate(other, agents=agents, max_rounds=1))
    assert str(model.prompts[0][0].content).endswith("\n\nCheck units twice.")
    assert "Check units twice." not in str(other.prompts[0][0].content)


def calculator_then_answer(solver: str) -> ScriptedChatModel:
    """A solver's model that asks the calculator once a turn, then answers with its result.

    Each turn is three calls: the tool loop's (a calculator call, then a reply asking for
    no tool) and the typed answer.
    """

    def respond(messages: list[BaseMessage]) -> AIMessage:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        step = (len(model.prompts) - 1) % 3
        if step == 0:
            assert not results
            return tool_reply("calculator", {"expression": "48 + 48 / 2"})
        if step == 1:
            return text_reply(f"The calculator says {results[-1].content}.")
        return answer(solver, str(results[-1].content), prompt_tokens=10, completion_tokens=5)

    model = ScriptedChatModel(respond=respond)
    return model


def test_a_solver_with_the_calculator_records_its_call_before_its_turn() -> None:
    tooled = calculator_then_answer("Ada")
    plain = own_model("Bo")
    agents: list[Any] = [{"name": "Ada", "model": tooled, "tools": ["calculator"]}, "Bo"]
    out = run(build_solver_debate(plain, agents=agents, max_rounds=2))

    ada = [t for t in out["transcript"] if t.agent == "Ada"]
    assert [(t.role, t.stage, t.round) for t in ada] == [
        ("tool", TOOL_STAGE, 1),
        ("agent", "solve", 1),
        ("tool", TOOL_STAGE, 2),
        ("agent", "solve", 2),
    ]
    call = ada[0]
    assert (call.tool, call.arguments, call.content, call.reason) == (
        "calculator",
        '{"expression": "48 + 48 / 2"}',
        "72",
        None,
    )
    assert ada[1].answer == "72" and ada[1].model == "ScriptedChatModel"
    assert ada[1].usage.calls == 3  # the tool loop's two model calls and the typed answer
    # Tool calls are no answers: the tallies, the rounds and the vote see the solvers only.
    assert [r.answers for r in out["rounds"]] == [{"Ada": "72", "Bo": "72"}] * 2
    assert out["votes"] == {"72": 2}
    assert out["usage_by_agent"]["Ada"].calls == 6 and out["usage"].calls == 8
    # Bo reads Ada's answer in round 2, never her tool call as a message.
    refine = str(plain.prompts[1][-1].content)
    assert "Ada: Ada: 48 + 24 = 72" in refine and "calculator" not in refine


def test_tool_calls_do_not_break_unanimity_or_charge_twice() -> None:
    setup = solver_debate_setup(
        agents=["Ada", "Bo"], max_rounds=3, topology="full", neighbours=None,
        token_budget=None, stop_when_unanimous=True, pause_after_round=False,
        view_chars=None, time_limit_s=None,
    )  # fmt: skip
    close = make_close_round(setup, None).invoke

    def solve(agent: str, rnd: int) -> Turn:
        usage = Usage(prompt_tokens=10, completion_tokens=5, calls=2)
        return Turn(agent=agent, content="x", stage="solve", round=rnd, answer="72", usage=usage)

    tool = Turn(
        agent="Ada", role="tool", content="72", stage=TOOL_STAGE, round=1, tool="calculator",
        arguments='{"expression": "48 + 24"}', usage=Usage(latency_s=0.5),
    )  # fmt: skip
    state: Any = {"round": 1, "transcript": [tool, solve("Ada", 1), solve("Bo", 1)]}
    update = close(state)
    assert update["rounds"][0].answers == {"Ada": "72", "Bo": "72"}
    assert update["termination_reason"] == "unanimous"
    assert update["usage"].calls == 4 and update["usage"].latency_s == 0.5
    assert update["usage_by_agent"]["Ada"] == Usage(
        prompt_tokens=10, completion_tokens=5, calls=2, latency_s=0.5
    )
    # Charged once: closed again (a resumed thread), nothing is charged a second time.
    state["usage_by_agent"] = update["usage_by_agent"]
    assert close(state)["usage_by_agent"] == {}


def test_shared_tools_go_to_every_solver_without_tools_or_an_agent_of_its_own() -> None:
    mine: RunnableLambda[Any, Any] = RunnableLambda(
        lambda inputs: {"messages": [AIMessage("72")]}, name="mine"
    )
    setup = solver_debate_setup(
        agents=["Ada", {"name": "Bo", "tools": []}, {"name": "Cy", "agent": mine},
                {"name": "Di", "tools": ["x:y"]}],
        tools=["calculator"], max_rounds=1, topology="full", neighbours=None,
        token_budget=None, stop_when_unanimous=False, pause_after_round=False,
        view_chars=None, time_limit_s=None,
    )  # fmt: skip
    assert [setup.record(s).tools for s in setup.solvers] == [
        ("calculator",),
        ("calculator",),
        (),
        ("x:y",),
    ]
    counted = solver_debate_setup(
        agents=2, tools=["calculator"], max_rounds=1, topology="ring", neighbours=None,
        token_budget=None, stop_when_unanimous=False, pause_after_round=False,
        view_chars=None, time_limit_s=None,
    )  # fmt: skip
    assert [counted.record(s).tools for s in counted.solvers] == [("calculator",)] * 2


def test_an_agent_of_its_own_solves_and_its_answer_is_read_as_json() -> None:
    mine: RunnableLambda[Any, Any] = RunnableLambda(
        lambda inputs: {"messages": [AIMessage('{"reasoning": "r", "answer": "72"}')]},
        name="mine",
    )
    plain = own_model("Bo")
    out = run(build_solver_debate(plain, agents=[{"name": "Ada", "agent": mine}, "Bo"]))
    ada = [t for t in out["transcript"] if t.agent == "Ada"]
    assert {(t.answer, t.model) for t in ada} == {("72", "agent:mine")}
    assert out["votes"] == {"72": 2}


@pytest.mark.parametrize(
    ("agents", "kwargs", "message"),
    [
        ([{"name": "Ada", "modle": "m"}, "Bo"], {}, "solver {'name': 'Ada', 'modle': 'm'} is not"),
        ([{"name": "Ada", "tools": ["abacus"]}, "Bo"], {}, "unknown tool 'abacus'"),
        (["Ada", "Bo"], {"tools": ["abacus"]}, "unknown tool 'abacus'"),
        ([{"name": "Ada"}, {"name": "ada"}], {}, "duplicate solver name 'ada'"),
        (
            [{"name": "Ada", "model": "local", "tools": ["calculator"]}, "Bo"],
            {},
            "agent 'Ada' has tools, but its model local cannot call tools",
        ),
        ([{"name": "Ada", "model": ""}, "Bo"], {}, "agent 'Ada': model is empty"),
        (["Ada", "Bo"], {"tools": "calculator"}, "tools must be a list"),
        (Participant(name="Ada"), {}, "agents must be a count or a list of solver names"),
    ],
)
def test_bad_solver_records_fail_at_build_time_in_one_line(
    agents: Any, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        build_solver_debate(agents=agents, **kwargs)
    assert "\n" not in str(info.value)


def test_a_missing_key_variable_is_named_at_build_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(KEY_VAR, raising=False)
    record = {"name": "Ada", "model": {"model": "m", "base_url": "http://h:1/v1",
                                       "api_key_env": KEY_VAR}}  # fmt: skip
    with pytest.raises(ValueError, match=f"agent 'Ada'.*{KEY_VAR} is not set"):
        build_solver_debate(agents=[record, "Bo"])
    monkeypatch.setenv(KEY_VAR, SECRET)
    build_solver_debate(agents=[record, "Bo"])


def test_a_key_in_use_is_never_shown(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    checkpoint_url: str,
) -> None:
    """What a user is shown (a run's output, show, both exports) holds no key."""
    monkeypatch.setenv(KEY_VAR, SECRET)
    shown = []
    with StubOpenAIServer(answer_as_named) as server:
        file = agents_file(tmp_path / "solvers.json", {"Ada": server, "Bo": server})
        for args in (
            ["solve", QUESTION, "--agents-file", str(file), "--rounds", "2", "--thread", "s",
             "--model", "stub", "--base-url", server.url, "--max-retries", "0"],
            ["show", "s"],
            ["export", "s", "--format", "md"],
            ["export", "s", "--format", "json"],
        ):  # fmt: skip
            code, out, err = run_cli([*args, "--db", checkpoint_url], capsys)
            assert code == 0, err
            shown += [out, err]
        assert set(server.keys) == {f"Bearer {SECRET}"}  # the key was in play
    assert "Ada: 48 + 24 = 72" in shown[2]  # show prints the turns
    assert all(SECRET not in text for text in shown)


# --------------------------------------------------------------------------
# The CLI declaration
# --------------------------------------------------------------------------


def test_agents_per_round_and_describe_count_records() -> None:
    settings = {
        "agents": [{"name": "Ada", "model": "m@http://h:1/v1"}, {"name": "Bo"}, {"name": "Cy"}],
        "max_rounds": 2,
        "topology": "ring",
        "neighbours": None,
        "tools": ["calculator"],
    }
    assert SOLVE.described.agents_per_round(settings) == 3
    assert SOLVE.described.describe(settings) == "3 solvers, ring k=2, 2 rounds, tools calculator"


def test_solve_command_takes_an_agents_file_and_tools(tmp_path: Path) -> None:
    file = tmp_path / "solvers.yaml"
    file.write_text("- name: Ada\n  model: m@http://h:1/v1\n- name: Bo\n", encoding="utf-8")
    launch = SOLVE.command(QUESTION, agents_file=str(file), tools=["calculator"])
    assert launch.settings["agents"] == [
        {"name": "Ada", "model": "m@http://h:1/v1"},
        {"name": "Bo"},
    ]
    assert launch.settings["tools"] == ["calculator"]
    json.dumps(launch.settings)  # stored with the thread as it is
    assert "tools" not in SOLVE.command(QUESTION).settings
    assert SOLVE.command(QUESTION).settings["agents"] == 4
    with pytest.raises(UsageError, match=r"give --agents 3 or --agents-file .* not both"):
        SOLVE.command(QUESTION, agents=3, agents_file=str(file))


@pytest.mark.parametrize(
    ("agents", "tools", "refused"),
    [
        (4, ["calculator"], "every agent has tools"),
        (4, None, None),
        ([{"name": "Ada", "tools": ["calculator"]}, {"name": "Bo"}], None, "agent 'Ada'"),
        ([{"name": "Ada", "model": "m@http://h:1/v1"}, {"name": "Bo"}], ["calculator"], "'Bo'"),
        ([{"name": "Ada", "model": "m@http://h:1/v1", "tools": ["calculator"]}], None, None),
        # Bo's "m" (no endpoint) goes to the run's endpoint, the embedded model.
        ([{"name": "Ada", "agent": "m:a"}, {"name": "Bo", "model": "m"}], ["calculator"], "'Bo'"),
        (
            [{"name": "Ada", "agent": "m:a"}, {"name": "Bo", "model": "m@http://h:1/v1"}],
            ["calculator"],
            None,
        ),
        (["Ada", Participant(name="Bo", model="m")], ["calculator"], "agent 'Ada'"),
    ],
)
def test_tools_on_the_embedded_model_are_refused(
    agents: Any, tools: list[str] | None, refused: str | None
) -> None:
    settings = {"agents": agents, **({"tools": tools} if tools else {})}
    if refused is None:
        refuse_tools_on_embedded(settings)
        return
    with pytest.raises(UsageError, match=re.escape(refused)) as info:
        refuse_tools_on_embedded(settings)
    assert "tools need a model with tool calls" in str(info.value)
    assert "--model NAME --base-url URL" in str(info.value)


# --------------------------------------------------------------------------
# Integration: two endpoints over HTTP
# --------------------------------------------------------------------------


def answer_as_named(body: dict[str, Any]) -> dict[str, Any]:
    solver = solver_of(body)
    return {"reasoning": f"{solver}: 48 + 24 = 72", "answer": "72", "confidence": 0.9}


def test_two_endpoints_each_receive_only_their_solvers_calls() -> None:
    with (
        StubOpenAIServer(answer_as_named, latency_s=0.05) as fast,
        StubOpenAIServer(answer_as_named, latency_s=0.15) as slow,
    ):
        endpoint = {"Ada": fast, "Bo": slow, "Cy": fast, "Di": slow}
        urls = {name: server.url for name, server in endpoint.items()}
        agents = [
            {"name": name, "model": {"model": "stub", "base_url": server.url, "timeout": 10}}
            for name, server in endpoint.items()
        ]
        out = run(build_solver_debate(agents=agents, topology="ring", max_rounds=2))
        for server in (fast, slow):
            mine = {name for name, s in endpoint.items() if s is server}
            assert Counter(solver_of(b) for b in server.requests) == dict.fromkeys(mine, 2)
            assert server.calls == 2 * 2  # its 2 solvers x 2 rounds
    assert out["answer"] == "72" and out["votes"] == {"72": 4}
    assert {t.agent: t.model for t in out["transcript"]} == {
        name: f"stub@{url}" for name, url in urls.items()
    }
    by_model = out["usage_by_model"]
    assert {m: u.calls for m, u in by_model.items()} == {
        f"stub@{urls['Ada']}": 4,
        f"stub@{urls['Bo']}": 4,
    }


def calculator_responder(body: dict[str, Any]) -> Any:
    """Asks the calculator first, says what it got, then answers with its result."""
    tools = [t["function"]["name"] for t in body.get("tools") or []]
    messages = body["messages"]
    results = [m for m in messages if m.get("role") == "tool"]
    if tools == ["calculator"]:  # the tool loop
        if not results:
            return StubReply(tool_args={"expression": "48 + 48 / 2"}, tool_name="calculator")
        return f"The calculator says {results[-1]['content']}."
    got = results[-1]["content"] if results else "0"
    return {"reasoning": f"{solver_of(body)}: the calculator says {got}", "answer": got}


def test_solve_with_the_calculator_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(calculator_responder) as server:
        url = server.url
        code, out, err = run_cli(
            ["solve", QUESTION, "--agents", "2", "--rounds", "1", "--tools", "calculator",
             "--thread", "calc", "--json", "--model", "stub", "--base-url", server.url,
             "--db", str(db), "--max-retries", "0"],
            capsys,
        )  # fmt: skip
        assert code == 0, err
        result = json.loads(out)
        assert result["answer"] == "72" and result["votes"] == {"72": 2}
        assert result["usage"]["calls"] == 6 == server.calls  # 3 a solver: 2 in the loop
        code, shown, err = run_cli(["show", "calc", "--db", str(db), "--json"], capsys)
    assert code == 0, err
    transcript = json.loads(shown)["transcript"]
    calls = [t for t in transcript if t["role"] == "tool"]
    assert sorted(t["agent"] for t in calls) == ["solver_1", "solver_2"]
    assert {(t["tool"], t["arguments"], t["content"], t["stage"]) for t in calls} == {
        ("calculator", '{"expression": "48 + 48 / 2"}', "72", TOOL_STAGE)
    }
    for agent in ("solver_1", "solver_2"):
        mine = [t for t in transcript if t["agent"] == agent]
        assert [t["role"] for t in mine] == ["tool", "agent"]  # the call before the turn
        assert mine[1]["answer"] == "72" and mine[1]["model"] == f"stub@{url}"


def test_tools_on_the_default_local_model_are_refused_before_any_thread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    code, _, err = run_cli(["solve", QUESTION, "--tools", "calculator", "--db", str(db)], capsys)
    assert code == 2
    line = one_error_line(err)
    assert "tools need a model with tool calls" in line and "--model NAME --base-url URL" in line
    assert not db.exists()


def test_a_malformed_agents_file_names_the_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "solvers.yaml"
    file.write_text("- name: Ada\n- name: Bo\n  modle: m\n", encoding="utf-8")
    db = tmp_path / "d.sqlite"
    code, _, err = run_cli(["solve", QUESTION, "--agents-file", str(file), "--db", str(db)], capsys)
    assert code == 2
    line = one_error_line(err)
    assert f"--agents-file {file} line 2" in line and "'modle'" in line
    assert not db.exists()


def agents_file(path: Path, endpoint: dict[str, StubOpenAIServer]) -> Path:
    entries = [
        {
            "name": name,
            "model": {
                "model": "stub",
                "base_url": server.url,
                "api_key_env": KEY_VAR,
                "max_retries": 0,
            },
        }
        for name, server in endpoint.items()
    ]
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def test_resume_keeps_each_solvers_model_and_no_key_is_written(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    checkpoint_url: str,
) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET)
    db = checkpoint_url
    archive = tmp_path / "a.sqlite"
    errors: list[str] = []
    with (
        StubOpenAIServer(answer_as_named) as one,
        StubOpenAIServer(answer_as_named) as two,
        StubOpenAIServer(answer_as_named) as run_model,
    ):
        endpoint = {"Ada": one, "Bo": two, "Cy": one, "Di": two}
        models = {f"stub@{one.url}", f"stub@{two.url}"}
        file = agents_file(tmp_path / "solvers.json", endpoint)
        code, out, err = run_cli(
            ["solve", QUESTION, "--agents-file", str(file), "--rounds", "2",
             "--pause-after-round", "--thread", "p", "--json", "--archive", str(archive),
             "--model", "stub", "--base-url", run_model.url, "--db", str(db),
             "--max-retries", "0"],
            capsys,
        )  # fmt: skip
        errors.append(err)
        assert code == 0, err
        assert json.loads(out)["status"] == "waiting"
        assert (one.calls, two.calls) == (2, 2)  # round 1, then the pause
        # A failure on one endpoint: one line, no key; the thread stays resumable.
        two.inject("5xx")
        code, _, err = run_cli(["resume", "p", "--approve", "--db", str(db)], capsys)
        errors.append(err)
        assert code == 1 and "HTTP 500" in one_error_line(err)
        code, out, err = run_cli(
            ["resume", "p", "--db", str(db), "--json", "--archive", str(archive)], capsys
        )
        errors.append(err)
        assert code == 0, err
        result = json.loads(out)
        # Each endpoint got its own solvers' calls only, in both rounds, resumed or not.
        for server in (one, two):
            answered = Counter(solver_of(b) for b in server.requests)
            assert set(answered) == {name for name, s in endpoint.items() if s is server}
            assert all(n >= 2 for n in answered.values())
        assert run_model.requests == []  # every solver calls its own model, also on resume
    assert result["answer"] == "72" and result["termination_reason"] == "rounds_completed"
    assert {m: u["calls"] for m, u in result["usage_by_model"].items()} == dict.fromkeys(models, 4)
    written = [p for p in tmp_path.iterdir() if p.name != file.name]
    assert archive in written
    stored = decoded_dump(db)
    assert "Ada: 48 + 24 = 72" in stored  # the search reads the checkpoints, decoded
    # The variable's name is stored with the thread (resume reads the key from it).
    assert KEY_VAR in stored
    for text in [stored, *map(decoded_dump, written)]:
        assert SECRET not in text
    assert all(SECRET not in e for e in errors)


@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_resume_after_a_kill_keeps_each_solvers_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``solve`` killed (SIGKILL, no handler runs) mid-debate resumes on the same models."""
    import signal
    import subprocess
    import sys
    import time

    monkeypatch.setenv(KEY_VAR, SECRET)
    db = tmp_path / "d.sqlite"
    killed = threading.Event()  # round 2's calls wait for the kill: none can finish the run
    asked = lambda: len(one.requests) + len(two.requests)  # noqa: E731
    held = held_after(answer_as_named, asked, 5, killed)
    with (
        StubOpenAIServer(held, latency_s=0.3) as one,
        StubOpenAIServer(held, latency_s=0.3) as two,
        StubOpenAIServer(answer_as_named) as run_model,
    ):
        endpoint = {"Ada": one, "Bo": two, "Cy": one, "Di": two}
        file = agents_file(tmp_path / "solvers.json", endpoint)
        cmd = [
            sys.executable, "-m", "debategraph.cli", "solve", QUESTION, "--agents-file",
            str(file), "--rounds", "3", "--thread", "k", "--db", str(db), "--model", "stub",
            "--base-url", run_model.url,
        ]  # fmt: skip
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while one.calls + two.calls < 5 and time.monotonic() < deadline:
            time.sleep(0.02)  # round 1 done, round 2 in flight
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=20)
        killed.set()
        assert proc.returncode == -signal.SIGKILL
        code, out, err = run_cli(["resume", "k", "--db", str(db), "--json"], capsys)
        assert code == 0, err
        for server in (one, two):
            answered = Counter(solver_of(b) for b in server.requests)
            assert set(answered) == {name for name, s in endpoint.items() if s is server}
        assert run_model.requests == []
    result = json.loads(out)
    assert result["termination_reason"] == "rounds_completed"
    assert sum(u["calls"] for u in result["usage_by_model"].values()) == 12
    stored = decoded_dump(db)
    assert "Ada: 48 + 24 = 72" in stored and SECRET not in stored


def test_an_unreachable_agent_endpoint_is_one_line_naming_the_agent_and_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET)
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(answer_as_named) as alive:
        file = tmp_path / "solvers.yaml"
        file.write_text(
            f"- name: Ada\n  model: {{model: stub, base_url: '{alive.url}'}}\n"
            f"- name: Bo\n  model: {{model: gone, base_url: '{dead}', max_retries: 0}}\n",
            encoding="utf-8",
        )
        code, _, err = run_cli(
            ["solve", QUESTION, "--agents-file", str(file), "--rounds", "1", "--thread", "u",
             "--db", str(db), "--model", "stub", "--base-url", alive.url],
            capsys,
        )  # fmt: skip
    line = one_error_line(err)
    assert code == 1
    assert f"agent Bo: model endpoint {dead} is unreachable" in line
    assert "thread u is resumable" in line
