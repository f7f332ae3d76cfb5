"""Decision protocols in the solver debate: each protocol in the graph, the judge official.

Unit tests script the solvers and the judge on one fake model (the system prompt says who
is asked); integration tests put the judge on an endpoint of its own over HTTP and drive
``debategraph solve --decision`` through the CLI.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from debategraph import build_solver_debate, recursion_limit
from debategraph.checkpoints import open_checkpointer
from debategraph.checkpoints.savers import serializer
from debategraph.cli.patterns.solver_debate import PATTERN as SOLVE
from debategraph.models.steps import arun_steps, run_steps
from debategraph.nodes.agent import agent_of, bind
from debategraph.nodes.solver_debate import latest_turns
from debategraph.nodes.solver_debate.judge import decide_steps, decision_key, judge_prompt
from debategraph.state.base import turn_update
from debategraph.state.solver_debate import Decision
from debategraph.strategies.decisions import (
    DecisionRule,
    parse_protocol,
    protocol_rule,
    register_protocol,
    unregister_protocol,
)
from debategraph.strategies.protocols import Decided, Tally
from tests.conftest import one_error_line, run_cli, solver_of, stub_args
from tests.fake_model import ScriptedChatModel, tool_reply
from tests.openai_stub import StubOpenAIServer

QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in total?"
JUDGE_RE = re.compile(r"You are the judge of (\d+) agents")

#: Three solvers: two agree on 18 with low confidence, one says 20 with high confidence.
SPLIT = {"solver_1": ("18", 0.3), "solver_2": ("18", 0.3), "solver_3": ("20", 0.9)}
UNANIMOUS = {"solver_1": ("18", 0.5), "solver_2": ("18", 0.5), "solver_3": ("18", 0.5)}


def model_for(answers: dict[str, tuple[str, float]], pick: str | None = "20") -> ScriptedChatModel:
    """Solvers answer as ``answers`` says (every round); the judge picks ``pick`` (7+3 tokens)."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        system = str(messages[0].content)
        if JUDGE_RE.search(system):
            args = {"reasoning": "solver_3 doubled correctly", "answer": pick}
            return tool_reply("JudgeReply", args, prompt_tokens=7, completion_tokens=3)
        solver = re.search(r"You are (\S+),", system)
        assert solver is not None, system
        answer, confidence = answers[solver.group(1)]
        args = {"reasoning": f"{solver.group(1)} says {answer}", "answer": answer}
        return tool_reply("SolverReply", {**args, "confidence": confidence})

    return ScriptedChatModel(respond=respond)


def judge_calls(model: ScriptedChatModel) -> int:
    return sum(bool(JUDGE_RE.search(str(p[0].content))) for p in model.prompts)


def config_for(thread: str, graph: Any) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}, "recursion_limit": recursion_limit(graph)}


def run(graph: Any) -> dict[str, Any]:
    compiled = graph.compile(checkpointer=InMemorySaver(serde=serializer()))
    config = config_for("t", compiled)
    compiled.invoke({"question": QUESTION}, config)
    values: dict[str, Any] = compiled.get_state(config).values
    return values


# --------------------------------------------------------------------------
# Each protocol in the graph
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decision", "spec", "answer", "fallback", "judged"),
    [
        ("plurality", "plurality", "18", None, 0),
        ("weighted", "weighted", "20", None, 0),
        ("supermajority", "supermajority:2/3:plurality", "18", None, 0),
        ("supermajority:0.75", "supermajority:3/4:plurality", "18", "plurality", 0),
        ("supermajority:3/4:weighted", "supermajority:3/4:weighted", "20", "weighted", 0),
        ("supermajority:0.75:abstain", "supermajority:3/4:abstain", None, "abstain", 0),
        ("unanimity", "unanimity:plurality", "18", "plurality", 0),
        ("unanimity:judge", "unanimity:judge", "20", "judge", 1),
        ("judge", "judge", "20", None, 1),
    ],
)
def test_each_protocol_decides_the_graphs_answer(
    decision: str, spec: str, answer: str | None, fallback: str | None, judged: int
) -> None:
    model = model_for(SPLIT)
    out = run(build_solver_debate(model, agents=3, max_rounds=1, decision=decision))
    made = out["decision"]
    assert isinstance(made, Decision)
    assert (made.protocol, made.answer, made.fallback) == (spec, answer, fallback)
    assert (out["answer"], out["votes"], out["tie_break"]) == (answer, {"18": 2, "20": 1}, None)
    assert out["agreement"] == made.agreement
    assert out["decisions"] == {decision_key(made): made}
    assert judge_calls(model) == judged
    assert [t.stage for t in out["transcript"]].count("judge") == judged
    assert ("judge" in out["usage_by_agent"]) == bool(judged)


