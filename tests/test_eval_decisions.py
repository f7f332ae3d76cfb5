"""``eval --decisions``: every protocol a row of the same finished threads; the judge asked once.

The stub's solvers answer by script: ``solver_1`` the gold number, confidently; the others
one wrong number, unsure. So each protocol's answer is known: plurality and unanimity's
fallbacks are wrong, the confidence-weighted vote and the judge (who picks the gold
answer) are right.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import one_error_line, run_cli, solver_of, stub_args
from tests.eval_data import gold_of, write_gsm8k
from tests.openai_stub import StubOpenAIServer, schema_of
from tests.studio_server import closed_port

QUESTIONS = 3
SOLVERS = 3


def _gold(request: dict[str, Any]) -> int:
    text = json.dumps(request["messages"])
    start = text.index("Item ") + len("Item ")
    return gold_of(int(text[start : text.index(":", start)]))


def scripted(request: dict[str, Any]) -> dict[str, Any]:
    """solver_1 right at 0.9; the others the same wrong number at 0.2; the judge right."""
    gold = _gold(request)
    if schema_of(request) == "JudgeReply":
        return {"reasoning": "solver_1 checked out", "answer": str(gold)}
    if solver_of(request) == "solver_1":
        return {"reasoning": f"so {gold}", "answer": str(gold), "confidence": 0.9}
    return {"reasoning": f"so {gold + 1}", "answer": str(gold + 1), "confidence": 0.2}


def eval_args(server: StubOpenAIServer, dataset: Path, out: Path, *extra: str) -> list[str]:
    args = stub_args(server, out / "checkpoints.sqlite", "--no-matched", "--json", *extra)
    return ["eval", "gsm8k", "--dataset", str(dataset), "--out", str(out), *args]


def rows(out: Path) -> list[dict[str, str]]:
    return list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))


def judge_calls(server: StubOpenAIServer) -> int:
    return sum(schema_of(r) == "JudgeReply" for r in server.requests)


def test_each_protocol_is_a_row_of_the_same_threads_added_without_a_rerun(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", QUESTIONS)
    out = tmp_path / "out"
    protocols = "weighted,supermajority:1,unanimity:abstain"
    with StubOpenAIServer(scripted) as server:
        args = eval_args(server, dataset, out, "--modes", "single,vote")
        code, _, err = run_cli(args, capsys)  # plurality only (the default)
        assert code == 0, err
        asked = len(server.requests)
        assert asked == QUESTIONS * (1 + SOLVERS)
        code, stdout, err = run_cli([*args, "--decisions", protocols], capsys)
        assert code == 0, err
        assert len(server.requests) == asked  # the protocols read the same threads
    result = json.loads(stdout)
    assert result["meta"]["threads"] == {"started": 0, "resumed": 0, "finished": 2 * QUESTIONS}
    assert result["meta"]["decisions"] == [
        "weighted",
        "supermajority:1/1:plurality",
        "unanimity:abstain",
    ]
    accuracy = {m["mode"]: m["accuracy"] for m in result["modes"]}
    assert accuracy == {
        "single": 1.0,  # solver_1 alone: one answer, nothing to decide, one row
        "vote": 0.0,  # two wrong answers against one right
        "vote/weighted": 1.0,  # 0.9 against 0.2 + 0.2
        "vote/supermajority:1/1:plurality": 0.0,  # not reached: plurality decides
        "vote/unanimity:abstain": 0.0,
    }
    abstained = {m["mode"]: m["abstention_rate"] for m in result["modes"]}
    assert abstained["vote/unanimity:abstain"] == 1.0
    found = rows(out)
    assert Counter(r["decision"] for r in found) == {
        "plurality": 2 * QUESTIONS,
        "weighted": QUESTIONS,
        "supermajority:1/1:plurality": QUESTIONS,
        "unanimity:abstain": QUESTIONS,
    }
    for line in {r["line"] for r in found}:
        votes = [r for r in found if r["mode"] == "vote" and r["line"] == line]
        assert len({r["thread_id"] for r in votes}) == 1  # one thread, four rows
        assert {(r["calls"], r["prompt_tokens"]) for r in votes} == {
            (str(SOLVERS), votes[0]["prompt_tokens"])
        }
        gold = votes[0]["gold"]
        assert json.loads(votes[0]["rounds"]) == [
            {"solver_1": gold, "solver_2": str(int(gold) + 1), "solver_3": str(int(gold) + 1)}
        ]


def test_the_judge_is_asked_once_per_thread_and_never_by_a_rerun(
    tmp_path: Path, checkpoint_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``judge`` and a supermajority falling back to it share one call; a rerun reads it.

    On either checkpoint backend: the verdict is written into the finished thread.
    """
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", QUESTIONS)
    out = tmp_path / "out"
    with StubOpenAIServer(scripted) as server:
        args = eval_args(
            server, dataset, out, "--modes", "vote", "--decisions", "judge,supermajority:0.9:judge"
        )
        args += ["--db", checkpoint_url]  # the last --db wins
        code, first, err = run_cli(args, capsys)
        assert code == 0, err
        assert judge_calls(server) == QUESTIONS
        asked, url = len(server.requests), server.url
        code, again, err = run_cli(args, capsys)
        assert code == 0, err
        assert len(server.requests) == asked  # not one call: the verdicts are stored
    before, after = json.loads(first), json.loads(again)
    assert before["meta"]["judge_calls"] == QUESTIONS and after["meta"]["judge_calls"] == 0
    assert [{**m, "wall_s": 0} for m in after["modes"]] == [
        {**m, "wall_s": 0} for m in before["modes"]
    ]
    figures = {m["mode"]: m for m in after["modes"]}
    assert figures["vote"]["accuracy"] == 0.0
    assert figures["vote/judge"]["accuracy"] == 1.0
    assert figures["vote/supermajority:9/10:judge"]["accuracy"] == 1.0
    # A judge row's cost is the solvers' plus its call.
    assert figures["vote"]["calls"] == SOLVERS
    assert figures["vote/judge"]["calls"] == SOLVERS + 1
    assert figures["vote/judge"]["prompt_tokens"] > figures["vote"]["prompt_tokens"]
    for row in rows(out):
        agents = json.loads(row["usage_by_agent"])
        assert ("judge" in agents) == (row["decision"] != "plurality"), row
    # ``show`` of a thread says what the eval's judge decided, beside the thread's own vote.
    thread = rows(out)[0]
    code, shown, err = run_cli(["show", thread["thread_id"], "--db", checkpoint_url], capsys)
    assert code == 0, err
    assert f"also decided: judge@stub@{url} {thread['gold']}" in shown


