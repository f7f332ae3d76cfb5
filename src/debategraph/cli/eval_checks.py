"""The CLI's checks that an eval's plan gets, shared with every command of the CLI.

:func:`~debategraph.eval.options.build_plan` checks the eval's own options; the eval
sits below the CLI, so what the CLI checks for every command comes from here: the
``--agents-file`` reader (a roster mode's file), tools on the embedded model, and the
models each endpoint serves (asked once per endpoint per run).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debategraph.errors import UsageError

if TYPE_CHECKING:
    from debategraph.eval.modes import RosterMode
    from debategraph.eval.options import EvalOptions
    from debategraph.eval.plan import EvalPlan
    from debategraph.models.spec import ModelSpec


def plan_of(options: EvalOptions) -> tuple[EvalPlan, list[str]]:
    """The eval's plan (:func:`~debategraph.eval.options.build_plan`), with the CLI's checks.

    Args:
        options: The shared options.

    Returns:
        The plan, and notes for the user.

    Raises:
        UsageError: One line naming the bad option, agent, judge or endpoint.
    """
    from debategraph.eval.options import PlanChecks, build_plan
    from debategraph.eval.plan import check_judge_endpoints
    from debategraph.runs.endpoints import Endpoints, check_served
    from debategraph.runs.thread import spec_record

    checks = PlanChecks(read_roster, _refuse_tools_on_embedded, spec_record)
    plan, notes = build_plan(options, checks)
    endpoints = Endpoints()
    check_judge_endpoints(plan, options.spec, endpoints.probe)
    check_served(_own_specs(plan), options.spec, endpoints)
    return plan, notes


def read_roster(name: str, path: str) -> RosterMode:
    """Read a roster mode's agents file with the ``--agents-file`` reader and its checks.

    Args:
        name: The mode's name.
        path: The file.

    Returns:
        The roster mode: its solvers, and its ``judge`` entry if it has one.

    Raises:
        UsageError: One line naming the mode's file, the entry's line and the field.
    """
    from debategraph.cli.agents_file import OPTION, read_agents_file
    from debategraph.eval.modes import RosterMode
    from debategraph.state.records import Participant
    from debategraph.strategies.decisions import JUDGE

    try:
        roster = read_agents_file(path, Participant, officials=(JUDGE,))
    except UsageError as exc:
        said = str(exc)
        if said.startswith(OPTION):  # the reader names its option; here it is --modes
            said = f"--modes {name}={said.removeprefix(OPTION).lstrip()}"
        raise UsageError(said) from None
    judge = roster.officials[0] if roster.officials else None
    return RosterMode(name, path, tuple(roster.agents), judge)


def _refuse_tools_on_embedded(plan: EvalPlan, run: ModelSpec) -> None:
    """A roster's agent (or judge) with tools on the embedded model: refused in one line."""
    from debategraph.runs.agents import refuse_tools_on_embedded

    for name, roster in plan.rosters.items():
        agents = [*roster.solvers, *([roster.judge] if roster.judge else [])]
        try:
            refuse_tools_on_embedded({"agents": agents}, run)
        except UsageError as exc:
            raise UsageError(f"mode {name}: {exc}") from None


def _own_specs(plan: EvalPlan) -> list[tuple[str, ModelSpec]]:
    """``(who, spec)`` of every model spec the plan's rosters and judges name."""
    from debategraph.eval.plan import judge_specs
    from debategraph.runs.agents import own_specs

    found = [(f"the judge of mode {mode}", own) for mode, own in judge_specs(plan)]
    for name, roster in plan.rosters.items():
        found += [
            (f"mode {name}: {who}", own) for who, own in own_specs({"agents": roster.solvers})
        ]
    return found
