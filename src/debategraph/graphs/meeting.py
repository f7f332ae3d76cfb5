"""Meeting: a staged group chat with a round controller and a final decision.

The meeting runs its stages in order (by default a presenter, a discussion between an
advocate of the opportunities and a skeptic of the risks, and a summarizer). In a round of
a stage each of its participants speaks once, in order, reading the conversation so far
(a human's interjections included), the topic, the stage's goal and its own instructions.
After each round a typed round controller decides whether the stage gets another round or
the meeting moves on; at the stage's round cap it moves on without a call. At the end the
chair gives a typed final decision (decision, rationale, dissent, next steps).

Graph: ``START -> open_round -> <the stage's first speaker> -> ... -> controller``, then
``[human] -> open_round`` while stages remain, or on to ``decide -> END`` once every stage
ran (``completed``), a stop was requested (``stopped``) or a whole round came back empty
(``error``). One node per participant (named by the slug of its name), routed by stage.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from debategraph.errors import UsageError
from debategraph.graphs.pattern import (
    Launch,
    Pattern,
    Values,
    fallback_note,
    pausing,
    short,
    time_limit_option,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langgraph.graph import StateGraph

    from debategraph.context import Context
    from debategraph.models import ModelBinding, ModelSpec
    from debategraph.nodes.meeting import MeetingSetup
    from debategraph.state.meeting import MeetingInput, MeetingOutput, Stage
    from debategraph.state.records import Turn

    StageLike = Stage | Mapping[str, Any]

GRAPH_NAME = "meeting"
#: Steps of a round besides the speakers': open_round, controller and the human review.
STEPS_PER_ROUND = 3
#: Messages a speaker and the controller read (``conversation.DEFAULT_KEEP_LAST``).
DEFAULT_KEEP_LAST = 8

#: The default agenda, as plain data (what a ``--stages`` file holds).
DEFAULT_STAGES: tuple[Mapping[str, Any], ...] = (
    {
        "name": "presentation",
        "participants": (
            "Presenter: presents the topic clearly and neutrally: the background, the "
            "options and the open questions",
        ),
        "max_rounds": 1,
        "goal": "Lay out the topic: the facts, the options and what needs deciding.",
    },
    {
        "name": "discussion",
        "participants": (
            "Advocate: argues for the opportunities: what could go right and why it is worth doing",
            "Skeptic: probes the risks: what could go wrong, the costs and the hidden assumptions",
        ),
        "goal": "Weigh the opportunities against the risks; answer each other's points.",
    },
    {
        "name": "summary",
        "participants": (
            "Summarizer: summarises the discussion faithfully: where the participants "
            "agree, where they differ, and what they could decide",
        ),
        "max_rounds": 1,
        "goal": "Sum up the meeting and propose a decision.",
    },
)


def meeting_setup(
    stages: Sequence[StageLike],
    *,
    max_rounds: int,
    keep_last: int,
    pause_after_round: bool,
    time_limit_s: float | None = None,
) -> MeetingSetup:
    """Validate a meeting's settings.

    Args:
        stages: As for :func:`build_meeting`.
        max_rounds: As for :func:`build_meeting`.
        keep_last: As for :func:`build_meeting`.
        pause_after_round: As for :func:`build_meeting`.
        time_limit_s: As for :func:`build_meeting`.

    Returns:
        The settings, every stage with its round cap.

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    from debategraph.nodes.meeting import MeetingSetup, parse_stages
    from debategraph.nodes.rounds import check_time_limit

    if isinstance(keep_last, bool) or not isinstance(keep_last, int) or keep_last < 0:
        raise ValueError(f"keep_last must be 0 (all) or more, got {keep_last!r}")
    check_time_limit(time_limit_s)
    return MeetingSetup(
        stages=parse_stages(stages, max_rounds),
        keep_last=keep_last,
        pause_after_round=pause_after_round,
        time_limit_s=time_limit_s,
    )


