"""Nodes of the solver debate: solve, close a round, aggregate.

Every answer is a :class:`~debategraph.state.records.Turn` of stage ``solve``; a solver
with tools records each tool call it made (stage ``tool``) just before its answer, and
those are never read as answers. The modules:

* :mod:`~debategraph.nodes.solver_debate.setup`: the settings checks, :class:`SolverDebateSetup`,
  node names, the stage;
* :mod:`~debategraph.nodes.solver_debate.prompts`: the solver debate's prompt templates;
* :mod:`~debategraph.nodes.solver_debate.views`: what each solver reads, and its prompt;
* :mod:`~debategraph.nodes.solver_debate.rounds`: ``open_round``, the solvers,
  ``close_round`` and the review payload, on the shared loop of
  :mod:`debategraph.nodes.rounds`;
* :mod:`~debategraph.nodes.solver_debate.judge`: the decision (a protocol applied to
  the final answers, the judge's call where it needs one);
* :mod:`~debategraph.nodes.solver_debate.aggregate`: the ``aggregate`` node that makes it.
"""

from __future__ import annotations

from debategraph.nodes.solver_debate.aggregate import (
    make_aggregate,
    outcome,
)
from debategraph.nodes.solver_debate.judge import (
    JudgeReply,
    decide_steps,
    decision_key,
    judge_prompt,
)
from debategraph.nodes.solver_debate.rounds import (
    ChoiceReply,
    SolverReply,
    make_close_round,
    make_open_round,
    make_solver,
    round_review,
    termination_conditions,
)
from debategraph.nodes.solver_debate.setup import (
    AGGREGATE_NODE,
    CLOSE_ROUND_NODE,
    DEFAULT_VIEW_CHARS,
    JUDGE,
    JUDGE_STAGE,
    MIN_VIEW_CHARS,
    OFFICIALS,
    RESERVED_NAMES,
    SOLVE_STAGE,
    SolverDebateSetup,
    check_input,
    check_solver_names,
    check_solvers,
    decision_protocol,
    solver_debate_setup,
)
from debategraph.nodes.solver_debate.views import (
    gist,
    latest_turns,
    question_text,
    solver_prompt,
    solver_view,
)

__all__ = [
    "AGGREGATE_NODE",
    "CLOSE_ROUND_NODE",
    "DEFAULT_VIEW_CHARS",
    "JUDGE",
    "JUDGE_STAGE",
    "MIN_VIEW_CHARS",
    "OFFICIALS",
    "RESERVED_NAMES",
    "SOLVE_STAGE",
    "ChoiceReply",
    "JudgeReply",
    "SolverDebateSetup",
    "SolverReply",
    "check_input",
    "check_solver_names",
    "check_solvers",
    "decide_steps",
    "decision_key",
    "decision_protocol",
    "gist",
    "judge_prompt",
    "latest_turns",
    "make_aggregate",
    "make_close_round",
    "make_open_round",
    "make_solver",
    "outcome",
    "question_text",
    "round_review",
    "solver_debate_setup",
    "solver_prompt",
    "solver_view",
    "termination_conditions",
]
