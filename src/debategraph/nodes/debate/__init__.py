"""Nodes of the debate: open a round, speak, close a round, moderate, summarise, judge.

Every debater argument is a :class:`~debategraph.Turn` of stage ``argue`` addressed
to the other debaters. The modules:

* :mod:`~debategraph.nodes.debate.setup`: :class:`DebateSetup`, node names, stages;
* :mod:`~debategraph.nodes.debate.prompts`: the debate's prompt templates;
* :mod:`~debategraph.nodes.debate.views`: what each agent reads, and its prompt;
* :mod:`~debategraph.nodes.debate.rounds`: the debaters, ``close_round``, the routing
  and the review payload, on the shared loop of :mod:`debategraph.nodes.rounds`;
* :mod:`~debategraph.nodes.debate.officials`: the moderator, the summarizer, the judge.
"""

from __future__ import annotations

from debategraph.nodes.debate.officials import (
    MODERATOR_FALLBACK,
    make_judge,
    make_moderator,
    make_summarizer,
    normalise_decision,
    normalise_verdict,
    outcome,
    read_leader,
)
from debategraph.nodes.debate.rounds import (
    make_close_round,
    make_debater,
    make_open_round,
    round_review,
    router,
    termination_conditions,
)
from debategraph.nodes.debate.setup import (
    ARGUE_STAGE,
    CLOSE_ROUND_NODE,
    JUDGE_NODE,
    JUDGE_STAGE,
    MODERATE_STAGE,
    MODERATOR_NODE,
    RESERVED_NAMES,
    SUMMARIZER_NODE,
    SUMMARY_STAGE,
    TIE_WORDS,
    DebateSetup,
    check_input,
    debate_setup,
)
from debategraph.nodes.debate.views import (
    debater_prompt,
    debater_view,
    is_argument,
    is_public,
    officials_view,
    unsummarized,
    word_count,
)

__all__ = [
    "ARGUE_STAGE",
    "CLOSE_ROUND_NODE",
    "JUDGE_NODE",
    "JUDGE_STAGE",
    "MODERATE_STAGE",
    "MODERATOR_FALLBACK",
    "MODERATOR_NODE",
    "RESERVED_NAMES",
    "SUMMARIZER_NODE",
    "SUMMARY_STAGE",
    "TIE_WORDS",
    "DebateSetup",
    "check_input",
    "debate_setup",
    "debater_prompt",
    "debater_view",
    "is_argument",
    "is_public",
    "make_close_round",
    "make_debater",
    "make_judge",
    "make_moderator",
    "make_open_round",
    "make_summarizer",
    "normalise_decision",
    "normalise_verdict",
    "officials_view",
    "outcome",
    "read_leader",
    "round_review",
    "router",
    "termination_conditions",
    "unsummarized",
    "word_count",
]
