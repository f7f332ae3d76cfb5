"""The consensus report as Markdown, for the CLI's ``--report`` file (pure, and light).

This module imports nothing heavy at run time (the record types only for type checking),
so the pattern's declaration can name :func:`render_report_markdown` without loading
LangGraph.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from debategraph.state.discussion import ConsensusReport, ConvergenceRecord, Insight


def _bullets(items: Sequence[str]) -> list[str]:
    return [f"- {i}" for i in items] or ["(none)"]


def render_report_markdown(
    report: ConsensusReport,
    *,
    title: str | None = None,
    termination_reason: str | None = None,
    convergence: Sequence[ConvergenceRecord] = (),
    insights: Mapping[str, Sequence[Insight]] | None = None,
) -> str:
    """The consensus report as Markdown (pure), for the CLI's ``--report`` file.

    Args:
        report: The report.
        title: The document's title.
        termination_reason: Why the discussion ended.
        convergence: The convergence record of each iteration.
        insights: Each agent's final insights.

    Returns:
        The Markdown text, ending with a newline.
    """
    out = [f"# Discussion report: {title}" if title else "# Discussion report", ""]
    if report.fallback:
        out += [f"> Note: {report.fallback}", ""]
    out += ["## Overview", "", report.overview or "(none)", ""]
    out += ["## Main contributions", "", *_bullets(report.main_contributions), ""]
    out += ["## Consensus points", ""]
    for p in report.consensus_points:
        against = f"; opposing: {', '.join(p.opposing)}" if p.opposing else ""
        out.append(
            f"- {p.statement} (strength {p.strength:.2f}; supporting: "
            f"{', '.join(p.supporting) or 'none'}{against})"
        )
    if not report.consensus_points:
        out.append("(none)")
    out += ["", "## Divergent views", ""]
    for v in report.divergent_views:
        out.append(f"### {v.topic}")
        out.append("")
        for pos in v.positions:
            why = f" ({'; '.join(pos.reasons)})" if pos.reasons else ""
            out.append(f"- **{pos.agent}**: {pos.position}{why}")
        out.append("")
    if not report.divergent_views:
        out += ["(none)", ""]
    out += ["## Consensus assessment", "", report.consensus_assessment or "(none)", ""]
    out += ["## Contested points", "", *_bullets(report.contested_points), ""]
    out += ["## Significance", "", report.significance or "(none)", ""]
    out += [f"Overall confidence: {report.overall_confidence:.2f}", ""]
    if insights:
        out += ["## Final insights", ""]
        for agent, items in insights.items():
            out.append(f"### {agent}")
            out.append("")
            out += [f"- [{i.id}] {i.content} (importance {i.importance:.2f})" for i in items]
            out.append("")
    if convergence or termination_reason:
        out += ["## Convergence", ""]
        out += [
            f"- iteration {c.iteration}: score {c.score:.2f} (consistency {c.consistency:.2f}, "
            f"completeness {c.completeness:.2f}, resolution {c.resolution:.2f}, "
            f"stability {c.stability:.2f})"
            for c in convergence
        ]
        if termination_reason:
            out.append(f"- ended: {termination_reason}")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
