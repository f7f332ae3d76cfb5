"""Tests for the solver debate graph: rounds, topologies, termination, checkpoints, composition."""

from __future__ import annotations

import re
import threading
import typing
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from debategraph import build_solver_debate, recursion_limit
from debategraph.checkpoints import open_checkpointer, thread_status
from debategraph.checkpoints.savers import serializer
from debategraph.cli.patterns.declaration import Launch
from debategraph.cli.patterns.solver_debate import PATTERN as SOLVE
from debategraph.errors import ModelUnavailableError
from debategraph.graphs import studio
from debategraph.graphs.solver_debate import GRAPH_NAME
from debategraph.models import ModelSpec
from debategraph.nodes.solver_debate import gist
from debategraph.nodes.solver_debate.judge import JudgeReply
from debategraph.nodes.solver_debate.prompts import SOLUTION_VIEW
from debategraph.nodes.solver_debate.rounds import ChoiceReply, ExpressionReply, SolverReply
from debategraph.registry import current_settings, entry
from debategraph.state.records import RoundRecord, Turn, Usage
from debategraph.strategies import ring, star
from tests.backends import wait_for_saved_tasks
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply
from tests.openai_stub import InGroups, StubOpenAIServer

OUTPUT_KEYS = {
    "answer",
    "votes",
    "agreement",
    "rounds",
    "termination_reason",
    "usage",
    "transcript",
    "messages",
}
SNAPSHOT = Path(__file__).parent / "snapshots" / "solver_debate.mmd"
QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in total?"
SOLVER_RE = re.compile(r"You are (\S+), one of (\d+) agents")

#: One scripted reply: ``(answer, confidence)``, or a ready AIMessage.
Script = Callable[[str, int], "tuple[str, float] | AIMessage"]


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def reasoning(solver: str, rnd: int) -> str:
    """The scripted reasoning of a solver in a round: a token unique to both."""
    return f"reasoning-of-{solver}-round-{rnd}"


def solver_and_round(system: str, rest: str) -> tuple[str, int]:
    """Who a prompt is for (the system message names the solver) and which round.

    A refining solver is shown its neighbours' previous solutions, whose scripted reasoning
    names the round it came from; a first-round prompt shows no solution at all.
    """
    found = SOLVER_RE.search(system)
    assert found, system
    seen = re.findall(r"reasoning-of-\S+-round-(\d+)\b", rest)
    return found.group(1), max(map(int, seen)) + 1 if seen else 1


def who(messages: list[BaseMessage]) -> tuple[str, int]:
    return solver_and_round(
        str(messages[0].content), "\n".join(str(m.content) for m in messages[1:])
    )


def scripted_model(script: Script) -> ScriptedChatModel:
    """A model answering each (solver, round) as the script says, with 10+5 tokens a call."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        solver, rnd = who(messages)
        reply = script(solver, rnd)
        if isinstance(reply, AIMessage):
            return reply
        answer, confidence = reply
        args = {"reasoning": reasoning(solver, rnd), "answer": answer, "confidence": confidence}
        return tool_reply("SolverReply", args, prompt_tokens=10, completion_tokens=5)

    return ScriptedChatModel(respond=respond)


def prompts_by(model: ScriptedChatModel) -> dict[tuple[str, int], list[str]]:
    """Every prompt's human text, keyed by (solver, round)."""
    out: dict[tuple[str, int], list[str]] = {}
    for messages in model.prompts:
        out.setdefault(who(messages), []).append("\n".join(str(m.content) for m in messages[1:]))
    return out


def config_for(thread: str, graph: Any) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}, "recursion_limit": recursion_limit(graph)}


def who_asks(body: dict[str, Any]) -> tuple[str, int]:
    """Solver and round of a chat request the stub server received."""
    messages = body["messages"]
    return solver_and_round(
        str(messages[0]["content"]), "\n".join(str(m.get("content")) for m in messages[1:])
    )


def solver_of_request(body: dict[str, Any]) -> str:
    return who_asks(body)[0]


def stub_spec(server: StubOpenAIServer) -> ModelSpec:
    return ModelSpec(model="stub", base_url=server.url, timeout_s=10, max_retries=0)


def stub_answer(body: dict[str, Any]) -> dict[str, Any]:
    solver, rnd = who_asks(body)
    return {"reasoning": reasoning(solver, rnd), "answer": "18", "confidence": 0.9}


