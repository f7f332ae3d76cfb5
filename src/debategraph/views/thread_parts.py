"""A thread's transcript on its page (:mod:`~debategraph.views.thread_page`): rounds and turns.

Each function returns HTML with every piece of text a model, a user or a pattern wrote
escaped and isolated (:func:`~debategraph.views.shell.said`); none of them names a
pattern's nodes or state keys. A long thread's rounds fold (``<details>``), all but the
last closed; a long reply folds, its start shown.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from debategraph.state.records import INTERJECT_STAGE, Turn, tool_call_text
from debategraph.views.result import summary_html, text_html
from debategraph.views.shell import esc, said
from debategraph.views.turn_links import turn_anchor, turn_link
from debategraph.words import plural

#: A transcript with more turns than this is long: its rounds fold, all but the last closed.
FOLD_TURNS = 24

#: The page's own style, after :data:`~debategraph.views.shell.BASE_STYLE`.
PAGE_STYLE = """
header .facts { display: flex; flex-wrap: wrap; gap: .25rem 1rem; margin: .25rem 0; }
.badge { display: inline-block; padding: 0 .4rem; border-radius: 999px; font-size: .85em;
  border: 1px solid var(--line); background: var(--soft); }
.badge.finished { color: var(--good); border-color: var(--good); }
.badge.failed { color: var(--bad); border-color: var(--bad); }
.badge.waiting, .badge.interrupted, .badge.running { color: var(--warn);
  border-color: var(--warn); }
.round { border-left: 3px solid var(--line); margin: 1rem 0; padding-left: 1rem; }
.turn { border: 1px solid var(--line); border-radius: 8px; padding: .5rem .75rem;
  margin: .5rem 0; }
