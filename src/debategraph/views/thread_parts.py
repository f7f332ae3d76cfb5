"""The parts of a thread's page (:mod:`~debategraph.views.thread_page`): turns, tables, fields.

Each function returns HTML with every piece of text a model, a user or a pattern wrote
escaped by :func:`~debategraph.views.shell.esc`; none of them names a pattern's nodes or
state keys.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from debategraph.checkpoints.thread_values import jsonable, usage_by
from debategraph.models.money import money
from debategraph.state.records import INTERJECT_STAGE, Turn, tool_call_text
from debategraph.views.markdown import (
    MODEL_TIME,
    field_label,
    is_flat,
    is_scalar,
    scalar_text,
)
from debategraph.views.shell import esc
from debategraph.words import plural

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
svg text { font: 12px system-ui, sans-serif; }
svg { margin: .25rem 1rem .25rem 0; vertical-align: top; }
dl.summary dt { font-weight: 600; margin-top: .5rem; }
dl.summary dd { margin-left: 1rem; }
dl.summary table { display: block; max-width: 100%; overflow-x: auto; }
"""


def turn_anchor(turn_id: str) -> str:
    """The element id of a turn on the page (``turn-<id>``), the target of its links.

    Args:
        turn_id: The turn's :attr:`~debategraph.state.records.Turn.id`.

    Returns:
        The id.
    """
    return f"turn-{turn_id}"


