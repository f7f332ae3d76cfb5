"""A LangGraph app with a solver debate inside it, served by ``langgraph dev`` in the tests.

What a user serving their own app to LangGraph Studio writes: a ``MessagesState`` parent
whose node is a debategraph pattern, with the package's context schema so that each run's
context names the model (as Studio's run form does). ``tests/test_studio.py`` serves it
beside ``langgraph.json``'s graphs, and ``reviewed``: a panel that pauses after each round
for a human's review, as a chat UI (agent-chat-ui, ``useStream``) would run it.
"""

from __future__ import annotations

from langgraph.graph import END, START, MessagesState, StateGraph

from debategraph import Context, build_solver_debate

panel = build_solver_debate(agents=3, max_rounds=2).compile(name="panel")
app = (
    StateGraph(MessagesState, context_schema=Context)
    .add_node("panel", panel)
    .add_edge(START, "panel")
    .add_edge("panel", END)
    .compile(name="panel_app")
)
reviewed = build_solver_debate(agents=2, max_rounds=2, pause_after_round=True).compile(
    name="reviewed_panel"
)
