"""Nodes of the document discussion: analyse, ask, answer, assess, check, report.

One module per concern:

- :mod:`.setup`: the personas, node names and settings (:class:`DiscussionSetup`);
- :mod:`.views`: state readers and the text of the agents' prompts;
- :mod:`.replies`: normalisation of what the models returned in phases 1-3;
- :mod:`.phases`: the persona nodes of phases 1-4, ``prepare``, ``open_iteration``, the joins;
- :mod:`.convergence`: the convergence math, the check node and the pause's payload;
- :mod:`.consensus`: the consensus report (phase 5);
- :mod:`.markdown`: the report as Markdown (light: no LangGraph);
- :mod:`.prompts`: the prompt templates.

The names below are imported on first use, so importing one light module of this
package (``markdown``) does not load the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debategraph.nodes.discussion.consensus import (
        CONSENSUS_STAGE,
        make_consensus,
        normalise_report,
        report_from_state,
    )
    from debategraph.nodes.discussion.convergence import (
        ConvergenceMetrics,
        convergence_metrics,
        convergence_score,
        make_check,
        round_review,
        termination_conditions,
    )
    from debategraph.nodes.discussion.markdown import render_report_markdown
    from debategraph.nodes.discussion.phases import (
        CONVERGENCE_STAGE,
        INITIAL_STAGE,
        PERSONA_NODES,
        QUESTION_STAGE,
        RESPONSE_STAGE,
        SKIP_STAGE,
        join,
        make_open_iteration,
        open_iteration_node,
        prepare,
    )
    from debategraph.nodes.discussion.setup import (
        CHECK_NODE,
        CONSENSUS_NODE,
        DEFAULT_PERSONAS,
        JOIN_NODES,
        OPEN_ITERATION_NODE,
        PHASES,
        PREPARE_NODE,
        QUESTIONS_DONE_NODE,
        RESPONSES_DONE_NODE,
        DiscussionSetup,
        discussion_setup,
        node_name,
        parse_persona,
    )

#: Where each name lives.
_HOMES: dict[str, str] = {
    **dict.fromkeys(
        ["CONSENSUS_STAGE", "make_consensus", "normalise_report", "report_from_state"],
        "consensus",
    ),
    **dict.fromkeys(
        [
            "ConvergenceMetrics",
            "convergence_metrics",
            "convergence_score",
            "make_check",
            "round_review",
            "termination_conditions",
        ],
        "convergence",
    ),
    "render_report_markdown": "markdown",
    **dict.fromkeys(
        [
            "CONVERGENCE_STAGE",
            "INITIAL_STAGE",
            "PERSONA_NODES",
            "QUESTION_STAGE",
            "RESPONSE_STAGE",
            "SKIP_STAGE",
            "join",
            "make_open_iteration",
            "open_iteration_node",
            "prepare",
        ],
        "phases",
    ),
    **dict.fromkeys(
        [
            "CHECK_NODE",
            "CONSENSUS_NODE",
            "DEFAULT_PERSONAS",
            "JOIN_NODES",
            "OPEN_ITERATION_NODE",
            "PHASES",
            "PREPARE_NODE",
            "QUESTIONS_DONE_NODE",
            "RESPONSES_DONE_NODE",
            "DiscussionSetup",
            "discussion_setup",
            "node_name",
            "parse_persona",
        ],
        "setup",
    ),
}

__all__ = [
    "CHECK_NODE",
    "CONSENSUS_NODE",
    "CONSENSUS_STAGE",
    "CONVERGENCE_STAGE",
    "DEFAULT_PERSONAS",
    "INITIAL_STAGE",
    "JOIN_NODES",
    "OPEN_ITERATION_NODE",
    "PERSONA_NODES",
    "PHASES",
    "PREPARE_NODE",
    "QUESTIONS_DONE_NODE",
    "QUESTION_STAGE",
    "RESPONSES_DONE_NODE",
    "RESPONSE_STAGE",
    "SKIP_STAGE",
    "ConvergenceMetrics",
    "DiscussionSetup",
    "convergence_metrics",
    "convergence_score",
    "discussion_setup",
    "join",
    "make_check",
    "make_consensus",
    "make_open_iteration",
    "node_name",
    "normalise_report",
    "open_iteration_node",
    "parse_persona",
    "prepare",
    "render_report_markdown",
    "report_from_state",
    "round_review",
    "termination_conditions",
]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
