"""A thread as a readable Markdown document (``export --format md``), for any pattern.

The document is the pattern's title, a metadata line, the transcript one section per
round, and a result section: the pattern's own ``result_markdown`` when it gives one,
else its ``summary`` fields rendered generically (both of what the pattern is, its
:class:`~debategraph.described.Described`), then how the run ended and
what it cost. Nothing here names a pattern's nodes or state keys; the helpers :func:`inline` and
:func:`ranked_table` are public for patterns writing their own result section, and the
summary's walk (:func:`field_label`, :func:`is_scalar`, :func:`is_flat`,
:func:`scalar_text`) for the thread's page (:mod:`~debategraph.views.thread_page`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from debategraph.checkpoints.thread_values import (
    jsonable,
    termination,
    total_usage,
    turns,
    usage_by,
)
from debategraph.models.money import money
from debategraph.state.records import Turn, Usage, tool_call_text
from debategraph.words import inline

if TYPE_CHECKING:
    from debategraph.described import Described


def render_markdown(
    thread_id: str,
    values: Mapping[str, Any],
    *,
    pattern: Described,
    status: str | None = None,
    wall_s: float | None = None,
) -> str:
    """A readable Markdown transcript of a thread.

    Args:
        thread_id: The thread.
        values: The thread's state values.
        pattern: The pattern that ran it: it gives the title and the result.
        status: The thread's status (``finished``...), if known.
        wall_s: The thread's wall time (:func:`~debategraph.checkpoints.threads.
            thread_wall_time`), if known; the model time shown beside it is the sum
            of the calls' latencies (calls run at once, so it may exceed the wall time).

    Returns:
        The document: title, a metadata line, one section per round and the result.
    """
    transcript = turns(values)
    title = pattern.title(values) or f"Thread {thread_id}"
    meta = _metadata_line(thread_id, values, status, transcript, wall_s)
    lines = [f"# {inline(title)}", "", meta, ""]
    by_round: dict[int, list[Turn]] = defaultdict(list)
    for turn in transcript:
        by_round[turn.round].append(turn)
    for rnd in sorted(by_round):
        lines += [f"## Round {rnd}" if rnd else "## Before round 1", ""]
        for turn in by_round[rnd]:
            lines += [*_turn_markdown(turn), ""]
    lines += ["## Result", ""]
    if pattern.result_markdown is not None:
        lines += pattern.result_markdown(values)
    else:
        lines += summary_markdown(pattern.summary(values))
    lines += _outcome_markdown(values, transcript, wall_s)
    return "\n".join(lines).rstrip() + "\n"


def summary_markdown(summary: Mapping[str, Any]) -> list[str]:
    """A pattern's summary fields as Markdown, each followed by a blank line.

    A scalar field is a ``Key: value`` line (a multi-line text a quote under ``Key:``), a
    list of scalars one line of them, a mapping of scalars a two-column table, any other
    record (a verdict, a list of decisions) a Markdown list of its fields: text, never
    JSON.

    Args:
        summary: The fields (:attr:`~debategraph.described.Described.summary`).

    Returns:
        The lines.
    """
    lines: list[str] = []
    for key, value in summary.items():
        lines += [*_field_markdown(field_label(str(key)), jsonable(value)), ""]
    return lines


# -- metadata, turns and the generic tail ------------------------------------------------


#: How the sum of a thread's call latencies is labelled (it is not its wall time).
MODEL_TIME = "model time (sum of calls)"


def _tokens(usage: Usage) -> str:
    cost = "" if usage.cost is None else f", cost {money(usage.cost)}"
    hits = f", {usage.cache_hits} from the cache" if usage.cache_hits else ""
    return (
        f"{usage.total_tokens:,} tokens ({usage.prompt_tokens:,} prompt + "
        f"{usage.completion_tokens:,} completion), {usage.calls} calls{hits}, "
        f"{MODEL_TIME} {usage.latency_s:.1f} s{cost}"
    )


def _metadata_line(
    thread_id: str,
    values: Mapping[str, Any],
    status: str | None,
    transcript: Sequence[Turn],
    wall_s: float | None,
) -> str:
    parts = [f"thread `{thread_id}`"]
    if status:
        parts.append(f"status: {status}")
    reason = termination(values)
    if reason:
        parts.append(f"termination: {inline(reason)}")
    if wall_s is not None:
        parts.append(f"wall time {wall_s:.1f} s")
    if transcript or values.get("usage") is not None:
        parts.append(_tokens(total_usage(values, transcript)))
    return " · ".join(parts)


def _quote(text: str) -> list[str]:
    return [f"> {line}".rstrip() for line in text.strip().splitlines()] or [">"]


def _turn_markdown(turn: Turn) -> list[str]:
    if turn.role == "user":
        body = "  \n".join(line.strip() for line in turn.content.strip().splitlines())
        return [f"**{turn.agent}** (interjection): {body}"]
    if turn.role == "tool":
        return [f"**{turn.agent}** _(tool)_ `{inline(tool_call_text(turn))}`"]
    head = f"**{turn.agent}** _({turn.stage})_"
    if turn.answer is not None:
        head += f" — answer: **{inline(turn.answer)}**"
        if turn.confidence is not None:
            head += f" (confidence {turn.confidence:.2f})"
    elif turn.reason:
        head += f" — abstained: {inline(turn.reason)}"
    return [head, "", *_quote(turn.content)] if turn.content.strip() else [head]


def _outcome_markdown(
    values: Mapping[str, Any], transcript: Sequence[Turn], wall_s: float | None
) -> list[str]:
    """How the run ended, its times and usage, and a per-agent usage table."""
    lines: list[str] = []
    reason = termination(values)
    if reason:
        lines += [f"Termination: {inline(reason)}", ""]
    if wall_s is not None:
        lines += [f"Wall time: {wall_s:.1f} s", ""]
    lines += [f"Usage: {_tokens(total_usage(values, transcript))}", ""]
    for key in ("agent", "model"):
        by_key = {a: u for a, u in usage_by(transcript, key).items() if u.calls}
        if not by_key or (key == "model" and list(by_key) == [""]):
            continue
        lines += [
            f"| {key} | prompt | completion | calls | model time, sum of calls (s) |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        lines += [
            f"| {inline(a or '?')} | {u.prompt_tokens:,} | {u.completion_tokens:,} | {u.calls} | "
            f"{u.latency_s:.1f} |"
            for a, u in by_key.items()
        ]
        lines.append("")
    return lines


# -- the generic summary ----------------------------------------------------------------


def field_label(key: str) -> str:
    """A summary field's key as its label: ``tie_break`` -> ``Tie break``.

    Args:
        key: The field's key.

    Returns:
        The label.
    """
    text = key.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def is_scalar(value: Any) -> bool:
    """Whether a summary value is one scalar (``None``, text, a number, a bool).

    Args:
        value: A JSON-able value.

    Returns:
        True for a scalar.
    """
    return value is None or isinstance(value, str | int | float | bool)


def scalar_text(value: Any) -> str:
    """A scalar as text (``None`` reads ``none``).

    Args:
        value: A scalar.

    Returns:
        The text.
    """
    return "none" if value is None else str(value)


def _code(text: str) -> str:
    """Inline code (a double-backtick span if the text holds a backtick)."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _field_markdown(label: str, value: Any) -> list[str]:
    if isinstance(value, str) and "\n" in value.strip():
        return [f"{label}:", "", *_quote(value)]
    if is_scalar(value) or is_flat(value):
        return [f"{label}: {_flat_text(value)}"]
    if isinstance(value, dict) and all(is_scalar(v) for v in value.values()):
        rows = [f"| {inline(k)} | {inline(scalar_text(v))} |" for k, v in value.items()]
        return [f"{label}:", "", "| key | value |", "| --- | --- |", *rows]
    return [f"{label}:", "", *_list_items(value, 0)]


def is_flat(value: Any) -> bool:
    """Whether a summary value reads on one line: empty, or a list of scalars.

    Args:
        value: A JSON-able value.

    Returns:
        True if it reads on one line.
    """
    if isinstance(value, dict | list) and not value:
        return True
    return isinstance(value, list) and all(is_scalar(v) for v in value)


def _flat_text(value: Any) -> str:
    if isinstance(value, dict | list):
        return inline(", ".join(scalar_text(v) for v in value)) if value else "none"
    return inline(scalar_text(value))


def _list_items(value: Any, depth: int) -> list[str]:
    """A record (a mapping) or a list of them as a Markdown list, nested as it nests.

    A field is ``- Key: value``; a record of scalars in a list is one item,
    ``- Key: value · Key: value``; deeper records are nested lists.
    """
    if isinstance(value, dict):
        pairs = [(f"{field_label(str(k))}: ", v) for k, v in value.items()]
    else:
        pairs = [("", v) for v in value]
    pad = "  " * depth
    lines: list[str] = []
    for n, (head, item) in enumerate(pairs, 1):
        if isinstance(item, str) or is_scalar(item) or is_flat(item):
            lines.append(f"{pad}- {head}{_flat_text(item)}")
        elif isinstance(item, dict) and all(is_scalar(v) or is_flat(v) for v in item.values()):
            fields = " · ".join(f"{field_label(str(k))}: {_flat_text(v)}" for k, v in item.items())
            lines.append(f"{pad}- {head}{fields}")
        else:
            lines += [f"{pad}- {head.rstrip() or f'item {n}:'}", *_list_items(item, depth + 1)]
    return lines
