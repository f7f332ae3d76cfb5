"""Issue 20, items 4 and 7: a discussion never claims a convergence that did not happen.

Driven through the CLI (``debategraph discuss``) against the stub OpenAI server, with a
responder scripted per call (the request's tool name says which call it is):

* an iteration in which every persona skipped questioning measures nothing: its
  components are ``n/a`` (not 1.00) in the JSON, the progress and result lines, the pause's
  payload and the Markdown report, and the personas' self-scores of 0.0 decide: not
  ``converged``;
* a discussion cannot end ``converged`` with no consensus point, even when the personas'
  own scores say so;
* a report built without its consensus call (malformed replies every time) says so on
  screen and in the file, and does not pass the abstract off as the model's overview.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from debategraph.nodes.review import review_request
from tests.conftest import run_cli, stub_args
from tests.openai_stub import StubOpenAIServer, StubReply

ABSTRACT = "We show that sparse communication topologies improve multi-agent debate."
PAPER = f"""# Sparse Debate Helps

## Abstract
{ABSTRACT}

## Method
Agents on a ring read only their neighbours.

## Results
Ring topologies match full ones at lower cost.
"""
PERSONAS = [
    {"name": "Alice", "focus": "methods"},
    {"name": "Bob", "focus": "impact"},
]
AGENT_RE = re.compile(r"You are (.+?), one of the agents")
INSIGHT_ID_RE = re.compile(r"\[([a-z_]+-\d+)\]")
QUESTION_ID_RE = re.compile(r"\[(Q\d+-[a-z_]+-\d+)\]")
UNMEASURED = "consistency n/a, completeness n/a, resolution n/a, stability n/a"
POINT = {
    "statement": "Sparse rings are cheaper.",
    "supporting": ["Alice", "Bob"],
    "opposing": [],
    "strength": 0.8,
}


def _tool(body: dict[str, Any]) -> str:
    tools = body.get("tools") or []
    return str(tools[0]["function"]["name"]) if tools else ""


def _text(body: dict[str, Any], role: str) -> str:
    return "\n".join(str(m.get("content")) for m in body["messages"] if m.get("role") == role)


def _agent(body: dict[str, Any]) -> str:
    found = AGENT_RE.search(_text(body, "system"))
    return found.group(1) if found else "consensus"


def scripted(
    *,
    vote: float,
    consensus: str,
    ask: Callable[[str, str], dict[str, Any]] | None = None,
) -> Callable[[dict[str, Any]], Any]:
    """A responder: insights, then questions (``ask``, default a skip), votes, consensus.

    Args:
        vote: Every persona's convergence self-score.
        consensus: ``no_points`` (a report agreeing on nothing), ``point`` (one
            consensus point) or ``malformed`` (invalid arguments every time).
        ask: Agent, prompt -> the Inquiry; ``None``: every persona skips.
    """

    def respond(body: dict[str, Any]) -> Any:
        tool, agent, task = _tool(body), _agent(body), _text(body, "user")
        if tool == "SectionChoice":
            return {"section_ids": ["S1", "S2"], "reason": "the method and the results"}
        if tool == "Analysis":
            return {
                "insights": [
                    {"content": f"{agent} insight {n}", "importance": 0.6, "confidence": 0.7}
                    for n in (1, 2)
                ]
            }
        if tool == "Inquiry":
            if ask is not None:
                return ask(agent, task)
            return {"questions": [], "skip_reason": "the insights are clear"}
        if tool == "ResponseSet":
            return {
                "responses": [
                    {
                        "question_id": qid,
                        "answer": "fair",
                        "stance": "revise",
                        "revised_insight": f"{agent} revised",
                        "confidence": 0.8,
                    }
                    for qid in QUESTION_ID_RE.findall(task)
                ]
            }
        if tool == "ConvergenceVote":
            far = "not yet converged: very far apart"
            return {"score": vote, "reason": far if vote < 0.5 else "we agree"}
        if tool == "ConsensusReport":
            if consensus == "malformed":
                return StubReply(tool_args='{"consensus_points": [')
            return {
                "consensus_points": [POINT] if consensus == "point" else [],
                "divergent_views": [],
                "overview": "A paper on sparse debate, as the agents read it.",
                "main_contributions": ["ring topologies"],
                "consensus_assessment": "They agree on little.",
                "contested_points": [],
                "significance": "Cheaper debate.",
                "overall_confidence": 0.3,
            }
        raise AssertionError(f"unexpected call {tool!r}")

    return respond


def alice_clarifies(agent: str, task: str) -> dict[str, Any]:
    """Alice asks Bob one clarification (no challenge); Bob skips."""
    if agent != "Alice":
        return {"questions": [], "skip_reason": "clear"}
    target = next(i for i in INSIGHT_ID_RE.findall(task) if i.startswith("bob-"))
    question = {
        "target_agent": "Bob",
        "target_insight": target,
        "type": "clarification",
        "priority": 0.5,
        "text": "Which rings?",
    }
    return {"questions": [question]}


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    path = tmp_path / "paper.md"
    path.write_text(PAPER)
    return path


def discuss(
    responder: Callable[[dict[str, Any]], Any],
    paper: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    *extra: str,
    json_output: bool = True,
) -> tuple[int, str, str, str]:
    """Run ``discuss`` on the stub: exit code, stdout, stderr and the report's text."""
    personas = tmp_path / "personas.json"
    personas.write_text(json.dumps(PERSONAS))
    report = tmp_path / "report.md"
    args = ["discuss", str(paper), "--persona", str(personas), "--report", str(report), *extra]
    with StubOpenAIServer(responder) as server:
        flags = ["--json"] if json_output else []
        code, out, err = run_cli([*args, *flags, *stub_args(server, tmp_path / "d.sqlite")], capsys)
    return code, out, err, report.read_text() if report.exists() else ""


