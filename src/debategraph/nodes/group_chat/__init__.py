"""Nodes of the group chat: begin an invocation, select a speaker, speak, close the turn.

A turn is the chat's round, on the shared loop of :mod:`debategraph.nodes.rounds`, and
its functions have the names every pattern's round has. The modules:

* :mod:`~debategraph.nodes.group_chat.setup`: :class:`GroupChatSetup`, the settings
  checks, the input check, the defaults, node names and stages;
* :mod:`~debategraph.nodes.group_chat.prompts`: the agents' prompt templates;
* :mod:`~debategraph.nodes.group_chat.turns`: ``begin``, ``open_round``, ``close_turn``
  (the turn's close), the routing and the review payload;
* :mod:`~debategraph.nodes.group_chat.selection`: the ``select`` node;
* :mod:`~debategraph.nodes.group_chat.speakers`: one node per agent.
"""

from __future__ import annotations

from debategraph.nodes.group_chat.selection import make_select, route_speaker, selection_context
from debategraph.nodes.group_chat.setup import (
    BEGIN_NODE,
    CLOSE_TURN_NODE,
    SELECT_NODE,
    GroupChatSetup,
    check_input,
    group_chat_setup,
)
from debategraph.nodes.group_chat.speakers import make_speaker, speaker_prompt
from debategraph.nodes.group_chat.turns import (
    after_begin,
    after_open,
    after_turn,
    make_begin,
    make_close_round,
    make_open_round,
    round_review,
    stale_turns,
    termination_conditions,
)

__all__ = [
    "BEGIN_NODE",
    "CLOSE_TURN_NODE",
    "SELECT_NODE",
    "GroupChatSetup",
    "after_begin",
    "after_open",
    "after_turn",
    "check_input",
    "group_chat_setup",
    "make_begin",
    "make_close_round",
    "make_open_round",
    "make_select",
    "make_speaker",
    "round_review",
    "route_speaker",
    "selection_context",
    "speaker_prompt",
    "stale_turns",
    "termination_conditions",
]