@pytest.fixture(params=["memory", "sqlite"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCheckpointSaver[Any]]:
    """Each checkpointer backend the graph must work with."""
    if request.param == "memory":
        yield InMemorySaver(serde=serializer())
    else:
        with open_checkpointer(tmp_path / "d.sqlite") as sqlite_saver:
            yield sqlite_saver


# --------------------------------------------------------------------------
# A 3-solver, 2-round debate on a k=1 ring
# --------------------------------------------------------------------------

ANSWERS = {
    ("solver_1", 1): ("17", 0.4),
    ("solver_2", 1): ("18", 0.8),
    ("solver_3", 1): ("20", 0.6),
    ("solver_1", 2): ("18", 0.7),
    ("solver_2", 2): ("18", 0.9),
    ("solver_3", 2): ("20", 0.6),
}


def test_three_solvers_two_rounds(saver: BaseCheckpointSaver[Any]) -> None:
    model = scripted_model(lambda solver, rnd: ANSWERS[(solver, rnd)])
    topo = ring(3, 1)
    graph = build_solver_debate(model, agents=3, max_rounds=2, neighbours=1).compile(
        checkpointer=saver
    )
    config = config_for("three-by-two", graph)
    out = graph.invoke({"question": QUESTION}, config)

    # Every solver was called exactly once per round.
    prompts = prompts_by(model)
    assert sorted(prompts) == sorted(ANSWERS)
    assert all(len(p) == 1 for p in prompts.values())

    # Round 1: each solver sees the question and no answer at all.
    for solver in topo.solvers:
        (text,) = prompts[(solver, 1)]
        assert QUESTION in text
        assert "reasoning-of-" not in text

    # Round 2: its own round-1 answer and exactly its neighbours' solutions (k=1: only i+1).
    assert dict(topo.neighbours) == {
        "solver_1": ("solver_2",),
        "solver_2": ("solver_3",),
        "solver_3": ("solver_1",),
    }
    for solver in topo.solvers:
        (text,) = prompts[(solver, 2)]
        assert QUESTION in text
        for other in topo.solvers:
            view = SOLUTION_VIEW.format(
                agent=other, content=reasoning(other, 1), answer=ANSWERS[(other, 1)][0]
            )
            if other == solver:
                assert f"Your previous answer: {ANSWERS[(other, 1)][0]}\n" in text
                assert reasoning(other, 1) not in text  # its own reasoning is not re-sent
            elif other in topo.neighbours[solver]:
                assert view in text, (solver, other)
            else:
                assert reasoning(other, 1) not in text, (solver, other)
                assert f"{other}:" not in text, (solver, other)

    # The outcome: majority of the latest answers.
    assert out["question"] == QUESTION
    assert out["answer"] == "18"
    assert out["votes"] == {"18": 2, "20": 1}
    assert out["agreement"] == pytest.approx(2 / 3, abs=1e-4)
    assert out["tie_break"] is None
    assert out["termination_reason"] == "rounds_completed"
    assert [r.round for r in out["rounds"]] == [1, 2]
    assert all(isinstance(r, RoundRecord) for r in out["rounds"])
    assert [r.answers for r in out["rounds"]] == [
        {"solver_1": "17", "solver_2": "18", "solver_3": "20"},
        {"solver_1": "18", "solver_2": "18", "solver_3": "20"},
    ]
    assert [r.usage.calls for r in out["rounds"]] == [3, 3]

    usage = out["usage"]
    assert isinstance(usage, Usage)
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (6, 60, 30)
    assert set(out["usage_by_agent"]) == set(topo.solvers)
    for solver_usage in out["usage_by_agent"].values():
        assert (solver_usage.calls, solver_usage.prompt_tokens) == (2, 20)
        assert solver_usage.completion_tokens == 10

    # The transcript links each round-2 turn to what it answered.
    transcript: list[Turn] = graph.get_state(config).values["transcript"]
    turns = {(t.agent, t.round): t for t in transcript}
    assert len(transcript) == 6 and len(turns) == 6
    for solver in topo.solvers:
        expected = (turns[(solver, 1)].id, *(turns[(n, 1)].id for n in topo.neighbours[solver]))
        assert turns[(solver, 2)].reply_to == expected
        assert turns[(solver, 1)].reply_to == ()
        assert turns[(solver, 2)].content == reasoning(solver, 2)
        assert turns[(solver, 2)].confidence == ANSWERS[(solver, 2)][1]


def test_star_topology_leaves_hear_only_the_hub() -> None:
    model = scripted_model(lambda solver, rnd: ("18", 0.5))
    graph = build_solver_debate(model, agents=3, max_rounds=2, topology="star").compile()
    graph.invoke({"question": QUESTION}, config_for("star", graph))
    prompts = prompts_by(model)
    hub = prompts[("solver_1", 2)][0]
    assert reasoning("solver_2", 1) in hub and reasoning("solver_3", 1) in hub
    leaf = prompts[("solver_2", 2)][0]
    assert reasoning("solver_1", 1) in leaf
    assert reasoning("solver_3", 1) not in leaf
    assert star(3).neighbours["solver_2"] == ("solver_1",)


def test_custom_topology_names_the_solvers() -> None:
    model = scripted_model(lambda solver, rnd: ("7", 0.5))
    topology = {"alice": ["bob"], "bob": ["alice"]}
    graph = build_solver_debate(model, agents=1, max_rounds=2, topology=topology).compile()
    out = graph.invoke({"question": QUESTION}, config_for("custom", graph))
    assert set(prompts_by(model)) == {("alice", 1), ("bob", 1), ("alice", 2), ("bob", 2)}
    assert all("one of 2 agents" in str(p[0].content) for p in model.prompts)
    assert out["votes"] == {"7": 2}
    assert out["agreement"] == 1.0
    assert set(out["usage_by_agent"]) == {"alice", "bob"}


# --------------------------------------------------------------------------
# Abstentions and fallbacks
# --------------------------------------------------------------------------


def test_abstention_is_recorded_and_does_not_vote(saver: BaseCheckpointSaver[Any]) -> None:
    def script(solver: str, rnd: int) -> tuple[str, float]:
        return ("unknown", 0.99) if solver == "solver_3" else ("18", 0.5)

    model = scripted_model(script)
    graph = build_solver_debate(model, agents=3, max_rounds=1).compile(checkpointer=saver)
    config = config_for("abstain", graph)
    out = graph.invoke({"question": QUESTION}, config)

    assert out["rounds"][0].answers == {"solver_1": "18", "solver_2": "18", "solver_3": None}
    turn = next(t for t in graph.get_state(config).values["transcript"] if t.agent == "solver_3")
    assert turn.answer is None
    assert turn.reason is not None
    assert turn.reason.startswith("no number in answer 'unknown'")
    assert turn.content == reasoning("solver_3", 1)
    assert out["answer"] == "18"
    assert out["votes"] == {"18": 2}
    assert out["agreement"] == pytest.approx(2 / 3, abs=1e-4)  # abstention in the denominator
    assert out["termination_reason"] == "rounds_completed"


def test_answer_read_from_reasoning_when_answer_field_has_no_number() -> None:
    marked = tool_reply(
        "SolverReply", {"reasoning": "24 + 24 ... #### 48", "answer": "see above", "confidence": 1}
    )
    model = scripted_model(lambda solver, rnd: marked if solver == "solver_1" else ("48", 0.5))
    out = (
        build_solver_debate(model, agents=2, max_rounds=1).compile().invoke({"question": QUESTION})
    )
    assert out["rounds"][0].answers == {"solver_1": "48", "solver_2": "48"}
    assert out["votes"] == {"48": 2}


def test_invalid_replies_fall_back_and_the_debate_finishes(
    saver: BaseCheckpointSaver[Any],
) -> None:
    def script(solver: str, rnd: int) -> tuple[str, float] | AIMessage:
        return text_reply("I will not call tools") if solver == "solver_2" else ("18", 0.5)

    model = scripted_model(script)
    graph = build_solver_debate(model, agents=3, max_rounds=1).compile(checkpointer=saver)
    config = config_for("fallback", graph)
    out = graph.invoke({"question": QUESTION}, config)

    assert len(prompts_by(model)[("solver_2", 1)]) == 3  # three attempts
    turn = next(t for t in graph.get_state(config).values["transcript"] if t.agent == "solver_2")
    assert turn.answer is None
    assert turn.content == ""
    assert turn.reason is not None
    assert turn.reason.startswith("invalid output after 3 attempts")
    assert turn.usage.calls == 3
    assert out["termination_reason"] == "rounds_completed"
    assert out["rounds"][0].answers["solver_2"] is None
    assert out["answer"] == "18"
    assert out["votes"] == {"18": 2}
    assert out["usage"].calls == 5
    assert out["usage_by_agent"]["solver_2"].calls == 3


# --------------------------------------------------------------------------
# Termination
# --------------------------------------------------------------------------


def test_stop_when_unanimous(saver: BaseCheckpointSaver[Any]) -> None:
    model = scripted_model(lambda solver, rnd: ("18", 0.5))
    graph = build_solver_debate(model, agents=3, max_rounds=3, stop_when_unanimous=True).compile(
        checkpointer=saver
    )
    out = graph.invoke({"question": QUESTION}, config_for("unanimous", graph))
    assert out["termination_reason"] == "unanimous"
    assert len(out["rounds"]) == 1
    assert out["usage"].calls == 3
    assert out["answer"] == "18"
    assert out["agreement"] == 1.0


def test_unanimous_stop_is_off_by_default() -> None:
    model = scripted_model(lambda solver, rnd: ("18", 0.5))
    graph = build_solver_debate(model, agents=3, max_rounds=2).compile()
    out = graph.invoke({"question": QUESTION}, config_for("x", graph))
    assert out["termination_reason"] == "rounds_completed"
    assert len(out["rounds"]) == 2
    assert out["usage"].calls == 6


def test_unanimity_reached_in_a_later_round() -> None:
    model = scripted_model(
        lambda solver, rnd: ("9" if (solver, rnd) == ("solver_1", 1) else "18", 1)
    )
    graph = build_solver_debate(model, agents=3, max_rounds=4, stop_when_unanimous=True).compile()
    out = graph.invoke({"question": QUESTION}, config_for("x", graph))
    assert out["termination_reason"] == "unanimous"
    assert [r.round for r in out["rounds"]] == [1, 2]


def test_an_abstention_is_not_unanimity() -> None:
    model = scripted_model(lambda solver, rnd: ("none", 1) if solver == "solver_1" else ("18", 1))
    graph = build_solver_debate(model, agents=3, max_rounds=2, stop_when_unanimous=True).compile()
    out = graph.invoke({"question": QUESTION}, config_for("x", graph))
    assert out["termination_reason"] == "rounds_completed"
    assert len(out["rounds"]) == 2


def test_token_budget_stops_after_the_round_and_still_votes(
    saver: BaseCheckpointSaver[Any],
) -> None:
    model = scripted_model(lambda solver, rnd: ("18", 0.5))
    graph = build_solver_debate(model, agents=3, max_rounds=3, token_budget=20).compile(
        checkpointer=saver
    )
    out = graph.invoke({"question": QUESTION}, config_for("budget", graph))
    assert out["termination_reason"] == "budget"
    assert len(out["rounds"]) == 1
    assert out["usage"].calls == 3
    assert out["usage"].total_tokens == 45
    assert out["answer"] == "18"
    assert out["votes"] == {"18": 3}
    assert out["agreement"] == 1.0


@pytest.mark.parametrize(("budget", "rounds_run"), [(45, 1), (46, 2), (90, 2), (136, 3)])
def test_token_budget_boundary(budget: int, rounds_run: int) -> None:
    # Each round uses 3 calls x 15 tokens = 45; the budget is reached at >= budget.
    model = scripted_model(lambda solver, rnd: ("18", 0.5))
    graph = build_solver_debate(model, agents=3, max_rounds=3, token_budget=budget).compile()
    out = graph.invoke({"question": QUESTION}, config_for("x", graph))
    assert len(out["rounds"]) == rounds_run
    assert out["termination_reason"] == ("budget" if rounds_run < 3 else "rounds_completed")


def limit_for(max_rounds: int, agents: int = 2, **settings: Any) -> int:
    """The recursion limit of a solver debate with these settings (no model needed)."""
    return recursion_limit(build_solver_debate(agents=agents, max_rounds=max_rounds, **settings))


def test_recursion_limit_is_enough_and_bounded() -> None:
    assert limit_for(1) < limit_for(2) < limit_for(3) < limit_for(3, agents=3)
    assert limit_for(2) < limit_for(2, pause_after_round=True)  # the review step
    model = scripted_model(lambda solver, rnd: ("18", 0.5))
    graph = build_solver_debate(model, agents=2, max_rounds=4).compile()
    out = graph.invoke({"question": QUESTION}, {"recursion_limit": recursion_limit(graph)})
    assert len(out["rounds"]) == 4
    with pytest.raises(GraphRecursionError):  # a 1-round graph's limit does not run 4 rounds
        graph.invoke({"question": QUESTION}, {"recursion_limit": limit_for(1)})


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_rounds": 0}, "max_rounds must be at least 1, got 0"),
        ({"agents": 1}, "agents must be at least 2, got 1"),
        ({"topology": "mesh"}, "unknown topology 'mesh'"),
        ({"agents": 3, "neighbours": 3}, "k=3 is out of range"),
        ({"agents": 3, "neighbours": 0}, "k=0 is out of range"),
        ({"token_budget": 0}, "token budget must be a positive number of tokens, got 0"),
        ({"topology": {"a": ["a"], "b": ["a"]}}, "lists itself"),
        ({"topology": {"aggregate": ["b"], "b": ["aggregate"]}}, "'aggregate' is reserved"),
        ({"topology": {"__x": ["b"], "b": ["__x"]}}, "'__x' is reserved"),
        ({"view_chars": 39}, "view_chars must be at least 40 (or None for all), got 39"),
    ],
)
def test_bad_settings_fail_at_build_time(kwargs: dict[str, Any], message: str) -> None:
    model = ScriptedChatModel(responses=[])
    with pytest.raises(ValueError, match=re.escape(message)):
        build_solver_debate(model, **kwargs)
    assert model.prompts == []


