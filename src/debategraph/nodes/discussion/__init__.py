"""Nodes of the document discussion: analyse, ask, answer, assess, check, report.

One module per concern:

* :mod:`~debategraph.nodes.discussion.setup`: settings checks, :class:`DiscussionSetup`,
  the default personas, node names and stages;
* :mod:`~debategraph.nodes.discussion.prompts`: the prompt templates;
* :mod:`~debategraph.nodes.discussion.views`: state readers and the text of the prompts;
* :mod:`~debategraph.nodes.discussion.personas`: what every persona node shares (one
  node per persona per phase) and the join after a phase;
* :mod:`~debategraph.nodes.discussion.analysis`: phase 1, ``prepare`` and the analysis;
* :mod:`~debategraph.nodes.discussion.questions`: phase 2, ``open_iteration``
  (``make_open_round``) and the questions;
* :mod:`~debategraph.nodes.discussion.answers`: phase 3, the answers and revisions;
* :mod:`~debategraph.nodes.discussion.convergence`: phase 4, the votes, the convergence
  math, the check node (the round's close, ``make_close_round``) and the pause's payload;
* :mod:`~debategraph.nodes.discussion.consensus`: phase 5, the consensus report;
* :mod:`~debategraph.nodes.discussion.markdown`: the report as Markdown.
"""

from __future__ import annotations

from debategraph.nodes.discussion.analysis import (
    MAX_INSIGHTS,
    MIN_INSIGHTS,
    analyse,
    make_prepare,
    normalise_choice,
    normalise_insights,
    prepare,
)
from debategraph.nodes.discussion.answers import answer, apply_responses
from debategraph.nodes.discussion.consensus import (
    make_consensus,
    normalise_report,
    outcome,
    report_from_state,
)
from debategraph.nodes.discussion.convergence import (
    ConvergenceMetrics,
    assess,
    convergence_metrics,
    convergence_score,
    make_close_round,
    round_review,
    termination_conditions,
)
from debategraph.nodes.discussion.markdown import render_report_markdown
from debategraph.nodes.discussion.personas import Speaker, join, persona_node
from debategraph.nodes.discussion.questions import (
    NO_SKIP_REASON,
    ask,
    make_open_round,
    normalise_questions,
)
from debategraph.nodes.discussion.setup import (
    CHECK_NODE,
    CONSENSUS_NODE,
    CONSENSUS_STAGE,
    CONVERGENCE_STAGE,
    DEFAULT_PERSONAS,
    DEFAULT_TIME_LIMIT_S,
    INITIAL_STAGE,
    JOIN_NODES,
    OPEN_ITERATION_NODE,
    PHASES,
    PREPARE_NODE,
    QUESTION_STAGE,
    QUESTIONS_DONE_NODE,
    RESPONSE_STAGE,
    RESPONSES_DONE_NODE,
    SKIP_STAGE,
    DiscussionSetup,
    check_input,
    discussion_setup,
    node_name,
    parse_persona,
)

__all__ = [
    "CHECK_NODE",
    "CONSENSUS_NODE",
    "CONSENSUS_STAGE",
    "CONVERGENCE_STAGE",
    "DEFAULT_PERSONAS",
    "DEFAULT_TIME_LIMIT_S",
    "INITIAL_STAGE",
    "JOIN_NODES",
    "MAX_INSIGHTS",
    "MIN_INSIGHTS",
    "NO_SKIP_REASON",
    "OPEN_ITERATION_NODE",
    "PHASES",
    "PREPARE_NODE",
    "QUESTIONS_DONE_NODE",
    "QUESTION_STAGE",
    "RESPONSES_DONE_NODE",
    "RESPONSE_STAGE",
    "SKIP_STAGE",
    "ConvergenceMetrics",
    "DiscussionSetup",
    "Speaker",
    "analyse",
    "answer",
    "apply_responses",
    "ask",
    "assess",
    "check_input",
    "convergence_metrics",
    "convergence_score",
    "discussion_setup",
    "join",
    "make_close_round",
    "make_consensus",
    "make_open_round",
    "make_prepare",
    "node_name",
    "normalise_choice",
    "normalise_insights",
    "normalise_questions",
    "normalise_report",
    "outcome",
    "parse_persona",
    "persona_node",
    "prepare",
    "render_report_markdown",
    "report_from_state",
    "round_review",
    "termination_conditions",
]
