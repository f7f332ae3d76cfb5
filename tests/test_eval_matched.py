"""Matched budgets: each debate mode against a vote of independent samples at its token cost.

The stub answers every call right, with replies of fixed length, so token counts are
exact: one independent answer costs what a ``single`` question costs (the same prompt but
for the solver count, one token either way), and k follows from the debate's tokens.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest

from debategraph.eval.budget import adjusted_k, matched_k
from tests.conftest import run_cli, stub_args
from tests.eval_data import chance_responder, write_gsm8k
from tests.openai_stub import StubOpenAIServer

QUESTIONS = 3
right = chance_responder(1.0, 1)


def eval_args(server: StubOpenAIServer, dataset: Path, out: Path, *extra: str) -> list[str]:
    args = stub_args(server, out / "checkpoints.sqlite", "--json", *extra)
    return ["eval", "gsm8k", "--dataset", str(dataset), "--out", str(out), *args]


def mean_tokens(out: Path, mode: str) -> float:
    """A mode's mean total tokens per question (its plurality rows)."""
    rows = [
        r
        for r in csv.DictReader((out / "results.csv").open(encoding="utf-8"))
        if r["mode"] == mode and r["decision"] == "plurality"
    ]
    return sum(int(r["prompt_tokens"]) + int(r["completion_tokens"]) for r in rows) / len(rows)


def test_k_is_the_debates_tokens_over_one_answers_and_the_vote_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", QUESTIONS)
    out = tmp_path / "out"
    with StubOpenAIServer(right) as server:
        args = eval_args(server, dataset, out, "--modes", "single,debate-ring")
        args += ["--decisions", "plurality,weighted"]
        code, stdout, err = run_cli(args, capsys)
        assert code == 0, err
        asked = len(server.requests)
    result = json.loads(stdout)
    (matched,) = result["matched"]
    debate, one = mean_tokens(out, "debate-ring"), mean_tokens(out, "single")
    k = max(2, round(debate / one))
    assert k > 3  # later rounds read the peers: a debate costs more than its calls' count
    assert (matched["mode"], matched["vote_mode"], matched["k"]) == ("debate-ring", f"vote@{k}", k)
    assert asked == QUESTIONS * (1 + 3 * 2 + k)
    assert matched["within"] and matched["n"] == QUESTIONS
    assert matched["tokens"] == debate and matched["vote_tokens"] == mean_tokens(out, f"vote@{k}")
    assert f"one independent answer {one:.1f}" in matched["how"]
    assert f"k = {k}" in matched["how"] and "adjusted" not in matched["how"]
    labels = [m["mode"] for m in result["modes"]]
    assert labels == [
        "single",
        "debate-ring",
        "debate-ring/weighted",
        f"vote@{k}",
        f"vote@{k}/weighted",  # the vote gets the other decisions too
    ]
    vote = next(m for m in result["modes"] if m["mode"] == f"vote@{k}")
    assert vote["calls"] == k and vote["accuracy"] == 1.0
    assert ("debate-ring", f"vote@{k}") in {(c["a"], c["b"]) for c in result["comparisons"]}
    assert result["meta"]["matched"] is True


def padded_for_votes(request: dict[str, Any]) -> dict[str, Any]:
    """Right answers; a solver of more than three writes a much longer reasoning."""
    reply = right(request)
    found = re.search(r"one of (\d+) agents", json.dumps(request["messages"]))
    if found and int(found.group(1)) > 3:
        reply["reasoning"] += " and I checked it twice" * 8
    return reply


def test_a_vote_off_the_budget_by_more_than_10_percent_is_run_once_more_with_k_adjusted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", QUESTIONS)
    out = tmp_path / "out"
    with StubOpenAIServer(padded_for_votes) as server:
        args = eval_args(server, dataset, out, "--modes", "debate-full")
        code, stdout, err = run_cli(args, capsys)
        assert code == 0, err
        asked = len(server.requests)
        code, again, err = run_cli(args, capsys)  # the rerun reads both votes back
        assert code == 0, err
        assert len(server.requests) == asked
    result = json.loads(stdout)
    assert json.loads(again)["matched"] == result["matched"]
    (matched,) = result["matched"]
    first = int(re.search(r"k = (\d+)", matched["how"]).group(1))  # type: ignore[union-attr]
    k = matched["k"]
    assert k < first  # the vote's answers are longer than the debate's round 1
    # The exact k, from budgets measured here: every vote answer is the same call (one
    # token apart in the prompt, none in the reply), so a vote of n costs n answers and
    # the first vote cost first x (one answer); k is round(first x debate / that).
    debate = mean_tokens(out, "debate-full")
    answer = mean_tokens(out, f"vote@{k}") / k
    first_vote = first * answer
    expected = max(2, round(first * debate / first_vote))
    assert k == expected, (k, expected, debate, answer)
    assert f"round({first} x {debate:.1f} / {first_vote:.1f}) = {k}" in matched["how"]
    assert asked == QUESTIONS * (3 * 2 + first + k)  # both votes ran
    assert [m["mode"] for m in result["modes"]] == ["debate-full", f"vote@{k}"]  # the one used
    threads = {r["thread_id"].split("-")[1] for r in csv.DictReader((out / "results.csv").open())}
    assert threads == {"debate", f"vote@{k}"}


@pytest.mark.parametrize(
    ("k", "debate", "vote", "adjusted"),
    [
        (7, 1128.0, 1470.0, 5),  # 7 x 1128 / 1470 = 5.37
        (4, 1000.0, 600.0, 7),  # 4 x 1000 / 600 = 6.67: a vote too cheap gets more solvers
        (5, 1000.0, 1100.0, 5),  # 4.55
        (3, 100.0, 1000.0, 2),  # 0.3: never under two voters
        (6, 500.0, 0.0, 6),  # nothing measured: k stays
    ],
)
def test_adjusted_k_for_given_budgets(k: int, debate: float, vote: float, adjusted: int) -> None:
    assert adjusted_k(k, debate, vote) == adjusted


@pytest.mark.parametrize(
    ("debate", "answer", "k"),
    [(1128.0, 164.0, 7), (1000.0, 400.0, 2), (1000.0, 350.0, 3), (100.0, 0.0, 2)],
)
def test_matched_k_for_given_budgets(debate: float, answer: float, k: int) -> None:
    # 1128 / 164 = 6.88 -> 7; 1000 / 400 = 2.5 -> 2; 1000 / 350 = 2.86 -> 3; none -> 2
    assert matched_k(debate, answer) == k


def test_no_matched_and_one_round_run_no_vote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 2)
    with StubOpenAIServer(right) as server:
        for extra in (["--no-matched"], ["--rounds", "1"]):
            out = tmp_path / extra[0].strip("-")
            args = eval_args(server, dataset, out, "--modes", "debate-ring", *extra)
            code, stdout, err = run_cli(args, capsys)
            assert code == 0, err
            result = json.loads(stdout)
            assert result["matched"] == []
            assert [m["mode"] for m in result["modes"]] == ["debate-ring"]
        assert len(server.requests) == 2 * 3 * 2 + 2 * 3
