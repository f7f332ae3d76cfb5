"""The ``chat`` command: its options, and how a group chat's progress and result read.

``--agents-file`` is the roster input every pattern shares
(:func:`~debategraph.runs.agents_file.read_agents_file`): each entry is a participant
(``name``, ``instructions``) with a ``model``, ``tools`` or ``agent`` of its own, or a
``'Name: instructions'`` string; an entry named ``selector`` or ``judge`` gives that
official its own model. The entries are stored with the thread as given (specs, never
keys), so a resumed or forked chat calls the same models. What a group chat is (its
title, result fields, settings line, turns) is :mod:`debategraph.nodes.group_chat.described`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

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
from debategraph.errors import UsageError
from debategraph.nodes.group_chat.described import DESCRIBED
from debategraph.nodes.group_chat.setup import (
    BEGIN_NODE,
    CLOSE_TURN_NODE,
    DEFAULT_AGENTS,
    DEFAULT_KEEP_LAST,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_SELECTION,
    DEFAULT_UNTIL,
    OFFICIALS,
    SELECT_NODE,
    check_input,
)
from debategraph.nodes.rounds import OPEN_ROUND_NODE, REVIEW_NODE
from debategraph.runs.agents_file import Roster, read_agents_file
from debategraph.runs.start import Launch
from debategraph.state.records import Participant
from debategraph.words import plural

#: Nodes whose model output is not prose worth streaming (the selector, the judges).
NOT_STREAMED = frozenset({BEGIN_NODE, OPEN_ROUND_NODE, SELECT_NODE, CLOSE_TURN_NODE, REVIEW_NODE})
#: Fallback selections the result lists one by one (the rest are counted).
SHOWN_FALLBACKS = 5
#: Why a fallback selection happened, when its record gives no note.
NO_AGENT = "the selector named no agent"


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
    agents_file: AgentsFile = None,
    select: Annotated[
        Literal["sequential", "llm"],
        typer.Option("--select", help="sequential (round-robin) or llm (a model picks)."),
    ] = DEFAULT_SELECTION,
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
    rounds: Annotated[
        int | None,
        typer.Option(
            "--rounds",
            help=f"The hard cap in turns (a round is one turn) \\[default: {DEFAULT_MAX_ROUNDS}].",
        ),
    ] = None,
    max_turns: Annotated[
        int | None, typer.Option("--max-turns", hidden=True, help="Deprecated: use --rounds.")
    ] = None,
    time_limit: TimeLimit = None,
    max_in_a_row: Annotated[
        int | None,
        typer.Option("--max-in-a-row", help="Most turns one agent speaks in a row."),
    ] = None,
    keep_last: Annotated[
        int, typer.Option("--keep-last", help="Messages each speaker reads (0: all).")
    ] = DEFAULT_KEEP_LAST,
) -> Launch:
    """Agents share one conversation; a strategy picks each speaker until a condition ends it."""
    try:
        check_input({"task": task})  # the graph's own check: a chat's first input needs one
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    cap, notes = renamed_option("--max-turns", "--rounds", max_turns, rounds, DEFAULT_MAX_ROUNDS)
    members: list[Any] = list(agent or [])
    officials: list[dict[str, Any]] = []
    if agents_file is not None:
        roster = read_roster(agents_file)
        members.extend(roster.agents)
        officials = roster.officials
    defaults = not members
    settings: dict[str, Any] = {
        "agents": list(DEFAULT_AGENTS) if defaults else members,
        "selection": select,
        "first_speaker": first,
        "until": list(until or (DEFAULT_UNTIL if defaults else ())),
        "max_rounds": cap,
        "max_in_a_row": max_in_a_row,
        "keep_last": keep_last,
    }
    seconds = time_limit_option(time_limit)
    if seconds is not None:
        settings["time_limit_s"] = seconds
    if officials:
        settings["officials"] = officials
    return Launch(settings, {"task": task}, notes)


def read_roster(path: str) -> Roster:
    """The chat's agents and officials from an ``--agents-file``.

    Each entry is checked before anything runs (one line naming the file, the entry's
    line and the field): a participant (``name``, ``instructions``, ``model``,
    ``tools``, ``agent``, ``max_tool_calls``), a ``'Name: instructions'`` string (or
    YAML's unquoted ``- Name: instructions``), or an official (``selector``, ``judge``)
    with its own model, tools or agent.

    Args:
        path: The file.

    Returns:
        The agents (dicts and strings, as the factory takes them) and the officials.

    Raises:
        UsageError: On a missing, unreadable or malformed file (one line).
    """
    return read_agents_file(path, Participant, officials=OFFICIALS, text_form=True)


def _headline(result: Values) -> list[str]:
    lines = [
        f"{plural(result['turns'], 'turn')} · {escape(result.get('termination_detail') or '')}"
    ]
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
        lines.append(
            f"  and {plural(more, 'more speaker')} picked by fallback (--json: selections)"
        )
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


PATTERN = Pattern(
    described=DESCRIBED,
    command=chat_command,
    headline=_headline,
    progress=_progress,
    streams=lambda node: node not in NOT_STREAMED,
    streamed_stage="chat",
)