class Highest(DecisionRule):
    """A toy protocol: the numerically highest answer (and a fallback others may name)."""

    name = "highest"
    is_fallback = True

    @classmethod
    def decide(cls, tally: Tally) -> Decided:
        given = [a for a in tally.answers.values() if a is not None]
        return tally.decided(max(given, key=float) if given else None)


@pytest.fixture
def highest() -> Iterator[type[DecisionRule]]:
    register_protocol(Highest)
    try:
        yield Highest
    finally:
        unregister_protocol(Highest.name)


def test_a_new_protocol_is_one_class(highest: type[DecisionRule]) -> None:
    # Parsing, the rule text and its errors read the table...
    assert parse_protocol(" HIGHEST ").spec == "highest"
    assert protocol_rule().startswith(
        "plurality, weighted, supermajority[:THRESHOLD[:FALLBACK]], unanimity[:FALLBACK], "
        "confidence[:THRESHOLD[:FALLBACK]], judge or highest (THRESHOLD in (0.5, 1], e.g. "
        "0.75 or 2/3; confidence's THRESHOLD in (0, 1], e.g. 0.8; FALLBACK plurality, "
        "weighted, judge, abstain or highest)"
    )
    with pytest.raises(ValueError, match=r"^highest takes no argument, got 'highest:2': use "):
        parse_protocol("highest:2")
    # ...and so does the graph: as its decision, and as another protocol's fallback.
    out = run(build_solver_debate(model_for(SPLIT), agents=3, max_rounds=1, decision="highest"))
    assert (out["answer"], out["decision"].protocol, out["decision"].fallback) == (
        "20", "highest", None,
    )  # fmt: skip
    assert isinstance(out["decision"], Decision)
    out = run(
        build_solver_debate(model_for(SPLIT), agents=3, max_rounds=1, decision="unanimity:highest")
    )
    assert (out["answer"], out["decision"].fallback, out["decision"].reason) == (
        "20", "highest", "no unanimity (2 of 3 for 18): highest decided",
    )  # fmt: skip


def test_an_unregistered_protocol_is_unknown() -> None:
    register_protocol(Highest)
    unregister_protocol(Highest.name)
    with pytest.raises(ValueError, match=r"^unknown decision protocol 'highest': use plurality"):
        build_solver_debate(model_for(SPLIT), agents=3, decision="highest")
    assert "highest" not in protocol_rule()


def test_the_results_dynamics_keep_an_abstaining_decisions_none() -> None:
    # Every round's plurality is 18, but unanimity:abstain decided nothing.
    out = run(
        build_solver_debate(model_for(SPLIT), agents=3, max_rounds=2, decision="unanimity:abstain")
    )
    assert out["answer"] is None and out["decision"].answer is None
    dynamics = SOLVE.described.summary(out)["dynamics"]
    assert [r["plurality"] for r in dynamics["rounds"]] == ["18", "18"]
    assert dynamics["final"] is None
    undecided = {k: v for k, v in out.items() if k not in ("answer", "decision")}
    assert (
        SOLVE.described.summary(undecided)["dynamics"]["final"] == "18"
    )  # no decision yet: the plurality


def test_the_judge_is_called_only_when_the_answers_differ() -> None:
    model = model_for(UNANIMOUS)
    out = run(build_solver_debate(model, agents=3, max_rounds=2, decision="judge"))
    assert judge_calls(model) == 0 and len(model.prompts) == 6
    assert out["answer"] == "18"
    assert out["decision"].reason == "one answer (18): the judge was not asked"
    assert out["decision"].judge_model is None
    assert "judge" not in out["usage_by_agent"]
    assert {t.stage for t in out["transcript"]} == {"solve"}


