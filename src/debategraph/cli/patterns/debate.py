"""The ``debate`` command: its options, and how a debate's progress and result read.

What a debate is (its title, result fields, settings line) is
:mod:`debategraph.nodes.debate.described`.
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
    short,
    time_limit_option,
)
from debategraph.errors import UsageError
from debategraph.nodes.debate.described import DESCRIBED
from debategraph.nodes.debate.setup import (
    DEFAULT_DEBATERS,
    DEFAULT_HISTORY,
    DEFAULT_KEEP_LAST,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_WORDS,
    JUDGE_NODE,
    MODERATOR_NODE,
    OFFICIALS,
    SUMMARIZER_NODE,
)
from debategraph.runs.agents_file import OPTION as AGENTS_FILE_OPTION
from debategraph.runs.agents_file import read_agents_file
from debategraph.runs.start import Launch
from debategraph.state.debate import Debater
from debategraph.words import plural

#: Nodes whose model output is not prose worth streaming (structured, or a summary).
NOT_STREAMED = frozenset({MODERATOR_NODE, JUDGE_NODE, SUMMARIZER_NODE})


def debate_command(
    topic: Annotated[str, typer.Argument(help="The motion to debate.")],
    debater: Annotated[
        list[str] | None,
        typer.Option(
            "--debater",
            help="'Name:side', once per debater (two or more; or --agents-file) "
            f"\\[default: {' and '.join(repr(d) for d in DEFAULT_DEBATERS)}].",
        ),
    ] = None,
    rounds: Annotated[int, typer.Option("--rounds", help="Round cap.")] = DEFAULT_MAX_ROUNDS,
    first: Annotated[
        str | None, typer.Option("--first", help="Who opens each round \\[default: first].")
    ] = None,
    words: Annotated[int, typer.Option("--words", help="Word limit per turn.")] = DEFAULT_WORDS,
    moderator: Annotated[
        bool, typer.Option("--moderator", help="A moderator may end the debate early.")
    ] = False,
    judge: Annotated[bool, typer.Option("--judge", help="A judge gives a verdict.")] = False,
    history: Annotated[
        Literal["full", "window"],
        typer.Option("--history", help="full, or window: last turns plus a running summary."),
    ] = DEFAULT_HISTORY,
    keep_last: Annotated[
        int, typer.Option("--keep-last", help="Turns kept verbatim with --history window.")
    ] = DEFAULT_KEEP_LAST,
    time_limit: TimeLimit = None,
    agents_file: AgentsFile = None,
) -> Launch:
    """Named debaters argue a motion turn by turn; optional moderator and judge.

    The debaters come from ``--debater`` (name and side) or from ``--agents-file`` (each
    entry a debater's ``name``, ``side`` and optional ``persona``, ``model``, ``tools``,
    ``agent``; entries named ``moderator``, ``summarizer`` or ``judge`` give that official
    its own model, tools or agent), not both.
    """
    debaters: list[Any] = list(debater or DEFAULT_DEBATERS)
    officials: list[dict[str, Any]] = []
    if agents_file is not None:
        if debater:
            raise UsageError(
                f"give the debaters with --debater or with {AGENTS_FILE_OPTION}, not both: "
                f"put every debater in {agents_file}"
            )
        roster = read_agents_file(agents_file, Debater, OFFICIALS)
        if not roster.agents:
            raise UsageError(
                f"{AGENTS_FILE_OPTION} {agents_file}: it names no debater (each needs a "
                "'name' and a 'side')"
            )
        debaters, officials = list(roster.agents), roster.officials
    settings: dict[str, Any] = {
        "debaters": debaters,
        "max_rounds": rounds,
        "first_speaker": first,
        "words": words,
        "moderator": moderator,
        "judge": judge,
        "history": history,
        "keep_last": keep_last,
    }
    if officials:
        settings["officials"] = officials
    seconds = time_limit_option(time_limit)
    if seconds is not None:
        settings["time_limit_s"] = seconds
    return Launch(settings, {"topic": topic})


def _headline(result: Values) -> list[str]:
    winner = result.get("winner")
    verdict = result.get("verdict") or {}
    shown = escape(str(winner)) if winner else "no verdict (no judge)"
    why = fallback_note(verdict.get("fallback"))
    lines = [f"winner [bold]{shown}[/bold]{why} · {plural(result['rounds_completed'], 'round')}"]
    if verdict.get("rationale"):
        lines.append(f"  judge's rationale: {escape(short(verdict['rationale'], 300))}")
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
    described=DESCRIBED,
    command=debate_command,
    headline=_headline,
    progress=_progress,
    streams=lambda node: node not in NOT_STREAMED,
    streamed_stage="argue",
)