def test_two_agents_default_to_one_neighbour() -> None:
    model = scripted_model(lambda solver, rnd: ("18", 0.5))
    graph = build_solver_debate(model, agents=2, max_rounds=2).compile()
    out = graph.invoke({"question": QUESTION}, config_for("x", graph))
    assert out["votes"] == {"18": 2}
    with pytest.raises(ValueError, match="k=2 is out of range"):
        build_solver_debate(model, agents=2, neighbours=2)


@pytest.mark.parametrize("question", ["", "   \n"])
def test_empty_question_fails_when_invoked(question: str) -> None:
    model = ScriptedChatModel(responses=[])
    graph = build_solver_debate(model, agents=2, max_rounds=1).compile()
    with pytest.raises(ValueError, match="question is empty"):
        graph.invoke({"question": question})
    assert model.prompts == []


# --------------------------------------------------------------------------
# Against the OpenAI stub server: concurrency and resume
# --------------------------------------------------------------------------


@pytest.mark.parametrize("max_concurrency", [5, 2])
def test_solvers_run_concurrently_up_to_max_concurrency(max_concurrency: int) -> None:
    with StubOpenAIServer(InGroups(max_concurrency, 5, stub_answer)) as server:
        graph = build_solver_debate(stub_spec(server), agents=5, max_rounds=1).compile()
        out = graph.invoke(
            {"question": QUESTION},
            {"max_concurrency": max_concurrency, "recursion_limit": recursion_limit(graph)},
        )
        assert out["answer"] == "18"
        assert server.calls == 5
        assert server.max_in_flight == max_concurrency


