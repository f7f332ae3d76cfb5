"""``vote-then-debate``: the solvers answer once; only questions whose first round does not
agree (``--agree``) are debated. A scripted population disagrees in round 1 on a known
share of the questions, and exactly that share is found debated, the tokens saved
against debating every question reported, and the paired tests present.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest

from debategraph.eval.escalation import escalations
from debategraph.eval.records import Outcome
from debategraph.strategies.decisions import agreement_rule
from tests.conftest import one_error_line, run_cli, stub_args
from tests.eval_data import gold_of, previous_round, write_gsm8k
from tests.openai_stub import StubOpenAIServer

QUESTIONS = 10
#: The questions whose first round splits 2 to 1 (3 of 10).
SPLIT = {2, 5, 7}
_ITEM = re.compile(r"Item (\d+):")
_SOLVER = re.compile(r"You are (solver_\d+), one of")


def split_population(request: dict[str, Any]) -> dict[str, Any]:
    """Right answers, but in round 1 of a SPLIT question solver_2 is one off."""
    text = json.dumps(request["messages"])
    item = int(_ITEM.search(text).group(1))  # type: ignore[union-attr]
    solver = _SOLVER.search(text)
    answer = gold_of(item)
    first = previous_round(request) is None
    if first and item in SPLIT and solver is not None and solver.group(1) == "solver_2":
        answer += 1
    return {"reasoning": f"so it is {answer}", "answer": str(answer), "confidence": 0.9}


def run_eval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], modes: str, *extra: str
) -> tuple[dict[str, Any], Path, int]:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", QUESTIONS)
    out = tmp_path / "out"
    args = ["eval", "gsm8k", "--dataset", str(dataset), "--out", str(out), "--modes", modes]
    args += ["--agents", "3", "--rounds", "2", *extra]
    with StubOpenAIServer(split_population) as server:
        code, stdout, err = run_cli([*args, *stub_args(server, out / "c.sqlite", "--json")], capsys)
        calls = server.calls
    assert code == 0, err
    return json.loads(stdout), out, calls


def rows_of(out: Path, mode: str) -> list[dict[str, str]]:
    return [
        r
        for r in csv.DictReader((out / "results.csv").open(encoding="utf-8"))
        if r["mode"] == mode and r["decision"] == "plurality"
    ]


def test_exactly_the_questions_whose_first_round_disagrees_are_debated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result, out, _ = run_eval(tmp_path, capsys, "vote,debate-full,vote-then-debate")
    (entry,) = result["vote_then_debate"]
    assert (entry["mode"], entry["agree"], entry["n"]) == ("vote-then-debate", "unanimity", 10)
    assert (entry["debated"], entry["debated_share"]) == (3, 0.3)
    rows = rows_of(out, "vote-then-debate")
    debated = {int(r["line"]) - 1 for r in rows if r["debated"] == "True"}
    assert debated == SPLIT
    assert all(
        len(json.loads(r["rounds"])) == (2 if int(r["line"]) - 1 in SPLIT else 1) for r in rows
    )
    assert {r["debated"] for r in rows_of(out, "debate-full")} == {"True"}
    assert {r["debated"] for r in rows_of(out, "vote")} == {"False"}
    # Tokens saved, against the debate-full row on the same questions (measured).
    tokens = {m["mode"]: m["tokens"] for m in result["modes"]}
    assert entry["against"] == "debate-full" and entry["how"] == "measured"
    assert entry["every_tokens"] == tokens["debate-full"]
    assert entry["tokens"] == tokens["vote-then-debate"]
    assert entry["saved_tokens"] == pytest.approx(tokens["debate-full"] - entry["tokens"], abs=0.1)
    assert entry["saved_tokens"] > 0 and 0 < entry["saved_share"] < 1
    # The paired tests: against the vote, the debate and its own matched vote.
    against = {c["b"] if c["a"] == "vote-then-debate" else c["a"] for c in entry["tests"]}
    vote_k = next(m["vote_mode"] for m in result["matched"] if m["mode"] == "vote-then-debate")
    assert against == {"vote", "debate-full", vote_k}
    assert all(c["n"] == QUESTIONS and "p_value" in c for c in entry["tests"])
    # results.md opens with the plain answer, then the tables, with this section.
    text = (out / "results.md").read_text(encoding="utf-8")
    assert text.startswith("On stub")
    assert "**Vote, then debate only where round 1 does not agree**" in text
    assert "| vote-then-debate | unanimity | 10 | 3 (30%) |" in text


def made_up(mode: str, line: int, tokens: int, rounds: int, first: int) -> Outcome:
    """A made-up row: ``tokens`` in all over ``rounds`` rounds, ``first`` in round 1."""
    answers = json.dumps([{"solver_1": "1"}] * rounds)
    return Outcome(
        mode, line, "1", "1", True, tokens - 10, 10, 3 * rounds, 0.1, f"t-{mode}-{line}",
        debated=rounds > 1, first_round_tokens=first, rounds=answers,
    )  # fmt: skip


def test_the_saving_is_measured_against_the_mode_it_debates_as_never_debate_ring() -> None:
    # vote-then-debate debates as debate-full: round 1 costs 300, a later round 300 more
    # (debate-full's 600 for two rounds); debate-ring's sparser rounds cost 450 for two.
    mine = [made_up("vote-then-debate", q, 600 if q in SPLIT else 300, 2 if q in SPLIT else 1,
                    300) for q in range(QUESTIONS)]  # fmt: skip
    ring = [made_up("debate-ring", q, 450, 2, 300) for q in range(QUESTIONS)]
    full = [made_up("debate-full", q, 600, 2, 300) for q in range(QUESTIONS)]
    ours = (7 * 300 + 3 * 600) / QUESTIONS
    (entry,) = escalations([*mine, *ring, *full], [], [], agree="unanimity", round_cap=2)
    assert (entry.against, entry.how, entry.every_tokens) == ("debate-full", "measured", 600)
    assert entry.saved_tokens == pytest.approx(600 - ours)
    # Without debate-full, debate-ring is no measure (it would say 60 saved, not 210):
    # the saving is estimated from this mode's own rounds, and the basis says why.
    (entry,) = escalations([*mine, *ring], [], [], agree="unanimity", round_cap=2)
    assert (entry.against, entry.how, entry.every_tokens) == ("estimated", "estimated", 600)
    assert entry.saved_tokens == pytest.approx(600 - ours)
    assert "the run has no debate-full row (the mode it debates as)" in entry.basis


def test_without_a_debate_row_the_saving_is_estimated_from_the_debated_rounds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result, out, calls = run_eval(tmp_path, capsys, "vote,vote-then-debate", "--no-matched")
    assert calls == QUESTIONS * 3 + QUESTIONS * 3 + len(SPLIT) * 3
    (entry,) = result["vote_then_debate"]
    assert (entry["debated"], entry["against"], entry["how"]) == (3, "estimated", "estimated")
    rows = rows_of(out, "vote-then-debate")
    total = lambda r: int(r["prompt_tokens"]) + int(r["completion_tokens"])  # noqa: E731
    later = sum(total(r) - int(r["first_round_tokens"]) for r in rows if r["debated"] == "True")
    first = sum(int(r["first_round_tokens"]) for r in rows) / len(rows)
    assert entry["every_tokens"] == round(first + later / len(SPLIT), 1)
    assert "estimated" in entry["basis"]
    (test,) = entry["tests"]
    assert {test["a"], test["b"]} == {"vote", "vote-then-debate"}


def test_a_supermajority_agrees_on_a_two_to_one_split_so_nothing_is_debated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result, _, calls = run_eval(
        tmp_path, capsys, "vote-then-debate", "--agree", "supermajority:2/3", "--no-matched"
    )
    assert calls == QUESTIONS * 3
    (entry,) = result["vote_then_debate"]
    assert (entry["agree"], entry["debated"], entry["every_tokens"]) == (
        "supermajority:2/3",
        0,
        None,
    )
    assert result["meta"]["agree"] == "supermajority:2/3"


@pytest.mark.parametrize("value", ["plurality", "supermajority:0.2", "sometimes"])
def test_a_bad_agree_is_refused_in_one_line(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 2)
    args = ["eval", "gsm8k", "--dataset", str(dataset), "--out", str(tmp_path / "o")]
    args += ["--modes", "vote-then-debate", "--agree", value, "--model", "stub"]
    args += ["--base-url", "http://127.0.0.1:9"]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    line = one_error_line(err)
    assert f"--agree {value}: " in line and line.endswith(f"use {agreement_rule()}"), line
