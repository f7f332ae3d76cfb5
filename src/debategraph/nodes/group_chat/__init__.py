"""Nodes of the group chat: begin an invocation, select a speaker, speak, close the turn.

A turn is the chat's round, on the shared loop of :mod:`debategraph.nodes.rounds`. The
modules:

* :mod:`~debategraph.nodes.group_chat.setup`: :class:`ChatSetup`, the settings checks,
  the defaults, node names and stages;
* :mod:`~debategraph.nodes.group_chat.prompts`: the agents' prompt templates;
* :mod:`~debategraph.nodes.group_chat.turns`: ``begin``, ``close_turn``, the routing and
  the review payload;
* :mod:`~debategraph.nodes.group_chat.selection`: the ``select`` node;
* :mod:`~debategraph.nodes.group_chat.speakers`: one node per agent.
"""

from __future__ import annotations

from debategraph.nodes.group_chat.selection import make_select, route_speaker, selection_context
from debategraph.nodes.group_chat.setup import BEGIN_NODE, CLOSE_TURN_NODE, SELECT_NODE
from debategraph.nodes.group_chat.speakers import make_speaker, speaker_prompt
from debategraph.nodes.group_chat.turns import (
    after_begin,
    after_open,
    after_turn,
    begin,
    make_close_turn,
    stale_turns,
    turn_review,
)

__all__ = [
    "BEGIN_NODE",
    "CLOSE_TURN_NODE",
    "SELECT_NODE",
    "after_begin",
    "after_open",
    "after_turn",
    "begin",
    "make_close_turn",
    "make_select",
    "make_speaker",
    "route_speaker",
    "selection_context",
    "speaker_prompt",
    "stale_turns",
    "turn_review",
]
