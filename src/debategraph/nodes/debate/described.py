"""What a debate is, for every reader of its threads: its title, result fields, settings line.

The registry line names :data:`DESCRIBED`; the CLI's ``debate`` command adds its options
and terminal rendering (:mod:`debategraph.cli.patterns.debate`).
"""

from __future__ import annotations

from typing import Any

from debategraph.described import Described, pausing
from debategraph.registry import Values
from debategraph.words import plural, quoted


def _describe(settings: Values) -> str:
    names = [d.split(":", 1)[0] if isinstance(d, str) else d["name"] for d in settings["debaters"]]
    extras = [x for x in ("moderator", "judge") if settings.get(x)]
    if settings.get("history") == "window":
        extras.append(f"window of {settings['keep_last']}")
    extra = f" + {', '.join(extras)}" if extras else ""
    return (
        f"{' vs '.join(names)}{extra}, {plural(settings['max_rounds'], 'round')}, "
        f"{settings['words']} words per turn{pausing(settings)}"
    )


def _summary(values: Values) -> dict[str, Any]:
    verdict = values.get("verdict")
    return {
        "topic": values.get("topic"),
        "stances": dict(values.get("stances") or {}),
        "winner": verdict.winner if verdict is not None else None,
        "verdict": verdict.model_dump(mode="json") if verdict is not None else None,
        "rounds_completed": values.get("rounds_completed", 0),
        "moderator": [d.model_dump(mode="json") for d in values.get("moderator_decisions", [])],
        "words": [w.model_dump(mode="json") for w in values.get("word_counts", [])],
    }


def explain(values: Values) -> list[str]:
    """The debate's result in sentences: the sides, the moderator's calls, the verdict.

    Args:
        values: The thread's state values.

    Returns:
        The sentences, model text isolated.
    """
    stances = values.get("stances") or {}
    lines = []
    if stances:
        sides = "; ".join(f"{quoted(name)} argued {quoted(side)}" for name, side in stances.items())
        lines.append(f"The sides: {sides}.")
    for call in values.get("moderator_decisions") or []:
        did = "ended the debate as settled" if call.settled else "let it go on"
        leading = "" if call.leading == "tie" else f", {quoted(call.leading)} leading"
        lines.append(
            f"After round {call.round} the moderator {did}{leading}: {quoted(call.reason)}."
        )
    verdict = values.get("verdict")
    if verdict is not None:
        won = "called a tie" if verdict.winner == "tie" else f"gave it to {quoted(verdict.winner)}"
        lines.append(f"The judge {won}: {quoted(verdict.rationale)}.")
        lines += [
            f"The strongest argument of {quoted(s.debater)}: {quoted(s.argument)}."
            for s in verdict.strongest
        ]
    elif "verdict" in values:
        done = values.get("rounds_completed", 0)
        lines.append(f"No judge gave a verdict; {plural(done, 'round')} of arguments ran.")
    return lines


#: The debate, as the thread tools, the runs and the eval read it.
DESCRIBED = Described(
    name="debate",
    title=lambda values: str(values.get("topic") or ""),
    summary=_summary,
    describe=_describe,
    agents_per_round=lambda s: len(s["debaters"]),
    explain=explain,
)