def test_a_judge_whose_endpoint_does_not_answer_is_refused_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One line naming the judge and its endpoint, exit 2, nothing written or asked."""
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", QUESTIONS)
    out = tmp_path / "out"
    judge_url = f"http://127.0.0.1:{closed_port()}/v1"
    with StubOpenAIServer(scripted) as solvers:
        args = eval_args(solvers, dataset, out, "--modes", "vote", "--decisions", "judge")
        code, _, err = run_cli([*args, "--judge-model", f"referee@{judge_url}"], capsys)
        assert not solvers.requests
    assert code == 2
    line = one_error_line(err)
    assert line.startswith(
        f"debategraph: error: the judge of mode vote (referee@{judge_url}): {judge_url} is "
        "unreachable: "
    ), line
    assert line.endswith("; start it, or give the judge another model"), line
    assert not out.exists()


def test_a_judge_failing_midway_stops_in_one_line_and_the_rerun_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One line naming the judge; the rerun asks only what is left."""
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", QUESTIONS)
    out = tmp_path / "out"
    with (
        StubOpenAIServer(scripted) as solvers,
        StubOpenAIServer(scripted, models=("referee",)) as judge,  # it lists the judge's
    ):
        judge_url = judge.url
        judge.inject("503", count=10_000)  # it answers /models, then fails every call
        args = eval_args(solvers, dataset, out, "--modes", "vote", "--decisions", "judge")
        args += ["--judge-model", f"referee@{judge_url}", "--parallel", "1"]
        code, _, err = run_cli(args, capsys)
        line = one_error_line(err)
        assert code == 1, err
        assert "line 1 in mode vote: agent judge" in line
        assert judge_url in line
        assert "rerun the same command to resume" in line
        assert len(solvers.requests) == SOLVERS  # question 1's thread, finished and saved
        judge.clear_faults()
        judge.reset_stats()
        code, stdout, err = run_cli(args, capsys)
        assert code == 0, err
        assert judge_calls(judge) == len(judge.requests) == QUESTIONS
        assert {body["model"] for body in judge.requests} == {"referee"}
        assert judge_calls(solvers) == 0
        assert len(solvers.requests) == QUESTIONS * SOLVERS  # nothing asked twice
    result = json.loads(stdout)
    assert result["meta"]["threads"] == {"started": QUESTIONS - 1, "resumed": 0, "finished": 1}
    assert result["meta"]["judges"] == {"vote": f"referee@{judge_url}"}
    judged = next(m for m in result["modes"] if m["mode"] == "vote/judge")
    assert judged["accuracy"] == 1.0
    models = {
        m for r in rows(out) if r["decision"] == "judge" for m in json.loads(r["usage_by_model"])
    }
    assert f"referee@{judge_url}" in models


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--decisions", "plurality,borda"], "unknown decision protocol 'borda'"),
        (["--decisions", "supermajority:0.4"], "supermajority threshold 0.4 is not in (0.5, 1]"),
        (["--decisions", "unanimity:coin"], "unknown fallback 'coin'"),
        (["--decisions", ","], "--decisions"),
        (["--judge-model", " "], "--judge-model: model is empty"),
    ],
)
def test_bad_decision_input_is_one_line_exit_2_and_nothing_is_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 2)
    out = tmp_path / "out"
    out.mkdir()
    kept = out / "results.json"
    kept.write_text('{"from": "an earlier run"}')
    with StubOpenAIServer(scripted) as server:
        code, _, err = run_cli(eval_args(server, dataset, out, *extra), capsys)
        assert not server.requests
    assert code == 2, err
    assert message in one_error_line(err)
    assert kept.read_text() == '{"from": "an earlier run"}'
    assert sorted(p.name for p in out.iterdir()) == ["results.json"]
