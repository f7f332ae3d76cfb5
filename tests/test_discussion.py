"""Tests for the discussion graph: document parsing, section choice, insights, questions,
responses with revisions, convergence math and every termination reason, the consensus
report and its Markdown, the pause between iterations and a human's interjections,
validation, checkpoints, the pattern's declaration and the Studio graph."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.runtime import Runtime
from langgraph.types import Command

from debategraph import build_discussion, recursion_limit
from debategraph.checkpoints import open_checkpointer
from debategraph.cli.patterns.discussion import PATTERN, discuss_command
from debategraph.documents import NO_SECTIONS_NOTE, load_document, parse_document
from debategraph.errors import UsageError
from debategraph.graphs.discussion import GRAPH_NAME
from debategraph.nodes.discussion import make_open_round
from debategraph.nodes.discussion.convergence import (
    ConvergenceMetrics,
    convergence_metrics,
    convergence_score,
    termination_conditions,
)
from debategraph.nodes.discussion.markdown import render_report_markdown
from debategraph.nodes.discussion.setup import DEFAULT_PERSONAS, discussion_setup
from debategraph.nodes.discussion.views import iteration_of
from debategraph.nodes.review import review_request
from debategraph.registry import current_settings, entry
from debategraph.state.discussion import (
    ConsensusReport,
    ConvergenceRecord,
    Insight,
    Persona,
    Question,
    Response,
    SectionChoice,
)
from debategraph.state.records import Turn, Usage
from debategraph.strategies.termination import RoundOutcome, first_fired
from tests.fake_model import ScriptedChatModel, tool_reply

SNAPSHOT = Path(__file__).parent / "snapshots" / "discussion.mmd"
PAPER = """# Sparse Debate Topologies

## Abstract

We show that sparse communication between debating agents keeps accuracy while cutting cost.

## Introduction

Multi-agent debate improves reasoning. <intro-text> Dense debate is costly.

## Method

Agents sit on a ring and read only neighbours. <method-text> We vary the degree.

## Experiments

On GSM8K sparse rings match full graphs. <experiments-text> Cost falls by half.

## Limitations

