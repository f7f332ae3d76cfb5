"""Nodes of the staged meeting: open a round, speak, control the round, decide.

Every participant's message is a :class:`~debategraph.Turn` whose ``stage`` is its
stage's name and whose ``round`` is the shared round counter. The modules:

* :mod:`~debategraph.nodes.meeting.setup`: the settings checks (``meeting_setup``), the
  default agenda, :class:`MeetingSetup`, stage parsing, node names;
* :mod:`~debategraph.nodes.meeting.prompts`: the meeting's prompt templates;
* :mod:`~debategraph.nodes.meeting.speakers`: ``open_round``, the speakers and their routing,
  on the shared loop of :mod:`debategraph.nodes.rounds`;
* :mod:`~debategraph.nodes.meeting.chair`: the round controller (the round's close,
  ``make_close_round``), the final decision and the review payload.
"""

from __future__ import annotations

from debategraph.nodes.meeting.chair import (
    make_close_round,
    make_decide,
    next_step,
    outcome,
    round_review,
    round_turns,
    termination_conditions,
)
from debategraph.nodes.meeting.setup import (
    CHAIR_AGENT,
    CONTROLLER_AGENT,
    CONTROLLER_NODE,
    DECIDE_NODE,
    DECISION_STAGE,
    RESERVED_NAMES,
    MeetingSetup,
    check_input,
    meeting_setup,
    parse_stage,
    parse_stages,
)
from debategraph.nodes.meeting.speakers import (
    make_open_round,
    make_speaker,
    open_router,
    speaker_prompt,
    speaker_router,
)

__all__ = [
    "CHAIR_AGENT",
    "CONTROLLER_AGENT",
    "CONTROLLER_NODE",
    "DECIDE_NODE",
    "DECISION_STAGE",
    "RESERVED_NAMES",
    "MeetingSetup",
    "check_input",
    "make_close_round",
    "make_decide",
    "make_open_round",
    "make_speaker",
    "meeting_setup",
    "next_step",
    "open_router",
    "outcome",
    "parse_stage",
    "parse_stages",
    "round_review",
    "round_turns",
    "speaker_prompt",
    "speaker_router",
    "termination_conditions",
]
