"""The registry of graph patterns the CLI runs, resumes and inspects.

A thread's checkpoint metadata names its pattern and the factory's settings; this
registry turns that back into the same graph, and says how to summarise a thread's result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.graph import StateGraph

from debategraph.errors import UsageError
from debategraph.graphs import debate, discussion, solver_debate
from debategraph.state import Usage


@dataclass(frozen=True)
class Pattern:
    """How the CLI handles one graph pattern.

    Attributes:
        name: The pattern's name (also the compiled graph's name).
        build: ``build(model, **settings)``: the factory.
        recursion_limit: Supersteps a run with these settings may take.
        title: What names a thread (its question, topic or paper title), from its values.
        summary: The pattern's own result fields, from a thread's state values.
        describe: A one-line description of a run's settings.
        agents_per_round: How many agents one round (or phase) runs: the default
            maximum concurrency, and the embedded model's parallel slots.
        streams_text: Whether agents write prose worth streaming token by token.
    """

    name: str
    build: Callable[..., StateGraph[Any, Any, Any, Any]]
    recursion_limit: Callable[[Mapping[str, Any]], int]
    title: Callable[[Mapping[str, Any]], str]
    summary: Callable[[Mapping[str, Any]], dict[str, Any]]
    describe: Callable[[Mapping[str, Any]], str]
    agents_per_round: Callable[[Mapping[str, Any]], int]
    streams_text: bool = False


def _solver_summary(values: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "answer": values.get("answer"),
        "votes": values.get("votes", {}),
        "agreement": values.get("agreement", 0.0),
        "tie_break": values.get("tie_break"),
        "rounds": [r.model_dump(include={"round", "answers"}) for r in values.get("rounds", [])],
    }


def _solver_label(settings: Mapping[str, Any]) -> str:
    topo = settings["topology"]
    if isinstance(topo, dict):
        shape = f"custom topology of {len(topo)} solvers"
    elif topo == "ring":
        k = settings["neighbours"] or min(2, settings["agents"] - 1)
        shape = f"{settings['agents']} solvers, ring k={k}"
    else:
        shape = f"{settings['agents']} solvers, {topo}"
    return f"{shape}, {settings['rounds']} rounds{_pause(settings)}"


def _debate_label(settings: Mapping[str, Any]) -> str:
    names = [
        str(d).split(":", 1)[0] if isinstance(d, str) else d["name"] for d in settings["debaters"]
    ]
    extras = [x for x in ("moderator", "judge") if settings.get(x)]
    if settings.get("history") == "window":
        extras.append(f"window of {settings['keep_last']}")
    extra = f" + {', '.join(extras)}" if extras else ""
    return (
        f"{' vs '.join(names)}{extra}, {settings['max_rounds']} rounds, "
        f"{settings['words']} words per turn{_pause(settings)}"
    )


def _discussion_label(settings: Mapping[str, Any]) -> str:
    personas = settings.get("personas")
    n = len(personas) if personas else len(discussion.DEFAULT_PERSONAS)
    return (
        f"{n} personas, up to {settings['max_iterations']} iterations, "
        f"threshold {settings['threshold']}, time limit {settings['time_limit_s']:.0f}s"
    )


def _discussion_summary(values: Mapping[str, Any]) -> dict[str, Any]:
    report = values.get("report")
    convergence = values.get("convergence") or []
    return {
        "title": _paper_title(values),
        "iterations_completed": values.get("iterations_completed", 0),
        "convergence": convergence[-1].model_dump(mode="json") if convergence else None,
        "report": report.model_dump(mode="json") if report is not None else None,
        "notes": list(values.get("notes") or []),
    }


def _paper_title(values: Mapping[str, Any]) -> str:
    paper = values.get("paper")
    return str(getattr(paper, "title", "") or "")


def _pause(settings: Mapping[str, Any]) -> str:
    return ", pausing after each round" if settings.get("pause_after_round") else ""


def _debate_summary(values: Mapping[str, Any]) -> dict[str, Any]:
    verdict = values.get("verdict")
    return {
        "topic": values.get("topic"),
        "winner": verdict.winner if verdict is not None else None,
        "verdict": verdict.model_dump(mode="json") if verdict is not None else None,
        "rounds_completed": values.get("rounds_completed", 0),
        "moderator": [d.model_dump(mode="json") for d in values.get("moderator_decisions", [])],
        "words": [w.model_dump(mode="json") for w in values.get("word_counts", [])],
    }


PATTERNS: dict[str, Pattern] = {
    solver_debate.GRAPH_NAME: Pattern(
        name=solver_debate.GRAPH_NAME,
        build=solver_debate.build_solver_debate,
        recursion_limit=lambda s: solver_debate.recursion_limit(int(s["rounds"])),
        title=lambda values: str(values.get("question") or ""),
        summary=_solver_summary,
        describe=_solver_label,
        agents_per_round=lambda s: (
            len(s["topology"]) if isinstance(s["topology"], dict) else int(s["agents"])
        ),
    ),
    debate.GRAPH_NAME: Pattern(
        name=debate.GRAPH_NAME,
        build=debate.build_debate,
        recursion_limit=lambda s: debate.recursion_limit(int(s["max_rounds"]), len(s["debaters"])),
        title=lambda values: str(values.get("topic") or ""),
        summary=_debate_summary,
        describe=_debate_label,
        agents_per_round=lambda s: len(s["debaters"]),
        streams_text=True,
    ),
    discussion.GRAPH_NAME: Pattern(
        name=discussion.GRAPH_NAME,
        build=discussion.build_discussion,
        recursion_limit=lambda s: discussion.recursion_limit(int(s["max_iterations"])),
        title=_paper_title,
        summary=_discussion_summary,
        describe=_discussion_label,
        agents_per_round=lambda s: len(s.get("personas") or discussion.DEFAULT_PERSONAS),
    ),
}


def get_pattern(name: str) -> Pattern:
    """The pattern called ``name``.

    Args:
        name: A pattern name from a thread's metadata.

    Returns:
        The pattern.

    Raises:
        UsageError: If this version does not know it.
    """
    try:
        return PATTERNS[name]
    except KeyError:
        known = ", ".join(PATTERNS)
        raise UsageError(f"unknown pattern {name!r}: this version runs {known}") from None


def _usage_fields(usage: Usage) -> set[str]:
    """Token counts and calls; ``estimated`` too when a count was estimated."""
    fields = {"prompt_tokens", "completion_tokens", "calls"}
    return fields | {"estimated"} if usage.estimated else fields


def result_of(
    pattern: Pattern, thread_id: str, values: Mapping[str, Any], wall_s: float
) -> dict[str, Any]:
    """The result of a thread as the CLI prints it (``--json``).

    Args:
        pattern: The thread's pattern.
        thread_id: The thread.
        values: Its state values.
        wall_s: Wall time of this run.

    Returns:
        ``thread_id``, the pattern's own fields, ``termination_reason``, ``usage`` and
        ``wall_s``.
    """
    usage: Usage = values.get("usage") or Usage()
    return {
        "thread_id": thread_id,
        **pattern.summary(values),
        "termination_reason": values.get("termination_reason"),
        "usage": usage.model_dump(include=_usage_fields(usage)),
        "wall_s": round(wall_s, 3),
    }