def flat(text: str) -> str:
    """The text on one line (Rich wraps long lines at the console's width)."""
    return " ".join(text.split())


def section(markdown: str, heading: str) -> str:
    """The body of one ``## heading`` section of the report."""
    found = re.search(rf"^## {re.escape(heading)}[^\n]*\n(.*?)(?=^## |\Z)", markdown, re.M | re.S)
    assert found, (heading, markdown)
    return found.group(1)


# --------------------------------------------------------------------------
# Item 4: nothing exchanged is no agreement; the self-scores count
# --------------------------------------------------------------------------


def test_an_iteration_where_everyone_skipped_is_not_converged(
    paper: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Old code: the four components were 1.00 by definition, so (1.0 + 0.0) / 2 = 0.5
    # reached the threshold of 0.5 and the discussion "converged" on no exchange at all.
    responder = scripted(vote=0.0, consensus="no_points")
    code, out, err, report = discuss(
        responder, paper, tmp_path, capsys, "--rounds", "3", "--threshold", "0.5"
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["termination_reason"] == "stalled"  # true: no insight changed
    record = result["convergence"]
    components = [record[k] for k in ("consistency", "completeness", "resolution", "stability")]
    assert components == [None, None, None, None]
    assert record["score"] == 0.0  # the self-scores decide alone
    assert record["agent_scores"] == {"Alice": 0.0, "Bob": 0.0}
    convergence = section(report, "Convergence")
    assert f"- iteration 1: score 0.00 ({UNMEASURED}; self-scores: Alice 0.00, Bob 0.00)" in (
        convergence
    )
    assert "1.00" not in convergence
    assert "- ended: stalled" in convergence and "converged" not in convergence


def test_the_result_and_progress_lines_show_unmeasured_components_as_na(
    paper: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    responder = scripted(vote=0.0, consensus="no_points")
    code, out, err, _ = discuss(
        responder, paper, tmp_path, capsys, "--rounds", "3", json_output=False
    )
    assert code == 0, err
    shown = flat(out + "\n" + err)
    assert f"iteration 1: convergence score 0.00 ({UNMEASURED}; self-scores: mean 0.00 of 2)" in (
        shown
    )
    assert f"last convergence: score 0.00 ({UNMEASURED};" in flat(out)
    assert "stalled" in flat(out) and "converged" not in flat(out)
    assert "1.00" not in shown


def test_self_scores_cannot_end_converged_without_a_consensus_point(
    paper: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The personas say they agree (0.9) after skipping; the consensus finds nothing agreed.
    responder = scripted(vote=0.9, consensus="no_points")
    code, out, err, report = discuss(responder, paper, tmp_path, capsys, "--rounds", "3")
    assert code == 0, err
    result = json.loads(out)
    assert result["report"]["consensus_points"] == []
    assert result["termination_reason"] == "stalled"
    assert any(
        "not converged" in n and "no point the agents agree on" in n for n in result["notes"]
    )
    assert (
        "- ended: stalled (not converged: the convergence score reached the threshold, but "
        "the consensus report has no point the agents agree on)"
    ) in section(report, "Convergence")

    code, out, err, _ = discuss(
        responder, paper, tmp_path, capsys, "--rounds", "3", json_output=False
    )
    assert code == 0, err
    assert "ended stalled (not converged:" in flat(out)
    assert "· converged ·" not in flat(out)


def test_converged_stands_with_a_consensus_point(
    paper: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The control: agreeing personas whose consensus names a point do end converged.
    responder = scripted(vote=0.9, consensus="point")
    code, out, err, report = discuss(responder, paper, tmp_path, capsys, "--rounds", "3")
    assert code == 0, err
    result = json.loads(out)
    assert result["termination_reason"] == "converged"
    assert len(result["report"]["consensus_points"]) == 1
    assert "- ended: converged\n" in report


def test_the_pause_payload_shows_unmeasured_components_as_na(
    paper: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One clarification, answered with a revision: no challenge, so resolution is n/a.
    responder = scripted(vote=0.0, consensus="no_points", ask=alice_clarifies)
    code, out, err, _ = discuss(
        responder, paper, tmp_path, capsys, "--rounds", "2", "--pause-after-round"
    )
    assert code == 0, err
    waiting = json.loads(out)
    assert waiting["status"] == "waiting"
    payload = review_request(waiting["interrupt"])["args"]
    assert (payload["consistency"], payload["completeness"]) == (1.0, 1.0)
    assert payload["resolution"] == "n/a"
    assert payload["stability"] == 0.75
    assert payload["agent_scores"] == {"Alice": 0.0, "Bob": 0.0}
    assert payload["convergence"] == pytest.approx((1 + 1 + 0.75) / 3 / 2, abs=1e-3)


# --------------------------------------------------------------------------
# Item 7 (the discussion's part): a report built without its consensus call says so
# --------------------------------------------------------------------------


def test_a_report_built_without_its_consensus_call_says_so(
    paper: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    responder = scripted(vote=0.0, consensus="malformed")
    code, out, err, report = discuss(
        responder, paper, tmp_path, capsys, "--rounds", "1", json_output=False
    )
    assert code == 0, err
    shown = flat(out)
    assert "consensus: not written (fallback: the consensus call gave no usable report" in shown
    assert "contributions are the agents' own insights, unsynthesised" in shown
    assert "> Not written by a model: the consensus call gave no usable report" in report
    overview = section(report, "Overview")
    assert ABSTRACT not in overview
    assert "(not written: the consensus call gave no usable report)" in overview
    assert "## Main contributions (the agents' most important insights, unsynthesised)" in report
    assert "(not written" in section(report, "Consensus points")
    assert "not a model's judgement" in report
