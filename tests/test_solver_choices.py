"""The solver debate on one solver alone, and on multiple-choice questions."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from debategraph import build_solver_debate
from debategraph.graphs.solver_debate import GRAPH_NAME
from debategraph.strategies import make_topology
from tests.fake_model import ScriptedChatModel, tool_reply

CHOICES = ["Paris", "London", "Rome"]


def test_a_single_solver_answers_once_and_its_answer_is_the_vote() -> None:
    model = ScriptedChatModel(
        responses=[tool_reply("SolverReply", {"reasoning": "24 + 48", "answer": "72"})]
    )
    graph = build_solver_debate(model, topology="single", max_rounds=1).compile(name=GRAPH_NAME)
    result = graph.invoke({"question": "48 clips and half as many?"})
    assert result["answer"] == "72"
    assert result["votes"] == {"72": 1}
    assert len(model.prompts) == 1
    assert "one of 1 agents" in str(model.prompts[0][0].content)


def test_the_single_topology_has_one_solver_that_hears_no_one() -> None:
    topo = make_topology("single", 5)
    assert topo.neighbours == {"solver_1": ()}
    with pytest.raises(ValueError, match="at least 2 solvers"):
        make_topology({"solo": []}, 1)  # a custom topology still needs two


def test_choices_are_shown_lettered_and_answers_read_as_letters() -> None:
    replies = [
        tool_reply("ChoiceReply", {"reasoning": "the capital", "answer": "A"}),
        tool_reply("ChoiceReply", {"reasoning": "I think London", "answer": "London"}),
        tool_reply("ChoiceReply", {"reasoning": "hmm", "answer": "(a)"}),
    ]
    model = ScriptedChatModel(responses=replies)
    graph = build_solver_debate(model, agents=3, max_rounds=1).compile(
        checkpointer=InMemorySaver(), name=GRAPH_NAME
    )
    config = {"configurable": {"thread_id": "t"}}
    result = graph.invoke({"question": "Capital of France?", "choices": CHOICES}, config)
    assert result["answer"] == "A"
    assert result["votes"] == {"A": 2, "B": 1}
    assert result["choices"] == CHOICES
    prompt = str(model.prompts[0][-1].content)
    assert "A) Paris\nB) London\nC) Rome" in prompt
    assert "multiple-choice" in str(model.prompts[0][0].content)


def test_a_letter_beyond_the_choices_abstains() -> None:
    model = ScriptedChatModel(
        responses=[tool_reply("ChoiceReply", {"reasoning": "?", "answer": "F"})]
    )
    graph = build_solver_debate(model, topology="single", max_rounds=1).compile(name=GRAPH_NAME)
    result = graph.invoke({"question": "Capital?", "choices": CHOICES})
    assert result["answer"] is None


@pytest.mark.parametrize(
    "choices", [["only one"], ["a", " "], [f"c{i}" for i in range(27)], "Paris,London"]
)
def test_bad_choices_are_refused_in_one_line(choices: object) -> None:
    model = ScriptedChatModel(responses=[])
    graph = build_solver_debate(model, topology="single", max_rounds=1).compile(name=GRAPH_NAME)
    with pytest.raises(ValueError, match="choices must be a list of 2 to 26 non-empty texts"):
        graph.invoke({"question": "Capital?", "choices": choices})