def build_meeting(
    model: BaseChatModel | ModelBinding | ModelSpec | None = None,
    *,
    stages: Sequence[StageLike] = DEFAULT_STAGES,
    max_rounds: int = 2,
    keep_last: int = DEFAULT_KEEP_LAST,
    pause_after_round: bool = False,
    time_limit_s: float | None = None,
    state_schema: type[Any] | None = None,
) -> StateGraph[Any, Context, MeetingInput, MeetingOutput]:
    """Build the meeting graph (uncompiled).

    Args:
        model: Chat model, binding or spec every agent calls. ``None`` reads the model
            from the run's :class:`~debategraph.context.Context` (embedded model by default).
        stages: One or more stages, in order: :class:`~debategraph.state.Stage` records
            or dicts ``{name, participants, max_rounds?, goal?}`` whose participants are
            ``"Name: instructions"`` strings, dicts or
            :class:`~debategraph.state.Participant` records. Stage names are unique
            (case-insensitively), and so are participant names within a stage; a name
            in several stages is one agent. Default :data:`DEFAULT_STAGES`.
        max_rounds: Round cap (>= 1) of a stage that sets none.
        keep_last: Latest messages a speaker and the controller read (0: all); the chair
            reads the whole conversation.
        pause_after_round: After each round that does not end the meeting,
            ``interrupt()`` with the round's messages and the controller's decision;
            resume with ``Command(resume={"approve": True})`` or
            ``Command(resume={"interject": "text"})`` (the next speakers read it). Needs
            a checkpointer.
        time_limit_s: Seconds the meeting may take (``None``: no limit). At the
            deadline the call in flight is cancelled (recorded with the reason), none
            starts after it, and the meeting ends ``time_limit`` (the chair's decision
            then falls back without a call).
        state_schema: State schema; may extend :class:`~debategraph.state.MeetingState`
            (the default).

    Returns:
        The uncompiled graph; ``compile(checkpointer=..., name=...)`` it.

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    setup = meeting_setup(
        stages,
        max_rounds=max_rounds,
        keep_last=keep_last,
        pause_after_round=pause_after_round,
        time_limit_s=time_limit_s,
    )

    from langgraph.graph import END, START, StateGraph

    from debategraph.context import Context
    from debategraph.nodes import meeting as nodes
    from debategraph.nodes import rounds as loop
    from debategraph.nodes.agent import bind
    from debategraph.nodes.dual import loop_node
    from debategraph.state.meeting import MeetingInput, MeetingOutput, MeetingState

    binding = bind(model)
    builder: StateGraph[Any, Context, MeetingInput, MeetingOutput] = StateGraph(
        state_schema or MeetingState,
        context_schema=Context,
        input_schema=MeetingInput,
        output_schema=MeetingOutput,
    )
    builder.add_node(loop.OPEN_ROUND_NODE, nodes.make_open_round(setup))
    builder.add_edge(START, loop.OPEN_ROUND_NODE)
    route, targets = nodes.open_router(setup)
    builder.add_conditional_edges(loop.OPEN_ROUND_NODE, loop_node(route), targets)
    for node in setup.nodes:
        builder.add_node(node, nodes.make_speaker(node, setup, binding))
        route, targets = nodes.speaker_router(node, setup)
        if len(targets) == 1:
            builder.add_edge(node, targets[0])
        else:
            builder.add_conditional_edges(node, loop_node(route), targets)
    builder.add_node(nodes.CONTROLLER_NODE, nodes.make_controller(setup, binding))
    route, targets = loop.round_router(nodes.DECIDE_NODE, pause_after_round=setup.pause_after_round)
    builder.add_conditional_edges(nodes.CONTROLLER_NODE, loop_node(route), targets)
    if setup.pause_after_round:
        loop.add_review(builder, nodes.round_review(setup))
    builder.add_node(nodes.DECIDE_NODE, nodes.make_decide(setup, binding))
    builder.add_edge(nodes.DECIDE_NODE, END)
    return builder


def recursion_limit(caps: Sequence[int], speakers: Sequence[int]) -> int:
    """A recursion limit just above what a meeting whose stages all run to their caps needs.

    The loop ends on its own (every stage has a round cap); this limit is a backstop,
    set deliberately instead of LangGraph's effectively unbounded default.

    Args:
        caps: Each stage's round cap.
        speakers: Each stage's number of participants.

    Returns:
        Supersteps allowed.
    """
    rounds = sum(cap * (n + STEPS_PER_ROUND) for cap, n in zip(caps, speakers, strict=True))
    return rounds + 5  # + 5: the final decision, and slack


# -- the pattern's declaration: CLI input, title, summary, rendering ------------------------


def _stages_of(settings: Values) -> list[Mapping[str, Any]]:
    return [s for s in settings.get("stages") or () if isinstance(s, Mapping)]


def _caps(settings: Values) -> tuple[list[int], list[int]]:
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
    max_rounds: Annotated[
        int, typer.Option("--max-rounds", help="Round cap of a stage that sets none.")
    ] = 2,
    keep_last: Annotated[
        int, typer.Option("--keep-last", help="Latest messages a speaker reads (0: all).")
    ] = DEFAULT_KEEP_LAST,
    time_limit: Annotated[
        str | None,
        typer.Option(
            "--time-limit",
            help="End the meeting after this long (30m, 90s, 1h): calls in flight are cancelled.",
        ),
    ] = None,
) -> Launch:
    """Staged meeting: presenter, discussion, summary; a round controller and a decision."""
    if not topic.strip():
        raise UsageError(
            'topic is empty: give what to decide, e.g. debategraph meeting "Adopt a 4-day week?"'
        )
    if stages is None:
        data: Any = json.loads(json.dumps(DEFAULT_STAGES))
    else:
        from debategraph.datafiles import load_data

        data = load_data(stages, "--stages")
        if isinstance(data, Mapping) and set(data) == {"stages"}:
            data = data["stages"]
    settings: dict[str, Any] = {"stages": data, "max_rounds": max_rounds, "keep_last": keep_last}
    seconds = time_limit_option(time_limit)
    if seconds is not None:
        settings["time_limit_s"] = seconds
    return Launch(settings, {"topic": topic})


def _describe(settings: Values) -> str:
    caps, _ = _caps(settings)
    parts = [
        f"{s.get('name')} ({', '.join(_participant_name(p) for p in s.get('participants') or ())}"
        f"; {cap} round{'s' if cap != 1 else ''})"
        for s, cap in zip(_stages_of(settings), caps, strict=True)
    ]
    return f"{' → '.join(parts)}{pausing(settings)}"


def _summary(values: Values) -> dict[str, Any]:
    from debategraph.nodes.conversation import transcript_json

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


def chair_fallback(turns: Sequence[Turn]) -> str | None:
    """Why the chair's final decision is none, when its call fell back.

    Args:
        turns: Transcript records (:class:`~debategraph.state.records.Turn`): the
            thread's, or a node's update.

    Returns:
        ``the chair gave no usable decision: <why>`` from the chair's latest decision
        turn that has no answer, or ``None``.
    """
    from debategraph.nodes.meeting.prompts import CHAIR_FALLBACK
    from debategraph.nodes.meeting.setup import CHAIR_AGENT, DECISION_STAGE

    for turn in reversed(turns):
        if turn.agent == CHAIR_AGENT and turn.stage == DECISION_STAGE:
            return f"{CHAIR_FALLBACK}: {turn.reason}" if turn.reason else None
    return None


def _headline(result: Values) -> list[str]:
    decision = result.get("decision")
    stages = len({d.get("stage") for d in result.get("controller") or ()})
    tail = f"{result.get('rounds', 0)} rounds over {stages} stage{'s' if stages != 1 else ''}"
    if not decision:
        why = fallback_note(result.get("decision_fallback"))
        lines = [f"decision [bold]none[/bold]{why} · {tail}"]
    else:
        lines = [f"decision [bold]{escape(short(decision['decision'], 200))}[/bold] · {tail}"]
        if decision.get("rationale"):
            lines.append(f"  {escape(short(decision['rationale'], 300))}")
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


#: How a controller decision that fell back is explained on screen.
CONTROLLER_GAVE_NOTHING = "the controller gave no usable decision"


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
    name=GRAPH_NAME,
    build=build_meeting,
    command=meeting_command,
    recursion_limit=lambda s: recursion_limit(*_caps(s)),
    title=lambda values: str(values.get("topic") or ""),
    summary=_summary,
    describe=_describe,
    agents_per_round=lambda s: max(_caps(s)[1], default=1),
    headline=_headline,
    progress=_progress,
    # Speakers' prose streams; the controller's and the chair's structured calls do not.
    streams=lambda node: node not in ("open_round", "human", "controller", "decide"),
)
