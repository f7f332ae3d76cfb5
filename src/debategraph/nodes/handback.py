"""A run that ends by handing the conversation back to an agent of a swarm.

An agent of ``langgraph-swarm`` keeps the conversation until it hands it off: the swarm's
``active_agent`` stays on it, and the user's next message goes to it. A pattern graph
compiled with ``hand_back="assistant"`` (:meth:`~debategraph.graphs.skeleton.PatternGraph.compile`)
ends each run inside a parent graph as a swarm's own agents hand off: its outcome
message calls the handoff tool ``langgraph-swarm`` makes (its public
``create_handoff_tool``), and the tool's ``Command`` (the conversation and the tool's
reply, ``active_agent`` set to that agent, ``goto`` it) is what the respond node returns.
The agent then answers the user with the run's outcome in its conversation, and the
user's next message goes to it. A run with no parent graph (invoked on its own, or as a
tool) ends as any run does: there is no one to hand back to.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage
    from langchain_core.tools import BaseTool

#: What separates the graphs of a task's namespace (``parent:ID|child:ID``): LangGraph's
#: ``langgraph_checkpoint_ns`` metadata, as its docs show it.
_NAMESPACE_SEPARATOR = "|"


@functools.cache
def handoff_tool(agent: str) -> BaseTool:
    """The handoff tool to ``agent``, as ``langgraph-swarm`` makes it.

    Args:
        agent: The swarm's agent (its node name) the run hands back to.

    Returns:
        ``create_handoff_tool(agent_name=agent)``.

    Raises:
        ValueError: If ``langgraph-swarm`` is not installed.
    """
    try:
        from langgraph_swarm import create_handoff_tool
    except ImportError:
        raise ValueError(
            "hand_back needs langgraph-swarm: pip install 'langgraph-swarm>=0.1,<0.2'"
        ) from None
    return create_handoff_tool(
        agent_name=agent, description=f"Hand the conversation back to {agent}."
    )


def handed_back(messages: list[BaseMessage], agent: str) -> Any | None:
    """The ``Command`` that ends a run by handing the conversation back to ``agent``.

    The last of ``messages`` (the outcome) gets the handoff's tool call; the tool, called
    as a ``ToolNode`` calls it, returns the swarm's ``Command``: ``messages`` with its
    reply, ``active_agent`` and ``goto`` the agent, for the parent graph.

    Args:
        messages: The run's reply, ending in its outcome message (changed in place).
        agent: The agent to hand back to.

    Returns:
        The command, or ``None`` when the run has no parent graph.
    """
    from langgraph.config import get_config

    try:
        metadata = get_config().get("metadata") or {}
    except RuntimeError:  # no run: the node function called directly
        return None
    namespace = str(metadata.get("langgraph_checkpoint_ns") or "")
    if _NAMESPACE_SEPARATOR not in namespace:
        return None
    tool = handoff_tool(agent)
    outcome = messages[-1]
    call_id = f"handback-{outcome.id}"
    messages[-1] = outcome.model_copy(
        update={"tool_calls": [{"name": tool.name, "args": {}, "id": call_id, "type": "tool_call"}]}
    )
    call = {
        "type": "tool_call",
        "name": tool.name,
        "args": {"state": {"messages": list(messages)}},
        "id": call_id,
    }
    return tool.invoke(call)


def hand_back_of(value: Any) -> str | None:
    """A ``compile(hand_back=...)`` value checked: the agent's name, or ``None``.

    Args:
        value: The value given.

    Returns:
        The name (``None``: no hand-back).

    Raises:
        ValueError: If it is no agent's name, or ``langgraph-swarm`` is not installed.
    """
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"hand_back must name the swarm's agent to hand back to, got {value!r}")
    handoff_tool(value)
    return value
