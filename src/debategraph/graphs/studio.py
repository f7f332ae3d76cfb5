"""Every pattern compiled for ``langgraph.json`` / LangGraph Studio.

Compiled without a checkpointer (``langgraph dev`` and LangGraph's server provide their
own persistence); the model comes from each run's :class:`~debategraph.context.Context`.
Importing this module compiles the graphs, so only Studio and the server import it.
"""

from __future__ import annotations

from debategraph.graphs.debate import GRAPH_NAME as DEBATE
from debategraph.graphs.debate import build_debate
from debategraph.graphs.discussion import GRAPH_NAME as DISCUSSION
from debategraph.graphs.discussion import build_discussion
from debategraph.graphs.group_chat import DEFAULT_AGENTS, DEFAULT_UNTIL, build_group_chat
from debategraph.graphs.group_chat import GRAPH_NAME as GROUP_CHAT
from debategraph.graphs.meeting import GRAPH_NAME as MEETING
from debategraph.graphs.meeting import build_meeting
from debategraph.graphs.solver_debate import GRAPH_NAME as SOLVER_DEBATE
from debategraph.graphs.solver_debate import build_solver_debate

solver_debate = build_solver_debate().compile(name=SOLVER_DEBATE)
debate = build_debate(moderator=True, judge=True).compile(name=DEBATE)
discussion = build_discussion().compile(name=DISCUSSION)
group_chat = build_group_chat(
    agents=DEFAULT_AGENTS, until=DEFAULT_UNTIL, max_turns=10, max_in_a_row=2
).compile(name=GROUP_CHAT)
meeting = build_meeting().compile(name=MEETING)
