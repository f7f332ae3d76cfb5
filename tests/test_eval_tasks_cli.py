"""``debategraph eval TASK`` end to end against the stub: one run per family of checker.

The scripted solvers answer what each question tells them to (``[say X]``), so each
run's accuracy is known: a choice task (GPQA, its choices shuffled with a recorded seed),
a yes/no task (StrategyQA) and a math task (MATH, checked by math-verify equivalence).
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest

from debategraph.eval.tasks import CHOICE_METRIC, MATH_METRIC, YES_NO_METRIC
from tests.conftest import one_error_line, run_cli, stub_args
from tests.openai_stub import StubOpenAIServer
from tests.test_eval_tasks import GPQA, write

_SAY = re.compile(r"\[say ([^\]]+)\]")
_CHOICE = re.compile(r"^([A-Z])\) (\S+)$", re.MULTILINE)


def _user_text(request: dict[str, Any]) -> str:
    messages = request.get("messages", [])
    return "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")


def say_responder(request: dict[str, Any]) -> dict[str, Any]:
    """Answers what the question says; ``[say right]``/``[say wrong]``: that GPQA choice."""
    text = _user_text(request)
    said = _SAY.search(text)
    answer = said.group(1) if said else "?"
    if answer in ("right", "wrong"):
        letters = {
            "right" if body.startswith("right") else body.split("-")[0]: k
            for k, body in _CHOICE.findall(text)
        }
        answer = letters["right" if answer == "right" else "w1"]
    return {"reasoning": f"it is {answer}", "answer": answer, "confidence": 0.9}


def run_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], task: str, dataset: Path, *extra: str
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    out = tmp_path / "out"
    with StubOpenAIServer(say_responder) as server:
        args = stub_args(server, out / "c.sqlite", "--modes", "single", "--json", *extra)
        code, stdout, err = run_cli(
            ["eval", task, "--dataset", str(dataset), "--out", str(out), *args], capsys
        )
    assert code == 0, err
    rows = list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))
    return json.loads(stdout), rows


def test_gpqa_scores_choice_letters_and_records_its_shuffle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        dict(row, Question=f"{row['Question']} [say {'right' if i < 6 else 'wrong'}]")
        for i, row in enumerate(GPQA)
    ]
    result, outcomes = run_task(
        tmp_path, capsys, "gpqa", write(tmp_path / "gpqa.csv", rows), "--choice-seed", "3"
    )
    meta = result["meta"]
    assert (meta["task"], meta["metric"], meta["choice_seed"], meta["format"]) == (
        "gpqa", CHOICE_METRIC, 3, "csv",
    )  # fmt: skip
    assert result["modes"][0]["accuracy"] == 0.75  # 6 of 8
    assert len({row["gold"] for row in outcomes}) > 1  # shuffled: the right one moves
    plan = json.loads((tmp_path / "out" / "plan.json").read_text(encoding="utf-8"))
    assert plan["settings"]["choice_seed"] == 3  # eval report rebuilds the same choices


def test_strategyqa_scores_yes_and_no(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {"question": "Is ice cold? [say yes]", "answer": True},
        {"question": "Is fire cold? [say no]", "answer": False},
        {"question": "Is tea hot? [say no]", "answer": True},
        {"question": "Is snow dry? [say yes]", "answer": False},
        {"question": "Is rain wet? [say yes]", "answer": True},
    ]
    result, _ = run_task(tmp_path, capsys, "strategyqa", write(tmp_path / "s.json", rows))
    assert result["meta"]["metric"] == YES_NO_METRIC
    assert result["modes"][0]["accuracy"] == 0.6  # 3 of 5


def test_math_scores_equivalence_and_says_why_a_row_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {
            "problem": "Half? [say 0.5]",
            "solution": "$\\boxed{\\frac{1}{2}}$",
            "level": "1",
            "type": "x",
        },
        {
            "problem": "Third? [say 0.5]",
            "solution": "$\\boxed{\\frac{1}{3}}$",
            "level": "1",
            "type": "x",
        },
        {
            "problem": "Root? [say \\frac{\\sqrt{2}}{2}]",
            "solution": "$\\boxed{\\frac{1}{\\sqrt{2}}}$",
            "type": "x",
        },
        {"problem": "Mute? [say I do not know]", "solution": "$\\boxed{2}$", "type": "x"},
        {"problem": "Quarters? [say \\frac{3}{4}]", "solution": "$\\boxed{0.75}$", "type": "x"},
        {"problem": "Where? [say x \\in (1, 3)]", "solution": "$\\boxed{(1,3)}$", "type": "x"},
        {"problem": "No gold.", "solution": "no box", "level": "1", "type": "x"},
    ]
    result, outcomes = run_task(tmp_path, capsys, "math", write(tmp_path / "math.jsonl", rows))
    meta = result["meta"]
    assert (meta["metric"], meta["skipped"], meta["skipped_lines"]) == (MATH_METRIC, 1, [7])
    # 4 of 6: 1/2 = 0.5, sqrt(2)/2 = 1/sqrt(2), 3/4 = 0.75 and the interval (1, 3)
    assert result["modes"][0]["accuracy"] == pytest.approx(4 / 6, abs=1e-4)
    by_line = {row["line"]: row for row in outcomes}
    assert [by_line[str(n)]["correct"] for n in range(1, 7)] == [
        "True", "False", "True", "False", "True", "True",
    ]  # fmt: skip
    assert by_line["4"]["reason"] == "no answer could be read"  # prose is no expression
    assert by_line["2"]["reason"] == ""  # compared, and not equivalent
    assert by_line["5"]["answer"] == "0.75"  # the solver's \frac{3}{4}, read whole
    assert by_line["3"]["answer"] == "\\frac{\\sqrt{2}}{2}"  # an expression, kept whole
    assert by_line["6"]["answer"] == "\\left(1, 3\\right)"  # x \in (1, 3): the interval


def test_an_unknown_shape_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write(tmp_path / "x.jsonl", [{"prompt": "?", "label": 1}])
    with StubOpenAIServer(say_responder) as server:
        args = stub_args(server, tmp_path / "c.sqlite")
        code, _, err = run_cli(["eval", "arc", "--dataset", str(dataset), *args], capsys)
        assert not server.requests
    assert code == 2
    assert "not a ARC file: its fields are label, prompt" in one_error_line(err)


def test_shards_of_a_task_merge_with_the_same_choices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``eval report`` rebuilds a GPQA run from plan.json: its file, its task, its choice seed."""
    rows = [dict(row, Question=f"{row['Question']} [say right]") for row in GPQA[:4]]
    dataset = write(tmp_path / "gpqa.csv", rows)
    with StubOpenAIServer(say_responder) as server:
        for i in (1, 2):
            out = tmp_path / f"shard{i}"
            args = stub_args(server, out / "c.sqlite", "--modes", "single", "--shard", f"{i}/2")
            task = ["eval", "gpqa", "--dataset", str(dataset), "--choice-seed", "5"]
            code, _, err = run_cli([*task, "--out", str(out), *args], capsys)
            assert code == 0, err
        asked = len(server.requests)
        merged = tmp_path / "merged"
        args = ["eval", "report", str(tmp_path / "shard1"), str(tmp_path / "shard2")]
        code, stdout, err = run_cli([*args, "--out", str(merged), "--json"], capsys)
        assert code == 0, err
        assert len(server.requests) == asked  # every thread read back: the same questions
    report = json.loads(stdout)
    assert (report["meta"]["task"], report["meta"]["choice_seed"]) == ("gpqa", 5)
    assert report["modes"][0]["n"] == 4 and report["modes"][0]["accuracy"] == 1.0
