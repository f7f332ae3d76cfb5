"""Roster modes: ``--modes NAME=AGENTS_FILE``, each solver (and the judge) on its own model.

Two stub endpoints: the run's (``--base-url``) and another that two of the roster's
solvers and its judge name. Each endpoint must receive only its own agents' calls.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import one_error_line, run_cli, solver_of, stub_args
from tests.eval_data import write_gsm8k
from tests.openai_stub import StubOpenAIServer, schema_of
from tests.test_eval_decisions import _gold

QUESTIONS = 2


def by_name(request: dict[str, Any]) -> dict[str, Any]:
    """Ada and the vote's solver_1 right, everyone else one wrong number; the judge right."""
    gold = _gold(request)
    if schema_of(request) == "JudgeReply":
        return {"reasoning": "Ada checked out", "answer": str(gold)}
    answer = gold if solver_of(request) in ("Ada", "solver_1") else gold + 1
    return {"reasoning": f"{solver_of(request)}: {answer}", "answer": str(answer)}


def write_roster(path: Path, other: str, cy: str = "") -> Path:
    """Ada and Cy on ``other``, Bo on the run's model, the judge on ``other`` too."""
    path.write_text(
        f"- name: Ada\n  model: stub@{other}\n"
        "- name: Bo\n"
        f"- name: Cy\n  model: {{model: stub, base_url: '{other}'}}\n"
        f"  instructions: '{cy}'\n"
        f"- name: judge\n  model: referee@{other}\n",
        encoding="utf-8",
    )
    return path


def eval_args(server: StubOpenAIServer, dataset: Path, out: Path, *extra: str) -> list[str]:
    args = stub_args(server, out / "checkpoints.sqlite", "--json", *extra)
    return ["eval", "gsm8k", "--dataset", str(dataset), "--out", str(out), *args]


def test_a_roster_mode_debates_with_each_solver_on_its_own_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", QUESTIONS)
    out = tmp_path / "out"
    with (
        StubOpenAIServer(by_name) as run_model,
        StubOpenAIServer(by_name, models=("stub", "referee")) as other,  # what it serves
    ):
        run_url, other_url = run_model.url, other.url
        team = write_roster(tmp_path / "team.yaml", other.url)
        args = eval_args(run_model, dataset, out, "--modes", f"single,mixed={team}")
        args += ["--decisions", "plurality,judge"]
        code, stdout, err = run_cli(args, capsys)
        assert code == 0, err
        result = json.loads(stdout)
        (matched,) = result["matched"]  # a roster mode debates: it gets its vote too
        k = matched["k"]
        assert (
            sorted(solver_of(b) for b in other.requests if schema_of(b) != "JudgeReply")
            == ["Ada"] * 2 * QUESTIONS + ["Cy"] * 2 * QUESTIONS
        )  # 2 rounds each
        judged = [b for b in other.requests if schema_of(b) == "JudgeReply"]
        assert len(judged) == QUESTIONS and {b["model"] for b in judged} == {"referee"}
        mine = sorted(solver_of(b) for b in run_model.requests)
        assert "Ada" not in mine and "Cy" not in mine
        assert mine.count("Bo") == 2 * QUESTIONS
        # single, Bo x 2 rounds, vote@k and its judge (the run's model: no roster's)
        assert len(run_model.requests) == QUESTIONS * (1 + 2 + k + 1)
        assert sum(schema_of(b) == "JudgeReply" for b in run_model.requests) == QUESTIONS
        # An edited roster is another roster: its threads are new, single's read back.
        write_roster(team, other.url, cy="Check twice.")
        code, again, err = run_cli([*args, "--no-matched"], capsys)
        assert code == 0, err
    assert json.loads(again)["meta"]["threads"] == {
        "started": QUESTIONS,
        "resumed": 0,
        "finished": QUESTIONS,
    }
    assert result["meta"]["rosters"] == {"mixed": str(team)}
    assert result["meta"]["judges"] == {"mixed": f"referee@{other_url}"}
    figures = {m["mode"]: m["accuracy"] for m in result["modes"]}
    assert figures["mixed"] == 0.0 and figures["mixed/judge"] == 1.0
    rows = list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))
    thread = next(r["thread_id"] for r in rows if r["mode"] == "mixed")
    assert thread.startswith("eval-mixed-")
    code, shown, err = run_cli(
        ["show", thread, "--db", str(out / "checkpoints.sqlite"), "--json"], capsys
    )
    assert code == 0, err
    models = {t["agent"]: t.get("model") for t in json.loads(shown)["transcript"]}
    assert models == {
        "Ada": f"stub@{other_url}",
        "Bo": f"stub@{run_url}",
        "Cy": f"stub@{other_url}",
        "judge": f"referee@{other_url}",
    }