Only math benchmarks were tried. <limitations-text>
"""
SECTION_MARKERS = {
    "S1": "<intro-text>",
    "S2": "<method-text>",
    "S3": "<experiments-text>",
    "S4": "<limitations-text>",
}
AGENT_RE = re.compile(r"You are (.+?), one of the agents")
INSIGHT_ID_RE = re.compile(r"\[([a-z_]+-\d+)\]")
QUESTION_ID_RE = re.compile(r"\[(Q\d+-[a-z_]+-\d+)\]")
OUTPUT_KEYS = {
    "paper",
    "transcript",
    "messages",
    "section_choices",
    "insights",
    "questions",
    "responses",
    "convergence",
    "notes",
    "report",
    "termination_reason",
    "iterations_completed",
    "usage",
    "usage_by_agent",
    "usage_by_model",
}
TWO = [
    {"name": "Alice", "focus": "methods"},
    {"name": "Bob", "focus": "impact", "description": "Pragmatic."},
]

Handler = Callable[[str, str], dict[str, Any]]


# --------------------------------------------------------------------------
# A scripted discussion model
# --------------------------------------------------------------------------


def phase_of(text: str) -> str:
    """Which schema a prompt asks for, from its task text."""
    for marker, schema in [
        ("Choose at most", "SectionChoice"),
        ("Give two or three insights", "Analysis"),
        ("Review the other agents'", "Inquiry"),
        ("Answer each question", "ResponseSet"),
        ("How far has the discussion converged", "ConvergenceVote"),
        ("Write the report", "ConsensusReport"),
    ]:
        if marker in text:
            return schema
    raise AssertionError(f"unknown prompt: {text[:200]}")


def choose(agent: str, text: str) -> dict[str, Any]:
    return {"section_ids": ["S2", "S3"], "reason": "methods and results"}


def analyse(agent: str, text: str) -> dict[str, Any]:
    return {
        "insights": [
            {
                "content": f"{agent} insight {n}",
                "importance": 0.5 + n / 10,
                "confidence": 0.7,
                "evidence": ["sparse rings match full graphs"] if n == 1 else [],
                "questions": [],
            }
            for n in (1, 2)
        ]
    }


def ask_first_other(agent: str, text: str) -> dict[str, Any]:
    """Ask one challenge about the first insight id of another agent in the prompt."""
    own = f"{agent.lower()}-"
    target = next(i for i in INSIGHT_ID_RE.findall(text) if not i.startswith(own))
    name = target.split("-")[0].replace("_", " ").title()
    return {
        "questions": [
            {
                "target_agent": name,
                "target_insight": target,
                "type": "challenge",
                "priority": 0.8,
                "text": f"{agent} asks why {target}?",
            }
        ]
    }


def skip(agent: str, text: str) -> dict[str, Any]:
    return {"questions": [], "skip_reason": "the insights are clear"}


def revise_all(agent: str, text: str) -> dict[str, Any]:
    iteration = re.search(r"Iteration (\d+)", text)
    n = iteration.group(1) if iteration else "?"
    return {
        "responses": [
            {
                "question_id": qid,
                "answer": "fair point",
                "stance": "revise",
                "revised_insight": f"{agent} revised in {n}",
                "confidence": 0.9,
            }
            for qid in QUESTION_ID_RE.findall(text)
        ]
    }


def agree_all(agent: str, text: str) -> dict[str, Any]:
    return {
        "responses": [
            {"question_id": qid, "answer": "yes", "stance": "agree", "confidence": 0.8}
            for qid in QUESTION_ID_RE.findall(text)
        ]
    }


def vote(score: float) -> Handler:
    return lambda agent, text: {"score": score, "reason": f"{agent} votes {score}"}


def report(agent: str, text: str) -> dict[str, Any]:
    return {
        "consensus_points": [
            {
                "statement": "Sparse debate saves cost.",
                "supporting": ["alice", "Bob", "Zed"],
                "opposing": [],
                "strength": 0.8,
            }
        ],
        "divergent_views": [
            {
                "topic": "Generality",
                "positions": [
                    {"agent": "Alice", "position": "math only", "reasons": ["one benchmark"]},
                    {"agent": "Bob", "position": "general", "reasons": []},
                ],
            }
        ],
        "overview": "A paper on sparse debate.",
        "main_contributions": ["ring topologies"],
        "consensus_assessment": "Solid but narrow.",
        "contested_points": ["generality"],
        "significance": "Cheaper debate.",
        "overall_confidence": 0.7,
    }


class Script:
    """A fake model answering each phase with a handler; records prompts by phase."""

    def __init__(self, **handlers: Handler) -> None:
        self.handlers: dict[str, Handler] = {
            "SectionChoice": choose,
            "Analysis": analyse,
            "Inquiry": ask_first_other,
            "ResponseSet": revise_all,
            "ConvergenceVote": vote(0.2),
            "ConsensusReport": report,
            **handlers,
        }
        self.model = ScriptedChatModel(respond=self.respond)
        self.calls: list[tuple[str, str, str]] = []

    def respond(self, messages: list[BaseMessage]) -> AIMessage:
        system = str(messages[0].content)
        text = str(messages[1].content)
        match = AGENT_RE.search(system)
        agent = match.group(1) if match else "consensus"
        schema = phase_of(text)
        self.calls.append((schema, agent, text))
        return tool_reply(schema, self.handlers[schema](agent, text))

    def prompts(self, schema: str, agent: str | None = None) -> list[str]:
        return [t for s, a, t in self.calls if s == schema and (agent is None or a == agent)]


def run(script: Script, document: str = PAPER, **kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("personas", TWO)
    builder = build_discussion(script.model, **kwargs)
    graph = builder.compile(name=GRAPH_NAME)
    out: dict[str, Any] = graph.invoke(
        {"document": document}, {"recursion_limit": recursion_limit(graph)}
    )
    return out


# --------------------------------------------------------------------------
# Documents
# --------------------------------------------------------------------------


def test_markdown_document_is_split_into_sections() -> None:
    doc = parse_document(PAPER)
    assert doc.title == "Sparse Debate Topologies"
    assert doc.abstract.startswith("We show that sparse communication")
    assert [(s.id, s.title) for s in doc.sections] == [
        ("S1", "Introduction"),
        ("S2", "Method"),
        ("S3", "Experiments"),
        ("S4", "Limitations"),
    ]
    assert "<method-text>" in doc.sections[1].text
    assert doc.notes == []


def test_plain_text_becomes_one_section_with_a_note() -> None:
    doc = parse_document("A Title Line\n\nFirst paragraph here.\n\nSecond paragraph.")
    assert doc.title == "A Title Line"
    assert doc.abstract == "First paragraph here."
    assert len(doc.sections) == 1
    assert "Second paragraph." in doc.sections[0].text
    assert NO_SECTIONS_NOTE in doc.notes


def test_abstract_falls_back_to_first_paragraph() -> None:
    doc = parse_document("# T\n\nOpening words.\n\n## Body\n\nBody text.")
    assert doc.abstract == "Opening words."
    assert [s.title for s in doc.sections] == ["Body"]


def test_subsections_stay_inside_their_section() -> None:
    doc = parse_document("# T\n\n## A\n\ntext a\n\n### A.1\n\ndeep\n\n## B\n\ntext b")
    assert [s.title for s in doc.sections] == ["A", "B"]
    assert "deep" in doc.sections[0].text


def test_load_document_reads_a_file_and_names_bad_paths(tmp_path: Path) -> None:
    path = tmp_path / "paper.md"
    path.write_text(PAPER)
    assert load_document(path).title == "Sparse Debate Topologies"
    assert load_document(str(path)).title == "Sparse Debate Topologies"
    empty = tmp_path / "empty.md"
    empty.write_text("  \n")
    with pytest.raises(ValueError, match=r"empty\.md") as info:
        load_document(empty)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match=r"cannot read document .*missing\.md"):
        load_document(tmp_path / "missing.md")
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(ValueError, match=r"bin\.md"):
        load_document(binary)


@pytest.mark.parametrize("text", ["", "   \n\n"])
def test_empty_document_fails_when_invoked(text: str) -> None:
    with pytest.raises(ValueError, match="document is empty"):
        run(Script(), document=text)


# --------------------------------------------------------------------------
# Phase 1: section choice and insights
# --------------------------------------------------------------------------


def test_analysis_prompt_holds_exactly_the_chosen_sections() -> None:
    def choose_by_agent(agent: str, text: str) -> dict[str, Any]:
        ids = ["S1", "S4"] if agent == "Alice" else ["s3"]
        return {"section_ids": ids, "reason": "focus"}

    script = Script(SectionChoice=choose_by_agent)
    out = run(script, max_rounds=1)
    for agent, chosen in [("Alice", {"S1", "S4"}), ("Bob", {"S3"})]:
        (prompt,) = script.prompts("Analysis", agent)
        for sid, marker in SECTION_MARKERS.items():
            assert (marker in prompt) == (sid in chosen), (agent, sid)
        (choose_prompt,) = script.prompts("SectionChoice", agent)
        assert "S4: Limitations" in choose_prompt and "<limitations-text>" not in choose_prompt
    choices = {c.agent: c.section_ids for c in out["section_choices"]}
    assert choices == {"Alice": ["S1", "S4"], "Bob": ["S3"]}


def test_unknown_sections_dropped_and_choice_capped() -> None:
    def greedy(agent: str, text: str) -> dict[str, Any]:
        return {"section_ids": ["S9", "S1", "S1", "S2", "S3", "S4"], "reason": "all"}

    script = Script(SectionChoice=greedy)
    out = run(script, max_rounds=1, max_sections=2)
    choice: SectionChoice = out["section_choices"][0]
    assert choice.section_ids == ["S1", "S2"]
    assert any("unknown section id 'S9' dropped" in n for n in out["notes"])
    assert any("only the first 2 are read" in n for n in out["notes"])
    prompt = script.prompts("Analysis")[0]
    assert "<intro-text>" in prompt and "<experiments-text>" not in prompt


def test_no_known_section_reads_the_first_ones() -> None:
    script = Script(SectionChoice=lambda a, t: {"section_ids": ["nope"], "reason": "?"})
    out = run(script, max_rounds=1, max_sections=1)
    assert all(c.section_ids == ["S1"] for c in out["section_choices"])
    assert any("reads the first 1 section" in n for n in out["notes"])


def test_insights_are_validated_clamped_and_capped() -> None:
    def wild(agent: str, text: str) -> dict[str, Any]:
        return {
            "insights": [
                {
                    "content": f"{agent} point {n}",
                    "importance": 7,
                    "confidence": -1,
                    "evidence": ["sparse rings match full graphs", "invented quote"],
                }
                for n in range(5)
            ]
        }

    out = run(Script(Analysis=wild, Inquiry=skip), max_rounds=1)
    alice: list[Insight] = out["insights"]["Alice"]
    assert [i.id for i in alice] == ["alice-1", "alice-2", "alice-3"]
    assert all(i.importance == 1.0 and i.confidence == 0.0 for i in alice)
    assert all(i.evidence == ["sparse rings match full graphs"] for i in alice)
    assert any("only the first 3 kept" in n for n in out["notes"])
    assert any("alice-1: 1 evidence quote not found" in n for n in out["notes"])


def test_too_few_insights_are_noted() -> None:
    one = lambda a, t: {"insights": [{"content": "only", "importance": 1, "confidence": 1}]}  # noqa: E731
    out = run(Script(Analysis=one, Inquiry=skip), max_rounds=1)
    assert any("gave 1 insight, 2 were asked for" in n for n in out["notes"])


def test_initial_turns_carry_both_calls_usage() -> None:
    out = run(Script(Inquiry=skip), max_rounds=1)
    assert out["usage_by_agent"]["Alice"].calls == 4  # choose + analyse + ask + assess
    assert out["usage_by_agent"]["consensus"].calls == 1
    # The reducers add each node's own calls: the total is the sum over agents.
    total: Usage = out["usage"]
    by_agent = Usage.total(out["usage_by_agent"].values())
    assert (total.prompt_tokens, total.completion_tokens, total.calls) == (
        by_agent.prompt_tokens,
        by_agent.completion_tokens,
        by_agent.calls,
    )
    assert total.calls == 2 * 4 + 1
    assert total.latency_s == pytest.approx(by_agent.latency_s, abs=1e-5)


# --------------------------------------------------------------------------
# Phases 2-3: questions, skips, responses, revisions
# --------------------------------------------------------------------------


def test_questions_answered_and_revisions_applied() -> None:
    script = Script()
    out = run(script, max_rounds=1)
    questions: list[Question] = out["questions"]
    assert {(q.asker, q.target_agent, q.target_insight) for q in questions} == {
        ("Alice", "Bob", "bob-1"),
        ("Bob", "Alice", "alice-1"),
    }
    responses: list[Response] = out["responses"]
    assert {r.agent for r in responses} == {"Alice", "Bob"}
    assert all(r.stance == "revise" for r in responses)
    bob = {i.id: i for i in out["insights"]["Bob"]}
    assert bob["bob-1"].content == "Bob revised in 1"
    assert bob["bob-1"].version == 2 and bob["bob-1"].revised_in == 1
    assert bob["bob-2"].content == "Bob insight 2" and bob["bob-2"].version == 1
    # Bob's answer prompt holds the question addressed to it, not Alice's own.
    (answer_prompt,) = script.prompts("ResponseSet", "Bob")
    assert "Alice asks why bob-1?" in answer_prompt
    assert "Bob asks why" not in answer_prompt


def test_skip_is_recorded_and_nobody_answers() -> None:
    script = Script(Inquiry=skip)
    out = run(script, max_rounds=3)
    assert out["questions"] == [] and out["responses"] == []
    assert script.prompts("ResponseSet") == []
    assert out["termination_reason"] == "stalled"
    assert out["iterations_completed"] == 1


def test_skip_turns_are_in_the_transcript() -> None:
    script = Script(Inquiry=skip)
    graph = build_discussion(script.model, personas=TWO, max_rounds=1).compile(
        checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    graph.invoke({"document": PAPER}, config)
    transcript: list[Turn] = graph.get_state(config).values["transcript"]
    stages = [(t.agent, t.stage) for t in transcript]
    assert ("Alice", "skip") in stages and ("Bob", "skip") in stages
    assert {t.content for t in transcript if t.stage == "skip"} == {"the insights are clear"}
    assert [t.stage for t in transcript if t.agent == "Alice"] == ["initial", "skip", "convergence"]
    assert transcript[-1].stage == "consensus"


def test_ask_prompt_discourages_asking_for_its_own_sake() -> None:
    script = Script(Inquiry=skip)
    run(script, max_rounds=1)
    prompt = script.prompts("Inquiry", "Alice")[0]
    assert "Do not ask for the sake of asking" in prompt
    assert "Alice (you):" in prompt and "[bob-1] Bob insight 1" in prompt


@pytest.mark.parametrize(
    ("question", "note"),
    [
        ({"target_agent": "Zed", "target_insight": "bob-1"}, "unknown agent 'Zed'"),
        ({"target_agent": "Bob", "target_insight": "bob-9"}, "unknown insight 'bob-9' of Bob"),
        ({"target_agent": "Bob", "target_insight": "alice-1"}, "unknown insight 'alice-1'"),
        ({"target_agent": "Alice", "target_insight": "alice-1"}, "its own insight"),
    ],
)
def test_bad_questions_dropped_with_reason(question: dict[str, Any], note: str) -> None:
    def ask_bad(agent: str, text: str) -> dict[str, Any]:
        if agent != "Alice":
            return skip(agent, text)
        q = {"type": "challenge", "priority": 0.5, "text": "why?", **question}
        return {"questions": [q]}

    out = run(Script(Inquiry=ask_bad), max_rounds=1)
    assert out["questions"] == []
    assert any(note in n and n.startswith("Alice:") for n in out["notes"]), out["notes"]


def test_misspelt_target_agent_is_read_as_the_closest() -> None:
    def ask_bob(agent: str, text: str) -> dict[str, Any]:
        if agent != "Alice":
            return skip(agent, text)
        q = {"target_agent": "bobb", "target_insight": "bob-2", "type": "extension"}
        return {"questions": [{**q, "priority": 0.4, "text": "and then?"}]}

    out = run(Script(Inquiry=ask_bob, ResponseSet=agree_all), max_rounds=1)
    assert [q.target_agent for q in out["questions"]] == ["Bob"]


def test_responses_to_unknown_questions_dropped_and_revise_without_text_noted() -> None:
    def odd(agent: str, text: str) -> dict[str, Any]:
        (qid,) = QUESTION_ID_RE.findall(text)
        return {
            "responses": [
                {"question_id": "Q9-x-1", "answer": "?", "stance": "agree", "confidence": 1},
                {"question_id": qid, "answer": "ok", "stance": "revise", "confidence": 0.5},
            ]
        }

    out = run(Script(ResponseSet=odd), max_rounds=1)
    assert len(out["responses"]) == 2
    assert any("response to unknown question 'Q9-x-1' dropped" in n for n in out["notes"])
    assert any("without a revised text" in n for n in out["notes"])
    assert all(i.version == 1 for items in out["insights"].values() for i in items)


# --------------------------------------------------------------------------
# Phase 4: convergence math and termination
# --------------------------------------------------------------------------


def _insight(iid: str, revised_in: int = 0) -> Insight:
    return Insight(
        content="x", importance=0.5, confidence=0.5, id=iid, agent="A", revised_in=revised_in
    )


def _question(qid: str, kind: str = "challenge") -> Question:
    return Question(
        target_agent="B",
        target_insight="b-1",
        type=kind,  # type: ignore[arg-type]
        priority=0.5,
        text="?",
        id=qid,
        asker="A",
        iteration=1,
    )


def _response(qid: str, stance: str) -> Response:
    return Response(question_id=qid, answer="a", stance=stance, confidence=0.5)  # type: ignore[arg-type]


def test_convergence_metrics() -> None:
    questions = [_question("q1"), _question("q2"), _question("q3", "clarification")]
    responses = [_response("q1", "agree"), _response("q2", "disagree")]
    insights = {"A": [_insight("a-1", 1), _insight("a-2")], "B": [_insight("b-1"), _insight("b-2")]}
    m = convergence_metrics(questions, responses, insights, iteration=1)
    assert m.consistency == 0.5
    assert m.completeness == pytest.approx(2 / 3)
    assert m.resolution == 0.5
    assert m.stability == 0.75 and m.changed == 1


def test_convergence_metrics_with_nothing_to_measure() -> None:
    # Nothing asked, answered or revised measures nothing: n/a, not agreement (issue 20).
    insights = {"A": [_insight("a-1")], "B": [_insight("b-1")]}
    m = convergence_metrics([], [], insights, iteration=1)
    assert (m.consistency, m.completeness, m.resolution, m.stability, m.changed) == (
        None,
        None,
        None,
        None,
        0,
    )
    assert m.measured == [] and convergence_score(m, {}) is None
    assert convergence_score(m, {"A": 0.0, "B": 0.0}) == 0.0  # the self-scores decide alone


def test_convergence_score_combines_metrics_and_agent_votes() -> None:
    m = ConvergenceMetrics(
        consistency=1.0, completeness=0.5, resolution=0.5, stability=0.0, changed=2
    )
    assert convergence_score(m, {}) == 0.5
    assert convergence_score(m, {"A": 1.0, "B": 0.0}) == 0.5
    assert convergence_score(m, {"A": 1.0, "B": 1.0}) == 0.75
    assert convergence_score(m, {"A": 3.0}) == 0.75  # votes clamped to 0-1


def five_rounds_setup() -> Any:
    """A discussion's settings: 5 rounds, threshold 0.75, a minute, 3 sections."""
    return discussion_setup(
        personas=None,
        max_rounds=5,
        threshold=0.75,
        time_limit_s=60,
        max_sections=3,
        pause_after_round=False,
    )


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"score": 0.8}, "converged"),
        ({"score": 0.8, "changed": 0, "round": 5, "elapsed_s": 100.0}, "converged"),
        ({"changed": 0}, "stalled"),
        ({"changed": 0, "round": 5, "elapsed_s": 100.0}, "stalled"),
        ({"elapsed_s": 100.0}, "time_limit"),
        ({"elapsed_s": 100.0, "round": 5}, "time_limit"),
        ({"round": 5}, "rounds_completed"),
        ({}, None),
    ],
)
def test_termination_conditions_in_order(kwargs: dict[str, Any], expected: str | None) -> None:
    setup = five_rounds_setup()
    outcome = RoundOutcome(**{"round": 2, "score": 0.5, "changed": 1, "elapsed_s": 1.0, **kwargs})
    assert first_fired(termination_conditions(setup), outcome) == expected


