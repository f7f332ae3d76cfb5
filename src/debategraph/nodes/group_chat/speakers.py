"""The group chat's agents: one node per agent, reading the shared conversation.

An agent with a model, tools or an agent of its own speaks with them
(:func:`~debategraph.nodes.agent.agent_of`): its tool calls are recorded before its
message, and no other agent reads them (they are no messages of the conversation; the
speaker itself saw them in its own prompt during its turn).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from debategraph.nodes.agent import agent_of, recorded
from debategraph.nodes.conversation import as_messages, visible
from debategraph.nodes.dual import agent_node
from debategraph.nodes.group_chat.prompts import CHAT_AGENT_SYSTEM, CHAT_AGENT_TURN, NO_INSTRUCTIONS
from debategraph.nodes.group_chat.setup import CHAT_STAGE, GroupChatSetup
from debategraph.nodes.roster import slug
from debategraph.state.base import turn_update
from debategraph.state.records import Turn

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable
    from langgraph.runtime import Runtime

    from debategraph.models import ModelBinding, Steps
    from debategraph.models.context import Context


def speaker_prompt(
    state: Mapping[str, Any], setup: GroupChatSetup, name: str
) -> tuple[list[BaseMessage], list[Turn]]:
    """What ``name`` reads when it speaks, and the messages in it.

    Args:
        state: The chat state.
        setup: The chat's settings.
        name: The speaker.

    Returns:
        The prompt and the conversation turns it shows.
    """
    member = setup.agent(name)
    others = ", ".join(n for n in setup.names if n != name) or "nobody else"
    seen = visible(state.get("transcript") or (), name, setup.keep_last)
    system = CHAT_AGENT_SYSTEM.format(
        name=name,
        others=f"with {others}",
        instructions=member.instructions or NO_INSTRUCTIONS,
        task=state.get("task") or "",
    )
    messages = [
        SystemMessage(content=system),
        *as_messages(seen, name),
        HumanMessage(content=CHAT_AGENT_TURN.format(name=name)),
    ]
    return messages, seen


def make_speaker(
    name: str, setup: GroupChatSetup, model: ModelBinding | None
) -> Runnable[Any, Any]:
    """The node in which one agent speaks (its prose streams).

    Its message records the ids of what it read (``reply_to``), so what it has seen is
    readable from state (:func:`~debategraph.nodes.conversation.agent_history`), and the
    model that wrote it. Its tool calls, if it made any, are recorded just before it. An
    agent of its own that fails (raises, returns no message) loses its turn: an empty
    message with the reason, and the chat goes on.

    Args:
        name: The agent (also the node's name).
        setup: The chat's settings.
        model: The chat's model (``None``: the run's context), for an agent without
            one of its own.

    Returns:
        The node.

    Raises:
        ValueError: If the agent's model, tools or agent are bad (one line).
    """
    agent = agent_of(setup.agent(name), model)

    def speak(state: Mapping[str, Any], runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        messages, seen = speaker_prompt(state, setup, name)
        result = yield from agent.say_steps(runtime, messages)
        turn = Turn(
            agent=name,
            agent_id=slug(name),
            content=_own_words(result.text, name),
            stage=CHAT_STAGE,
            round=int(state["round"]),
            reply_to=tuple(t.id for t in seen),
            usage=result.usage,
            reason=result.reason,
        )
        return turn_update(*recorded(result, turn), so_far=state.get("transcript"))

    return agent_node(speak, name)


def _own_words(text: str, name: str) -> str:
    """A reply without the ``Name:`` prefix models like to add."""
    stripped = text.strip()
    prefix = f"{name}:"
    return (
        stripped[len(prefix) :].strip() if stripped.lower().startswith(prefix.lower()) else stripped
    )