def test_resume_after_a_failed_solver_call_repeats_no_finished_call(tmp_path: Path) -> None:
    failed = threading.Event()
    server: StubOpenAIServer

    saved: list[bool] = []

    def responder(body: dict[str, Any]) -> dict[str, Any]:
        if who_asks(body) == ("solver_4", 2) and not failed.is_set():
            # Fail once, after the three other round-2 calls were answered and their
            # results saved as the step's pending writes (waited on, not slept on).
            saved.append(wait_for_saved_tasks(str(db), "resumable", 3))
            failed.set()
            raise RuntimeError("solver_4 endpoint hiccup")
        return stub_answer(body)

    db = tmp_path / "d.sqlite"

    with (
        StubOpenAIServer(responder) as server,
        open_checkpointer(db) as sqlite_saver,
    ):
        graph = build_solver_debate(stub_spec(server), agents=4, max_rounds=2).compile(
            checkpointer=sqlite_saver
        )
        config = config_for("resumable", graph)
        with pytest.raises(ModelUnavailableError, match="HTTP 500") as info:
            graph.invoke({"question": QUESTION}, config)
        assert server.url in str(info.value)
        assert failed.is_set() and saved == [True]

        # The round-2 step is pending: three solver tasks have saved results, one failed.
        snap = graph.get_state(config)
        assert snap.values["round"] == 2
        assert snap.next == ("solver_4",)
        assert sorted(t.name for t in snap.tasks) == ring(4, 2).solvers
        assert [t.name for t in snap.tasks if t.error] == ["solver_4"]
        assert all(t.result is not None for t in snap.tasks if t.name != "solver_4")
        # The saved results of the finished round-2 calls are already part of the state.
        saved = {(t.agent, t.round) for t in snap.values["transcript"]}
        assert saved == {(s, 1) for s in ring(4, 2).solvers} | {
            ("solver_1", 2),
            ("solver_2", 2),
            ("solver_3", 2),
        }
        assert thread_status(graph, "resumable") == "failed"
        assert server.calls == 7

        out = graph.invoke(None, config)

    assert out["termination_reason"] == "rounds_completed"
    assert [sorted(r.answers.values()) for r in out["rounds"]] == [["18"] * 4] * 2
    assert out["answer"] == "18"
    assert out["usage"].calls == 8
    # 8 answered calls in all: nothing that had finished was sent again.
    assert server.calls == 8
    per_solver = Counter(solver_of_request(b) for b in server.requests)
    assert per_solver == {"solver_1": 2, "solver_2": 2, "solver_3": 2, "solver_4": 3}
    per_round = Counter(who_asks(b) for b in server.requests)
    assert per_round[("solver_4", 2)] == 2
    assert all(n == 1 for key, n in per_round.items() if key != ("solver_4", 2))