def test_convergence_record_reads_the_old_cap_word() -> None:
    fields: dict[str, Any] = {
        "iteration": 3,
        "consistency": 1,
        "completeness": 1,
        "resolution": 1,
        "stability": 0.5,
        "agent_scores": {},
        "score": 0.5,
        "changed": 1,
    }
    old = ConvergenceRecord.model_validate({**fields, "termination_reason": "max_iterations"})
    assert old.termination_reason == "rounds_completed"
    assert ConvergenceRecord.model_validate(fields).termination_reason is None
    with pytest.raises(ValueError, match="unknown termination reason 'bored'"):
        ConvergenceRecord.model_validate({**fields, "termination_reason": "bored"})


def test_runs_to_max_rounds_with_bounded_prompts() -> None:
    script = Script()
    out = run(script, max_rounds=4)
    assert out["termination_reason"] == "rounds_completed"
    assert out["iterations_completed"] == 4
    assert [c.iteration for c in out["convergence"]] == [1, 2, 3, 4]
    assert out["convergence"][-1].termination_reason == "rounds_completed"
    assert all(c.changed == 2 and c.score < 0.75 for c in out["convergence"])
    asks = [len(p) for p in script.prompts("Inquiry", "Alice")]
    assert len(asks) == 4 and max(asks) - min(asks) < 20
    # Only the latest revision is shown: nothing of earlier iterations.
    assert "revised in 1" not in script.prompts("Inquiry", "Alice")[-1]


