"""A thread as one self-contained HTML page (``debategraph view``), for any pattern.

The page is the Markdown export's document (:mod:`~debategraph.views.markdown`),
seen instead of read: a header (the pattern, the thread's title, its status and why it
ended, wall time, its agents and their models), its contents, the forks (linked by the
names their pages were written with) and, for a thread waiting for a human, what it
asks and the command that goes on with it, usage per agent and per model (every agent
and official, as ``show --json`` gives it: :mod:`~debategraph.views.usage`), the
pattern's result told in sentences, then its fields (:mod:`~debategraph.views.result`),
the vote after each round drawn where agents vote (:mod:`~debategraph.views.votes`),
and the transcript as a timeline of rounds (every turn an element of class ``turn``
with its id in ``data-turn-id``; tool calls folded under their turn; interjections
marked; replies linked; a long thread's rounds and long replies folded:
:mod:`~debategraph.views.thread_parts`). It is written with
:func:`debategraph.views.shell.document`: nothing is fetched, no script runs, every text
a model wrote is escaped and isolated, and it fits a phone's screen.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from debategraph.checkpoints.thread_values import termination, total_usage, turns
from debategraph.nodes.review import review_request
from debategraph.views.result import result_html, summary_html, text_html, without_repeats
from debategraph.views.shell import document, esc, said
from debategraph.views.thread_parts import PAGE_STYLE, round_heading, timeline
from debategraph.views.usage import agent_models, usage_tables
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


#: The statuses of a thread that ``debategraph resume`` goes on with (a waiting one too).
RESUMABLE = frozenset({"waiting", "interrupted", "failed"})


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
    resume: str | None = None,
    links: Mapping[str, str] | None = None,
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
        resume: The command that goes on with a waiting thread (the CLI's line,
            :func:`debategraph.runs.human.review_command`), shown with its pause.
        links: Thread -> the address of its page, for the origin and the forks whose
            pages were written under a name of their own (default: :func:`page_name`).

    Returns:
        The HTML document.
    """
    transcript = turns(values)
    title = pattern.title(values) or f"Thread {thread_id}"
    summary = pattern.summary(values) if values else {}
    summary = without_repeats({k: v for k, v in summary.items() if k not in SHOWN_ELSEWHERE})
    sentences = pattern.explain(values) if pattern.explain is not None and values else []
    by_id = {t.id: t for t in transcript}
    fields = turn_fields(pattern, values)
    sections: dict[str, tuple[str, str]] = {}  # id -> (heading, body)
    lineage = _lineage(forked_from, forks, links or {})
    if lineage:
        sections["forks"] = ("Forks", lineage)
    usage = usage_tables(values, transcript)
    if usage:
        sections["usage"] = ("Usage", usage)
    if summary or sentences:
        sections["result"] = ("Result", result_html(sentences, summary, by_id))
    votes = votes_html(transcript)
    if votes:
        sections["votes"] = ("Votes", votes)
    sections["transcript"] = ("Transcript", timeline(transcript, round_word, fields))
    notes = values.get("notes") or []
    if notes and "notes" not in summary:  # a pattern's summary may show them already
        items = "".join(f"<li>{text_html(str(n))}</li>" for n in notes)
        sections["notes"] = ("Notes", f"<ul>{items}</ul>")
    body = [
        _header(thread_id, values, pattern.name, title, status, wall_s),
        _paused(status, where, pauses, resume),
        _contents(sections, transcript, round_word),
        *(f'<section id="{k}"><h2>{esc(h)}</h2>\n{b}</section>' for k, (h, b) in sections.items()),
    ]
    page = "\n".join(part for part in body if part)
    return document(f"{title} · {pattern.name}", page, style=PAGE_STYLE, refresh_s=refresh_s)