def test_the_judges_turn_is_recorded_and_its_usage_charged_to_it() -> None:
    model = model_for(SPLIT)
    out = run(build_solver_debate(model, agents=3, max_rounds=2, decision="judge"))
    turn = out["transcript"][-1]
    finals = [t for t in out["transcript"] if t.round == 2 and t.stage == "solve"]
    assert (turn.agent, turn.stage, turn.round, turn.answer) == ("judge", "judge", 2, "20")
    assert turn.content == "solver_3 doubled correctly"
    assert turn.model == "ScriptedChatModel" == out["decision"].judge_model
    assert turn.reply_to == tuple(t.id for t in finals)
    judge = out["usage_by_agent"]["judge"]
    assert (judge.calls, judge.prompt_tokens, judge.completion_tokens) == (1, 7, 3)
    assert out["usage"].calls == 7 and out["usage"].prompt_tokens == 6 * 10 + 7
    assert out["usage_by_model"]["ScriptedChatModel"].calls == 7
    assert list(out["decisions"]) == ["judge@ScriptedChatModel"]
    # The judge read every solver's final answer and the gist of its reasoning.
    (prompt,) = [p for p in model.prompts if JUDGE_RE.search(str(p[0].content))]
    assert "You are the judge of 3 agents" in str(prompt[0].content)
    for solver, (answer, _) in SPLIT.items():
        assert f"{solver}: {solver} says {answer}\nAnswer: {answer}" in str(prompt[1].content)


@pytest.mark.parametrize(
    ("pick", "reason"),
    [
        ("99", "the judge picked 99, which no solver gave: plurality decided"),
        ("none of them", "the judge gave no answer (no number in the judge's answer"),
    ],
)
def test_a_judge_pick_no_solver_gave_leaves_plurality_with_the_reason(
    pick: str, reason: str
) -> None:
    model = model_for(SPLIT, pick=pick)
    out = run(build_solver_debate(model, agents=3, max_rounds=1, decision="judge"))
    made = out["decision"]
    assert (made.answer, made.fallback) == ("18", "plurality")
    assert made.reason is not None and reason in made.reason
    assert out["usage_by_agent"]["judge"].calls == 1  # charged all the same


def test_the_judge_of_a_multiple_choice_question_picks_a_letter() -> None:
    answers = {"solver_1": ("A", 0.5), "solver_2": ("B", 0.5)}
    model = model_for(answers, pick="(B)")
    graph = build_solver_debate(model, agents=2, max_rounds=1, decision="judge")
    compiled = graph.compile()
    out = compiled.invoke(
        {"question": "Capital of Italy?", "choices": ["Paris", "Rome"]},
        {"recursion_limit": recursion_limit(compiled)},
    )
    assert out["answer"] == "B" and out["decision"].judge_model == "ScriptedChatModel"
    (prompt,) = [p for p in model.prompts if JUDGE_RE.search(str(p[0].content))]
    assert "letter of one choice" in str(prompt[0].content)
    assert "A) Paris\nB) Rome" in str(prompt[1].content)


def test_the_async_path_calls_the_judge_too() -> None:
    model = model_for(SPLIT)
    compiled = build_solver_debate(model, agents=3, max_rounds=1, decision="judge").compile()
    out = asyncio.run(
        compiled.ainvoke({"question": QUESTION}, {"recursion_limit": recursion_limit(compiled)})
    )
    assert out["answer"] == "20" and out["usage_by_agent"]["judge"].calls == 1


# --------------------------------------------------------------------------
# The judge outside a graph (the eval's call)
# --------------------------------------------------------------------------


def test_decide_steps_runs_outside_a_graph_with_no_runtime() -> None:
    model = model_for(SPLIT)
    finals = latest_turns(run(build_solver_debate(model, agents=3, max_rounds=1))["transcript"])
    assert judge_calls(model) == 0
    judge = agent_of("judge", bind(model))
    steps = decide_steps(parse_protocol("judge"), judge, None, QUESTION, None, finals)
    decision, records = asyncio.run(arun_steps(steps))
    assert (decision.answer, decision_key(decision)) == ("20", "judge@ScriptedChatModel")
    assert [(t.agent, t.stage, t.answer) for t in records] == [("judge", "judge", "20")]
    plain = run_steps(decide_steps(parse_protocol("weighted"), None, None, QUESTION, None, finals))
    assert plain == (Decision.model_validate(plain[0]), []) and plain[0].answer == "20"
    assert judge_calls(model) == 1
    with pytest.raises(ValueError, match="decision 'judge' needs a judge"):
        run_steps(decide_steps(parse_protocol("judge"), None, None, QUESTION, None, finals))
    # Past the run's deadline the judge is not called: plurality decides and says why.
    late = decide_steps(parse_protocol("judge"), judge, None, QUESTION, None, finals)
    decision, records = run_steps(late, deadline=time.time() - 1)
    assert (decision.answer, decision.fallback) == ("18", "plurality")
    assert records[0].reason is not None and records[0].reason.startswith("time limit reached")
    assert decision.reason == f"the judge gave no answer ({records[0].reason}): plurality decided"
    assert judge_calls(model) == 1  # no call was made
    assert len(judge_prompt(QUESTION, None, finals)) == 2