def test_converges_when_agents_agree() -> None:
    out = run(Script(ResponseSet=agree_all, ConvergenceVote=vote(0.9)), max_rounds=5)
    # agree changes nothing, but a converged score wins over stalled
    assert out["termination_reason"] == "converged"
    assert out["iterations_completed"] == 1
    record = out["convergence"][0]
    assert record.agent_scores == {"Alice": 0.9, "Bob": 0.9}
    assert record.score == pytest.approx((1.0 + 0.9) / 2)


def test_time_limit_ends_the_discussion() -> None:
    out = run(Script(), max_rounds=5, time_limit_s=1e-9)
    assert out["termination_reason"] == "time_limit"
    assert out["iterations_completed"] == 1


def test_agent_vote_fallback_is_left_out_of_the_score() -> None:
    out = run(Script(ConvergenceVote=lambda a, t: {"nonsense": True}), max_rounds=1)
    assert out["convergence"][0].agent_scores == {}


# --------------------------------------------------------------------------
# Phase 5: consensus report
# --------------------------------------------------------------------------


def test_consensus_report_built_from_final_state() -> None:
    script = Script()
    out = run(script, max_rounds=2)
    (prompt,) = script.prompts("ConsensusReport")
    assert "Alice revised in 2" in prompt and "Bob insight 2" in prompt
    assert "2 iteration(s) (rounds_completed)" in prompt
    rep: ConsensusReport = out["report"]
    assert rep.consensus_points[0].supporting == ["Alice", "Bob"]
    assert any("unknown agent 'Zed' dropped" in n for n in rep.notes)
    assert rep.divergent_views[0].positions[0].agent == "Alice"
    assert rep.fallback is None


