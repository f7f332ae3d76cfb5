"""The ``meeting`` command: its options, and how a meeting's progress and result read."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from debategraph.cli.agents_file import OPTION as AGENTS_FILE_OPTION
from debategraph.cli.agents_file import AgentsFile, read_agents_file
from debategraph.cli.patterns.declaration import Launch, Pattern, Values
from debategraph.cli.patterns.shared import (
    TimeLimit,
    fallback_note,
    pausing,
    renamed_option,
    short,
    time_limit_option,
)
from debategraph.datafiles import load_data
from debategraph.errors import UsageError
from debategraph.nodes.conversation import transcript_json
from debategraph.nodes.meeting.prompts import CHAIR_FALLBACK
from debategraph.nodes.meeting.setup import (
    CHAIR_AGENT,
    CONTROLLER_NODE,
    DECIDE_NODE,
    DECISION_STAGE,
    DEFAULT_KEEP_LAST,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_STAGES,
    OFFICIALS,
    parse_stages,
    stage_agents,
)
from debategraph.nodes.rounds import OPEN_ROUND_NODE, REVIEW_NODE
from debategraph.state.records import Participant, Turn
from debategraph.words import plural

#: How a controller decision that fell back is explained on screen.
CONTROLLER_GAVE_NOTHING = "the controller gave no usable decision"
#: Nodes whose model output is not prose worth streaming (the round loop's, and the
#: controller's and the chair's structured calls).
NOT_STREAMED = frozenset({OPEN_ROUND_NODE, REVIEW_NODE, CONTROLLER_NODE, DECIDE_NODE})


def _stages_of(settings: Values) -> list[Mapping[str, Any]]:
    return [s for s in settings.get("stages") or () if isinstance(s, Mapping)]


def _caps(settings: Values) -> tuple[list[int], list[int]]:
    """Each stage's round cap and its number of participants, from a run's settings."""
    stages = _stages_of(settings)
    default = int(settings.get("max_rounds") or 1)
    caps = [int(s.get("max_rounds") or default) for s in stages]
    return caps, [len(s.get("participants") or ()) for s in stages]


def _participant_name(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("name", "?"))
    return str(value).partition(":")[0].strip()


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


def _describe(settings: Values) -> str:
    caps, _ = _caps(settings)
    parts = [
        f"{s.get('name')} ({', '.join(_participant_name(p) for p in s.get('participants') or ())}"
        f"; {cap} round{'s' if cap != 1 else ''})"
        for s, cap in zip(_stages_of(settings), caps, strict=True)
    ]
    return f"{' → '.join(parts)}{pausing(settings)}"


def chair_fallback(turns: Sequence[Turn]) -> str | None:
    """Why the chair's final decision is none, when its call fell back.

    Args:
        turns: Transcript records (:class:`~debategraph.state.records.Turn`): the
            thread's, or a node's update.

    Returns:
        ``the chair gave no usable decision: <why>`` from the chair's latest decision
        turn that has no answer, or ``None``.
    """
    for turn in reversed(turns):
        if turn.agent == CHAIR_AGENT and turn.stage == DECISION_STAGE:
            return f"{CHAIR_FALLBACK}: {turn.reason}" if turn.reason else None
    return None


def _summary(values: Values) -> dict[str, Any]:
    decision = values.get("decision")
    return {
        "topic": values.get("topic"),
        "decision": decision.model_dump(mode="json") if decision is not None else None,
        "decision_fallback": None if decision else chair_fallback(values.get("transcript") or ()),
        "controller": [d.model_dump(mode="json") for d in values.get("controller_decisions", [])],
        "stage": values.get("stage"),
        "rounds": values.get("round", 0),
        "transcript": transcript_json(values, full=True),
    }


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
    name="meeting",
    command=meeting_command,
    title=lambda values: str(values.get("topic") or ""),
    summary=_summary,
    describe=_describe,
    agents_per_round=lambda s: max(_caps(s)[1], default=1),
    last_round=lambda s: sum(_caps(s)[0]) or None,  # a meeting's rounds run on across stages
    headline=_headline,
    progress=_progress,
    streams=lambda node: node not in NOT_STREAMED,
)