# --------------------------------------------------------------------------
# Checkpoints: pause, resume, a decision the eval adds
# --------------------------------------------------------------------------


def test_pause_and_resume_on_sqlite_keep_the_decision(tmp_path: Path) -> None:
    model = model_for(SPLIT)
    db = tmp_path / "d.sqlite"
    graph = build_solver_debate(
        model, agents=3, max_rounds=2, decision="judge", pause_after_round=True
    )
    with open_checkpointer(db) as saver:
        compiled = graph.compile(checkpointer=saver)
        config = config_for("paused", compiled)
        compiled.invoke({"question": QUESTION}, config)
        assert compiled.get_state(config).next == ("human",)
        assert judge_calls(model) == 0
        compiled.invoke(Command(resume={"approve": True}), config)
    assert judge_calls(model) == 1
    with open_checkpointer(db) as saver:  # read back from the file: the allowlist holds
        compiled = graph.compile(checkpointer=saver)
        values = compiled.get_state(config).values
        assert isinstance(values["decision"], Decision) and values["answer"] == "20"
        finals = latest_turns(values["transcript"])
        # The eval's post-hoc verdict: stored in the finished thread, read back without a call.
        steps = decide_steps(
            parse_protocol("unanimity:judge"),
            agent_of("judge", bind(model)),
            None,
            QUESTION,
            None,
            finals,
        )
        decision, records = run_steps(steps)
        update = {"decisions": {decision_key(decision): decision}, **turn_update(*records)}
        compiled.update_state(config, update, as_node="aggregate")
    with open_checkpointer(db) as saver:
        values = graph.compile(checkpointer=saver).get_state(config).values
    assert set(values["decisions"]) == {
        "judge@ScriptedChatModel",
        "unanimity:judge@ScriptedChatModel",
    }
    assert all(isinstance(d, Decision) for d in values["decisions"].values())
    assert values["usage_by_agent"]["judge"].calls == 2
    assert judge_calls(model) == 2


