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
from debategraph.graphs.meeting import GRAPH_NAME as MEETING
from debategraph.graphs.meeting import build_meeting
from debategraph.graphs.solver_debate import GRAPH_NAME as SOLVER_DEBATE
from debategraph.graphs.solver_debate import build_solver_debate

solver_debate = build_solver_debate().compile(name=SOLVER_DEBATE)
debate = build_debate(moderator=True, judge=True).compile(name=DEBATE)
discussion = build_discussion().compile(name=DISCUSSION)
meeting = build_meeting().compile(name=MEETING)
