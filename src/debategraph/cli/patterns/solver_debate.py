"""The ``solve`` command: its options, and how a solver debate's progress and result read.

The result says how its answer was decided (the decision protocol, its fallback or
reason, the judge's pick) and how the answers moved from round to round (per round, how
many solvers changed their answer and how many of those off the previous round's
plurality moved onto it: :func:`~debategraph.strategies.dynamics.thread_dynamics`,
without gold). What a solver debate is (its title, result fields, settings line, export)
is :mod:`debategraph.nodes.solver_debate.described`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.markup import escape

from debategraph.cli.options import AgentsFile
from debategraph.cli.patterns.declaration import Pattern, Values
from debategraph.cli.patterns.shared import (
    StopWhen,
    TimeLimit,
    short,
    stop_when_option,
    time_limit_option,
)
from debategraph.errors import UsageError
from debategraph.nodes.solver_debate.described import DESCRIBED
from debategraph.nodes.solver_debate.setup import (
    CLOSE_ROUND_NODE,
    DEFAULT_AGENTS,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_TOPOLOGY,
    DEFAULT_VIEW_CHARS,
    OFFICIALS,
)
from debategraph.runs.agents_file import read_agents_file
from debategraph.runs.start import Launch
from debategraph.state.records import Participant
from debategraph.strategies.answers import CHOICES_RULE, valid_choices
from debategraph.strategies.decisions import PLURALITY, parse_protocol, protocol_rule
from debategraph.strategies.topology import DEFAULT_NEIGHBOURS, TOPOLOGY_NAMES


def solve_command(
    question: Annotated[str, typer.Argument(help="The problem to solve.")],
    agents: Annotated[
        int | None,
        typer.Option("--agents", help=f"Number of solvers \\[default: {DEFAULT_AGENTS}]."),
    ] = None,
    agents_file: AgentsFile = None,
    tools: Annotated[
        list[str] | None,
        typer.Option(
            "--tools",
            help="A built-in tool (e.g. calculator) for every solver without tools of its "
            "own (repeat for more); needs a model with tool calls.",
        ),
    ] = None,
    rounds: Annotated[
        int, typer.Option("--rounds", help="Rounds of answering.")
    ] = DEFAULT_MAX_ROUNDS,
    topology: Annotated[
        str,
        typer.Option(
            "--topology",
            help="ring, full, star, single (one solver), or a JSON file "
            "{solver: \\[solvers it hears]}.",
        ),
    ] = DEFAULT_TOPOLOGY,
    neighbours: Annotated[
        int | None,
        typer.Option(
            "--neighbours",
            help=f"For ring: nearest solvers each hears \\[default: {DEFAULT_NEIGHBOURS}].",
        ),
    ] = None,
    token_budget: Annotated[
        int | None, typer.Option("--token-budget", help="Stop after the round reaching this.")
    ] = None,
    unanimous: Annotated[
        bool,
        typer.Option(
            "--stop-when-unanimous", help="Stop early once all agree (--stop-when unanimity)."
        ),
    ] = False,
    stop_when: StopWhen = None,
    time_limit: TimeLimit = None,
    view_chars: Annotated[
        int,
        typer.Option(
            "--view-chars",
            help="Characters of each neighbour's reasoning a solver reads (0: all of it).",
        ),
    ] = DEFAULT_VIEW_CHARS,
    choices: Annotated[
        list[str] | None,
        typer.Option(
            "--choice",
            help="A choice of a multiple-choice question (repeat, in order A, B, ...): "
            "the solvers answer with its letter.",
        ),
    ] = None,
    answer_kind: Annotated[
        Literal["number", "expression"],
        typer.Option(
            "--answer-kind",
            help="What the solvers answer a question without choices with: one number, or "
            "an expression in LaTeX (a MATH answer; equivalent ones vote together).",
        ),
    ] = "number",
    decision: Annotated[
        str,
        typer.Option(
            "--decision",
            help="How the final answers become one: "
            + protocol_rule().replace("[", "\\[")
            + ". A judge (an --agents-file entry named judge sets its model) is called "
            "only when the answers differ.",
        ),
    ] = PLURALITY,
) -> Launch:
    """Solvers debate a math question on a communication topology, then decide.

    The solvers come from ``--agents N`` or ``--agents-file`` (each entry a solver's
    ``name`` and optional ``model``, ``tools``, ``agent``, ``instructions``; an entry
    named ``judge`` gives the judge of ``--decision judge`` its own model, tools or agent).
    """
    protocol = decision_option(decision)
    agreement = stop_when_option(stop_when, unanimous)
    solvers, officials = roster_option(agents, agents_file)
    shape = parse_topology(topology)
    if isinstance(shape, Mapping) and agents is not None and agents != len(shape):
        raise UsageError(
            f"--agents {agents} and --topology {topology} disagree: the file names "
            f"{len(shape)} solvers; leave out --agents (or give --agents {len(shape)})"
        )
    settings: dict[str, Any] = {
        "agents": solvers,
        "max_rounds": rounds,
        "topology": shape,
        "neighbours": neighbours,
        "token_budget": token_budget,
        "stop_when_unanimous": unanimous,
        "view_chars": view_chars or None,
    }
    seconds = time_limit_option(time_limit)
    if seconds is not None:
        settings["time_limit_s"] = seconds
    if tools:
        settings["tools"] = tools_option(tools)
    if agreement is not None:
        settings["stop_when"] = agreement
    if protocol != PLURALITY:
        settings["decision"] = protocol
    if officials:
        settings["officials"] = officials
    graph_input: dict[str, Any] = {"question": question}
    if choices:
        if not valid_choices(choices):
            raise UsageError(f"--choice: give {CHOICES_RULE}, got {len(choices)}: {choices}")
        graph_input["choices"] = list(choices)
    if answer_kind != "number":
        if choices:
            raise UsageError(f"--answer-kind {answer_kind} is for a question without --choice")
        graph_input["answer_kind"] = answer_kind
    return Launch(settings, graph_input)


def decision_option(value: str) -> str:
    """``--decision``: a decision protocol, checked before anything runs.

    Args:
        value: The option's value.

    Returns:
        The protocol's canonical spec (``supermajority`` -> ``supermajority:2/3:plurality``).

    Raises:
        UsageError: One line naming the value and the protocols allowed.
    """
    try:
        return parse_protocol(value).spec
    except ValueError as exc:
        raise UsageError(f"--decision {value}: {exc}") from None


def roster_option(
    agents: int | None, agents_file: str | None
) -> tuple[int | list[dict[str, Any]], list[dict[str, Any]]]:
    """The ``agents`` and ``officials`` settings: ``--agents N``, or ``--agents-file FILE``.

    Args:
        agents: ``--agents`` (``None``: not given).
        agents_file: ``--agents-file`` (``None``: not given).

    Returns:
        The count, or the solvers' records as dicts (as the file gives them: the
        settings stay JSON, stored with the thread); and the officials' records (an
        entry named ``judge``).

    Raises:
        UsageError: If both are given, or the file is not a valid list of solvers
            (naming the file, the entry's line and the field).
    """
    if agents_file is None:
        return (DEFAULT_AGENTS if agents is None else agents), []
    if agents is not None:
        raise UsageError(
            f"give --agents {agents} or --agents-file {agents_file}, not both: the file "
            "names the solvers"
        )
    roster = read_agents_file(agents_file, Participant, OFFICIALS)
    return roster.agents, roster.officials


def tools_option(tools: list[str]) -> list[str]:
    """``--tools``: built-in tool names (or ``module:attribute`` references), checked.

    Args:
        tools: The names given.

    Returns:
        The names, in order.

    Raises:
        UsageError: On an unknown tool, naming the built-in ones.
    """
    from debategraph.nodes.tools import check_tool_names

    try:
        check_tool_names(tools, "--tools")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return list(tools)


def parse_topology(value: str) -> str | dict[str, list[str]]:
    """``--topology``: a topology name, or a JSON file ``{solver: [solvers it hears]}``.

    Args:
        value: The option's value.

    Returns:
        The name, or the adjacency mapping.

    Raises:
        UsageError: If it is neither, naming the value and what is allowed.
    """
    if value in TOPOLOGY_NAMES:
        return value
    path = Path(value)
    if not path.suffix == ".json" and not path.is_file():
        raise UsageError(
            f"unknown topology {value!r}: use {', '.join(TOPOLOGY_NAMES)} or a JSON file"
        )
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise UsageError(f"--topology {value}: cannot read: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"--topology {value}: not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict) or not all(
        isinstance(v, list) and all(isinstance(x, str) for x in v) for v in data.values()
    ):
        raise UsageError(f"--topology {value}: expected an object {{solver: [solvers it hears]}}")
    return {str(k): list(v) for k, v in data.items()}


def _tally(answers: Mapping[str, str | None]) -> str:
    counts: dict[str, int] = {}
    for answer in answers.values():
        key = answer if answer is not None else "abstain"
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{k} x{v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


def _progress(node: str, update: Values) -> list[str]:
    records = update.get("rounds") if node == CLOSE_ROUND_NODE else None
    if not records:
        return []
    record = records[0]
    return [
        f"  round {record.round} done: {_tally(record.answers)} · "
        f"{record.usage.total_tokens:,} tokens this round"
    ]


def _headline(result: Values) -> list[str]:
    votes = result["votes"]
    winner = result["answer"]
    n = sum(len(r["answers"]) for r in result["rounds"][-1:]) or sum(votes.values())
    shown = escape(str(winner)) if winner is not None else "none (every solver abstained)"
    lines = [
        f"answer [bold]{shown}[/bold]  votes {votes.get(winner, 0)}/{n} · "
        f"agreement {result['agreement']:.2f}"
    ]
    if result.get("tie_break"):
        lines.append(f"  tie-break: {escape(result['tie_break'])}")
    decided = decision_line(result.get("decision"))
    if decided:
        lines.append(f"  {decided}")
    also = other_decisions_line(result.get("decision"), result.get("decisions"))
    if also:
        lines.append(f"  {also}")
    moved = dynamics_line(result.get("dynamics"))
    if moved:
        lines.append(f"  {moved}")
    return lines


def decision_line(decision: Mapping[str, Any] | None) -> str:
    """How the answer was decided, when it was not a plain plurality vote (Rich markup).

    Args:
        decision: The decision's JSON (``None``: a thread of an older version).

    Returns:
        E.g. ``decided by judge: the judge (MODEL) picked 18``, or
        ``decided by unanimity:plurality · no unanimity (2 of 3 for 18): plurality
        decided``; ``""`` for a plain plurality vote.
    """
    if not decision:
        return ""
    protocol = str(decision["protocol"])
    reason, model = decision.get("reason"), decision.get("judge_model")
    if protocol == PLURALITY and not reason:
        return ""
    line = f"decided by {escape(protocol)}"
    if model and decision.get("fallback") in (None, "judge") and decision["answer"] is not None:
        line += f": the judge ({escape(model)}) picked {escape(str(decision['answer']))}"
    if reason:
        line += f" · {escape(short(str(reason), 200))}"
    return line


def other_decisions_line(
    decision: Mapping[str, Any] | None, decisions: Mapping[str, Mapping[str, Any]] | None
) -> str:
    """The decisions kept on the thread besides its own, e.g. an eval's judge (Rich markup).

    ``debategraph eval --decisions judge`` asks its judge after the thread finished and
    stores the verdict in the thread's ``decisions``; ``show`` says so, beside the answer
    the thread's own protocol gave.

    Args:
        decision: The thread's own decision's JSON.
        decisions: Every decision kept on the thread, by key.

    Returns:
        E.g. ``also decided: judge@SmolLM2 (embedded) 18``; ``""`` when there is none.
    """
    others = [
        f"{escape(key)} {escape(str(d.get('answer')) if d.get('answer') is not None else 'none')}"
        for key, d in (decisions or {}).items()
        if d != decision
    ]
    return f"also decided: {', '.join(others)}" if others else ""


def dynamics_line(dynamics: Mapping[str, Any] | None) -> str:
    """How the answers moved after round 1, without gold (Rich markup).

    Per round: how many solvers changed their answer, and of those whose previous answer
    was not the previous round's plurality, how many moved onto it (conformity).

    Args:
        dynamics: The thread's dynamics' JSON.

    Returns:
        E.g. ``dynamics: round 2 1/3 changed, conformity 1/1 · round 3 0/3 changed,
        conformity 0/1``; ``""`` with one round or none.
    """
    rounds = (dynamics or {}).get("rounds") or []
    parts = []
    for r in rounds[1:]:
        conformity = f"{r['conformed']}/{r['movers']}" if r["movers"] else "n/a"
        parts.append(
            f"round {r['round']} {r['changed']}/{r['agents']} changed, conformity {conformity}"
        )
    return f"dynamics: {' · '.join(parts)}" if parts else ""


PATTERN = Pattern(
    described=DESCRIBED,
    command=solve_command,
    headline=_headline,
    progress=_progress,
)
