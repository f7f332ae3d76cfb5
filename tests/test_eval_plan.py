"""An eval planned from Python, without the CLI: the options checked, the shard, the merge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from debategraph.errors import UsageError
from debategraph.eval.options import EvalOptions, build_plan, eval_options
from debategraph.eval.plan import EvalPlan
from debategraph.eval.planfile import check_same_run
from debategraph.eval.shards import this_shard
from tests.processes import python_output

URL = "http://127.0.0.1:9/v1"  # never called: planning makes no request


def options(tmp_path: Path, **changed: Any) -> EvalOptions:
    """``eval gsm8k``'s options as the CLI reads them (a named model at an endpoint)."""
    settings: dict[str, Any] = {
        "modes": "single,vote",
        "decisions": "plurality",
        "judge_model": None,
        "matched": True,
        "shape": (3, 2, 1),
        "parallel": 4,
        "out_dir": tmp_path / "out",
        "model": "stub",
        "base_url": URL,
        "timeout": None,
        "max_retries": 0,
        "db": None,
        "json_output": True,
    }
    return eval_options(**{**settings, **changed})


def test_the_plan_reads_each_roster_file_and_checks_its_agents(tmp_path: Path) -> None:
    """A roster mode's file read with the ``--agents-file`` reader, its agents then checked."""
    (tmp_path / "team.yaml").write_text("- name: ann\n- name: bob\n", encoding="utf-8")
    team = str(tmp_path / "team.yaml")
    plan, notes = build_plan(options(tmp_path, modes=f"single,team={team}"))
    assert plan.modes == ("single", "team")
    assert (plan.model["model"], plan.model["base_url"]) == ("stub", URL)
    assert [s["name"] for s in plan.rosters["team"].solvers] == ["ann", "bob"]
    assert notes == []
    with pytest.raises(UsageError, match=r"^--parallel 0 must be at least 1$"):
        build_plan(options(tmp_path, parallel=0))
    (tmp_path / "tools.yaml").write_text(
        "- name: ann\n  tools: [calculator]\n- name: bob\n", encoding="utf-8"
    )
    with pytest.raises(UsageError, match=r"^mode team: .*ann.*"):
        build_plan(
            options(tmp_path, modes=f"team={tmp_path / 'tools.yaml'}", model="local", base_url=None)
        )


@pytest.mark.slow  # make test-fast leaves it out: a Python process of its own
def test_planning_needs_neither_typer_nor_the_cli() -> None:
    code = (
        "import sys\n"
        "from debategraph.eval.options import build_plan, eval_options, plan_of\n"
        "from debategraph.eval.planfile import plan_record\n"
        "from debategraph.eval.questions import arithmetic_questions\n"
        "from debategraph.eval.runner import execute\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'typer'"
        " or m.startswith('debategraph.cli')))\n"
    )
    assert python_output(code).strip() == "[]"


def test_a_shard_with_no_questions_is_refused_in_one_line() -> None:
    assert this_shard([1, 2, 3], (3, 3)) == [3]
    assert this_shard([1, 2], None) == [1, 2]
    with pytest.raises(UsageError) as info:
        this_shard([1, 2], (3, 3))
    assert str(info.value) == "--shard 3/3: no questions (the selection has 2): use fewer shards"


def test_a_merge_refuses_another_model_than_the_shards_ran(tmp_path: Path) -> None:
    plan = EvalPlan(("single",), 3, 2, 1, 4, {}, {"model": "stub"})
    check_same_run(plan, {"rosters": {}, "model_key": {"model": "stub"}}, tmp_path)
    with pytest.raises(UsageError) as info:
        check_same_run(plan, {"rosters": {}, "model_key": {"model": "other"}}, tmp_path)
    assert str(info.value) == (
        'the model here ({"model": "stub"}) is not the one the shards ran ({"model": "other"}): '
        "run eval report where the shards' model is the same"
    )