def test_consensus_fallback_builds_a_report_from_state() -> None:
    out = run(Script(ConsensusReport=lambda a, t: {"bad": 1}), max_rounds=1)
    rep: ConsensusReport = out["report"]
    assert rep.fallback is not None and "built from state" in rep.fallback
    assert rep.overview == ""  # not the abstract passed off as a synthesis (issue 20)
    assert len(rep.main_contributions) == 3


def test_markdown_report_rendered() -> None:
    out = run(Script(), max_rounds=1)
    text = render_report_markdown(
        out["report"],
        title=out["paper"].title,
        termination_reason=out["termination_reason"],
        convergence=out["convergence"],
        insights=out["insights"],
    )
    assert text.startswith("# Discussion report: Sparse Debate Topologies\n")
    for heading in ["## Overview", "## Consensus points", "## Divergent views", "### Generality"]:
        assert heading in text
    assert "- Sparse debate saves cost. (strength 0.80; supporting: Alice, Bob)" in text
    assert "- **Alice**: math only (one benchmark)" in text
    assert "- iteration 1: score" in text and "- ended: rounds_completed" in text
    assert "[bob-1] Bob revised in 1" in text
    assert text.endswith("\n") and not text.endswith("\n\n")


def test_markdown_report_of_an_empty_report() -> None:
    rep = ConsensusReport(
        consensus_points=[],
        divergent_views=[],
        overview="",
        main_contributions=[],
        consensus_assessment="",
        contested_points=[],
        significance="",
        overall_confidence=0.0,
        fallback="no report",
    )
    text = render_report_markdown(rep)
    assert (
        text.startswith("# Discussion report\n") and "> Not written by a model: no report" in text
    )
    assert "## Overview\n\n(not written: the consensus call gave no usable report)" in text