@pytest.mark.parametrize(
    ("modes", "message"),
    [
        ("single,mixed=", "give its agents file"),
        ("Mixed Team=TEAM", "its name must be a slug"),
        ("debate-ring=TEAM", "'debate-ring' is a built-in mode's name"),
        ("mixed=TEAM,mixed=OTHER", "two roster modes are named 'mixed'"),
        ("mixed=missing.yaml", "--modes mixed=missing.yaml: no such file"),
        ("mixed=BAD", "--modes mixed=BAD line 2: unknown field 'modle'"),
        ("mixed=ONE", "at least 2"),
    ],
)
def test_bad_roster_modes_are_one_line_exit_2_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], modes: str, message: str
) -> None:
    files = {
        "TEAM": "- name: Ada\n- name: Bo\n",
        "OTHER": "- name: Cy\n- name: Di\n",
        "BAD": "- name: Ada\n- name: Bo\n  modle: stub\n",
        "ONE": "- name: Ada\n",
    }
    for name, text in files.items():
        (tmp_path / f"{name}.yaml").write_text(text, encoding="utf-8")
    for name in files:
        modes = modes.replace(name, str(tmp_path / f"{name}.yaml"))
        message = message.replace(name, str(tmp_path / f"{name}.yaml"))
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 2)
    out = tmp_path / "out"
    with StubOpenAIServer(by_name) as server:
        code, _, err = run_cli(eval_args(server, dataset, out, "--modes", modes), capsys)
        assert not server.requests
    assert code == 2, err
    assert message in one_error_line(err)
    assert not out.exists()


def judge_with_tools(request: dict[str, Any]) -> Any:
    """The tool loop's call (tools offered, no schema) gets plain text: no tool to run."""
    from tests.openai_stub import StubReply

    offered = {t.get("function", {}).get("name") for t in request.get("tools") or []}
    if "calculator" in offered:
        return StubReply(content="I need no tool.")
    return by_name(request)


def test_a_judge_given_tools_is_another_judge_and_is_asked_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Editing only the judge's entry keeps the solvers' threads, but not its verdicts."""
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", QUESTIONS)
    out = tmp_path / "out"
    with (
        StubOpenAIServer(by_name) as run_model,
        StubOpenAIServer(judge_with_tools, models=("stub", "referee")) as other,
    ):
        team = write_roster(tmp_path / "team.yaml", other.url)
        args = eval_args(run_model, dataset, out, "--modes", f"mixed={team}", "--no-matched")
        args += ["--decisions", "plurality,judge"]
        code, stdout, err = run_cli(args, capsys)
        assert code == 0, err
        assert json.loads(stdout)["meta"]["judge_calls"] == QUESTIONS
        text = team.read_text(encoding="utf-8")
        team.write_text(text + "  tools: [calculator]\n", encoding="utf-8")
        run_model.reset_stats()
        other.reset_stats()
        code, stdout, err = run_cli(args, capsys)
        assert code == 0, err
        again = json.loads(stdout)
        code, stdout, err = run_cli(args, capsys)  # and that verdict is read back in turn
        assert code == 0, err
    assert again["meta"]["threads"]["finished"] == QUESTIONS  # the solvers' threads kept
    assert again["meta"]["judge_calls"] == QUESTIONS  # the judge with tools asked anew
    assert json.loads(stdout)["meta"]["judge_calls"] == 0
    assert not run_model.requests  # no solver asked again
