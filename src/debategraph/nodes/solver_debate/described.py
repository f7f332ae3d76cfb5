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
from debategraph.strategies.dynamics import LAST, flips, thread_dynamics
from debategraph.strategies.topology import SINGLE
from debategraph.words import inline, plural, quoted, ranked_table, share

#: The most flips a page's sentences name one by one (the vote chart shows them all).
MOST_FLIPS_TOLD = 12


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


def explain(values: Values) -> list[str]:
    """The solver debate's result in sentences: the answer, how it was decided, who moved.

    Args:
        values: The thread's state values.

    Returns:
        The sentences (none before the first round closed), model text isolated.
    """
    rounds = values.get("rounds") or []
    decision = values.get("decision")
    if not rounds and decision is None:
        return []
    last = rounds[-1].answers if rounds else {}
    votes: Mapping[str, int] = values.get("votes") or {}
    answer = values.get("answer")
    solvers = len(last) or sum(votes.values())
    lines = []
    if answer is not None:
        lines.append(
            f"The answer is {quoted(answer)}: {share(votes.get(answer, 0), solvers)} solvers "
            f"gave it in the last round."
        )
    else:
        why = getattr(decision, "reason", None) or getattr(decision, "fallback", None)
        lines.append("No answer was decided" + (f": {quoted(why)}." if why else "."))
    if votes:
        ranked = sorted(votes.items(), key=lambda kv: -kv[1])
        told = ", ".join(f"{quoted(a)} from {plural(n, 'solver')}" for a, n in ranked)
        abstained = sum(a is None for a in last.values())
        gave = f"; {plural(abstained, 'solver')} gave none" if abstained else ""
        lines.append(f"The final votes: {told}{gave}.")
    if decision is not None:
        how = f"Decided by {quoted(decision.protocol)}"
        if decision.judge_model:
            how += f", the judge on {quoted(decision.judge_model)}"
        lines.append(how + (f": {quoted(decision.reason)}." if decision.reason else "."))
    if values.get("tie_break"):
        lines.append(f"A tie was broken: {quoted(values['tie_break'])}.")
    for key, other in (values.get("decisions") or {}).items():
        if decision is not None and other.protocol == decision.protocol:
            continue
        lines.append(f"By {quoted(key)} the answer would be {quoted(other.answer or 'none')}.")
    return lines + _moves(rounds)


def _moves(rounds: list[Any]) -> list[str]:
    """Who changed their mind and when (or that nobody did)."""
    if len(rounds) < 2:
        return []
    moved = flips({r.round: r.answers for r in rounds})
    if not moved:
        return [f"Nobody changed their answer over {plural(len(rounds), 'round')}."]
    told = [
        f"{quoted(f.agent)} changed its answer in round {f.round}: "
        f"{quoted(f.before or 'none')} → {quoted(f.after or 'none')}."
        for f in moved[:MOST_FLIPS_TOLD]
    ]
    if len(moved) > MOST_FLIPS_TOLD:
        told.append(f"And {plural(len(moved) - MOST_FLIPS_TOLD, 'change')} more (see the votes).")
    return told


#: The solver debate, as the thread tools, the runs and the eval read it.
DESCRIBED = Described(
    name="solver_debate",
    title=lambda values: str(values.get("question") or ""),
    summary=_summary,
    describe=_describe,
    agents_per_round=_solvers,
    result_markdown=votes_markdown,
    explain=explain,
)