# --------------------------------------------------------------------------
# Checkpoint storage
# --------------------------------------------------------------------------


def test_transcript_is_stored_as_deltas(saver: BaseCheckpointSaver[Any]) -> None:
    model = scripted_model(lambda solver, rnd: ANSWERS[(solver, rnd)])
    graph = build_solver_debate(model, agents=3, max_rounds=2, neighbours=1).compile(
        checkpointer=saver
    )
    config = config_for("deltas", graph)
    graph.invoke({"question": QUESTION}, config)

    checkpoint = saver.get_tuple(config)
    assert checkpoint is not None
    channel_values = checkpoint.checkpoint["channel_values"]
    assert channel_values["question"] == QUESTION  # a plain channel is stored in full
    assert "transcript" not in channel_values
    assert "rounds" not in channel_values
    for value in channel_values.values():
        assert not (isinstance(value, list) and value and isinstance(value[0], Turn))

    transcript = graph.get_state(config).values["transcript"]
    assert len(transcript) == 6
    assert {(t.agent, t.round) for t in transcript} == set(ANSWERS)
    assert [r.round for r in graph.get_state(config).values["rounds"]] == [1, 2]


# --------------------------------------------------------------------------
# The module-level graph
# --------------------------------------------------------------------------


def test_mermaid_matches_snapshot() -> None:
    drawn = studio.solver_debate.get_graph().draw_mermaid()
    assert drawn == SNAPSHOT.read_text(encoding="utf-8")


