"""Debate: two or more named debaters with stances take turns on a motion.

Each debater reads what was addressed to it (the other debaters' arguments, never a
message addressed only to someone else) and its own earlier arguments, and answers the
latest opposing one; the first speaker of round 1 makes its case instead. An optional
moderator may end the debate after any round (adaptive early stop) and an optional judge
gives a typed verdict at the end.

Graph: ``START -> open_round -> <debater 1> -> ... -> <debater n> -> close_round``, then
``[moderator] -> [summarizer] -> [human] -> open_round`` while the debate goes on, or on
to ``[judge] -> END``. One node per debater, chained in speaking order: turns are
sequential, so each is its own step, and Studio shows who speaks after whom and which
debater a streamed token or a checkpoint belongs to (a single ``speak`` node would hide
the order inside routing code).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

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
    from debategraph.nodes.debate import DebateSetup
    from debategraph.state.debate import DebateInput, DebateOutput, Debater, HistoryMode

    DebaterLike = Debater | Mapping[str, Any] | str

GRAPH_NAME = "debate"
#: Steps of a round besides the debaters': open_round, close_round, moderator,
#: summarizer and the human review (whichever of the last three the debate has).
STEPS_PER_ROUND = 5
HISTORY_MODES: tuple[str, ...] = ("full", "window")
MIN_WORDS = 10
#: What a valid debater dict holds (for errors).
DEBATER_FIELDS = "a non-empty 'name' and 'side', and optionally 'persona'"

DEFAULT_DEBATERS: tuple[str, ...] = ("Affirmative:for the motion", "Negative:against the motion")


def _debater_from_text(value: str) -> Debater:
    from debategraph.state.debate import Debater

    name, colon, side = value.partition(":")
    if not colon or not name.strip() or not side.strip():
        raise ValueError(f"debater {value!r} must be 'Name:side', e.g. 'Alice:for the motion'")
    return Debater(name=name, side=side)


def parse_debater(value: DebaterLike) -> Debater:
    """A :class:`~debategraph.state.Debater` from one, a dict, or a ``"Name:side"`` string.

    Args:
        value: The debater as given.

    Returns:
        The debater.

    Raises:
        ValueError: If it is none of those, or lacks a name or a side.
    """
    from debategraph.nodes.roster import parse_member
    from debategraph.state.debate import Debater

    if not isinstance(value, Debater | str | Mapping):
        raise ValueError(f"debater {value!r} must be a Debater, a dict or a 'Name:side' string")
    return parse_member(value, Debater, "debater", DEBATER_FIELDS, from_text=_debater_from_text)


def debate_setup(
    debaters: Sequence[DebaterLike],
    *,
    max_rounds: int,
    first_speaker: str | None,
    words: int,
    moderator: bool,
    judge: bool,
    history: str,
    keep_last: int,
    pause_after_round: bool,
) -> DebateSetup:
    """Validate a debate's settings and fix the speaking order.

    Args:
        debaters: As for :func:`build_debate`.
        max_rounds: As for :func:`build_debate`.
        first_speaker: As for :func:`build_debate`.
        words: As for :func:`build_debate`.
        moderator: As for :func:`build_debate`.
        judge: As for :func:`build_debate`.
        history: As for :func:`build_debate`.
        keep_last: As for :func:`build_debate`.
        pause_after_round: As for :func:`build_debate`.

    Returns:
        The settings, debaters in speaking order (``first_speaker`` first, then the
        others in list order, wrapping around).

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    from debategraph.nodes.debate import RESERVED_NAMES, DebateSetup
    from debategraph.nodes.roster import check_roster

    if max_rounds < 1:
        raise ValueError(f"max_rounds must be at least 1, got {max_rounds}")
    if words < MIN_WORDS:
        raise ValueError(f"words must be at least {MIN_WORDS}, got {words}")
    if history not in HISTORY_MODES:
        raise ValueError(f"history must be 'full' or 'window', got {history!r}")
    if keep_last < 1:
        raise ValueError(f"keep_last must be at least 1, got {keep_last}")
    parsed = check_roster(
        debaters,
        parse_debater,
        what="debater",
        group="a debate",
        name_of=lambda d: d.name,
        reserved=RESERVED_NAMES,
        node_names=True,
    )
    start = 0
    if first_speaker is not None:
        lowered = [d.name.lower() for d in parsed]
        key = first_speaker.strip().lower()
        if key not in lowered:
            raise ValueError(
                f"first speaker {first_speaker!r} is not a debater: use one of "
                f"{', '.join(d.name for d in parsed)}"
            )
        start = lowered.index(key)
    return DebateSetup(
        debaters=tuple(parsed[start:] + parsed[:start]),
        max_rounds=max_rounds,
        words=words,
        history="window" if history == "window" else "full",
        keep_last=keep_last,
        moderator=moderator,
        judge=judge,
        pause_after_round=pause_after_round,
    )


