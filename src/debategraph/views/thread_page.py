"""A thread as one self-contained HTML page (``debategraph view``), for any pattern.

The page is the Markdown export's document (:mod:`~debategraph.views.markdown`),
seen instead of read: a header (the pattern, the thread's title, its status and why it
ended, wall time, usage per agent and per model), the forks and a pause waiting for a
human, the transcript as a timeline of rounds (every turn an element of class ``turn``
with its id in ``data-turn-id``; tool calls folded under their turn; interjections
marked; replies linked), the vote after each round drawn where agents vote
(:mod:`~debategraph.views.votes`), and the pattern's result (its summary
fields: a verdict, a consensus report, a decision). It is written with
:func:`debategraph.views.shell.document`: nothing is fetched, no script runs, and every text
a model wrote is escaped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from debategraph.checkpoints.thread_values import termination, total_usage, turns
from debategraph.nodes.review import review_request
from debategraph.views.shell import document, esc
from debategraph.views.thread_parts import (
    PAGE_STYLE,
    agent_models,
    summary_html,
    timeline,
    usage_tables,
    without_repeats,
)
from debategraph.views.votes import votes_html
from debategraph.words import plural

if TYPE_CHECKING:
    from debategraph.checkpoints.forking import ForkPoint
    from debategraph.described import Described


#: Summary fields the page shows in its own sections (the timeline, the usage tables, the
#: header), left out of the result.
SHOWN_ELSEWHERE = frozenset(
    {"transcript", "messages", "usage", "usage_by_agent", "usage_by_model", "termination_reason"}
)


def page_name(thread_id: str) -> str:
    """The file name of a thread's page, by which pages side by side link to each other.

    It is the thread id, any character but ``A-Za-z0-9._-`` written ``_`` and no leading
    ``.`` (an id of dots alone is ``thread``), and ``.html``.

    Args:
        thread_id: The thread.

    Returns:
        The file name.
    """
    return (re.sub(r"[^A-Za-z0-9._-]", "_", thread_id).lstrip(".") or "thread") + ".html"


def render_page(
    thread_id: str,
    values: Mapping[str, Any],
    *,
    pattern: Described,
    status: str | None = None,
    wall_s: float | None = None,
    where: str | None = None,
    forked_from: ForkPoint | None = None,
    forks: Sequence[ForkPoint] = (),
    pauses: Sequence[Any] = (),
    round_word: str = "round",
    refresh_s: int | None = None,
) -> str:
    """A thread's page: one self-contained HTML document.

    Args:
        thread_id: The thread.
        values: The thread's state values.
        pattern: The pattern that ran it: it gives the title and the result fields; a
            pattern this package does not know gets the same page.
        status: The thread's status (``finished``, ``waiting``...), if known.
        wall_s: The thread's wall time, if known.
        where: Where an unfinished thread stands (``round 2; next solver_1``).
        forked_from: The thread and checkpoint this one was forked from, if it was.
        forks: The threads forked from this one, each with its checkpoint.
        pauses: What the thread's waiting interrupts ask of a human (their values).
        round_word: What the pattern calls a round.
        refresh_s: Have the browser reload the page this often (a running thread's
            page, rewritten as it goes); ``None``: never.

    Returns:
        The HTML document.
    """
    transcript = turns(values)
    title = pattern.title(values) or f"Thread {thread_id}"
    summary = pattern.summary(values) if values else {}
    summary = without_repeats({k: v for k, v in summary.items() if k not in SHOWN_ELSEWHERE})
    by_id = {t.id: t for t in transcript}
    fields = turn_fields(pattern, values)
    sections = [
        _header(thread_id, values, pattern.name, title, status, wall_s),
        _lineage(forked_from, forks),
        _paused(status, where, pauses),
    ]
    if any(t.usage.calls for t in transcript):
        sections.append(f'<section id="usage"><h2>Usage</h2>\n{usage_tables(transcript)}</section>')
    if summary:
        result = summary_html(summary, by_id)
        sections.append(f'<section id="result"><h2>Result</h2>\n{result}</section>')
    votes = votes_html(transcript)
    if votes:
        sections.append(f'<section id="votes"><h2>Votes</h2>\n{votes}</section>')
    sections.append(
        f'<section id="transcript"><h2>Transcript</h2>\n{timeline(transcript, round_word, fields)}'
        "</section>"
    )
    notes = values.get("notes") or []
    if notes and "notes" not in summary:  # a pattern's summary may show them already
        items = "".join(f"<li>{esc(n)}</li>" for n in notes)
        sections.append(f'<section id="notes"><h2>Notes</h2><ul>{items}</ul></section>')
    body = "\n".join(s for s in sections if s)
    return document(f"{title} · {pattern.name}", body, style=PAGE_STYLE, refresh_s=refresh_s)


def turn_fields(pattern: Described, values: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """What a pattern shows under each turn of a thread's page, by turn id.

    Args:
        pattern: The pattern: its ``turn_fields`` where it has one
            (:attr:`~debategraph.described.Described.turn_fields`).
        values: The thread's state values.

    Returns:
        Turn id -> fields; empty for a pattern that gives none.
    """
    fields = pattern.turn_fields
    return dict(fields(values)) if fields is not None and values else {}


def _header(
    thread_id: str,
    values: Mapping[str, Any],
    pattern_name: str,
    title: str,
    status: str | None,
    wall_s: float | None,
) -> str:
    transcript = turns(values)
    usage = total_usage(values, transcript)
    facts = [f"pattern <b>{esc(pattern_name)}</b>", f"thread <code>{esc(thread_id)}</code>"]
    if status:
        facts.append(f'status <span class="badge status {esc(status)}">{esc(status)}</span>')
    reason = termination(values)
    if reason:
        facts.append(f'ended: <span class="termination">{esc(reason)}</span>')
    if wall_s is not None:
        facts.append(f"wall time {wall_s:.1f} s")
    rounds = values.get("round")
    if isinstance(rounds, int) and not isinstance(rounds, bool):
        facts.append(f"round {rounds}")
    facts.append(
        f"{usage.total_tokens:,} tokens ({usage.prompt_tokens:,} prompt + "
        f"{usage.completion_tokens:,} completion), {plural(usage.calls, 'call')}"
    )
    models = agent_models(transcript)
    if models:
        named = [f"{a} ({', '.join(m)})" if m else a for a, m in models.items()]
        facts.append('agents: <span class="agents">' + esc("; ".join(named)) + "</span>")
    spans = "".join(f"<span>{fact}</span>" for fact in facts)
    return f'<header>\n<h1>{esc(title)}</h1>\n<div class="facts">{spans}</div>\n</header>'


def _lineage(forked_from: ForkPoint | None, forks: Sequence[ForkPoint]) -> str:
    if forked_from is None and not forks:
        return ""
    lines = []
    if forked_from is not None:
        lines.append(
            f'<p class="forked-from">Forked from thread {_thread_link(forked_from.thread_id)} '
            f"at checkpoint <code>{esc(forked_from.checkpoint_id)}</code>.</p>"
        )
    if forks:
        items = "".join(
            f"<li>{_thread_link(f.thread_id)} at checkpoint <code>{esc(f.checkpoint_id)}"
            "</code></li>"
            for f in forks
        )
        lines.append(f'<p>Threads forked from this one:</p><ul class="forks">{items}</ul>')
    return f'<section id="forks"><h2>Forks</h2>\n{"".join(lines)}</section>'


def _thread_link(thread_id: str) -> str:
    return f'<a href="{esc(page_name(thread_id))}"><code>{esc(thread_id)}</code></a>'


def _paused(status: str | None, where: str | None, pauses: Sequence[Any]) -> str:
    """Where an unfinished thread stands, and what a waiting one asks of a human."""
    if status in (None, "finished") and not pauses:
        return ""
    lines = [f"<p>This thread is <b>{esc(status or 'unfinished')}</b>"]
    if where:
        lines[0] += f": {esc(where)}"
    lines[0] += ".</p>"
    for pause in pauses:
        request = review_request(pause)  # a round review: what it asks, and the round's view
        if request is not None:
            shown: Mapping[str, Any] = {"asks": request["description"], **request["args"]}
        else:
            shown = pause if isinstance(pause, Mapping) else {"asks": pause}
        lines.append(f'<div class="pause">{summary_html(shown)}</div>')
    heading = "<h2>Where it stands</h2>"
    return f'<section id="pause" class="notice">{heading}\n{"".join(lines)}</section>'