def test_module_graph_for_studio() -> None:
    graph = studio.solver_debate
    assert graph.checkpointer is None
    assert graph.name == GRAPH_NAME == "solver_debate"
    builder = graph.builder
    inputs = {"question", "choices", "answer_kind", "messages"}
    assert set(typing.get_type_hints(builder.input_schema)) == inputs
    output = set(typing.get_type_hints(builder.output_schema))
    assert output >= OUTPUT_KEYS
    assert "round" not in output
    assert set(graph.output_channels) == output


def test_module_graph_json_schemas() -> None:
    graph = studio.solver_debate
    schema = graph.get_input_jsonschema()
    assert set(schema["properties"]) == {"question", "choices", "answer_kind", "messages"}
    # The question, or messages whose last human message is it; choices only for a
    # multiple-choice question.
    assert schema["required"] == []
    assert schema["anyOf"] == [{"required": ["question"]}, {"required": ["messages"]}]
    output = set(graph.get_output_jsonschema()["properties"])
    assert output >= OUTPUT_KEYS


def test_reply_schemas_are_sent_without_their_docstring() -> None:
    """Every reply schema of the solvers and the judge drops its description, not its fields'."""
    for schema in (SolverReply, ExpressionReply, ChoiceReply, JudgeReply):
        sent = schema.model_json_schema()
        assert "description" not in sent, schema.__name__
        assert sent["properties"]["reasoning"]["description"], schema.__name__


# --------------------------------------------------------------------------
# Composition
# --------------------------------------------------------------------------


class CourtState(TypedDict, total=False):
    question: str
    verdict: str | None