# --------------------------------------------------------------------------
# Bad settings
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"decision": "majority"}, "unknown decision protocol 'majority': use plurality"),
        ({"decision": "supermajority:0.4"}, "threshold 0.4 is not in (0.5, 1]"),
        ({"decision": 3}, "decision 3 is not a protocol: use plurality"),
        (
            {"officials": [{"name": "judge", "model": "m@http://h:1/v1"}]},
            "official 'judge' is given a record, but decision 'plurality' never consults",
        ),
        (
            {"decision": "judge", "officials": [{"name": "moderator"}]},
            "a solver debate has no official 'moderator': its officials are judge",
        ),
        (
            {"decision": "unanimity:judge", "agents": ["Judge", "Bo"]},
            "solver name 'Judge' is the judge's (decision 'unanimity:judge')",
        ),
    ],
)
def test_bad_decision_settings_fail_at_build_time_in_one_line(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        build_solver_debate(**kwargs)
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------
# The CLI
# --------------------------------------------------------------------------


def answer_by_solver(
    answers: dict[str, tuple[str, float]], first: dict[str, str] | None = None
) -> Callable[[dict[str, Any]], Any]:
    """Each solver answers as ``answers`` says; in round 1 as ``first`` says, if it names it."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        solver = solver_of(body)
        answer, confidence = answers[solver]
        if "Your previous answer" not in json.dumps(body["messages"]):
            answer = (first or {}).get(solver, answer)
        return {"reasoning": f"{solver}: {answer}", "answer": answer, "confidence": confidence}

    return respond


def test_solve_decision_weighted_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    final = {"solver_1": ("18", 0.3), "solver_2": ("18", 0.3), "solver_3": ("20", 0.9)}
    with StubOpenAIServer(answer_by_solver(final, first={"solver_1": "20"})) as server:
        args = ["solve", QUESTION, "--agents", "3", "--rounds", "2", "--decision", "weighted"]
        code, out, err = run_cli(
            [*args, "--json", *stub_args(server, tmp_path / "d.sqlite")], capsys
        )
    assert code == 0, err
    result = json.loads(out)
    assert result["answer"] == "20" and result["votes"] == {"18": 2, "20": 1}
    assert result["decision"]["protocol"] == "weighted"
    assert result["decisions"] == {"weighted": result["decision"]}
    # Round 1: 20, 18, 20; round 2: solver_1 moves to 18, solver_2 (off 20) stays on 18.
    dynamics = result["dynamics"]
    assert [(r["changed"], r["movers"], r["conformed"]) for r in dynamics["rounds"]] == [
        (0, 0, 0),
        (1, 1, 0),
    ]
    assert dynamics["final"] == "20" and dynamics["oracle"] is None
    assert "decision weighted" in err  # the run's description
    lines = SOLVE.headline(result)
    assert "  decided by weighted" in lines
    assert "  dynamics: round 2 1/3 changed, conformity 0/1" in lines


def test_solve_decision_judge_with_a_judge_of_its_own_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    split = {"Ada": ("18", 0.3), "Bo": ("18", 0.3), "Cy": ("20", 0.9)}
    db = tmp_path / "d.sqlite"
    with (
        StubOpenAIServer(answer_by_solver(split)) as solvers,
        StubOpenAIServer(lambda body: {"reasoning": "Cy is right", "answer": "20"}) as bench,
    ):
        judge_model = {"model": "stub", "base_url": bench.url, "max_retries": 0}
        entries = [{"name": n} for n in split] + [{"name": "judge", "model": judge_model}]
        roster = tmp_path / "roster.json"
        roster.write_text(json.dumps(entries), encoding="utf-8")
        args = ["solve", QUESTION, "--agents-file", str(roster), "--rounds", "1"]
        args += ["--decision", "judge", "--thread", "j", *stub_args(solvers, db)]
        code, out, err = run_cli(args, capsys)
        assert code == 0, err
        assert bench.calls == 1 and solvers.calls == 3  # the judge's call reached only its own
        assert "You are the judge of 3 agents" in json.dumps(bench.requests[0]["messages"])
        assert all(solver_of(b) in split for b in solvers.requests)
        judge_label = f"stub@{bench.url}"
        assert f"decided by judge: the judge ({judge_label}) picked 20" in out
        code, shown, err = run_cli(["show", "j", "--db", str(db)], capsys)
        assert code == 0, err
        assert "judge (judge) answer 20" in shown and "decided by judge" in shown
        code, dumped, err = run_cli(["show", "j", "--db", str(db), "--json"], capsys)
        assert code == 0, err
        values = json.loads(dumped)
        assert values["decision"]["judge_model"] == judge_label
        assert list(values["decisions"]) == [f"judge@{judge_label}"]
        assert values["usage_by_agent"]["judge"]["calls"] == 1
        code, markdown, err = run_cli(["export", "j", "--db", str(db), "--format", "md"], capsys)
        assert code == 0, err
        assert f"Decision: judge (the judge on {judge_label})" in markdown


def test_a_bad_decision_is_one_line_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    code, _, err = run_cli(["solve", QUESTION, "--decision", "vote", "--db", str(db)], capsys)
    assert code == 2
    line = one_error_line(err)
    assert "--decision vote: unknown decision protocol 'vote'" in line and "judge" in line
    assert not db.exists()
    roster = tmp_path / "roster.yaml"
    roster.write_text("- name: Ada\n- name: Bo\n- name: judge\n  model: m\n", encoding="utf-8")
    code, _, err = run_cli(
        ["solve", QUESTION, "--agents-file", str(roster), "--db", str(db)], capsys
    )
    assert code == 2
    assert "official 'judge' is given a record, but decision 'plurality'" in one_error_line(err)
    assert not db.exists()
    launch = SOLVE.command(QUESTION, decision="Supermajority: 0.75")
    assert launch.settings["decision"] == "supermajority:3/4:plurality"
    assert "decision" not in SOLVE.command(QUESTION).settings
