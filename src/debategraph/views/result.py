"""A thread's result on its page: the pattern's sentences, then its fields in human words.

The section opens with what the pattern says of its result
(:attr:`~debategraph.described.Described.explain`: the answer and why), each piece of
text someone else wrote shown isolated (``<bdi>``). The summary's fields (what ``show
--json`` gives) follow, folded when the sentences came first, as a reader reads them:
keys in words (``Flips to wrong``, never ``flips_to_wrong``), no field or column that is
empty everywhere, yes and no for booleans, numbers to three figures, long text folded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from debategraph.checkpoints.thread_values import jsonable
from debategraph.state.records import Turn
from debategraph.views.markdown import field_label, is_flat, is_scalar
from debategraph.views.shell import esc, said
from debategraph.views.turn_links import turn_link
from debategraph.words import ISOLATE, POP_ISOLATE, plural

#: Text longer than this (characters) is folded, its start shown.
LONG_TEXT = 1200
#: How much of a folded text shows before it is opened.
PREVIEW = 280

_ISOLATED = re.compile(f"{ISOLATE}(.*?){POP_ISOLATE}", re.DOTALL)
#: A sentence's full stop after a quoted text that ends a sentence already.
_STOPPED = re.compile(f"([.!?…]{POP_ISOLATE})\\.")


def result_html(
    sentences: Sequence[str], summary: Mapping[str, Any], turns: Mapping[str, Turn]
) -> str:
    """The result section's body: the pattern's sentences, then its fields.

    Args:
        sentences: What the pattern says of its result (may be empty).
        summary: Its summary fields, less what the page shows elsewhere.
        turns: The page's turns by id (a field naming one links to it).

    Returns:
        The HTML; the fields folded under the sentences when there are both.
    """
    fields = summary_html(summary, turns) if summary else ""
    if not sentences:
        return fields
    story = "".join(f"<p>{sentence_html(s)}</p>" for s in sentences)
    if not fields:
        return f'<div class="story">{story}</div>'
    return (
        f'<div class="story">{story}</div>'
        f'<details class="fields"><summary>Every field (as <code>show --json</code> gives '
        f"them)</summary>{fields}</details>"
    )


def sentence_html(sentence: str) -> str:
    """A pattern's sentence, escaped, each stretch it isolated a ``<bdi>``.

    The stretches are those :func:`~debategraph.words.quoted` made.

    Args:
        sentence: The sentence.

    Returns:
        The HTML.
    """
    parts = _ISOLATED.split(_STOPPED.sub(r"\1", sentence))
    return "".join(said(p) if i % 2 else esc(p) for i, p in enumerate(parts))


def summary_html(summary: Mapping[str, Any], turns: Mapping[str, Turn] | None = None) -> str:
    """A pattern's summary fields (its verdict, report, decision) as HTML, generically.

    The walk :func:`~debategraph.views.markdown.summary_markdown` makes for the
    Markdown export, in a reader's words: a scalar field is a line, a multi-line text a
    block, a list of scalars one line, a mapping of scalars a two-column table, a list
    of such mappings one table with a column per key, any other record a nested list of
    its fields. An empty field (``None``, an empty list) is left out, and so is a
    table's column empty in every row. A value that is the id of a turn on the page
    links to it. A list of records or a mapping of records (what happened per round,
    per protocol) is folded, so the verdict, the report or the decision reads first.

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
        if _empty(value):
            continue
        shown = _value_html(value, known)
        if _folded(value):
            shown = f"<details><summary>{plural(len(value), 'entry')}</summary>{shown}</details>"
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


def _empty(value: Any) -> bool:
    """Whether a value says nothing: ``None``, empty text, an empty list or mapping."""
    return value is None or value == "" or (isinstance(value, list | dict) and not value)


def _folded(value: Any) -> bool:
    """Whether a field is folded: a list of records (per round, per turn) or records by key."""
    if isinstance(value, list):
        return bool(value) and not is_flat(value)
    records = isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())
    return records and bool(value)


def scalar_html(value: Any, turns: Mapping[str, Turn] | None = None) -> str:
    """One scalar as a reader reads it.

    A turn's id is a link to it, a boolean yes or no, a number three figures, ``None``
    a ``-``, text isolated (a long one folded).

    Args:
        value: A scalar.
        turns: The page's turns by id.

    Returns:
        The HTML.
    """
    if isinstance(value, str) and turns and value in turns:
        return turn_link(turns[value])
    if value is None:
        return '<span class="muted">-</span>'
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return esc(f"{value:.3g}")
    if isinstance(value, int):
        return esc(value)
    return text_html(str(value))


def text_html(text: str, *, block: bool = False) -> str:
    """Someone's text: isolated; folded past :data:`LONG_TEXT` characters, its start shown.

    Args:
        text: The text.
        block: Show it as a block (``<div class="text">``) even on one line.

    Returns:
        The HTML: a ``<bdi>`` (a ``<div class="text">`` for a block or text of several
        lines), or a ``<details class="long">`` holding it whole.
    """
    text = text.strip()
    block = block or "\n" in text
    whole = f'<div class="text">{esc(text)}</div>' if block else said(text)
    if len(text) <= LONG_TEXT:
        return whole
    start = " ".join(text[:PREVIEW].split())
    words = plural(len(text.split()), "word")
    return (
        f'<details class="long"><summary>{said(start)}… <span class="muted">'
        f"({words}, {len(text):,} characters: open to read all)</span></summary>{whole}</details>"
    )


def _records(value: Any) -> list[str] | None:
    """The columns of a list of records of scalars, empty ones left out (``None``: no such list)."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(v, dict) and all(is_scalar(x) for x in v.values()) for v in value):
        return None
    keys = dict.fromkeys(k for record in value for k in record)
    return [k for k in keys if any(not _empty(r.get(k)) for r in value)]


def _value_html(value: Any, turns: Mapping[str, Turn]) -> str:
    if isinstance(value, str) and "\n" in value.strip():
        return text_html(value)
    if is_scalar(value):
        return scalar_html(value, turns)
    if is_flat(value):
        return ", ".join(scalar_html(v, turns) for v in value)
    columns = _records(value)
    if columns is not None:
        head = "".join(f"<th>{esc(field_label(str(c)))}</th>" for c in columns)
        rows = "".join(
            "<tr>" + "".join(f"<td>{scalar_html(r.get(c), turns)}</td>" for c in columns) + "</tr>"
            for r in value
        )
        return f"<table><tr>{head}</tr>{rows}</table>"
    if isinstance(value, dict) and all(is_scalar(v) for v in value.values()):
        rows = "".join(
            f"<tr><td>{text_html(str(k))}</td><td>{scalar_html(v, turns)}</td></tr>"
            for k, v in value.items()
            if v is not None
        )
        return f"<table>{rows}</table>"
    if isinstance(value, dict):
        pairs = [(f"{field_label(str(k))}: ", v) for k, v in value.items() if not _empty(v)]
    elif isinstance(value, list):
        pairs = [("", v) for v in value]
    else:  # not JSON (an interrupt's object, say): its text
        return text_html(str(value))
    items = "".join(f"<li>{esc(head)}{_value_html(item, turns)}</li>" for head, item in pairs)
    return f"<ul>{items}</ul>"
