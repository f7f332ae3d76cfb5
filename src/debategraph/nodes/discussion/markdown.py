"""The consensus report as Markdown, and the convergence in words (pure).

The pattern's description (:mod:`debategraph.nodes.discussion.described`) writes the
report file with :func:`render_report_markdown`, and its CLI declaration
(:mod:`debategraph.cli.patterns.discussion`) its lines with :func:`convergence_text`;
the nodes use the same words in the pause's payload and the report's notes.

What was not measured or not written says so: a convergence component the iteration gave
nothing to measure is ``n/a`` (never 1.00), and a report the consensus call did not write
(its ``fallback`` is set) says, section by section, what it was built from instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debategraph.state.discussion import ConsensusReport, ConvergenceRecord, Insight

#: The measured components of convergence, in the order they are shown.
COMPONENTS = ("consistency", "completeness", "resolution", "stability")
#: How an unmeasured component (or a score with nothing to score) is shown.
NOT_MEASURED = "n/a"
#: The ending's explanation when the scores said converged and the consensus has no point.
NOT_CONVERGED = (
    "not converged: the convergence score reached the threshold, but the consensus report "
    "has no point the agents agree on"
)
#: What a section the consensus call did not write shows instead of its text.
NOT_WRITTEN = "(not written: the consensus call gave no usable report)"


def shown_share(value: float | None, digits: int = 2) -> float | str:
    """A 0-1 value for a JSON payload: rounded, or ``"n/a"`` when it was not measured.

    Args:
        value: The value, or ``None``.
        digits: Decimal places kept.

    Returns:
        The rounded value or ``"n/a"``.
    """
    return NOT_MEASURED if value is None else round(value, digits)


def share_text(value: float | None) -> str:
    """A 0-1 value in words: two decimals, or ``n/a`` when it was not measured.

    Args:
        value: The value, or ``None``.

    Returns:
        The text.
    """
    return NOT_MEASURED if value is None else f"{value:.2f}"


def _field(record: ConvergenceRecord | Mapping[str, Any], name: str) -> Any:
    """A field of a record, or of its dict form (JSON, a strict checkpoint read)."""
    if isinstance(record, Mapping):
        return record.get(name)
    return getattr(record, name, None)


def convergence_text(
    record: ConvergenceRecord | Mapping[str, Any], *, by_agent: bool = False
) -> str:
    """One iteration's convergence in words: the score, each component, the self-scores.

    For example ``score 0.00 (consistency n/a, completeness n/a, resolution n/a,
    stability n/a; self-scores: mean 0.00 of 4)``.

    Args:
        record: The iteration's convergence record (or its dict form).
        by_agent: Name each agent's self-score instead of giving their mean.

    Returns:
        The text.
    """
    parts = ", ".join(f"{name} {share_text(_field(record, name))}" for name in COMPONENTS)
    votes: Mapping[str, float] = _field(record, "agent_scores") or {}
    if not votes:
        said = "no usable self-score"
    elif by_agent:
        said = "self-scores: " + ", ".join(f"{a} {v:.2f}" for a, v in votes.items())
    else:
        mean = sum(votes.values()) / len(votes)
        said = f"self-scores: mean {mean:.2f} of {len(votes)}"
    return f"score {share_text(_field(record, 'score'))} ({parts}; {said})"


def ending_text(
    termination_reason: str | None, convergence: Sequence[ConvergenceRecord | Mapping[str, Any]]
) -> str | None:
    """Why the discussion ended, with what its word alone would hide.

    A discussion whose last check said ``converged`` but whose consensus has no point
    ends otherwise (see ``ending_without_consensus``); the word is then followed by why.

    Args:
        termination_reason: The discussion's termination reason.
        convergence: Its convergence records.

    Returns:
        The text, or ``None`` while it goes on.
    """
    if not termination_reason:
        return None
    last = convergence[-1] if convergence else None
    if (
        termination_reason != "converged"
        and last is not None
        and _field(last, "termination_reason") == "converged"
    ):
        return f"{termination_reason} ({NOT_CONVERGED})"
    return termination_reason


def _bullets(items: Sequence[str], empty: str = "(none)") -> list[str]:
    return [f"- {i}" for i in items] or [empty]


def _fallback_note(report: ConsensusReport) -> list[str]:
    return [
        f"> Not written by a model: {report.fallback}. Its main contributions are the "
        "agents' most important insights, unsynthesised; its contested points are the "
        "challenges answered with disagreement or left unanswered; nothing else in it was "
        "written.",
        "",
    ]


def render_report_markdown(
    report: ConsensusReport,
    *,
    title: str | None = None,
    termination_reason: str | None = None,
    convergence: Sequence[ConvergenceRecord] = (),
    insights: Mapping[str, Sequence[Insight]] | None = None,
) -> str:
    """The consensus report as Markdown (pure), for the CLI's ``--report`` file.

    A report the consensus call did not write (``fallback`` set) says so at its top and
    in each section: what the model would have written is ``(not written ...)``, and
    what was built from state says from what.

    Args:
        report: The report.
        title: The document's title.
        termination_reason: Why the discussion ended.
        convergence: The convergence record of each iteration.
        insights: Each agent's final insights.

    Returns:
        The Markdown text, ending with a newline.
    """
    built = bool(report.fallback)
    none = NOT_WRITTEN if built else "(none)"
    out = [f"# Discussion report: {title}" if title else "# Discussion report", ""]
    if built:
        out += _fallback_note(report)
    out += ["## Overview", "", report.overview or none, ""]
    if built:
        out += ["## Main contributions (the agents' most important insights, unsynthesised)", ""]
    else:
        out += ["## Main contributions", ""]
    out += [*_bullets(report.main_contributions, none), ""]
    out += ["## Consensus points", ""]
    for p in report.consensus_points:
        against = f"; opposing: {', '.join(p.opposing)}" if p.opposing else ""
        out.append(
            f"- {p.statement} (strength {p.strength:.2f}; supporting: "
            f"{', '.join(p.supporting) or 'none'}{against})"
        )
    if not report.consensus_points:
        out.append(none)
    out += ["", "## Divergent views", ""]
    for v in report.divergent_views:
        out.append(f"### {v.topic}")
        out.append("")
        for pos in v.positions:
            why = f" ({'; '.join(pos.reasons)})" if pos.reasons else ""
            out.append(f"- **{pos.agent}**: {pos.position}{why}")
        out.append("")
    if not report.divergent_views:
        out += [none, ""]
    out += ["## Consensus assessment", "", report.consensus_assessment or none, ""]
    if built:
        out += ["## Contested points (challenges answered with disagreement or unanswered)", ""]
    else:
        out += ["## Contested points", ""]
    out += [*_bullets(report.contested_points), ""]
    out += ["## Significance", "", report.significance or none, ""]
    confidence = f"Overall confidence: {report.overall_confidence:.2f}"
    if built:
        confidence += " (the mean confidence of the agents' insights, not a model's judgement)"
    out += [confidence, ""]
    if insights:
        out += ["## Final insights", ""]
        for agent, items in insights.items():
            out.append(f"### {agent}")
            out.append("")
            out += [f"- [{i.id}] {i.content} (importance {i.importance:.2f})" for i in items]
            out.append("")
    ending = ending_text(termination_reason, convergence)
    if convergence or ending:
        out += ["## Convergence", ""]
        out += [
            f"- iteration {c.iteration}: {convergence_text(c, by_agent=True)}" for c in convergence
        ]
        if ending:
            out.append(f"- ended: {ending}")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
