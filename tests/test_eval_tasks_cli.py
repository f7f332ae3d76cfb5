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


def _mmlu_rows() -> list[dict[str, Any]]:
    """Four MMLU questions of two subjects (one answered by turns), then one blank choice."""
    rows: list[dict[str, Any]] = []
    for n, (subject, say) in enumerate(
        [("art", "right"), ("art", "right"), ("law", "flip"), ("law", "wrong")], start=1
    ):
        choices = [f"right{n}", f"w1-{n}", f"w2-{n}", f"w3-{n}"]
        question = f"Q{n}? [say {say}]"
        rows.append({"question": question, "subject": subject, "choices": choices, "answer": 0})
    rows.append({"question": "Blank? [say right]", "choices": ["a", "b", " ", "d"], "answer": 0})
    return rows


def test_epochs_temperature_and_shuffled_choices_are_run_recorded_and_reused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``eval mmlu --epochs 2 --temperature 0.3 --shuffle-choices``: every call at 0.3, each
    question asked twice (its own threads), its choices shuffled; the blank-choice row
    skipped and counted; a rerun and ``eval report`` reuse every thread, ``--epochs 3``
    asks only the third epoch."""
    asked: dict[str, int] = {}

    def responder(request: dict[str, Any]) -> dict[str, Any]:
        text = _user_text(request)
        if "[say flip]" in text:  # right the first time, wrong the second
            asked[text] = asked.get(text, 0) + 1
            request = {**request, "messages": [{"role": "user", "content": text.replace(
                "[say flip]", "[say right]" if asked[text] == 1 else "[say wrong]"
            )}]}  # fmt: skip
        return say_responder(request)

    dataset = write(tmp_path / "mmlu.jsonl", _mmlu_rows())
    out = tmp_path / "out"
    options = ["--epochs", "2", "--temperature", "0.3", "--shuffle-choices", "--choice-seed", "4"]
    command = ["eval", "mmlu", "--dataset", str(dataset), "--out", str(out), *options]
    with StubOpenAIServer(responder) as server:
        args = stub_args(server, out / "c.sqlite", "--modes", "single", "--parallel", "1")
        code, stdout, err = run_cli([*command, *args, "--json"], capsys)
        assert code == 0, err
        assert len(server.requests) == 8  # 4 questions x 2 epochs, one solver each
        assert {request["temperature"] for request in server.requests} == {0.3}
        assert "note: 1 row skipped: choice C is empty (row 5)" in err
        result = json.loads(stdout)
        code, again, err = run_cli([*command, *args, "--json"], capsys)  # the same command
        assert code == 0, err
        assert len(server.requests) == 8  # every thread read back
        merged = ["eval", "report", str(out), "--out", str(tmp_path / "merged"), "--json"]
        code, report, err = run_cli(merged, capsys)  # plan.json rebuilds the same run
        assert code == 0, err
        assert len(server.requests) == 8
        command[command.index("2")] = "3"
        code, more, err = run_cli([*command, *args, "--json"], capsys)
        assert code == 0, err
        assert len(server.requests) == 12  # only the third epoch is asked
    meta = result["meta"]
    assert (meta["temperature"], meta["epochs"], meta["questions"]) == (0.3, 2, 4)
    assert (meta["shuffle_choices"], meta["choice_seed"]) == (True, 4)
    assert (meta["skipped_lines"], meta["skipped_why"]) == ([5], ["choice C is empty"])
    assert result["modes"][0]["n"] == 8 and result["modes"][0]["accuracy"] == 0.625  # 5 of 8
    subjects = {s["subject"]: (s["n"], s["correct"]) for s in result["subjects"]}
    assert subjects == {"art": (4, 4), "law": (4, 1)}
    (epochs,) = result["epochs"]
    assert (epochs["mode"], epochs["questions"], epochs["agreement"]) == ("single", 4, 0.875)
    assert epochs["unanimous"] == 0.75
    flip = next(q for q in epochs["by_question"] if q["line"] == 3)
    assert (flip["agreement"], flip["correct"]) == (0.5, 1)
    rows = list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))
    assert len({row["gold"] for row in rows}) > 1  # shuffled: the right choice moves
    ids = {(row["line"], row["epoch"]): row["thread_id"] for row in rows}
    assert len(set(ids.values())) == 12 and "-1e2-" in ids[("1", "2")]
    assert json.loads(again)["meta"]["threads"]["finished"] == 8
    merged_modes = json.loads(report)["modes"][0]
    assert (merged_modes["n"], merged_modes["correct"]) == (8, 5)
    assert json.loads(report)["meta"]["temperature"] == 0.3
    assert json.loads(more)["meta"]["threads"] == {"started": 4, "resumed": 0, "finished": 8}
    markdown = (out / "results.md").read_text(encoding="utf-8")
    assert "**Accuracy per subject**" in markdown  # the third run's: 3 epochs
    assert "| art | 1.000 (6/6) |" in markdown and "| law | 0.167 (1/6) |" in markdown
    assert "**Agreement across epochs**" in markdown


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--epochs", "0"], "--epochs 0 must be 1 or more"),
        (["--temperature", "2.5"], "--temperature 2.5 must be a number from 0 to 2"),
        (["--epochs", "2", "--cache", "c.db"], "--epochs 2 with --cache c.db: every epoch"),
    ],
)
def test_bad_epochs_or_temperature_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    dataset = write(tmp_path / "mmlu.jsonl", _mmlu_rows())
    with StubOpenAIServer(say_responder) as server:
        args = stub_args(server, tmp_path / "c.sqlite", *extra)
        code, _, err = run_cli(["eval", "mmlu", "--dataset", str(dataset), *args], capsys)
        assert not server.requests
    assert code == 2
    assert message in one_error_line(err)