# --------------------------------------------------------------------------
# Settings, graph, checkpoints
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_rounds": 0}, "max_rounds must be at least 1, got 0"),
        ({"threshold": 1.5}, "threshold must be between 0 and 1, got 1.5"),
        ({"threshold": -0.1}, "threshold must be between 0 and 1"),
        ({"time_limit_s": 0}, "time_limit_s must be a positive"),
        ({"max_sections": 0}, "max_sections must be at least 1"),
        ({"personas": [TWO[0]]}, "at least 2 personas, got 1"),
        ({"personas": []}, "at least 2 personas, got 0"),
        ({"personas": [TWO[0], {"name": "alice", "focus": "x"}]}, "duplicate persona name"),
        ({"personas": [TWO[0], {"name": "Bob"}]}, r"bad or missing: focus"),
        ({"personas": [TWO[0], 3]}, "must be a Persona or a dict"),
        ({"personas": TWO[0]}, "must be a list"),
        ({"personas": [TWO[0], {"name": "consensus", "focus": "x"}]}, "is reserved"),
        ({"personas": [TWO[0], {"name": "!!", "focus": "x"}]}, "at least one letter"),
    ],
)
def test_bad_settings_fail_at_build_time(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        build_discussion(ScriptedChatModel(), **kwargs)
    assert "\n" not in str(info.value)


def test_default_personas_and_user_personas() -> None:
    assert [p.name for p in DEFAULT_PERSONAS] == [
        "Critical Evaluator",
        "Innovative Insighter",
        "Practical Applicator",
        "Theoretical Integrator",
    ]
    extra = [*DEFAULT_PERSONAS, Persona(name="Ethicist", focus="ethics")]
    script = Script(Inquiry=skip)
    out = run(script, personas=extra, max_rounds=1)
    assert set(out["insights"]) == {p.name for p in extra}
    system = str(script.model.prompts[0][0].content)
    assert "Ethicist (ethics)" in system


def test_output_schema_and_recursion_limit() -> None:
    out = run(Script(), max_rounds=3)
    assert set(out) == OUTPUT_KEYS
    # The analysis before the first iteration counts as a round: max_rounds + 1.
    builder = build_discussion(personas=TWO, max_rounds=3)
    # Each round's nodes, and the two every graph runs once (take_input, respond).
    assert recursion_limit(builder) == (len(builder.nodes) - 2) * (3 + 1) + 5 + 2
    paused = build_discussion(personas=TWO, max_rounds=3, pause_after_round=True)
    assert recursion_limit(paused) == recursion_limit(builder) + (3 + 1)  # the review node


def test_recursion_limit_is_enough_and_bounded() -> None:
    """The graph's own limit runs it to its round cap, pausing or not; a 1-round cap's does not."""
    out = run(Script(), max_rounds=5)  # revises every iteration, votes 0.2: runs to the cap
    assert (out["termination_reason"], out["iterations_completed"]) == ("rounds_completed", 5)

    # Pausing after every iteration, approved each time: the whole run (every invocation's
    # steps together) stays within the one limit.
    graph = build_discussion(
        Script().model, personas=TWO, max_rounds=5, pause_after_round=True
    ).compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "r"}, "recursion_limit": recursion_limit(graph)}
    graph.invoke({"document": PAPER}, config)
    while graph.get_state(config).next:
        graph.invoke(Command(resume={"approve": True}), config)
    state = graph.get_state(config)
    assert state.values["iterations_completed"] == 5
    assert state.values["termination_reason"] == "rounds_completed"
    assert state.metadata is not None and state.metadata["step"] < recursion_limit(graph)

    one_round = build_discussion(personas=TWO, max_rounds=1)
    full = build_discussion(Script().model, personas=TWO, max_rounds=5).compile()
    with pytest.raises(GraphRecursionError):
        full.invoke({"document": PAPER}, {"recursion_limit": recursion_limit(one_round)})


def test_max_iterations_is_a_deprecated_alias_of_max_rounds() -> None:
    with pytest.warns(DeprecationWarning, match=r"max_iterations=\.\.\.\) is deprecated"):
        builder = build_discussion(Script().model, personas=TWO, max_iterations=2)
    assert recursion_limit(builder) == recursion_limit(build_discussion(personas=TWO, max_rounds=2))
    with pytest.raises(ValueError, match="give only max_rounds"):
        build_discussion(personas=TWO, max_iterations=2, max_rounds=2)


def test_records_survive_a_sqlite_checkpoint(tmp_path: Path) -> None:
    script = Script()
    with open_checkpointer(tmp_path / "d.sqlite") as saver:
        graph = build_discussion(script.model, personas=TWO, max_rounds=2).compile(
            checkpointer=saver
        )
        config: Any = {"configurable": {"thread_id": "t1"}}
        graph.invoke({"document": PAPER}, config)
        values = graph.get_state(config).values
    assert isinstance(values["report"], ConsensusReport)
    assert isinstance(values["insights"]["Alice"][0], Insight)
    assert isinstance(values["questions"][0], Question)
    assert isinstance(values["section_choices"][0], SectionChoice)
    assert values["termination_reason"] == "rounds_completed"


def test_mermaid_matches_snapshot() -> None:
    drawn = build_discussion().compile(name=GRAPH_NAME).get_graph().draw_mermaid()
    assert drawn == SNAPSHOT.read_text()


def test_default_graph_as_studio_compiles_it() -> None:
    graph = build_discussion().compile(name=GRAPH_NAME)
    assert graph.name == GRAPH_NAME
    assert graph.checkpointer is None
    nodes = set(graph.get_graph().nodes)
    assert {"analyse_critical_evaluator", "ask_theoretical_integrator", "consensus"} <= nodes
    assert "human" not in nodes
    paused = set(build_discussion(pause_after_round=True).compile().get_graph().nodes)
    assert paused == nodes | {"human"}


