"""What a group chat is, for every reader of its threads: title, result fields, turns.

The registry line names :data:`DESCRIBED`; the CLI's ``chat`` command adds its options
and terminal rendering (:mod:`debategraph.cli.patterns.group_chat`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from debategraph.described import Described, pausing
from debategraph.nodes.conversation import transcript_json
from debategraph.registry import Values
from debategraph.words import plural, quoted


def agent_name(entry: Any) -> str:
    """An agent's name as the settings give it (a record's, a dict's or a string's)."""
    if isinstance(entry, str):
        return entry.split(":", 1)[0].strip()
    if isinstance(entry, Mapping):
        if "name" not in entry and len(entry) == 1:
            return str(next(iter(entry)))
        return str(entry.get("name"))
    return str(getattr(entry, "name", entry))


def _describe(settings: Values) -> str:
    names = [agent_name(a) for a in settings["agents"]]
    until = list(settings.get("until") or [])
    if settings.get("time_limit_s") is not None:
        until.append(f"timeout:{settings['time_limit_s']:g}s")
    ends = f" until {' or '.join(until)}" if until else ""
    guard = f", at most {settings['max_in_a_row']} in a row" if settings.get("max_in_a_row") else ""
    return (
        f"{', '.join(names)}, {settings['selection']} selection{guard}{ends}, "
        f"at most {plural(settings['max_rounds'], 'turn')}{pausing(settings)}"
    )


def _summary(values: Values) -> dict[str, Any]:
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


#: How a speaker was chosen, in words (a :class:`~debategraph.state.group_chat.SelectionRecord`'s
#: ``method``).
_METHODS = {
    "initial": "the first speaker",
    "sequential": "in turn",
    "llm": "by the selector model",
    "rules": "by the rules",
    "named": "named by the caller",
    "fallback": "by the fallback (the selector named nobody)",
    "guard": "by the guard (too many turns in a row)",
}


def explain(values: Values) -> list[str]:
    """The chat's result in sentences: how long it ran, why it ended, how speakers were chosen.

    Args:
        values: The thread's state values.

    Returns:
        The sentences, model text isolated.
    """
    spoken = [t for t in values.get("transcript") or () if t.role == "agent"]
    if not spoken:
        return []
    who = dict.fromkeys(t.agent for t in spoken)
    lines = [f"{plural(len(spoken), 'turn')} by {', '.join(map(quoted, who))}."]
    detail = values.get("termination_detail")
    if values.get("is_complete") and detail:
        lines.append(f"It ended because {quoted(detail)}.")
    counts: dict[str, int] = {}
    for record in values.get("selections") or ():
        counts[record.method] = counts.get(record.method, 0) + 1
    if counts:
        chosen = ", ".join(
            f"{plural(n, 'turn')} {_METHODS.get(m, quoted(m))}" for m, n in counts.items()
        )
        lines.append(f"Speakers were chosen: {chosen}.")
    return lines


#: The group chat, as the thread tools, the runs and the eval read it.
DESCRIBED = Described(
    name="group_chat",
    title=lambda values: str(values.get("task") or ""),
    summary=_summary,
    describe=_describe,
    agents_per_round=lambda s: 1,
    round_word="turn",
    explain=explain,
)
