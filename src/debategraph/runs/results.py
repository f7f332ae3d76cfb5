"""A thread's result: the pattern's fields, usage, time (what the CLI prints with ``--json``).

The thread tools (``show``, ``resume``), a run's end and any other door give the same
result, made here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from debategraph.checkpoints import inbox
from debategraph.checkpoints.threads import thread_wall_time
from debategraph.described import Described
from debategraph.state.records import Usage

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver


def _usage_fields(usage: Usage) -> set[str]:
    """Token counts and calls; ``estimated`` and ``cache_hits`` too where there were any."""
    fields = {"prompt_tokens", "completion_tokens", "calls"}
    if usage.estimated:
        fields.add("estimated")
    if usage.cache_hits:
        fields.add("cache_hits")
    return fields


def result_of(
    pattern: Described, thread_id: str, values: Mapping[str, Any], wall_s: float
) -> dict[str, Any]:
    """The result of a thread as the CLI prints it (``--json``).

    Args:
        pattern: The thread's pattern.
        thread_id: The thread.
        values: Its state values.
        wall_s: The thread's wall time (:func:`~debategraph.checkpoints.threads.
            thread_wall_time`).

    Returns:
        ``thread_id``, the pattern's own fields, ``termination_reason``, ``usage`` and
        ``wall_s``.
    """
    from debategraph.state.base import termination_word

    usage = Usage.coerce(values.get("usage"))
    return {
        "thread_id": thread_id,
        **pattern.summary(values),
        "termination_reason": termination_word(values.get("termination_reason")),
        "usage": usage.model_dump(include=_usage_fields(usage)),
        "usage_by_agent": _usage_table(values.get("usage_by_agent")),
        "usage_by_model": _usage_table(values.get("usage_by_model")),
        **_tool_calls(values),
        "wall_s": round(wall_s, 3),
    }


def _tool_calls(values: Mapping[str, Any]) -> dict[str, Any]:
    """``tool_calls``: the agents' tool calls, where there were any."""
    from debategraph.checkpoints.thread_values import turns

    calls = [t for t in turns(values) if t.role == "tool"]
    if not calls:
        return {}
    return {
        "tool_calls": [
            {
                "agent": t.agent,
                "round": t.round,
                "tool": t.tool,
                "arguments": t.arguments,
                "result": t.content,
                "error": t.reason,
            }
            for t in calls
        ]
    }


def _usage_table(raw: Any) -> dict[str, Any]:
    """Agent (or model) -> its tokens, calls and model time (the sum of its calls')."""
    table = {k: Usage.coerce(v) for k, v in (raw or {}).items()} if isinstance(raw, Mapping) else {}
    return {k: u.model_dump(include=_usage_fields(u) | {"latency_s"}) for k, u in table.items()}


def thread_wall(saver: BaseCheckpointSaver[Any], db: str, thread_id: str) -> float:
    """A thread's wall time, with the ends of its runs noted in the store of ``db``.

    Args:
        saver: The checkpointer of ``db``.
        db: The ``--db`` value.
        thread_id: The thread.

    Returns:
        Seconds (:func:`~debategraph.checkpoints.threads.thread_wall_time`), to the
        millisecond the JSON results give: every view formats this one value, so a time
        such as 0.5498 s never reads 0.5 s in one view and (as 0.55) 0.6 s in another.
    """
    with inbox.open_store(db) as store:
        return round(thread_wall_time(saver, thread_id, store), 3)
