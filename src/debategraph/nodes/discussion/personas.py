"""What every persona node shares: one node per persona per parallel phase, and the join.

Every persona has one node per parallel phase (``analyse_<slug>``, ``ask_<slug>``,
``answer_<slug>``, ``assess_<slug>``); the nodes of a phase start in the same step, so
their calls run concurrently (bounded by ``max_concurrency``), and a join waits for all
of them. A phase module supplies only its :data:`PhaseBody`: what the persona asks and
what it records. :func:`persona_node` makes the node: the persona's
:class:`~debategraph.nodes.agent.Agent` (made from its record by
:func:`~debategraph.nodes.agent.agent_of`: its own model, tools or agent), and a
:class:`Speaker` through which the body asks the model with the persona's system prompt.
A body writes its turn with :meth:`Speaker.turn_update`: the tool calls its calls made
first, then the turn, stamped with the model that answered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from debategraph.nodes.agent import Agent, agent_of, recorded, tool_calls_of
from debategraph.nodes.discussion.setup import DiscussionSetup
from debategraph.nodes.discussion.views import system_message
from debategraph.nodes.dual import agent_node
from debategraph.state.base import turn_update
from debategraph.state.discussion import DiscussionState

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable
    from langgraph.runtime import Runtime

    from debategraph.models import CallResult, ModelBinding, Steps
    from debategraph.models.context import Context
    from debategraph.state.records import Turn

    AgentNode: TypeAlias = Runnable[Any, Any]

S = TypeVar("S", bound=BaseModel)


@dataclass(frozen=True)
class Speaker:
    """One persona in one node call: who it is, and how it asks the model.

    Attributes:
        name: The persona.
        setup: The discussion's settings.
        agent: The persona's agent (its model).
        runtime: The node's runtime (its context names the model when the graph has none).
        so_far: The transcript in the node's state (a model label it holds is stored
            once, :func:`~debategraph.state.records.stored_once`).
    """

    name: str
    setup: DiscussionSetup
    agent: Agent
    runtime: Runtime[Context]
    so_far: Sequence[Turn] = ()

    def ask(self, schema: type[S], task: str) -> Steps[CallResult[S]]:
        """The steps of one structured call, the persona's system prompt first.

        Args:
            schema: The reply's schema.
            task: The task prompt.

        Returns:
            The steps (``yield from`` them); they return the call's result.
        """
        messages = [system_message(self.setup, self.name), HumanMessage(task)]
        return self.agent.ask_steps(self.runtime, schema, messages)

    def turn_update(self, turn: Turn, *results: CallResult[Any]) -> dict[str, Any]:
        """The update that records ``turn`` after the calls that made it.

        The tool calls of each call (in call order) come first, then the turn, stamped
        with the model of the last call
        (:func:`~debategraph.nodes.agent.recorded`); their usage is charged to the
        persona and its model (:func:`~debategraph.state.base.turn_update`).

        Args:
            turn: The persona's record of its turn (its usage: every call's).
            *results: The calls' results, in the order they were made (at least one).

        Returns:
            ``transcript``, ``usage``, ``usage_by_agent`` and ``usage_by_model`` writes.
        """
        *earlier, last = results
        calls = tool_calls_of(earlier, turn.agent, turn.round, turn.agent_id)
        return turn_update(*calls, *recorded(last, turn), so_far=self.so_far)


#: A phase's persona body: ``(speaker, state)`` -> the steps of its calls, returning the
#: node's update. Its ``__name__`` names the node in traces.
PhaseBody = Callable[[Speaker, DiscussionState], "Steps[dict[str, Any]]"]


def persona_node(
    body: PhaseBody, name: str, setup: DiscussionSetup, model: ModelBinding | None
) -> AgentNode:
    """The node of persona ``name`` in the phase whose body is ``body``.

    The persona's agent is made now from its record (its own model, tools or agent,
    else ``model``), so a bad one fails when the graph is built.

    Args:
        body: The phase's body (e.g. :func:`~debategraph.nodes.discussion.questions.ask`).
        name: The persona.
        setup: The discussion's settings.
        model: The graph's model; ``None`` reads it from the run's context (Studio).

    Returns:
        The node runnable.

    Raises:
        ValueError: One line naming the persona and what is wrong with its model,
            tools or agent.
    """
    agent = agent_of(setup.persona(name), model)

    def node(state: DiscussionState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        return (
            yield from body(
                Speaker(name, setup, agent, runtime, state.get("transcript") or ()), state
            )
        )

    return agent_node(node, name=body.__name__)


def join(state: DiscussionState) -> dict[str, Any]:
    """A barrier between parallel phases: waits for every agent node, changes nothing.

    Args:
        state: The discussion state.

    Returns:
        No update.
    """
    return {}
