"""What a solver debate is, for every reader of its threads: title, result fields, export.

The registry line names :data:`DESCRIBED`; the CLI's ``solve`` command adds its options
and terminal rendering (:mod:`debategraph.cli.patterns.solver_debate`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from debategraph.described import Described, pausing
from debategraph.registry import Values
from debategraph.strategies.decisions import PLURALITY
from debategraph.strategies.dynamics import LAST, thread_dynamics
from debategraph.strategies.topology import SINGLE
from debategraph.words import inline, plural, ranked_table


def _summary(values: Values) -> dict[str, Any]:
    rounds = values.get("rounds", [])
    decision = values.get("decision")
    # The decided answer (the decision's, None when it abstained); undecided: the default.
    final = values.get("answer", LAST)
    dynamics = thread_dynamics([r.answers for r in rounds], final=final)
    return {
        "answer": values.get("answer"),
        "votes": values.get("votes", {}),
        "agreement": values.get("agreement", 0.0),
        "tie_break": values.get("tie_break"),
        "rounds": [r.model_dump(include={"round", "answers"}) for r in rounds],
        "decision": decision.model_dump(mode="json") if decision is not None else None,
        "decisions": {
            key: d.model_dump(mode="json") for key, d in (values.get("decisions") or {}).items()
        },
        "dynamics": dynamics.model_dump(mode="json"),
    }


def _solvers(settings: Values) -> int:
    """How many solvers the settings name: a count, names or records, or a custom topology's."""
    topo = settings["topology"]
    if topo == SINGLE:
        return 1
    if isinstance(topo, Mapping):
        return len(topo)
    agents = settings["agents"]
    return agents if isinstance(agents, int) else len(agents)


def _describe(settings: Values) -> str:
    topo = settings["topology"]
    n = _solvers(settings)
    if isinstance(topo, Mapping):
        shape = f"custom topology of {plural(n, 'solver')}"
    elif topo == SINGLE:
        shape = "1 solver alone"
    elif topo == "ring":
        k = settings["neighbours"] or min(2, n - 1)
        shape = f"{plural(n, 'solver')}, ring k={k}"
    else:
        shape = f"{plural(n, 'solver')}, {topo}"
    tools = settings.get("tools")
    extra = f", tools {', '.join(map(str, tools))}" if tools else ""
    decision = settings.get("decision")
    if decision is not None and str(getattr(decision, "spec", decision)) != PLURALITY:
        extra += f", decision {getattr(decision, 'spec', decision)}"
    stop = settings.get("stop_when") or (
        "unanimity" if settings.get("stop_when_unanimous") else None
    )
    if stop:
        extra += f", stops once they agree by {getattr(stop, 'spec', stop)}"
    return f"{shape}, {plural(settings['max_rounds'], 'round')}{extra}{pausing(settings)}"


def votes_markdown(values: Values) -> list[str]:
    """The decided answer, its votes, agreement, tie-break and decision, as Markdown.

    The decision (how the answer was decided) is shown where it was not a plain
    plurality vote. The solver debate's section of ``export --format md``.

    Args:
        values: The thread's state values.

    Returns:
        The lines, each paragraph followed by a blank line (none for a field not set).
    """
    lines: list[str] = []
    if "answer" in values:
        answer = values.get("answer")
        shown = f"**{inline(str(answer))}**" if answer is not None else "none"
        lines += [f"Answer: {shown}", ""]
    votes = values.get("votes")
    if isinstance(votes, Mapping) and votes:
        lines += [*ranked_table(votes, ("answer", "votes")), ""]
    agreement = values.get("agreement")
    if isinstance(agreement, int | float) and "votes" in values:
        lines += [f"Agreement: {agreement:.2f}", ""]
    if values.get("tie_break"):
        lines += [f"Tie-break: {inline(str(values['tie_break']))}", ""]
    decision = values.get("decision")
    if decision is not None and (decision.protocol != PLURALITY or decision.reason):
        how = f"Decision: {inline(decision.protocol)}"
        if decision.judge_model:
            how += f" (the judge on {inline(decision.judge_model)})"
        if decision.reason:
            how += f": {inline(decision.reason)}"
        lines += [how, ""]
    return lines


#: The solver debate, as the thread tools, the runs and the eval read it.
DESCRIBED = Described(
    name="solver_debate",
    title=lambda values: str(values.get("question") or ""),
    summary=_summary,
    describe=_describe,
    agents_per_round=_solvers,
    result_markdown=votes_markdown,
)
