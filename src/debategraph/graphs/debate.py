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
from functools import partial
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from pydantic import ValidationError

from debategraph.context import Context
from debategraph.models import ModelBinding, ModelSpec, bind_model
from debategraph.nodes.debate import (
    JUDGE_NODE,
    MODERATOR_NODE,
    RESERVED_NAMES,
    SUMMARIZER_NODE,
    DebateSetup,
    make_close_round,
    make_debater,
    make_judge,
    make_moderator,
    make_router,
    make_summarizer,
    open_round,
    review_payload,
    routes,
)
from debategraph.nodes.human import make_round_review
from debategraph.nodes.solver import CLOSE_ROUND_NODE, HUMAN_NODE, OPEN_ROUND_NODE
from debategraph.state import DebateInput, DebateOutput, Debater, DebateState, HistoryMode

GRAPH_NAME = "debate"
#: Steps of a round besides the debaters': open_round, close_round, moderator,
#: summarizer and the human review (whichever of the last three the debate has).
STEPS_PER_ROUND = 5
HISTORY_MODES: tuple[HistoryMode, ...] = ("full", "window")
MIN_WORDS = 10
#: Characters LangGraph reserves in node names.
NAME_CHARS_RESERVED = (":", "|")

DebaterLike = Debater | Mapping[str, Any] | str

DEFAULT_DEBATERS: tuple[str, ...] = ("Affirmative:for the motion", "Negative:against the motion")


def parse_debater(value: DebaterLike) -> Debater:
    """A :class:`Debater` from a ``Debater``, a dict, or a ``"Name:side"`` string.

    Args:
        value: The debater as given.

    Returns:
        The debater.

    Raises:
        ValueError: If it is none of those, or lacks a name or a side.
    """
    if isinstance(value, Debater):
        return value
    if isinstance(value, str):
        name, colon, side = value.partition(":")
        if not colon or not name.strip() or not side.strip():
            raise ValueError(f"debater {value!r} must be 'Name:side', e.g. 'Alice:for the motion'")
        return Debater(name=name, side=side)
    if isinstance(value, Mapping):
        try:
            return Debater.model_validate(dict(value))
        except ValidationError as exc:
            fields = ", ".join(".".join(map(str, e["loc"])) or "?" for e in exc.errors())
            raise ValueError(
                f"debater {dict(value)!r} is not valid (bad or missing: {fields}): "
                "give a non-empty 'name' and 'side', and optionally 'persona'"
            ) from None
    raise ValueError(f"debater {value!r} must be a Debater, a dict or a 'Name:side' string")


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
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be at least 1, got {max_rounds}")
    if words < MIN_WORDS:
        raise ValueError(f"words must be at least {MIN_WORDS}, got {words}")
    if history not in HISTORY_MODES:
        raise ValueError(f"history must be 'full' or 'window', got {history!r}")
    if keep_last < 1:
        raise ValueError(f"keep_last must be at least 1, got {keep_last}")
    if isinstance(debaters, str | Mapping | Debater):
        raise ValueError(f"debaters must be a list of two or more debaters, got {debaters!r}")
    parsed = [parse_debater(d) for d in debaters]
    if len(parsed) < 2:
        raise ValueError(f"a debate needs at least 2 debaters, got {len(parsed)}")
    seen: dict[str, str] = {}
    for debater in parsed:
        name = debater.name
        if name.lower() in RESERVED_NAMES or name.startswith("__"):
            reserved = ", ".join(sorted(RESERVED_NAMES))
            raise ValueError(
                f"debater name {name!r} is reserved: names may not be {reserved} or start with __"
            )
        bad = [c for c in NAME_CHARS_RESERVED if c in name]
        if bad:
            raise ValueError(
                f"debater name {name!r} contains {bad[0]!r}: ':' and '|' are not allowed"
            )
        if name.lower() in seen:
            raise ValueError(
                f"duplicate debater name {name!r} (same as {seen[name.lower()]!r}; names are "
                "compared case-insensitively)"
            )
        seen[name.lower()] = name
    start = 0
    if first_speaker is not None:
        key = first_speaker.strip().lower()
        if key not in seen:
            raise ValueError(
                f"first speaker {first_speaker!r} is not a debater: use one of "
                f"{', '.join(d.name for d in parsed)}"
            )
        start = [d.name.lower() for d in parsed].index(key)
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
    debaters: Sequence[DebaterLike],
    max_rounds: int = 3,
    first_speaker: str | None = None,
    words: int = 80,
    moderator: bool = False,
    judge: bool = False,
    history: HistoryMode = "full",
    keep_last: int = 4,
    pause_after_round: bool = False,
    state_schema: type[Any] = DebateState,
) -> StateGraph[Any, Context, DebateInput, DebateOutput]:
    """Build the debate graph (uncompiled).

    Args:
        model: Chat model, binding or spec every agent calls. ``None`` reads the model
            from the run's :class:`~debategraph.context.Context` (embedded model by default).
        debaters: Two or more debaters: :class:`~debategraph.state.Debater` objects,
            dicts (``name``, ``side``, optional ``persona``) or ``"Name:side"`` strings.
            Names are unique (case-insensitively) and name the debaters' graph nodes.
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
        state_schema: State schema; may extend :class:`~debategraph.state.DebateState`.

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
    binding = None if model is None else bind_model(model)

    builder: StateGraph[Any, Context, DebateInput, DebateOutput] = StateGraph(
        state_schema,
        context_schema=Context,
        input_schema=DebateInput,
        output_schema=DebateOutput,
    )
    builder.add_node(OPEN_ROUND_NODE, open_round)
    previous = OPEN_ROUND_NODE
    for name in setup.names:
        builder.add_node(name, make_debater(name, setup, binding))
        builder.add_edge(previous, name)
        previous = name
    builder.add_node(CLOSE_ROUND_NODE, make_close_round(setup))
    builder.add_edge(previous, CLOSE_ROUND_NODE)
    builder.add_edge(START, OPEN_ROUND_NODE)
    builder.add_conditional_edges(
        CLOSE_ROUND_NODE,
        make_router(setup, CLOSE_ROUND_NODE),
        routes(setup, CLOSE_ROUND_NODE),
    )
    if setup.moderator:
        builder.add_node(MODERATOR_NODE, make_moderator(setup, binding))
        builder.add_conditional_edges(
            MODERATOR_NODE, make_router(setup, MODERATOR_NODE), routes(setup, MODERATOR_NODE)
        )
    if setup.history == "window":
        builder.add_node(SUMMARIZER_NODE, make_summarizer(setup, binding))
        builder.add_edge(SUMMARIZER_NODE, setup.next_step(SUMMARIZER_NODE))
    if setup.pause_after_round:
        builder.add_node(HUMAN_NODE, make_round_review(partial(review_payload, setup=setup)))
        builder.add_edge(HUMAN_NODE, OPEN_ROUND_NODE)
    if setup.judge:
        builder.add_node(JUDGE_NODE, make_judge(setup, binding))
        builder.add_edge(JUDGE_NODE, END)
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


#: Compiled without a checkpointer, for ``langgraph.json`` / LangGraph Studio (which
#: provides its own persistence). The model comes from the run's context.
graph = build_debate(debaters=DEFAULT_DEBATERS, moderator=True, judge=True).compile(name=GRAPH_NAME)