def build_debate(
    model: BaseChatModel | ModelBinding | ModelSpec | None = None,
    *,
    debaters: Sequence[DebaterLike] = DEFAULT_DEBATERS,
    max_rounds: int = 3,
    first_speaker: str | None = None,
    words: int = 80,
    moderator: bool = False,
    judge: bool = False,
    history: HistoryMode = "full",
    keep_last: int = 4,
    pause_after_round: bool = False,
    time_limit_s: float | None = None,
    state_schema: type[Any] | None = None,
) -> StateGraph[Any, Context, DebateInput, DebateOutput]:
    """Build the debate graph (uncompiled).

    Args:
        model: Chat model, binding or spec every agent calls. ``None`` reads the model
            from the run's :class:`~debategraph.context.Context` (embedded model by default).
        debaters: Two or more debaters: :class:`~debategraph.state.Debater` objects,
            dicts (``name``, ``side``, optional ``persona``) or ``"Name:side"`` strings.
            Names are unique (case-insensitively) and name the debaters' graph nodes.
            Default :data:`DEFAULT_DEBATERS`.
        max_rounds: Round cap (>= 1); in a round every debater speaks once.
        first_speaker: Who opens each round (default the first debater); the others
            follow in list order, wrapping around.
        words: Soft word limit of each argument (>= 10), asked for in the prompt; actual
            lengths are recorded in ``word_counts``.
        moderator: After each round but the last, a moderator decides whether the debate
            is settled (ends it with ``termination_reason="settled"``) and who leads.
        judge: At the end, a judge gives a :class:`~debategraph.state.Verdict`.
        history: ``full``: debaters read every argument addressed to them. ``window``:
            they read at most ``keep_last`` of them verbatim plus a running ``summary``
            of older ones (a summarizer call after a round once arguments leave the
            window), so prompts stay bounded however many rounds run; the moderator and
            the judge then read the summary and the arguments not yet summarised.
        keep_last: With ``window``: arguments read verbatim (>= 1; at least one per
            other debater is shown when ``keep_last`` is smaller than that).
        pause_after_round: After each round that does not end the debate,
            ``interrupt()`` with the round's arguments; resume with
            ``Command(resume={"approve": True})`` or ``Command(resume={"interject":
            "text"})`` (the text is shown to every debater next round). Needs a
            checkpointer.
        time_limit_s: Seconds the debate may take (``None``: no limit). At the
            deadline the call in flight is cancelled (recorded with the reason), none
            starts after it, and the debate ends ``time_limit``.
        state_schema: State schema; may extend :class:`~debategraph.state.DebateState`
            (the default).

    Returns:
        The uncompiled graph; ``compile(checkpointer=..., name=...)`` it.

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    setup = debate_setup(
        debaters,
        max_rounds=max_rounds,
        first_speaker=first_speaker,
        words=words,
        moderator=moderator,
        judge=judge,
        history=history,
        keep_last=keep_last,
        pause_after_round=pause_after_round,
    )

    from langgraph.graph import END, START, StateGraph

    from debategraph.context import Context
    from debategraph.nodes import debate as nodes
    from debategraph.nodes import rounds as loop
    from debategraph.nodes.agent import bind
    from debategraph.nodes.dual import loop_node
    from debategraph.state.debate import DebateInput, DebateOutput, DebateState

    loop.check_time_limit(time_limit_s)
    binding = bind(model)
    builder: StateGraph[Any, Context, DebateInput, DebateOutput] = StateGraph(
        state_schema or DebateState,
        context_schema=Context,
        input_schema=DebateInput,
        output_schema=DebateOutput,
    )
    builder.add_node(loop.OPEN_ROUND_NODE, nodes.make_open_round(time_limit_s))
    previous = loop.OPEN_ROUND_NODE
    for name in setup.names:
        builder.add_node(name, nodes.make_debater(name, setup, binding))
        builder.add_edge(previous, name)
        previous = name
    builder.add_node(nodes.CLOSE_ROUND_NODE, loop_node(nodes.make_close_round(setup)))
    builder.add_edge(previous, nodes.CLOSE_ROUND_NODE)
    builder.add_edge(START, loop.OPEN_ROUND_NODE)
    route, targets = nodes.router(setup, nodes.CLOSE_ROUND_NODE)
    builder.add_conditional_edges(nodes.CLOSE_ROUND_NODE, loop_node(route), targets)
    if setup.moderator:
        builder.add_node(nodes.MODERATOR_NODE, nodes.make_moderator(setup, binding))
        route, targets = nodes.router(setup, nodes.MODERATOR_NODE)
        builder.add_conditional_edges(nodes.MODERATOR_NODE, loop_node(route), targets)
    if setup.history == "window":
        builder.add_node(nodes.SUMMARIZER_NODE, nodes.make_summarizer(setup, binding))
        builder.add_edge(nodes.SUMMARIZER_NODE, setup.next_step(nodes.SUMMARIZER_NODE))
    if setup.pause_after_round:
        loop.add_review(builder, nodes.round_review(setup))
    if setup.judge:
        builder.add_node(nodes.JUDGE_NODE, nodes.make_judge(setup, binding))
        builder.add_edge(nodes.JUDGE_NODE, END)
    return builder


def recursion_limit(rounds: int, n_debaters: int) -> int:
    """A recursion limit just above what ``rounds`` rounds of ``n_debaters`` need.

    The loop ends on its own round cap; this limit is a backstop, set deliberately
    instead of LangGraph's effectively unbounded default.

    Args:
        rounds: The debate's round cap.
        n_debaters: How many debaters speak each round.

    Returns:
        Supersteps allowed.
    """
    return (n_debaters + STEPS_PER_ROUND) * rounds + 5  # + 5: the judge, and slack


# -- the pattern's declaration: CLI input, title, summary, rendering ------------------------

#: Nodes whose model output is not prose worth streaming (structured, or a summary).
NOT_STREAMED = frozenset({"moderator", "judge", "summarizer"})


def debate_command(
    topic: Annotated[str, typer.Argument(help="The motion to debate.")],
    debater: Annotated[
        list[str] | None,
        typer.Option(
            "--debater",
            help="'Name:side', once per debater (two or more) "
            f"\\[default: {' and '.join(repr(d) for d in DEFAULT_DEBATERS)}].",
        ),
    ] = None,
    rounds: Annotated[int, typer.Option("--rounds", help="Round cap.")] = 3,
    first: Annotated[
        str | None, typer.Option("--first", help="Who opens each round \\[default: first].")
    ] = None,
    words: Annotated[int, typer.Option("--words", help="Word limit per turn.")] = 80,
    moderator: Annotated[
        bool, typer.Option("--moderator", help="A moderator may end the debate early.")
    ] = False,
    judge: Annotated[bool, typer.Option("--judge", help="A judge gives a verdict.")] = False,
    history: Annotated[
        Literal["full", "window"],
        typer.Option("--history", help="full, or window: last turns plus a running summary."),
    ] = "full",
    keep_last: Annotated[
        int, typer.Option("--keep-last", help="Turns kept verbatim with --history window.")
    ] = 4,
    time_limit: Annotated[
        str | None,
        typer.Option(
            "--time-limit",
            help="End the debate after this long (30m, 90s, 1h): calls in flight are cancelled.",
        ),
    ] = None,
) -> Launch:
    """Named debaters argue a motion turn by turn; optional moderator and judge."""
    if not topic.strip():
        raise UsageError(
            'topic is empty: give the motion, e.g. debategraph debate "Cats beat dogs"'
        )
    settings: dict[str, Any] = {
        "debaters": list(debater or DEFAULT_DEBATERS),
        "max_rounds": rounds,
        "first_speaker": first,
        "words": words,
        "moderator": moderator,
        "judge": judge,
        "history": history,
        "keep_last": keep_last,
    }
    seconds = time_limit_option(time_limit)
    if seconds is not None:
        settings["time_limit_s"] = seconds
    return Launch(settings, {"topic": topic})


def _describe(settings: Values) -> str:
    names = [d.split(":", 1)[0] if isinstance(d, str) else d["name"] for d in settings["debaters"]]
    extras = [x for x in ("moderator", "judge") if settings.get(x)]
    if settings.get("history") == "window":
        extras.append(f"window of {settings['keep_last']}")
    extra = f" + {', '.join(extras)}" if extras else ""
    return (
        f"{' vs '.join(names)}{extra}, {settings['max_rounds']} rounds, "
        f"{settings['words']} words per turn{pausing(settings)}"
    )


def _summary(values: Values) -> dict[str, Any]:
    verdict = values.get("verdict")
    return {
        "topic": values.get("topic"),
        "winner": verdict.winner if verdict is not None else None,
        "verdict": verdict.model_dump(mode="json") if verdict is not None else None,
        "rounds_completed": values.get("rounds_completed", 0),
        "moderator": [d.model_dump(mode="json") for d in values.get("moderator_decisions", [])],
        "words": [w.model_dump(mode="json") for w in values.get("word_counts", [])],
    }


def _headline(result: Values) -> list[str]:
    winner = result.get("winner")
    verdict = result.get("verdict") or {}
    shown = escape(str(winner)) if winner else "no verdict (no judge)"
    why = fallback_note(verdict.get("fallback"))
    lines = [f"winner [bold]{shown}[/bold]{why} · {result['rounds_completed']} rounds"]
    if verdict.get("rationale"):
        lines.append(f"  {escape(short(verdict['rationale'], 300))}")
    over = [w for w in result.get("words") or () if w["words"] > w["limit"]]
    if over:
        turns = ", ".join(
            f"r{w['round']} {escape(w['debater'])} {words_note(w['words'], w['limit'])}"
            for w in over
        )
        lines.append(f"  longer than asked: {turns}")
    return lines


def words_note(words: int, limit: int) -> str:
    """How long a turn was against the length the debater was asked for.

    Args:
        words: Words in the turn.
        limit: The word limit in its prompt (``--words``).

    Returns:
        E.g. ``(236 words; asked for 40)``.
    """
    return f"({words} words; asked for {limit})"


def _progress(node: str, update: Values) -> list[str]:
    lines = []
    for count in update.get("word_counts") or ():
        if count.over_limit:  # the turn was streamed (or printed) just before
            lines.append(
                f"  [dim]{escape(count.debater)} {words_note(count.words, count.limit)}[/dim]"
            )
    if update.get("moderator_decisions"):
        decision = update["moderator_decisions"][-1]
        settled = "settled" if decision.settled else "not settled"
        lines.append(
            f"  [dim]moderator: {settled}, leading {escape(decision.leading)}"
            f"{fallback_note(decision.fallback)}: {escape(short(decision.reason, 160))}[/dim]"
        )
    if update.get("verdict") is not None:
        verdict = update["verdict"]
        lines.append(
            f"  judge: winner [bold]{escape(verdict.winner)}[/bold]"
            f"{fallback_note(verdict.fallback)}"
        )
    return lines


PATTERN = Pattern(
    name=GRAPH_NAME,
    build=build_debate,
    command=debate_command,
    recursion_limit=lambda s: recursion_limit(int(s["max_rounds"]), len(s["debaters"])),
    title=lambda values: str(values.get("topic") or ""),
    summary=_summary,
    describe=_describe,
    agents_per_round=lambda s: len(s["debaters"]),
    headline=_headline,
    progress=_progress,
    streams=lambda node: node not in NOT_STREAMED,
    streamed_stage="argue",
)