def test_debate_as_a_node_of_a_parent_graph() -> None:
    model = scripted_model(lambda solver, rnd: ("20", 0.5) if solver == "solver_3" else ("18", 1))
    debate = build_solver_debate(model, agents=3, max_rounds=2).compile(name="debate")

    def run_debate(state: CourtState) -> CourtState:
        result = debate.invoke({"question": state["question"]})
        return {"verdict": result["answer"]}

    parent = StateGraph(CourtState)
    parent.add_node("debate", run_debate)
    parent.add_edge(START, "debate")
    parent.add_edge("debate", END)
    app = parent.compile(checkpointer=InMemorySaver(serde=serializer()))

    config: RunnableConfig = {"configurable": {"thread_id": "court"}, "recursion_limit": 25}
    out = app.invoke({"question": QUESTION}, config)
    assert out == {"question": QUESTION, "verdict": "18"}
    assert len(model.prompts) == 6
    assert app.get_state(config).values == {"question": QUESTION, "verdict": "18"}


def test_close_round_charges_each_turn_once_also_for_older_threads() -> None:
    """Solvers of the previous version charged their own usage; it is not charged again."""
    from debategraph.nodes.solver_debate import make_close_round, solver_debate_setup

    def turn(agent: str, rnd: int) -> Turn:
        return Turn(
            agent=agent, content="x", stage="solve", round=rnd, answer="18",
            usage=Usage(prompt_tokens=10, completion_tokens=5, calls=1),
        )  # fmt: skip

    setup = solver_debate_setup(
        agents=2, max_rounds=2, topology="ring", neighbours=None,
        token_budget=None, stop_when_unanimous=False, pause_after_round=False,
        view_chars=None, time_limit_s=None,
    )  # fmt: skip
    close = make_close_round(setup, None).invoke
    transcript = [turn(s, r) for r in (1, 2) for s in ("solver_1", "solver_2")]
    one = Usage(prompt_tokens=10, completion_tokens=5, calls=1)
    # Round 1 charged; in round 2 the older solver_1 already charged itself, solver_2 did not.
    state: Any = {
        "round": 2,
        "transcript": transcript,
        "usage": one + one + one,
        "usage_by_agent": {"solver_1": one + one, "solver_2": one},
    }
    update = close(state)
    assert update["usage"] == one and update["usage_by_agent"] == {"solver_2": one}
    assert update["rounds"][0].usage == one + one  # the round's record counts both turns
    state["usage_by_agent"] = {"solver_1": one, "solver_2": one}  # this version: none yet
    state["usage"] = one + one
    assert close(state)["usage_by_agent"] == {"solver_1": one, "solver_2": one}


def test_gist_keeps_the_start_and_the_end_of_long_reasoning() -> None:
    text = "Step 1: April is 48.  Step 2: May is half,\n24. " + "filler " * 40 + "Total: 72."
    cut = gist(text, 80)
    assert len(cut) <= 80
    assert cut.startswith("Step 1: April is 48. Step 2:") and cut.endswith("Total: 72.")
    assert " … " in cut and "filler filler filler filler filler filler" not in cut
    assert gist("short  one\n", 80) == "short one"
    assert gist(text, None) == " ".join(text.split())


@pytest.mark.parametrize("view_chars", [60, None])
def test_view_chars_bounds_what_a_solver_reads_of_its_neighbours(view_chars: int | None) -> None:
    long = "first-step " + "middle " * 100 + "last-step"

    def respond(messages: list[BaseMessage]) -> AIMessage:
        return tool_reply("SolverReply", {"reasoning": long, "answer": "18"})

    model = ScriptedChatModel(respond=respond)
    graph = build_solver_debate(model, agents=3, max_rounds=2, view_chars=view_chars).compile()
    graph.invoke({"question": QUESTION}, config_for("v", graph))
    refine = [str(p[-1].content) for p in model.prompts[3:]]
    assert len(refine) == 3
    for text in refine:
        assert text.count("first-step") == 2 and text.count("last-step") == 2  # 2 neighbours
        assert text.count("middle") == (200 if view_chars is None else 8)  # 2 x (2 + 2) kept


# --------------------------------------------------------------------------
# Settings: the old name of max_rounds, and solvers given by name
# --------------------------------------------------------------------------


def test_rounds_is_a_deprecated_alias_of_max_rounds() -> None:
    model = scripted_model(lambda solver, rnd: ("18", 0.5))
    with pytest.warns(DeprecationWarning, match=r"build_solver_debate\(rounds=...\)"):
        graph = build_solver_debate(model, agents=2, rounds=2).compile()
    out = graph.invoke({"question": QUESTION}, config_for("old", graph))
    assert len(out["rounds"]) == 2
    with pytest.raises(ValueError, match="rounds is the old name of max_rounds"):
        build_solver_debate(model, rounds=2, max_rounds=2)


