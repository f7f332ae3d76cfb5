"""Group chat: agents share one conversation; a strategy picks each speaker; conditions end it.

The agent group chat of the well-known agent SDKs (a writer and a reviewer until the
reviewer approves), built on the shared core: a selection strategy
(:mod:`debategraph.strategies.selection`) picks who speaks next, termination conditions
(:mod:`debategraph.strategies.termination`, combined with ``|`` and ``&``) decide when it
ends and say why, and every chat has a hard cap. A finished chat goes on after an
invocation with ``reset`` (or a new ``message``); ``speaker`` runs one turn of a named
agent. A human interjects at the review point (``pause_after_round``: after every turn)
or, while it runs, through the thread's inbox (``debategraph interject``).

Graph: ``START -> begin -> open_round -> select -> <the chosen agent> -> close_turn``,
then ``open_round`` again (through ``human`` when pausing) or ``END``. One node per agent,
so Studio shows who spoke when, and each agent's tokens stream as they come.
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
    from debategraph.state.group_chat import GroupChatInput, GroupChatOutput
    from debategraph.state.records import Participant
    from debategraph.strategies.selection import Selector
    from debategraph.strategies.termination import Condition

    AgentLike = Participant | Mapping[str, Any] | str

GRAPH_NAME = "group_chat"
#: Nodes whose model output is not prose worth streaming (the selector, the judges).
NOT_STREAMED = frozenset({"begin", "open_round", "select", "close_turn", "human"})
#: Supersteps of one turn: open_round, select, the speaker, close_turn, the review.
STEPS_PER_TURN = 5

#: The chat the CLI runs without ``--agent``: a writer and a reviewer until approval.
DEFAULT_AGENTS: tuple[str, ...] = (
    "Writer: writes and revises the text the task asks for, taking the reviewer's notes.",
    "Reviewer: reviews the latest draft; lists what to fix, or says APPROVED when it is good.",
)
DEFAULT_UNTIL: tuple[str, ...] = (r"regex:\bAPPROVED\b@Reviewer",)


def build_group_chat(
    model: BaseChatModel | ModelBinding | ModelSpec | None = None,
    *,
    agents: Sequence[AgentLike] = DEFAULT_AGENTS,
    selection: Literal["sequential", "llm"] | Selector = "sequential",
    first: str | None = None,
    until: Sequence[str | Condition] = (),
    termination: Condition | None = None,
    max_turns: int | None = None,
    max_in_a_row: int | None = None,
    keep_last: int = 8,
    pause_after_round: bool = False,
    state_schema: type[Any] | None = None,
) -> StateGraph[Any, Context, GroupChatInput, GroupChatOutput]:
    """Build the group chat graph (uncompiled).

    Args:
        model: Chat model, binding or spec every agent (and the selector and judges)
            calls; ``None`` reads it from the run's :class:`~debategraph.context.Context`.
        agents: Two or more agents: :class:`~debategraph.state.Participant` objects,
            dicts (``name``, ``instructions``) or ``"Name: instructions"`` strings, with
            unique names (they name the agents' nodes).
        selection: ``sequential`` (round-robin), ``llm`` (a model picks from the names,
            reading a reduced history; unknown answers are retried once, then the next
            agent in sequence speaks, recorded), or any
            :class:`~debategraph.strategies.selection.Selector` (``Rules``...).
        first: The first speaker (for ``sequential`` and ``llm``).
        until: Termination conditions, as objects or the CLI's strings
            (``regex:PATTERN@Agent``, ``llm:QUESTION@Agent``, ``timeout:90s``); any one
            ends the chat. A time limit (``timeout``) bounds each invocation's wall time:
            at its deadline the call in flight is cancelled and the chat ends ``time_limit``.
        termination: A condition built with the strategies' vocabulary (``regex(...) |
            max_turns(20)``...); it must hold a hard cap unless ``max_turns`` is given.
        max_turns: The hard cap in turns (default 10 when nothing else is given); it is
            added to the other conditions with ``|``.
        max_in_a_row: No agent speaks more turns than this in a row (``None``: no guard).
        keep_last: Messages a speaker reads (0: the whole conversation).
        pause_after_round: ``interrupt()`` after every turn that does not end the chat;
            resume with ``Command(resume={"approve": True})`` or ``{"interject": text}``.
        state_schema: State schema; may extend
            :class:`~debategraph.state.group_chat.GroupChatState` (the default).

    Returns:
        The uncompiled graph; ``compile(checkpointer=..., name=...)`` it.

    Raises:
        ValueError: On any bad setting (fewer than two agents, duplicate names, an
            unknown first speaker or selection, a regex that does not compile, a
            termination without a hard cap...), naming the value and what is allowed.
    """
    from debategraph.nodes.group_chat.setup import chat_setup

    setup = chat_setup(
        agents,
        selection=selection,
        first=first,
        termination=termination,
        until=until,
        max_turns_=max_turns,
        max_in_a_row=max_in_a_row,
        keep_last=keep_last,
        pause_after_round=pause_after_round,
    )

    from langgraph.graph import END, START, StateGraph

    from debategraph.context import Context
    from debategraph.nodes import group_chat as nodes
    from debategraph.nodes import rounds as loop
    from debategraph.nodes.agent import bind
    from debategraph.nodes.dual import loop_node
    from debategraph.state.group_chat import GroupChatInput, GroupChatOutput, GroupChatState

    binding = bind(model)
    builder: StateGraph[Any, Context, GroupChatInput, GroupChatOutput] = StateGraph(
        state_schema or GroupChatState,
        context_schema=Context,
        input_schema=GroupChatInput,
        output_schema=GroupChatOutput,
    )
    builder.add_node(nodes.BEGIN_NODE, loop_node(nodes.begin(setup), name=nodes.BEGIN_NODE))
    builder.add_edge(START, nodes.BEGIN_NODE)
    builder.add_conditional_edges(
        nodes.BEGIN_NODE, loop_node(nodes.after_begin), [loop.OPEN_ROUND_NODE, END]
    )
    builder.add_node(loop.OPEN_ROUND_NODE, loop.open_round_node())
    close = nodes.CLOSE_TURN_NODE
    select = nodes.SELECT_NODE
    builder.add_conditional_edges(
        loop.OPEN_ROUND_NODE, loop_node(nodes.after_open), [select, close]
    )
    builder.add_node(select, nodes.make_select(setup, binding))
    builder.add_conditional_edges(select, loop_node(nodes.route_speaker), list(setup.names))
    for name in setup.names:
        builder.add_node(name, nodes.make_speaker(name, setup, binding))
        builder.add_edge(name, close)
    builder.add_node(close, nodes.make_close_turn(setup, binding))
    route, targets = nodes.after_turn(setup)
    builder.add_conditional_edges(close, loop_node(route), targets)
    if setup.pause_after_round:
        loop.add_review(builder, nodes.turn_review(setup))
    return builder


def recursion_limit(max_turns: int) -> int:
    """A recursion limit just above what ``max_turns`` turns need (a deliberate backstop).

    Args:
        max_turns: The chat's hard cap.

    Returns:
        Supersteps allowed.
    """
    return STEPS_PER_TURN * max_turns + 5  # + 5: begin, a stop's close, and slack


# -- the pattern's declaration: CLI input, title, summary, rendering ------------------------


def chat_command(
    task: Annotated[str, typer.Argument(help="What the chat is about (its first message).")],
    agent: Annotated[
        list[str] | None,
        typer.Option(
            "--agent",
            help="'Name: instructions', once per agent (two or more) \\[default: a Writer "
            "and a Reviewer until the Reviewer says APPROVED].",
        ),
    ] = None,
    agents_file: Annotated[
        str | None,
        typer.Option(
            "--agents-file",
            help="YAML or JSON list of agents ({name, instructions} or 'Name: instructions').",
        ),
    ] = None,
    select: Annotated[
        Literal["sequential", "llm"],
        typer.Option("--select", help="sequential (round-robin) or llm (a model picks)."),
    ] = "sequential",
    first: Annotated[
        str | None, typer.Option("--first", help="Who speaks first \\[default: the first].")
    ] = None,
    until: Annotated[
        list[str] | None,
        typer.Option(
            "--until",
            help="regex:PATTERN\\[@Agent], llm:QUESTION\\[@Agent] or timeout:DURATION; "
            "any one ends the chat.",
        ),
    ] = None,
    max_turns: Annotated[int, typer.Option("--max-turns", help="The hard cap in turns.")] = 10,
    time_limit: Annotated[
        str | None,
        typer.Option(
            "--time-limit",
            help="End the chat after this long (30m, 90s, 1h): calls in flight are cancelled.",
        ),
    ] = None,
    max_in_a_row: Annotated[
        int | None,
        typer.Option("--max-in-a-row", help="Most turns one agent speaks in a row."),
    ] = None,
    keep_last: Annotated[
        int, typer.Option("--keep-last", help="Messages each speaker reads (0: all).")
    ] = 8,
) -> Launch:
    """Agents share one conversation; a strategy picks each speaker until a condition ends it."""
    if not task.strip():
        raise UsageError('task is empty: give what the chat is about, e.g. debategraph chat "..."')
    members: list[Any] = list(agent or [])
    if agents_file is not None:
        members.extend(_agents_from_file(agents_file))
    defaults = not members
    seconds = time_limit_option(time_limit)
    deadline = [f"timeout:{seconds:g}s"] if seconds is not None else []
    settings: dict[str, Any] = {
        "agents": list(DEFAULT_AGENTS) if defaults else members,
        "selection": select,
        "first": first,
        "until": [*(until or (DEFAULT_UNTIL if defaults else ())), *deadline],
        "max_turns": max_turns,
        "max_in_a_row": max_in_a_row,
        "keep_last": keep_last,
    }
    return Launch(settings, {"task": task})


def _agents_from_file(path: str) -> list[Any]:
    from debategraph.datafiles import load_data

    data = load_data(path, "--agents-file")
    if isinstance(data, Mapping) and "agents" in data:
        data = data["agents"]
    if not isinstance(data, list):
        raise UsageError(
            f"--agents-file {path}: expected a list of agents ({{name, instructions}} or "
            f"'Name: instructions'), got {type(data).__name__}"
        )
    return data


def _describe(settings: Values) -> str:
    names = [
        a.split(":", 1)[0].strip() if isinstance(a, str) else str(a.get("name"))
        for a in settings["agents"]
    ]
    until = settings.get("until") or []
    ends = f" until {' or '.join(until)}" if until else ""
    guard = f", at most {settings['max_in_a_row']} in a row" if settings.get("max_in_a_row") else ""
    return (
        f"{', '.join(names)}, {settings['selection']} selection{guard}{ends}, "
        f"at most {settings['max_turns']} turns{pausing(settings)}"
    )


def _summary(values: Values) -> dict[str, Any]:
    from debategraph.nodes.conversation import transcript_json

    selections = values.get("selections") or []
    fallbacks = sum(1 for s in selections if s.method == "fallback")
    return {
        "task": values.get("task"),
        "transcript": transcript_json(values),
        "turns": sum(1 for t in values.get("transcript") or () if t.role == "agent"),
        "is_complete": bool(values.get("is_complete")),
        "termination_detail": values.get("termination_detail") or "",
        "selections": [s.model_dump(mode="json") for s in selections],
        "fallbacks": fallbacks,
    }


#: Fallback selections the result lists one by one (the rest are counted).
SHOWN_FALLBACKS = 5
#: Why a fallback selection happened, when its record gives no note.
NO_AGENT = "the selector named no agent"


def _headline(result: Values) -> list[str]:
    lines = [f"{result['turns']} turns · {escape(result.get('termination_detail') or '')}"]
    messages = [m for m in result.get("transcript") or [] if m["role"] == "agent"]
    if messages:
        last = messages[-1]
        lines.append(
            f"  last: [bold]{escape(last['agent'])}[/bold]: {escape(short(last['content'], 300))}"
        )
    fallbacks = [s for s in result.get("selections") or () if s["method"] == "fallback"]
    lines += [
        f"  speaker of turn {s['turn']}: {escape(s['agent'])}{fallback_note(s['note'] or NO_AGENT)}"
        for s in fallbacks[:SHOWN_FALLBACKS]
    ]
    if len(fallbacks) > SHOWN_FALLBACKS:
        more = len(fallbacks) - SHOWN_FALLBACKS
        lines.append(f"  and {more} more speaker(s) picked by fallback (--json: selections)")
    return lines


def _progress(node: str, update: Values) -> list[str]:
    lines = []
    for record in update.get("selections") or ():
        if record.method == "fallback":
            why = fallback_note(record.note or NO_AGENT)
            lines.append(f"  [dim]select: {escape(record.agent)}{why}[/dim]")
        elif record.method == "guard":
            lines.append(f"  [dim]select: {escape(record.note or record.method)}[/dim]")
    if update.get("termination_detail"):
        lines.append(f"  [dim]ends: {escape(update['termination_detail'])}[/dim]")
    return lines


def _settings_cap(settings: Values) -> int:
    from debategraph.nodes.group_chat.setup import DEFAULT_MAX_TURNS

    return int(settings.get("max_turns") or DEFAULT_MAX_TURNS)


PATTERN = Pattern(
    name=GRAPH_NAME,
    build=build_group_chat,
    command=chat_command,
    recursion_limit=lambda s: recursion_limit(_settings_cap(s)),
    title=lambda values: str(values.get("task") or ""),
    summary=_summary,
    describe=_describe,
    agents_per_round=lambda s: 1,
    headline=_headline,
    progress=_progress,
    streams=lambda node: node not in NOT_STREAMED,
    streamed_stage="chat",
    round_word="turn",
)