# --------------------------------------------------------------------------
# The round protocol: the pause between iterations, a human's interjections
# --------------------------------------------------------------------------

FIRST = "Weigh the limitations section more."
SECOND = "Ignore the cost argument."


def _paused(graph: Any, config: Any) -> dict[str, Any]:
    state = graph.get_state(config)
    assert state.next == ("human",)
    (pending,) = state.interrupts
    request = review_request(pending.value)
    assert request is not None
    return {**request["args"], "message": request["description"]}


def _new_prompts(script: Script, since: int, schema: str) -> list[str]:
    return [text for s, _, text in script.calls[since:] if s == schema]


def test_pause_interject_resume_reaches_every_later_prompt() -> None:
    script = Script()  # revises every iteration, votes 0.2: runs to the cap
    graph = build_discussion(
        script.model, personas=TWO, max_rounds=3, pause_after_round=True
    ).compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "p"}, "recursion_limit": recursion_limit(graph)}

    graph.invoke({"document": PAPER}, config)
    payload = _paused(graph, config)
    assert (payload["round"], payload["rounds"]) == (1, 3)
    record = graph.get_state(config).values["convergence"][-1]
    assert payload["convergence"] == pytest.approx(record.score, abs=1e-4)
    assert payload["agent_scores"] == {"Alice": 0.2, "Bob": 0.2}
    assert (payload["questions"], payload["responses"], payload["insights_revised"]) == (2, 2, 2)
    assert "every persona" in payload["message"]
    assert not any(FIRST in text for _, _, text in script.calls)

    # Interject at the pause: iteration 2's ask, answer and assess prompts carry the text.
    before = len(script.calls)
    graph.invoke(Command(resume={"interject": FIRST}), config)
    assert _paused(graph, config)["round"] == 2
    for schema in ("Inquiry", "ResponseSet", "ConvergenceVote"):
        prompts = _new_prompts(script, before, schema)
        assert len(prompts) == 2, schema
        assert all(
            f"A human moderator says (take it into account):\n- {FIRST}" in p for p in prompts
        )

    # A second interjection added with update_state between iterations: both reach
    # iteration 3 and the consensus.
    graph.update_state(config, {"transcript": [{"role": "user", "content": SECOND}]})
    before = len(script.calls)
    out = graph.invoke(Command(resume={"approve": True}), config)
    assert out["termination_reason"] == "rounds_completed"
    assert out["iterations_completed"] == 3
    for schema in ("Inquiry", "ResponseSet", "ConvergenceVote", "ConsensusReport"):
        prompts = _new_prompts(script, before, schema)
        assert prompts, schema
        assert all(f"- {FIRST}\n- {SECOND}" in p for p in prompts), schema

    transcript: list[Turn] = graph.get_state(config).values["transcript"]
    said = [(t.content, t.round, t.agent) for t in transcript if t.role == "user"]
    assert said == [(FIRST, 1, "user"), (SECOND, 2, "user")]


def test_approving_every_pause_changes_nothing() -> None:
    script = Script()
    graph = build_discussion(
        script.model, personas=TWO, max_rounds=2, pause_after_round=True
    ).compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "a"}, "recursion_limit": recursion_limit(graph)}
    graph.invoke({"document": PAPER}, config)
    assert _paused(graph, config)["round"] == 1
    out = graph.invoke(Command(resume={"approve": True}), config)
    # The last iteration ends the discussion: no pause after it.
    assert out["termination_reason"] == "rounds_completed"
    assert not graph.get_state(config).next
    assert not any("human moderator" in text for _, _, text in script.calls)


def test_no_pause_when_the_first_iteration_ends_the_discussion() -> None:
    script = Script(ResponseSet=agree_all, ConvergenceVote=vote(0.9))
    graph = build_discussion(
        script.model, personas=TWO, max_rounds=3, pause_after_round=True
    ).compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "c"}}
    out = graph.invoke({"document": PAPER}, config)
    assert out["termination_reason"] == "converged"
    assert not graph.get_state(config).next


def test_threads_of_the_previous_version_count_on_from_their_iteration() -> None:
    assert iteration_of({"iteration": 2}) == 2
    assert iteration_of({"round": 3, "iteration": 2}) == 3
    assert iteration_of({}) == 0
    setup = five_rounds_setup()
    node = make_open_round(setup)  # the node, run outside a graph (no store: no inbox)

    def open_iteration(state: dict[str, Any]) -> Any:
        return node.invoke(state, runtime=Runtime())

    assert open_iteration({"iteration": 2, "started_at": 1.0}) == {"round": 3}
    first = open_iteration({"round": 0, "started_at": 5.0})
    assert first == {"round": 1, "started_at": 5.0}


# --------------------------------------------------------------------------
# The pattern's declaration (what the CLI asks of it)
# --------------------------------------------------------------------------