def test_solvers_by_name_on_a_named_topology() -> None:
    model = scripted_model(lambda solver, rnd: ("18", 0.5))
    names = ["Ada", "Bo", "Cy"]
    graph = build_solver_debate(model, agents=names, max_rounds=2, neighbours=1).compile()
    assert [n for n in graph.builder.nodes if n in names] == names
    out = graph.invoke({"question": QUESTION}, config_for("named", graph))
    prompts = prompts_by(model)
    assert set(prompts) == {(n, r) for n in names for r in (1, 2)}
    # The ring of a count, over the names: Ada hears Bo, Bo hears Cy, Cy hears Ada.
    assert reasoning("Bo", 1) in prompts[("Ada", 2)][0]
    assert reasoning("Cy", 1) not in prompts[("Ada", 2)][0]
    assert out["rounds"][0].answers == dict.fromkeys(names, "18")
    assert set(out["usage_by_agent"]) == set(names)
    alone = build_solver_debate(model, agents=["Solo"], topology="single")
    assert "Solo" in alone.nodes
    custom = build_solver_debate(model, agents=["b", "a"], topology={"a": ["b"], "b": ["a"]})
    assert [n for n in custom.nodes if n in "ab"] == ["a", "b"]  # the topology's order


@pytest.mark.parametrize(
    ("agents", "settings", "message"),
    [
        (["Ada", ""], {}, "solver name '' must be a non-empty string"),
        (["Ada", 3], {}, "solver name 3 must be a non-empty string"),
        (["Ada", "ada"], {}, "duplicate solver name 'ada'"),
        (["Ada", "aggregate"], {}, "solver name 'aggregate' is reserved"),
        (["Ada", "human"], {}, "solver name 'human' is reserved"),
        (["Ada", "__x"], {}, "solver name '__x' is reserved"),
        (["Ada", "a:b"], {}, "solver name 'a:b' contains ':'"),
        (["Ada"], {}, "a solver debate needs at least 2 solvers, got 1"),
        ("Ada,Bo", {}, "agents must be a count or a list of solver names or records, got 'Ada,Bo'"),
        (["Ada", "Bo"], {"topology": "single"}, "topology 'single' has one solver"),
        (
            ["Ada", "Bo"],
            {"topology": {"a": ["b"], "b": ["a"]}},
            "agents ['Ada', 'Bo'] are not the topology's solvers (a, b)",
        ),
    ],
)
def test_bad_solver_names_fail_at_build_time(
    agents: Any, settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        build_solver_debate(agents=agents, **settings)
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------
# The CLI declaration
# --------------------------------------------------------------------------


def test_solve_command_launches_with_the_factorys_settings() -> None:
    launch = SOLVE.command(QUESTION, agents=3, rounds=2, neighbours=1, view_chars=0)
    assert isinstance(launch, Launch)
    assert launch.input == {"question": QUESTION}
    assert launch.settings == {
        "agents": 3,
        "max_rounds": 2,
        "topology": "ring",
        "neighbours": 1,
        "token_budget": None,
        "stop_when_unanimous": False,
        "view_chars": None,
    }
    # The settings (plus the CLI's pause_after_round) are build_solver_debate's arguments.
    model = scripted_model(lambda solver, rnd: ("18", 0.5))
    build = entry(GRAPH_NAME).build()
    builder = build(model, **launch.settings, pause_after_round=False)
    out = builder.compile().invoke(launch.input, {"recursion_limit": recursion_limit(builder)})
    assert len(out["rounds"]) == 2
    assert SOLVE.described.agents_per_round(launch.settings) == 3
    assert SOLVE.described.describe(launch.settings) == "3 solvers, ring k=1, 2 rounds"


def test_a_saved_threads_rounds_setting_reads_as_max_rounds() -> None:
    saved = {"agents": 4, "rounds": 3, "topology": "full", "neighbours": None}
    settings = current_settings(GRAPH_NAME, saved)
    assert settings["max_rounds"] == 3 and "rounds" not in settings
    assert SOLVE.described.describe(settings) == "4 solvers, full, 3 rounds"
    assert SOLVE.described.agents_per_round({**settings, "agents": ["Ada", "Bo"]}) == 2
    assert SOLVE.described.agents_per_round({**settings, "topology": {"a": ["b"], "b": ["a"]}}) == 2
