"""An eval planned from Python, without the CLI: the options checked, the shard, the merge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from debategraph.errors import UsageError
from debategraph.eval.modes import RosterMode
from debategraph.eval.options import EvalOptions, PlanChecks, build_plan, eval_options
from debategraph.eval.plan import EvalPlan
from debategraph.eval.planfile import check_same_run
from debategraph.eval.shards import this_shard
from debategraph.models.spec import ModelSpec
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


def record(spec: ModelSpec) -> dict[str, Any]:
    return {"model": spec.model, "base_url": spec.base_url}


def test_the_plan_is_made_with_the_callers_checks_before_the_judges(tmp_path: Path) -> None:
    called: list[str] = []

    def read_roster(name: str, path: str) -> RosterMode:
        called.append(f"read {name}={path}")
        return RosterMode(name, path, ({"name": "ann"}, {"name": "bob"}))

    def check_agents(plan: EvalPlan, run: ModelSpec) -> None:
        called.append(f"check {','.join(plan.modes)} on {run.model}")

    checks = PlanChecks(read_roster, check_agents, record)
    plan, notes = build_plan(options(tmp_path, modes="single,team=team.yaml"), checks)
    assert called == ["read team=team.yaml", "check single,team on stub"]
    assert plan.modes == ("single", "team") and plan.model == {"model": "stub", "base_url": URL}
    assert plan.rosters["team"].solvers == ({"name": "ann"}, {"name": "bob"})
    assert notes == []
    with pytest.raises(UsageError, match=r"^--parallel 0 must be at least 1$"):
        build_plan(options(tmp_path, parallel=0), checks)


@pytest.mark.slow  # make test-fast leaves it out: a Python process of its own
def test_planning_needs_neither_typer_nor_the_cli() -> None:
    code = (
        "import sys\n"
        "from debategraph.eval.options import PlanChecks, build_plan, eval_options\n"
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
