"""The checks an eval's plan shares with every run: its agents and the models they name.

:func:`~debategraph.eval.options.build_plan` checks the eval's own options; what every
run gets (:mod:`debategraph.runs`) comes from here, for a plan's roster modes and judges:
the ``--agents-file`` reader (a roster mode's file), tools on the embedded model, and the
models each endpoint serves (:func:`own_specs`, asked once per endpoint per run).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debategraph.errors import UsageError

if TYPE_CHECKING:
    from debategraph.eval.modes import RosterMode
    from debategraph.eval.plan import EvalPlan
    from debategraph.models.spec import ModelSpec


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
    from debategraph.eval.modes import RosterMode
    from debategraph.runs.agents_file import OPTION, read_agents_file
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


def refuse_tools_on_embedded(plan: EvalPlan, run: ModelSpec) -> None:
    """Refuse, in one line, a roster's agent (or judge) with tools on the embedded model.

    Args:
        plan: The plan.
        run: The run's model.

    Raises:
        UsageError: Naming the mode and the agent.
    """
    from debategraph.runs import agents

    for name, roster in plan.rosters.items():
        solvers = [*roster.solvers, *([roster.judge] if roster.judge else [])]
        try:
            agents.refuse_tools_on_embedded({"agents": solvers}, run)
        except UsageError as exc:
            raise UsageError(f"mode {name}: {exc}") from None


def own_specs(plan: EvalPlan) -> list[tuple[str, ModelSpec]]:
    """``(who, spec)`` of every model spec the plan's rosters and judges name.

    Args:
        plan: The plan.

    Returns:
        Each spec, with who names it.
    """
    from debategraph.eval.plan import judge_specs
    from debategraph.runs import agents

    found = [(f"the judge of mode {mode}", own) for mode, own in judge_specs(plan)]
    for name, roster in plan.rosters.items():
        found += [
            (f"mode {name}: {who}", own)
            for who, own in agents.own_specs({"agents": roster.solvers})
        ]
    return found