def _contents(
    sections: Mapping[str, tuple[str, str]], transcript: Sequence[Any], round_word: str
) -> str:
    """The page's contents: its sections, and each round of the transcript with its turns."""
    rounds: dict[int, int] = {}
    for turn in transcript:
        rounds[turn.round] = rounds.get(turn.round, 0) + (turn.role != "tool")
    items = [f"<li><a href='#{esc(k)}'>{esc(h)}</a></li>" for k, (h, _) in sections.items()]
    if len(rounds) > 1:
        links = "".join(
            f'<a href="#round-{rnd}">{esc(round_heading(rnd, round_word))}</a>'
            f'<span class="muted"> ({n})</span>'
            for rnd, n in sorted(rounds.items())
        )
        items.append(f'<li class="rounds">{links}</li>')
    return f'<nav id="contents"><h2>Contents</h2><ol>{"".join(items)}</ol></nav>'


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
    facts = [f"pattern <b>{esc(pattern_name)}</b>", f"thread <code>{said(thread_id)}</code>"]
    if status:
        facts.append(f'status <span class="badge status {esc(status)}">{esc(status)}</span>')
    reason = termination(values)
    if reason:
        facts.append(f'ended: <span class="termination">{said(reason)}</span>')
    if wall_s is not None:
        facts.append(f"wall time {wall_s:.1f} s")
    rounds = values.get("round")
    if isinstance(rounds, int) and not isinstance(rounds, bool):
        facts.append(f"round {rounds}")
    facts.append(
        f"{usage.total_tokens:,} tokens ({usage.prompt_tokens:,} prompt + "
        f"{usage.completion_tokens:,} completion), {plural(usage.calls, 'call')}"
    )
    models = agent_models(transcript, values)
    if models:
        named = [
            said(a) + (f" ({', '.join(map(said, m))})" if m else "") for a, m in models.items()
        ]
        facts.append('agents: <span class="agents">' + "; ".join(named) + "</span>")
    spans = "".join(f"<span>{fact}</span>" for fact in facts)
    return f'<header>\n<h1>{said(title)}</h1>\n<div class="facts">{spans}</div>\n</header>'


def _lineage(
    forked_from: ForkPoint | None, forks: Sequence[ForkPoint], links: Mapping[str, str]
) -> str:
    if forked_from is None and not forks:
        return ""
    lines = []
    if forked_from is not None:
        link = _thread_link(forked_from.thread_id, links)
        lines.append(
            f'<p class="forked-from">Forked from thread {link} '
            f"at checkpoint <code>{esc(forked_from.checkpoint_id)}</code>.</p>"
        )
    if forks:
        items = "".join(
            f"<li>{_thread_link(f.thread_id, links)} at checkpoint <code>{esc(f.checkpoint_id)}"
            "</code></li>"
            for f in forks
        )
        lines.append(f'<p>Threads forked from this one:</p><ul class="forks">{items}</ul>')
    return "".join(lines)


def _thread_link(thread_id: str, links: Mapping[str, str]) -> str:
    href = links.get(thread_id) or page_name(thread_id)
    return f'<a href="{esc(href)}"><code>{said(thread_id)}</code></a>'


def _paused(
    status: str | None, where: str | None, pauses: Sequence[Any], resume: str | None
) -> str:
    """Where an unfinished thread stands, what a waiting one asks, and how to go on."""
    if status in (None, "finished") and not pauses:
        return ""
    lines = [f"<p>This thread is <b>{esc(status or 'unfinished')}</b>"]
    if where:
        lines[0] += f": {said(where)}"
    lines[0] += ".</p>"
    for pause in pauses:
        request = review_request(pause)  # a round review: what it asks, and the round's view
        if request is not None:
            shown: Mapping[str, Any] = {"asks": request["description"], **request["args"]}
        else:
            shown = pause if isinstance(pause, Mapping) else {"asks": pause}
        lines.append(f'<div class="pause">{summary_html(shown)}</div>')
    if resume and (pauses or status in RESUMABLE):
        lines.append(f'<p class="resume">To go on: <code>{esc(resume)}</code></p>')
    heading = "<h2>Where it stands</h2>"
    return f'<section id="pause" class="notice">{heading}\n{"".join(lines)}</section>'