def test_pattern_declaration_renders_a_finished_run(tmp_path: Path) -> None:
    script = Script()
    graph = build_discussion(script.model, personas=TWO, max_rounds=2).compile(
        checkpointer=InMemorySaver(), name=GRAPH_NAME
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    graph.invoke({"document": PAPER}, config)
    values = graph.get_state(config).values
    assert PATTERN.described.title(values) == "Sparse Debate Topologies"
    summary = PATTERN.described.summary(values)
    assert set(summary) == {"title", "iterations_completed", "convergence", "report", "notes"}
    line, last = PATTERN.headline({**summary, "termination_reason": "rounds_completed"})
    assert line == ("consensus: 1 point, 1 divergent view, confidence 0.70 · 2 iterations")
    assert last.startswith("  last convergence: score 0.")
    assert PATTERN.described.report is not None
    assert PATTERN.described.report.default_name.format(thread_id="t") == "discussion-t.md"
    text = PATTERN.described.report.render(values, PATTERN.described.title(values))
    assert text is not None and text.startswith("# Discussion report: Sparse Debate Topologies")
    assert PATTERN.described.report.render({"report": None}, "x") is None
    settings = {"personas": TWO, "max_rounds": 2, "threshold": 0.75, "time_limit_s": 60.0}
    assert PATTERN.described.describe(settings) == (
        "2 personas, up to 2 iterations, threshold 0.75, time limit 60s"
    )
    assert PATTERN.described.describe(
        {**settings, "personas": None, "pause_after_round": True}
    ) == (
        "4 personas, up to 2 iterations, threshold 0.75, time limit 60s, pausing after each round"
    )
    assert PATTERN.described.agents_per_round({**settings, "personas": None}) == 4
    # A thread saved before the rename stored max_iterations: it reads as max_rounds.
    saved = {**settings, "max_iterations": settings.pop("max_rounds")}
    assert PATTERN.described.describe(current_settings(GRAPH_NAME, saved)).startswith(
        "2 personas, up to 2 iterations"
    )
    assert PATTERN.described.boundary_nodes == {"open_iteration", "human"}
    assert PATTERN.described.round_word == "iteration"


def test_pattern_progress_shows_the_phases() -> None:
    script = Script()
    graph = build_discussion(script.model, personas=TWO, max_rounds=1).compile()
    shown: list[str] = []
    for chunk in graph.stream({"document": PAPER}, stream_mode="updates"):
        for node, update in chunk.items():
            shown += PATTERN.progress(node, update or {})
    assert shown == [
        "  [bold]phase 1: initial analysis[/bold]",
        "  [bold]phase 2: questioning[/bold]",
        "  [bold]phase 3: responding[/bold]",
        "  [bold]phase 4: convergence[/bold]",
        shown[4],
        "  [bold]phase 5: consensus[/bold]",
    ]
    assert re.fullmatch(
        r"  iteration 1: convergence score 0\.\d\d \(consistency 1\.00, completeness 1\.00, "
        r"resolution 1\.00, stability 0\.50; self-scores: mean 0\.20 of 2\) · "
        r"2 insights revised",
        shown[4],
    )


def test_discuss_command_reads_its_inputs(tmp_path: Path) -> None:
    paper = tmp_path / "paper.md"
    paper.write_text(PAPER)
    launch = discuss_command(paper, rounds=2, threshold=0.5, time_limit="2m", persona=None)
    assert launch.settings == {
        "personas": None,
        "max_rounds": 2,
        "threshold": 0.5,
        "time_limit_s": 120.0,
    }
    assert launch.input == {"document": PAPER}
    assert launch.notes == ()
    # The settings (plus the CLI's pause_after_round) are build_discussion's arguments.
    script = Script()
    settings = {**launch.settings, "personas": TWO, "pause_after_round": False}
    builder = entry(GRAPH_NAME).build()(script.model, **settings)
    out = builder.compile().invoke(launch.input, {"recursion_limit": recursion_limit(builder)})
    # The launch's threshold of 0.5 ends it after the first iteration's score.
    assert (out["termination_reason"], out["iterations_completed"]) == ("converged", 1)
    # No --time-limit: the discussion's own default (30 minutes), not none.
    assert discuss_command(paper).settings["time_limit_s"] == 1800.0
    assert discuss_command(paper, time_limit=None).settings["time_limit_s"] == 1800.0
    # --max-iterations: the deprecated spelling of --rounds, with a note.
    old = discuss_command(paper, max_iterations=3)
    assert old.settings["max_rounds"] == 3
    assert old.notes == ("--max-iterations is deprecated: use --rounds",)
    flat = tmp_path / "flat.txt"
    flat.write_text("Just a paragraph, no headings.\n")
    assert NO_SECTIONS_NOTE in discuss_command(flat).notes
    personas = tmp_path / "personas.json"
    personas.write_text('[{"name": "A", "focus": "x"}, {"name": "B", "focus": "y"}]')
    assert discuss_command(paper, persona=personas).settings["personas"][1]["name"] == "B"


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("time", "--time-limit 'soon' is not a duration"),
        ("zero", "--time-limit '0m' must be positive"),
        ("json", "not valid JSON"),
        ("shape", "expected a JSON list of {name, focus, description} objects"),
        ("unreadable", "--persona .*: cannot read"),
        ("empty", "is empty"),
        ("missing", "cannot read document .*missing.md"),
    ],
)
def test_discuss_command_bad_inputs_are_one_line(case: str, message: str, tmp_path: Path) -> None:
    paper = tmp_path / "paper.md"
    paper.write_text(PAPER)
    personas = tmp_path / "personas.json"
    personas.write_text({"json": "not json", "shape": '{"name": "x"}'}.get(case, "[]"))
    bad: dict[str, dict[str, Any]] = {
        "time": {"time_limit": "soon"},
        "zero": {"time_limit": "0m"},
        "json": {"persona": personas},
        "shape": {"persona": personas},
        "unreadable": {"persona": tmp_path / "nope.json"},
    }
    kwargs = bad.get(case, {})
    if case == "empty":
        paper.write_text("  \n")
    if case == "missing":
        paper = tmp_path / "missing.md"
    with pytest.raises(UsageError, match=message) as info:
        discuss_command(paper, **kwargs)
    assert "\n" not in str(info.value)
