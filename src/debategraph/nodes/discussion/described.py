"""What a discussion is, for every reader of its threads: title, result fields, report, page.

The registry line names :data:`DESCRIBED`; the CLI's ``discuss`` command adds its options
and terminal rendering (:mod:`debategraph.cli.patterns.discussion`).
"""

from __future__ import annotations

from typing import Any

from debategraph.checkpoints.thread_values import jsonable, turns
from debategraph.described import Described, Report, pausing
from debategraph.nodes.discussion.markdown import render_report_markdown
from debategraph.nodes.discussion.setup import (
    DEFAULT_PERSONAS,
    INITIAL_STAGE,
    OPEN_ITERATION_NODE,
    QUESTION_STAGE,
    RESPONSE_STAGE,
)
from debategraph.nodes.rounds import REVIEW_NODE
from debategraph.registry import Values
from debategraph.words import plural, quoted


def paper_title(values: Values) -> str:
    """The discussed paper's title, from a thread's values.

    Args:
        values: The thread's state values.

    Returns:
        The title, or ``""`` before the paper was read.
    """
    paper = values.get("paper")
    if isinstance(paper, dict):  # a strict checkpoint read hands records back as dicts
        return str(paper.get("title") or "")
    return str(getattr(paper, "title", "") or "")


def _summary(values: Values) -> dict[str, Any]:
    report = values.get("report")
    convergence = values.get("convergence") or []
    return {
        "title": paper_title(values),
        "iterations_completed": values.get("iterations_completed", 0),
        "convergence": convergence[-1].model_dump(mode="json") if convergence else None,
        "report": report.model_dump(mode="json") if report is not None else None,
        "notes": list(values.get("notes") or []),
    }


def explain(values: Values) -> list[str]:
    """The discussion's result in sentences: how far the personas converged, the report.

    Args:
        values: The thread's state values.

    Returns:
        The convergence after the last iteration, then the report's counts and each of
        its points of consensus and disputed topics (the report's text isolated).
    """
    lines = []
    convergence = values.get("convergence") or []
    if convergence:
        last = convergence[-1]
        score = "not measured" if last.score is None else f"{round(100 * last.score)}%"
        ended = f" ({quoted(last.termination_reason)})" if last.termination_reason else ""
        lines.append(
            f"After {plural(last.iteration, 'iteration')} the personas' convergence was "
            f"{score}{ended}."
        )
    report = values.get("report")
    if report is not None:
        points = len(report.consensus_points)
        views = len(report.divergent_views)
        lines.append(
            f"The report: {plural(points, 'point')} of consensus, "
            f"{plural(views, 'topic')} still disputed, confidence "
            f"{round(100 * report.overall_confidence)}%."
        )
        lines += [f"Agreed: {quoted(p.statement)}." for p in report.consensus_points]
        lines += [f"Disputed: {quoted(v.topic)}." for v in report.divergent_views]
    return lines


def _turn_fields(values: Values) -> dict[str, dict[str, Any]]:
    """What a discussion's page shows under its turns: stances and revised insights.

    Under each response turn, its stances (the question's turn linked) and revisions;
    under each agent's first turn, its insights as they stand now (version, when revised).
    """
    by_key = {(t.agent, t.round, t.stage): t.id for t in turns(values)}
    asked = {
        q["id"]: by_key.get((q["asker"], q["iteration"], QUESTION_STAGE))
        for q in jsonable(values.get("questions") or [])
    }
    out: dict[str, dict[str, Any]] = {}
    for r in jsonable(values.get("responses") or []):
        turn_id = by_key.get((r["agent"], r["iteration"], RESPONSE_STAGE))
        if turn_id is not None:
            stances = out.setdefault(turn_id, {}).setdefault("stances", [])
            stances.append(
                {
                    "question": r["question_id"],
                    "asked in": asked.get(r["question_id"]),
                    "stance": r["stance"],
                    "revised insight": r.get("revised_insight"),
                    "confidence": r["confidence"],
                }
            )
    for agent, insights in jsonable(values.get("insights") or {}).items():
        turn_id = by_key.get((agent, 0, INITIAL_STAGE))
        if turn_id is not None and insights:
            out.setdefault(turn_id, {})["insights now"] = [
                {
                    "id": i["id"],
                    "version": i["version"],
                    "revised in iteration": i["revised_in"] or None,
                    "insight": i["content"],
                }
                for i in insights
            ]
    return out


def _personas(settings: Values) -> int:
    return len(settings.get("personas") or DEFAULT_PERSONAS)


def _describe(settings: Values) -> str:
    return (
        f"{plural(_personas(settings), 'persona')}, up to "
        f"{plural(settings['max_rounds'], 'iteration')}, "
        f"threshold {settings['threshold']}, time limit {settings['time_limit_s']:.0f}s"
        f"{pausing(settings)}"
    )


def _render_report(values: Values, title: str) -> str | None:
    if values.get("report") is None:
        return None
    return render_report_markdown(
        values["report"],
        title=title,
        termination_reason=values.get("termination_reason"),
        convergence=values.get("convergence") or (),
        insights=values.get("insights"),
    )


#: The discussion, as the thread tools, the runs and the eval read it.
DESCRIBED = Described(
    name="discussion",
    title=paper_title,
    summary=_summary,
    describe=_describe,
    agents_per_round=_personas,
    report=Report("discussion-{thread_id}.md", _render_report),
    explain=explain,
    turn_fields=_turn_fields,
    boundary_nodes=frozenset({OPEN_ITERATION_NODE, REVIEW_NODE}),
    round_word="iteration",
)
