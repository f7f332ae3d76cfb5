"""The group chat's selector node: the selection strategy picks each turn's speaker.

The strategy reads the conversation (agents' and a human's messages, never the tool-call
records); a model that picks is the ``selector`` official's own, if it has one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from debategraph.nodes.agent import agent_of, tool_calls_of
from debategraph.nodes.dual import agent_node
from debategraph.nodes.group_chat.setup import SELECT_NODE, SELECTOR, GroupChatSetup
from debategraph.state.base import usage_update
from debategraph.state.group_chat import SelectionRecord
from debategraph.strategies.selection import SelectionContext

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import Runnable
    from langgraph.runtime import Runtime

    from debategraph.models import ModelBinding, Steps, TextResult
    from debategraph.models.context import Context


def selection_context(state: Mapping[str, Any], setup: GroupChatSetup) -> SelectionContext:
    """What the selection strategy sees: the conversation since the chat began.

    Agents' and a human's messages only: an agent's tool-call records are not turns of
    the conversation (they count for no speaker, and no one reads them as messages).

    Args:
        state: The chat state.
        setup: The chat's settings.

    Returns:
        The context.
    """
    said = [t for t in state.get("transcript") or () if t.role in ("agent", "user")]
    return SelectionContext(
        names=setup.names,
        turns=said,  # an empty message is a turn taken all the same
        descriptions=tuple(a.instructions for a in setup.agents),
        task=str(state.get("task") or ""),
    )


def make_select(setup: GroupChatSetup, model: ModelBinding | None) -> Runnable[Any, Any]:
    """The node in which the selection strategy picks the turn's speaker.

    A single-turn invocation's ``speaker`` is taken as it is (``named``). The
    strategy's model calls, if any, are made by the ``selector`` official (its own
    model, tools or agent, if given: :attr:`GroupChatSetup.officials`) and charged to it and
    its model; its tool calls, if any, are recorded in the transcript.

    Args:
        setup: The chat's settings.
        model: The chat's model (``None``: the run's context).

    Returns:
        The node.
    """
    agent = agent_of(setup.officials.get(SELECTOR), model, SELECTOR)

    def select(state: Mapping[str, Any], runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        rnd = int(state["round"])
        if state.get("speaker"):
            name = setup.find(str(state["speaker"])) or setup.names[0]
            record = SelectionRecord(turn=rnd, agent=name, method="named")
            return {"next_speaker": name, "selections": [record]}

        answers: list[TextResult] = []

        def say(messages: list[BaseMessage]) -> Steps[TextResult]:
            result = yield from agent.say_steps(runtime, messages, streams=False, max_attempts=1)
            answers.append(result)
            return result

        chosen = yield from setup.selector.select_steps(selection_context(state, setup), say)
        record = SelectionRecord(
            turn=rnd,
            agent=chosen.agent,
            method=chosen.method,
            answer=chosen.answer,
            note=chosen.note,
        )
        update: dict[str, Any] = {"next_speaker": chosen.agent, "selections": [record]}
        if chosen.usage.calls:
            label = answers[-1].model if answers else None
            update.update(usage_update(SELECTOR, chosen.usage, label))
        calls = tool_calls_of(answers, SELECTOR, rnd, SELECTOR)
        if calls:
            update["transcript"] = calls
        if chosen.note:
            update["notes"] = [f"turn {rnd}: {chosen.note}"]
        return update

    return agent_node(select, SELECT_NODE)


def route_speaker(state: Mapping[str, Any]) -> str:
    """The node of the selected speaker.

    Args:
        state: The chat state.

    Returns:
        The agent's node name.
    """
    return str(state["next_speaker"])
