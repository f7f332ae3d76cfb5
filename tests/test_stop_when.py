"""Stop once the answers agree, by any protocol that can fall short: ``stop_when``.

``stop_when_unanimous=True`` is ``stop_when="unanimity"``; ``solve --stop-when`` is the
same switch on the CLI (``--stop-when-unanimous`` its alias). The eval's
``vote-then-debate`` mode is this setting (tests/test_eval_vote_then_debate.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from debategraph import build_solver_debate
from debategraph.strategies.decisions import agreement_rule, parse_protocol
from tests.conftest import one_error_line, run_cli, stub_args
from tests.openai_stub import StubOpenAIServer
from tests.test_solver_debate import QUESTION, config_for, scripted_model

_SOLVER = re.compile(r"You are (solver_\d+)")


def scripted(first: dict[str, str]) -> Any:
    """Round 1: each solver's answer from ``first``; later rounds: every solver says 18."""
    return scripted_model(lambda solver, rnd: (first[solver] if rnd == 1 else "18", 0.9))


TWO_OF_THREE = {"solver_1": "18", "solver_2": "18", "solver_3": "20"}
ALL_APART = {"solver_1": "18", "solver_2": "20", "solver_3": "22"}


@pytest.mark.parametrize(
    ("stop_when", "first", "rounds", "reason"),
    [
        ("supermajority:2/3", TWO_OF_THREE, 1, "converged"),
        ("supermajority:2/3", ALL_APART, 2, "converged"),  # they agree in round 2
        ("supermajority:3/4", TWO_OF_THREE, 2, "converged"),  # 2 of 3 is short of 3/4
        ("unanimity", TWO_OF_THREE, 2, "unanimous"),
        ("confidence:0.6", TWO_OF_THREE, 1, "converged"),  # 2 x 0.9 / 3 = 0.6
        ("confidence:0.7", TWO_OF_THREE, 2, "converged"),
        (parse_protocol("supermajority"), TWO_OF_THREE, 1, "converged"),
    ],
)
def test_stop_when_stops_after_the_round_whose_answers_agree(
    stop_when: Any, first: dict[str, str], rounds: int, reason: str
) -> None:
    graph = build_solver_debate(
        scripted(first), agents=3, max_rounds=3, stop_when=stop_when
    ).compile()
    out = graph.invoke({"question": QUESTION}, config_for("t", graph))
    assert len(out["rounds"]) == rounds
    assert out["termination_reason"] == reason
    assert out["answer"] == "18"


def test_without_stop_when_the_debate_runs_to_its_cap() -> None:
    graph = build_solver_debate(scripted(TWO_OF_THREE), agents=3, max_rounds=3).compile()
    out = graph.invoke({"question": QUESTION}, config_for("t", graph))
    assert (len(out["rounds"]), out["termination_reason"]) == (3, "rounds_completed")


def test_stop_when_unanimous_is_stop_when_unanimity() -> None:
    one = build_solver_debate(None, agents=3, stop_when_unanimous=True)
    other = build_solver_debate(None, agents=3, stop_when="unanimity")
    assert one is not other
    both = build_solver_debate(None, agents=3, stop_when_unanimous=True, stop_when="unanimity")
    assert both is not None


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("plurality", "stop_when 'plurality' always decides, so it never tells agreement"),
        ("vote", "stop_when 'vote' is no protocol"),
        ("supermajority:0.4", "stop_when supermajority threshold 0.4 is not in (0.5, 1]"),
        ("confidence:2", "stop_when confidence threshold 2 is not in (0, 1]"),
        (3, "stop_when 3 is not a protocol"),
        (parse_protocol("judge"), "stop_when 'judge' never tells agreement"),
    ],
)
def test_a_bad_stop_when_is_refused_by_the_factory(value: Any, needle: str) -> None:
    with pytest.raises(ValueError) as raised:
        build_solver_debate(None, agents=3, stop_when=value)
    message = str(raised.value)
    assert message.startswith(needle), message
    assert message.endswith(f"use {agreement_rule()}")
    assert "\n" not in message


def test_stop_when_and_stop_when_unanimous_must_not_disagree() -> None:
    with pytest.raises(ValueError, match=r"^stop_when_unanimous=True and stop_when 'supermaj"):
        build_solver_debate(None, agents=3, stop_when_unanimous=True, stop_when="supermajority")


def answers_by_solver(answers: dict[str, str]) -> Any:
    """A stub responder: each solver gives its answer in ``answers``, every round."""

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        solver = _SOLVER.search(json.dumps(request["messages"]))
        answer = answers[solver.group(1)] if solver else "0"
        return {"reasoning": f"so {answer}", "answer": answer, "confidence": 0.9}

    return respond


@pytest.mark.parametrize(("first", "calls", "rounds"), [(TWO_OF_THREE, 3, 1), (ALL_APART, 9, 3)])
def test_solve_stop_when_supermajority(
    first: dict[str, str],
    calls: int,
    rounds: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """2 of 3 agree in round 1: it stops there; all apart (every round): to the cap."""
    args = ["solve", QUESTION, "--agents", "3", "--rounds", "3", "--json"]
    args += ["--stop-when", "supermajority:2/3"]
    with StubOpenAIServer(answers_by_solver(first)) as server:
        code, out, err = run_cli([*args, *stub_args(server, tmp_path / "d.sqlite")], capsys)
        asked = server.calls
    assert code == 0, err
    result = json.loads(out)
    assert len(result["rounds"]) == rounds
    assert asked == calls
    assert "stops once they agree by supermajority:2/3" in err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--stop-when", "plurality"], "--stop-when plurality: 'plurality' always decides"),
        (["--stop-when", "bogus"], "--stop-when bogus: 'bogus' is no protocol"),
        (["--stop-when", "supermajority:9"], "--stop-when supermajority:9: supermajority thr"),
        (
            ["--stop-when", "supermajority", "--stop-when-unanimous"],
            "--stop-when-unanimous and --stop-when supermajority disagree",
        ),
    ],
)
def test_solve_refuses_a_bad_stop_when_in_one_line(
    args: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = ["solve", QUESTION, *args, "--db", str(tmp_path / "d.sqlite")]
    code, _, err = run_cli(command, capsys)
    assert code == 2
    line = one_error_line(err)
    assert needle in line, line
    if "disagree" not in needle:
        assert line.endswith(f"use {agreement_rule()}"), line
