"""The ``meeting`` command: its options, and how a meeting's progress and result read.

What a meeting is (its title, result fields, settings line, rounds) is
:mod:`debategraph.nodes.meeting.described`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from debategraph.cli.options import AgentsFile
from debategraph.cli.patterns.declaration import Pattern, Values
from debategraph.cli.patterns.shared import (
    TimeLimit,
    fallback_note,
    renamed_option,
    short,
    time_limit_option,
)
from debategraph.datafiles import load_data
from debategraph.errors import UsageError
from debategraph.nodes.meeting.described import DESCRIBED, chair_fallback
from debategraph.nodes.meeting.setup import (
    CONTROLLER_NODE,
    DECIDE_NODE,
    DEFAULT_KEEP_LAST,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_STAGES,
    OFFICIALS,
    parse_stages,
    stage_agents,
)
from debategraph.nodes.rounds import OPEN_ROUND_NODE, REVIEW_NODE
from debategraph.runs.agents_file import OPTION as AGENTS_FILE_OPTION
from debategraph.runs.agents_file import read_agents_file
from debategraph.runs.start import Launch
from debategraph.state.records import Participant
from debategraph.words import plural

#: How a controller decision that fell back is explained on screen.
CONTROLLER_GAVE_NOTHING = "the controller gave no usable decision"
#: Nodes whose model output is not prose worth streaming (the round loop's, and the
#: controller's and the chair's structured calls).
NOT_STREAMED = frozenset({OPEN_ROUND_NODE, REVIEW_NODE, CONTROLLER_NODE, DECIDE_NODE})


def meeting_command(
    topic: Annotated[str, typer.Argument(help="What the meeting is to decide.")],
    stages: Annotated[
        Path | None,
        typer.Option(
            "--stages",
            help="YAML or JSON file: a list of stages {name, participants: \\['Name: "
            "instructions' | {name, instructions}], max_rounds?, goal?} "
            "\\[default: presentation, discussion (Advocate, Skeptic), summary].",
        ),
    ] = None,
    agents_file: AgentsFile = None,
    rounds: Annotated[
        int | None,
        typer.Option(
            "--rounds",
            help=f"Round cap of a stage that sets none \\[default: {DEFAULT_MAX_ROUNDS}].",
        ),
    ] = None,
    max_rounds: Annotated[
        int | None, typer.Option("--max-rounds", hidden=True, help="Deprecated: use --rounds.")
    ] = None,
    keep_last: Annotated[
        int, typer.Option("--keep-last", help="Latest messages a speaker reads (0: all).")
    ] = DEFAULT_KEEP_LAST,
    time_limit: TimeLimit = None,
) -> Launch:
    """Staged meeting: presenter, discussion, summary; a round controller and a decision.

    ``--agents-file`` gives the stages' participants (by name) their models, tools or
    agents, and the officials (``controller``, ``chair``) theirs; its entries are stored
    with the thread as given, so ``resume`` and ``fork`` rebuild the same agents.
    """
    if stages is None:
        data: Any = json.loads(json.dumps(DEFAULT_STAGES))
    else:
        data = load_data(stages, "--stages")
        if isinstance(data, Mapping) and set(data) == {"stages"}:
            data = data["stages"]
    cap, notes = renamed_option("--max-rounds", "--rounds", max_rounds, rounds, DEFAULT_MAX_ROUNDS)
    settings: dict[str, Any] = {"stages": data, "max_rounds": cap, "keep_last": keep_last}
    seconds = time_limit_option(time_limit)
    if seconds is not None:
        settings["time_limit_s"] = seconds
    if agents_file is not None:
        roster = read_agents_file(agents_file, Participant, OFFICIALS)
        _check_names(agents_file, data, cap, roster.agents)
        if roster.agents:
            settings["agents"] = roster.agents
        if roster.officials:
            settings["officials"] = roster.officials
    return Launch(settings, {"topic": topic}, notes)


def _check_names(path: str, stages: Any, cap: int, agents: list[dict[str, Any]]) -> None:
    """Refuse, naming the file, an agent that is no participant of the stages.

    Bad stages are left to the factory's checks (its line names the stage).
    """
    try:
        parsed = parse_stages(stages, cap)
    except ValueError:
        return
    try:
        stage_agents(parsed, agents)
    except ValueError as exc:
        raise UsageError(f"{AGENTS_FILE_OPTION} {path}: {exc}") from None


def _headline(result: Values) -> list[str]:
    decision = result.get("decision")
    stages = len({d.get("stage") for d in result.get("controller") or ()})
    tail = f"{plural(result.get('rounds', 0), 'round')} over {plural(stages, 'stage')}"
    if not decision:
        why = fallback_note(result.get("decision_fallback"))
        lines = [f"decision [bold]none[/bold]{why} · {tail}"]
    else:
        lines = [f"decision [bold]{escape(short(decision['decision'], 200))}[/bold] · {tail}"]
        if decision.get("rationale"):
            lines.append(f"  rationale: {escape(short(decision['rationale'], 300))}")
        lines += [f"  dissent: {escape(short(d, 160))}" for d in decision.get("dissent") or ()]
        lines += [f"  next: {escape(short(s, 160))}" for s in decision.get("next_steps") or ()]
    for made in result.get("controller") or ():
        if made.get("fallback"):
            why = fallback_note(f"{CONTROLLER_GAVE_NOTHING}: {made['fallback']}")
            lines.append(
                f"  stage {escape(made['stage'])}, round {made['stage_round']}/"
                f"{made['max_rounds']}: {escape(made['action'])}{why}"
            )
    return lines


def _progress(node: str, update: Values) -> list[str]:
    lines = []
    for decision in update.get("controller_decisions") or ():
        how = "forced" if decision.forced else "controller"
        step = f"stage {escape(update['stage'])}" if "stage" in update else "the final decision"
        if decision.action == "continue":
            step = f"round {decision.stage_round + 1}"
        why = fallback_note(decision.fallback)
        lines.append(
            f"  [dim]stage {escape(decision.stage)}, round {decision.stage_round}/"
            f"{decision.max_rounds}: {how} → {step}{why}: "
            f"{escape(short(decision.reason, 160))}[/dim]"
        )
    if "decision" in update and node != "open_round":
        decision = update["decision"]
        shown = escape(short(decision.decision, 200)) if decision else "none"
        why = "" if decision else fallback_note(chair_fallback(update.get("transcript") or ()))
        lines.append(f"  chair: decision [bold]{shown}[/bold]{why}")
    return lines


PATTERN = Pattern(
    described=DESCRIBED,
    command=meeting_command,
    headline=_headline,
    progress=_progress,
    streams=lambda node: node not in NOT_STREAMED,
)