.turn:target { outline: 2px solid var(--accent); }
.turn .who { font-weight: 600; }
.turn .meta { color: var(--muted); font-size: .85em; }
.turn.human { border-color: var(--warn); background: #fff8c5; }
.turn.tool-call { border-style: dashed; }
.answer { font-weight: 600; }
.abstained { color: var(--bad); }
details.tools { margin: .25rem 0; }
details.tools summary { cursor: pointer; color: var(--muted); }
.notice { border: 1px solid var(--warn); border-radius: 8px; padding: .5rem .75rem;
  margin: 1rem 0; }
.flips li { margin: .1rem 0; }
svg text { font: 12px -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }
svg { margin: .25rem 1rem .25rem 0; vertical-align: top; max-width: calc(100% - 1rem); }
svg .interjection-mark line { stroke: var(--warn); stroke-width: 2; stroke-dasharray: 4 3; }
svg .interjection-mark text { fill: var(--warn); }
dl.summary dt { font-weight: 600; margin-top: .5rem; }
dl.summary dd { margin-left: 1rem; }
details > summary { cursor: pointer; }
details.round > summary h3 { display: inline; }
details.long > summary { list-style-position: inside; }
.story p { margin: .25rem 0; }
details.fields { margin: .5rem 0; }
nav#contents ol { margin: .25rem 0; padding-left: 1.25rem; }
nav#contents li.rounds { display: flex; flex-wrap: wrap; gap: 0 .5rem; }
.resume code { background: var(--soft); padding: .1rem .3rem; border-radius: 4px; }
"""


def timeline(
    transcript: Sequence[Turn],
    round_word: str = "round",
    fields: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The transcript as one fold per round, each turn an element of class ``turn``.

    Every turn (tool calls too) is one element of class ``turn`` with its id in
    ``data-turn-id``. A tool call is folded (``<details>``) under the agent turn that
    follows it in the same round (the turn it was made for); a human's interjection is
    marked where it landed; a reply links to the turns it answers that are on the page.
    Each round is a ``<details class="round">`` (id ``round-N``), open unless the
    transcript is long (more than :data:`FOLD_TURNS` turns): then only the last is.

    Args:
        transcript: The thread's turns, in order.
        round_word: What the pattern calls a round.
        fields: What the pattern shows under a turn besides its text, by turn id
            (rendered as :func:`summary_html` renders a summary).

    Returns:
        The sections' HTML (a note when there are no turns yet).
    """
    if not transcript:
        return '<p class="muted">No turns yet.</p>'
    known = {t.id: t for t in transcript}
    extra = fields or {}
    by_round: dict[int, list[Turn]] = defaultdict(list)
    for turn in transcript:
        by_round[turn.round].append(turn)
    sections = []
    last = max(by_round)
    for rnd in sorted(by_round):
        shown = " open" if len(transcript) <= FOLD_TURNS or rnd == last else ""
        tally = f"<span class='muted'>· {esc(_tally(by_round[rnd]))}</span>"
        heading = f"{esc(round_heading(rnd, round_word))} {tally}"
        body = "\n".join(_round_turns(by_round[rnd], known, extra))
        sections.append(
            f'<details class="round" id="round-{rnd}"{shown}><summary><h3>{heading}</h3>'
            f"</summary>\n{body}\n</details>"
        )
    return "\n".join(sections)


def round_heading(rnd: int, round_word: str = "round") -> str:
    """A round's heading: ``Round 2`` (``Before round 1`` for round 0).

    Args:
        rnd: The round.
        round_word: What the pattern calls a round.

    Returns:
        The heading.
    """
    return f"{round_word.capitalize()} {rnd}" if rnd else f"Before {round_word} 1"


def _tally(turns: Sequence[Turn]) -> str:
    """What a folded round holds: its turns, and its interjections."""
    said_by = [t for t in turns if t.role != "tool"]
    told = plural(len(said_by), "turn")
    interjections = sum(t.role == "user" and t.stage == INTERJECT_STAGE for t in turns)
    return told + (f", {plural(interjections, 'interjection')}" if interjections else "")


def _round_turns(
    turns: Sequence[Turn], known: Mapping[str, Turn], fields: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """A round's turns, each agent's tool calls folded under its next turn."""
    out: list[str] = []
    waiting: dict[str, list[Turn]] = defaultdict(list)  # agent -> its tool calls so far
    for turn in turns:
        if turn.role == "tool":
            waiting[turn.agent].append(turn)
            continue
        out.append(_turn_html(turn, waiting.pop(turn.agent, []), known, fields))
    for calls in waiting.values():  # calls of a turn not recorded (yet): shown on their own
        out += [_turn_html(call, [], known, fields) for call in calls]
    return out


def _turn_html(
    turn: Turn,
    calls: Sequence[Turn],
    known: Mapping[str, Turn],
    fields: Mapping[str, Mapping[str, Any]],
) -> str:
    # Every human turn is marked; an interjection (not a group chat's opening task) as one.
    interjection = turn.role == "user" and turn.stage == INTERJECT_STAGE
    classes = ["turn"]
    if turn.role == "user":
        classes += ["human", "interjection"] if interjection else ["human"]
    elif turn.role == "tool":
        classes.append("tool-call")
    head = [f'<span class="who">{said(turn.agent)}</span>']
    if turn.role == "user":
        kind = "interjection" if interjection else "from a human"
        head.append(f'<span class="badge">{kind}</span>')
        if interjection:  # recorded after a round, read in the next
            head.append(f'<span class="meta">read from round {turn.round + 1} on</span>')
    head.append(f'<span class="meta">{said(turn.stage)}</span>')
    if turn.answer is not None:
        head.append(f'answer: <span class="answer">{text_html(turn.answer)}</span>')
    if turn.confidence is not None:
        head.append(f'<span class="meta">confidence {turn.confidence:.2f}</span>')
    if turn.reason and turn.answer is None and turn.role != "tool":
        head.append(f'<span class="abstained">no answer: {said(turn.reason)}</span>')
    body = [f'<div class="head">{" · ".join(head)}</div>']
    body += _links(turn, known)
    if turn.role == "tool":
        body.append(f"<pre>{esc(tool_call_text(turn))}</pre>")
    elif turn.content.strip():
        body.append(text_html(turn.content, block=True))
    if turn.id in fields:
        body.append(summary_html(fields[turn.id], known))
    if calls:
        folded = "\n".join(_turn_html(call, [], known, fields) for call in calls)
        shown = plural(len(calls), "tool call")
        body.append(f'<details class="tools"><summary>{shown}</summary>\n{folded}\n</details>')
    body.append(f'<div class="meta">{said(_turn_cost(turn))}</div>')
    return (
        f'<article class="{" ".join(classes)}" id="{esc(turn_anchor(turn.id))}" '
        f'data-turn-id="{esc(turn.id)}" data-agent="{esc(turn.agent)}" '
        f'data-round="{turn.round}">\n' + "\n".join(body) + "\n</article>"
    )


def _links(turn: Turn, known: Mapping[str, Turn]) -> list[str]:
    """Who a turn answers (links to the turns on the page) and whom it addresses."""
    lines = []
    if turn.reply_to:
        targets = ", ".join(turn_link(known[r]) if r in known else said(r) for r in turn.reply_to)
        lines.append(f'<div class="meta">in reply to {targets}</div>')
    if turn.recipients:
        lines.append(f'<div class="meta">to {", ".join(map(said, turn.recipients))}</div>')
    return lines


def _turn_cost(turn: Turn) -> str:
    usage = turn.usage
    parts = [turn.model] if turn.model else []
    if usage.calls or usage.total_tokens:
        made = plural(usage.calls, "call")
        parts.append(f"{usage.total_tokens:,} tokens, {made}, {usage.latency_s:.1f} s")
    return " · ".join(parts)