def timeline(
    transcript: Sequence[Turn],
    round_word: str = "round",
    fields: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The transcript as one section per round, each turn an element of class ``turn``.

    Every turn (tool calls too) is one element of class ``turn`` with its id in
    ``data-turn-id``. A tool call is folded (``<details>``) under the agent turn that
    follows it in the same round (the turn it was made for); a human's interjection is
    marked where it landed; a reply links to the turns it answers that are on the page.

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
    for rnd in sorted(by_round):
        heading = f"{round_word.capitalize()} {rnd}" if rnd else f"Before {round_word} 1"
        body = "\n".join(_round_turns(by_round[rnd], known, extra))
        sections.append(
            f'<section class="round" id="round-{rnd}"><h3>{esc(heading)}</h3>\n{body}\n</section>'
        )
    return "\n".join(sections)


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
    head = [f'<span class="who">{esc(turn.agent)}</span>']
    if turn.role == "user":
        said = "interjection" if interjection else "from a human"
        head.append(f'<span class="badge">{said}</span>')
        if interjection:  # recorded after a round, read in the next
            head.append(f'<span class="meta">read from round {turn.round + 1} on</span>')
    head.append(f'<span class="meta">{esc(turn.stage)}</span>')
    if turn.answer is not None:
        head.append(f'answer: <span class="answer">{esc(turn.answer)}</span>')
    if turn.confidence is not None:
        head.append(f'<span class="meta">confidence {turn.confidence:.2f}</span>')
    if turn.reason and turn.answer is None and turn.role != "tool":
        head.append(f'<span class="abstained">no answer: {esc(turn.reason)}</span>')
    body = [f'<div class="head">{" · ".join(head)}</div>']
    body += _links(turn, known)
    if turn.role == "tool":
        body.append(f"<pre>{esc(tool_call_text(turn))}</pre>")
    elif turn.content.strip():
        body.append(f'<div class="text">{esc(turn.content.strip())}</div>')
    if turn.id in fields:
        body.append(summary_html(fields[turn.id], known))
    if calls:
        folded = "\n".join(_turn_html(call, [], known, fields) for call in calls)
        shown = plural(len(calls), "tool call")
        body.append(f'<details class="tools"><summary>{shown}</summary>\n{folded}\n</details>')
    body.append(f'<div class="meta">{esc(_turn_cost(turn))}</div>')
    return (
        f'<article class="{" ".join(classes)}" id="{esc(turn_anchor(turn.id))}" '
        f'data-turn-id="{esc(turn.id)}" data-agent="{esc(turn.agent)}" '
        f'data-round="{turn.round}">\n' + "\n".join(body) + "\n</article>"
    )


def turn_link(turn: Turn) -> str:
    """A link to a turn on its page, reading ``agent, round N``.

    Args:
        turn: The turn.

    Returns:
        The ``<a>`` element.
    """
    return f'<a href="#{esc(turn_anchor(turn.id))}">{esc(turn.agent)}, round {turn.round}</a>'


def _links(turn: Turn, known: Mapping[str, Turn]) -> list[str]:
    """Who a turn answers (links to the turns on the page) and whom it addresses."""
    lines = []
    if turn.reply_to:
        targets = ", ".join(turn_link(known[r]) if r in known else esc(r) for r in turn.reply_to)
        lines.append(f'<div class="meta">in reply to {targets}</div>')
    if turn.recipients:
        lines.append(f'<div class="meta">to {esc(", ".join(turn.recipients))}</div>')
    return lines


def _turn_cost(turn: Turn) -> str:
    usage = turn.usage
    parts = [turn.model] if turn.model else []
    if usage.calls or usage.total_tokens:
        made = plural(usage.calls, "call")
        parts.append(f"{usage.total_tokens:,} tokens, {made}, {usage.latency_s:.1f} s")
    return " · ".join(parts)


def agent_models(transcript: Sequence[Turn]) -> dict[str, list[str]]:
    """Each agent that spoke and the models that answered for it, in order of appearance.

    Args:
        transcript: The thread's turns.

    Returns:
        Agent -> its models (empty where no turn of it names one); a human's and a tool's
        turns are no agent's.
    """
    models: dict[str, dict[str, None]] = {}
    for turn in transcript:
        if turn.role == "agent":
            models.setdefault(turn.agent, {}).update({turn.model: None} if turn.model else {})
    return {agent: list(named) for agent, named in models.items()}


def usage_tables(transcript: Sequence[Turn]) -> str:
    """Tokens, calls, model time and (where a call had a price) cost, per agent and model.

    Args:
        transcript: The thread's turns.

    Returns:
        The two tables' HTML (a table is left out when no turn made a model call); the
        cost column only where a call was priced, ``-`` for a row with no price.
    """
    models = agent_models(transcript)
    parts = []
    for key in ("agent", "model"):
        rows = {name: u for name, u in usage_by(transcript, key).items() if u.calls}
        if not rows or (key == "model" and list(rows) == [""]):
            continue
        with_models = key == "agent" and any(models.values())
        priced = any(u.cost is not None for u in rows.values())
        extra = "<th>models</th>" if with_models else ""
        head = (
            f"<tr><th>{key}</th>{extra}<th class='num'>prompt</th><th class='num'>completion"
            f"</th><th class='num'>calls</th><th class='num'>{esc(MODEL_TIME)} (s)</th>"
            + ("<th class='num'>cost</th>" if priced else "")
            + "</tr>"
        )
        body = []
        for name, u in rows.items():
            cell = f"<td>{esc(', '.join(models.get(name, [])))}</td>" if with_models else ""
            cost = "-" if u.cost is None else money(u.cost)
            body.append(
                f"<tr><td>{esc(name or '?')}</td>{cell}<td class='num'>{u.prompt_tokens:,}</td>"
                f"<td class='num'>{u.completion_tokens:,}</td><td class='num'>{u.calls}</td>"
                f"<td class='num'>{u.latency_s:.1f}</td>"
                + (f"<td class='num'>{esc(cost)}</td>" if priced else "")
                + "</tr>"
            )
        parts.append(f'<table class="usage-{key}">{head}{"".join(body)}</table>')
    return "\n".join(parts)


def summary_html(summary: Mapping[str, Any], turns: Mapping[str, Turn] | None = None) -> str:
    """A pattern's summary fields (its verdict, report, decision) as HTML, generically.

    The walk :func:`~debategraph.views.markdown.summary_markdown` makes for the
    Markdown export: a scalar field is a line, a multi-line text a block, a list of
    scalars one line, a mapping of scalars a two-column table, a list of such mappings
    one table with a column per key, any other record a nested list of its fields. A
    value that is the id of a turn on the page links to it. A list of records or a
    mapping of records (what happened per round, per protocol) is folded, so the
    verdict, the report or the decision reads first.

    Args:
        summary: The fields.
        turns: The page's turns by id.

    Returns:
        A definition list (``<dl>``).
    """
    known = turns or {}
    items = []
    for key, raw in summary.items():
        value = jsonable(raw)
        shown = _value_html(value, known)
        if _folded(value):
            shown = f"<details><summary>{plural(len(value), 'item')}</summary>{shown}</details>"
        items.append(f"<dt>{esc(field_label(str(key)))}</dt><dd>{shown}</dd>")
    return f'<dl class="summary">{"".join(items)}</dl>'


def without_repeats(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A summary less what it says twice, for the page's result.

    A record's field that repeats the summary's own field of that name (the decision's
    answer, votes and tie-break beside the summary's) or is empty goes; so does a record
    of a mapping of records that is another field whole (the graph's own decision, again
    under ``decisions``), and the mapping with it when nothing else is left.

    Args:
        summary: The fields.

    Returns:
        The fields to show, in order.
    """
    top = {str(k): jsonable(v) for k, v in summary.items()}
    whole = [v for v in top.values() if isinstance(v, dict)]
    shown: dict[str, Any] = {}
    for key, value in top.items():
        if isinstance(value, dict) and value and _folded(value):
            kept = {k: v for k, v in value.items() if v not in whole}
            if not kept:
                continue
            value = kept
        elif isinstance(value, dict):
            value = {k: v for k, v in value.items() if v is not None and top.get(k, ...) != v}
        shown[key] = value
    return shown


def _folded(value: Any) -> bool:
    """Whether a field is folded: a list of records (per round, per turn) or records by key."""
    if isinstance(value, list):
        return bool(value) and not is_flat(value)
    records = isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())
    return records and bool(value)


def _scalar_html(value: Any, turns: Mapping[str, Turn]) -> str:
    if isinstance(value, str) and value in turns:
        return turn_link(turns[value])
    return esc(scalar_text(value))


def _records(value: Any) -> list[str] | None:
    """The columns of a list of records of scalars (``None`` for anything else)."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(v, dict) and all(is_scalar(x) for x in v.values()) for v in value):
        return None
    return list(dict.fromkeys(k for record in value for k in record))


def _value_html(value: Any, turns: Mapping[str, Turn]) -> str:
    if isinstance(value, str) and "\n" in value.strip():
        return f'<div class="text">{esc(value.strip())}</div>'
    if is_scalar(value):
        return _scalar_html(value, turns)
    if is_flat(value):
        return ", ".join(_scalar_html(v, turns) for v in value) or "none"
    columns = _records(value)
    if columns is not None:
        head = "".join(f"<th>{esc(c)}</th>" for c in columns)
        rows = "".join(
            "<tr>" + "".join(f"<td>{_scalar_html(r.get(c), turns)}</td>" for c in columns) + "</tr>"
            for r in value
        )
        return f"<table><tr>{head}</tr>{rows}</table>"
    if isinstance(value, dict) and all(is_scalar(v) for v in value.values()):
        rows = "".join(
            f"<tr><td>{esc(k)}</td><td>{_scalar_html(v, turns)}</td></tr>" for k, v in value.items()
        )
        return f"<table>{rows}</table>"
    if isinstance(value, dict):
        pairs = [(f"{field_label(str(k))}: ", v) for k, v in value.items()]
    elif isinstance(value, list):
        pairs = [("", v) for v in value]
    else:  # not JSON (an interrupt's object, say): its text
        return esc(value)
    items = "".join(f"<li>{esc(head)}{_value_html(item, turns)}</li>" for head, item in pairs)
    return f"<ul>{items}</ul>"
