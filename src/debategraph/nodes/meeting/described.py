"""What a meeting is, for every reader of its threads: title, result fields, its rounds.

The registry line names :data:`DESCRIBED`; the CLI's ``meeting`` command adds its options
and terminal rendering (:mod:`debategraph.cli.patterns.meeting`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from debategraph.described import Described, pausing
from debategraph.nodes.conversation import transcript_json
from debategraph.nodes.meeting.prompts import CHAIR_FALLBACK
from debategraph.nodes.meeting.setup import CHAIR_AGENT, DECISION_STAGE
from debategraph.registry import Values
from debategraph.state.records import Turn
from debategraph.words import quoted


def _stages_of(settings: Values) -> list[Mapping[str, Any]]:
    return [s for s in settings.get("stages") or () if isinstance(s, Mapping)]


def _caps(settings: Values) -> tuple[list[int], list[int]]:
    """Each stage's round cap and its number of participants, from a run's settings."""
    stages = _stages_of(settings)
    default = int(settings.get("max_rounds") or 1)
    caps = [int(s.get("max_rounds") or default) for s in stages]
    return caps, [len(s.get("participants") or ()) for s in stages]


def _participant_name(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("name", "?"))
    return str(value).partition(":")[0].strip()


def _describe(settings: Values) -> str:
    caps, _ = _caps(settings)
    parts = [
        f"{s.get('name')} ({', '.join(_participant_name(p) for p in s.get('participants') or ())}"
        f"; {cap} round{'s' if cap != 1 else ''})"
        for s, cap in zip(_stages_of(settings), caps, strict=True)
    ]
    return f"{' → '.join(parts)}{pausing(settings)}"


def chair_fallback(turns: Sequence[Turn]) -> str | None:
    """Why the chair's final decision is none, when its call fell back.

    Args:
        turns: Transcript records (:class:`~debategraph.state.records.Turn`): the
            thread's, or a node's update.

    Returns:
        ``the chair gave no usable decision: <why>`` from the chair's latest decision
        turn that has no answer, or ``None``.
    """
    for turn in reversed(turns):
        if turn.agent == CHAIR_AGENT and turn.stage == DECISION_STAGE:
            return f"{CHAIR_FALLBACK}: {turn.reason}" if turn.reason else None
    return None


def _summary(values: Values) -> dict[str, Any]:
    decision = values.get("decision")
    return {
        "topic": values.get("topic"),
        "decision": decision.model_dump(mode="json") if decision is not None else None,
        "decision_fallback": None if decision else chair_fallback(values.get("transcript") or ()),
        "controller": [d.model_dump(mode="json") for d in values.get("controller_decisions", [])],
        "stage": values.get("stage"),
        "rounds": values.get("round", 0),
        "transcript": transcript_json(values, full=True),
    }


#: How a round controller's action reads.
_ACTIONS = {"continue": "gave the stage another round", "next_stage": "moved on"}


def explain(values: Values) -> list[str]:
    """The meeting's result in sentences: the chair's decision and why, the controller's calls.

    Args:
        values: The thread's state values.

    Returns:
        One sentence per round controller's call (which stage, what it did, why), then
        the chair's decision, rationale, dissent and next steps (model text isolated).
    """
    lines = []
    for call in values.get("controller_decisions") or []:
        did = _ACTIONS.get(call.action, f"chose {quoted(call.action)}")
        where = f"After round {call.stage_round} of {quoted(call.stage)} the controller {did}"
        said = "" if call.forced else " (its own call)"
        lines.append(f"{where}{said}: {quoted(call.reason)}.")
    decision = values.get("decision")
    if decision is not None:
        lines.append(f"The chair decided: {quoted(decision.decision)}.")
        lines.append(f"Why: {quoted(decision.rationale)}.")
        if decision.dissent:
            lines.append("Dissent: " + "; ".join(map(quoted, decision.dissent)) + ".")
        if decision.next_steps:
            lines.append("Next steps: " + "; ".join(map(quoted, decision.next_steps)) + ".")
    else:
        fallback = chair_fallback(values.get("transcript") or ())
        if fallback:
            lines.append(f"{quoted(fallback)}.")
    return lines


#: The meeting, as the thread tools, the runs and the eval read it.
DESCRIBED = Described(
    name="meeting",
    title=lambda values: str(values.get("topic") or ""),
    summary=_summary,
    describe=_describe,
    agents_per_round=lambda s: max(_caps(s)[1], default=1),
    last_round=lambda s: sum(_caps(s)[0]) or None,  # a meeting's rounds run on across stages
    explain=explain,
)
