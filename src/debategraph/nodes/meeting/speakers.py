"""The meeting's round: open it, route to the stage's speakers, let each speak in turn.

The loop itself (``open_round``, the review point ``human``) is the shared one in
:mod:`debategraph.nodes.rounds`; a speaker reads the shared conversation view of
:mod:`debategraph.nodes.conversation` (the latest ``keep_last`` messages, a human's
interjections among them), the topic, its stage's goal and its own instructions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from debategraph.nodes.agent import agent_of, recorded
from debategraph.nodes.conversation import as_messages, visible
from debategraph.nodes.dual import agent_node
from debategraph.nodes.meeting.prompts import (
    NO_INSTRUCTIONS,
    SPEAKER_OPENING,
    SPEAKER_SYSTEM,
    SPEAKER_TURN,
    STAGE_GOAL,
)
from debategraph.nodes.meeting.setup import DECIDE_NODE, MeetingSetup, check_input
from debategraph.nodes.rounds import open_round_node
from debategraph.state.base import charge_update, turn_update
from debategraph.state.meeting import MeetingState, Stage
from debategraph.state.records import Participant, Turn

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable
    from langgraph.runtime import Runtime

    from debategraph.models import ModelBinding, Steps
    from debategraph.models.context import Context


def make_open_round(setup: MeetingSetup) -> Runnable[Any, Any]:
    """The shared ``open_round`` node, starting the meeting at its first stage.

    Args:
        setup: The meeting's settings.

    Returns:
        The node; in round 1 it also writes the first stage, the outputs' starting
        values and the deadline of the meeting's time limit, if it has one. It raises
        ``ValueError`` if the topic is empty (:func:`check_input`).
    """

    def first_round(state: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "stage": setup.stages[0].name,
            "stage_round": 1,
            "decision": None,
            **charge_update(()),  # the usage outputs start at zero
            "usage_by_model": {},
        }

    return open_round_node(check_input, first_round, time_limit_s=setup.time_limit_s)


def goal_line(stage: Stage) -> str:
    """`` Goal of this stage: ...`` for a prompt, or ``""`` when the stage has none.

    Args:
        stage: The stage.

    Returns:
        The phrase.
    """
    return STAGE_GOAL.format(goal=stage.goal) if stage.goal else ""


def speaker_prompt(
    state: Mapping[str, Any], stage: Stage, me: Participant, seen: list[Turn], setup: MeetingSetup
) -> list[BaseMessage]:
    """The messages a participant reads before it speaks.

    Args:
        state: The meeting state.
        stage: The stage running.
        me: The participant.
        seen: The conversation it reads (see :func:`~debategraph.nodes.conversation.visible`).
        setup: The meeting's settings.

    Returns:
        Its system message (role, topic, the stage's roster), the conversation as chat
        messages, then its task (the stage, its round and goal; open or answer).
    """
    system = SPEAKER_SYSTEM.format(
        name=me.name,
        topic=state["topic"],
        instructions=me.instructions or NO_INSTRUCTIONS,
        roster=", ".join(stage.names),
    )
    fields = {
        "stage": stage.name,
        "stage_round": state.get("stage_round") or 1,
        "max_rounds": setup.cap(stage),
        "goal": goal_line(stage),
        "topic": state["topic"],
        "name": me.name,
    }
    task = (SPEAKER_TURN if seen else SPEAKER_OPENING).format(**fields)
    return [SystemMessage(system), *as_messages(seen, me.name), HumanMessage(task)]


def make_speaker(node: str, setup: MeetingSetup, model: ModelBinding | None) -> Runnable[Any, Any]:
    """Node from which one participant speaks, in whichever stage it takes part.

    The reply is prose (:meth:`Agent.say_steps`), so its tokens stream with
    ``stream_mode="messages"``. Its :class:`Turn` records the stage, the shared round,
    the model that answered and, in ``reply_to``, the ids of the messages it read (the
    previous one last); the tool calls it made come before it in the transcript.
    The participant's model, tools or agent are its own where it has them
    (:attr:`MeetingSetup.members`).

    Args:
        node: The node's name (the slug of the participant's name).
        setup: The meeting's settings.
        model: The model to call; ``None`` reads it from the run's context (Studio).

    Returns:
        The node.
    """
    agent = agent_of(setup.member(node), model)

    def speak(state: MeetingState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        stage = setup.stage(state["stage"])
        me = setup.speaker(stage, node)
        if me is None:  # not routed here by this graph; nothing to say
            return {}
        seen = visible(state.get("transcript", []), me.name, setup.keep_last)
        result = yield from agent.say_steps(runtime, speaker_prompt(state, stage, me, seen, setup))
        turn = Turn(
            agent=me.name,
            agent_id=node,
            content=result.text,
            stage=stage.name,
            round=state["round"],
            reply_to=tuple(t.id for t in seen),
            usage=result.usage,
            reason=result.reason,
        )
        return turn_update(*recorded(result, turn), so_far=state.get("transcript"))

    return agent_node(speak, node)


def open_router(setup: MeetingSetup) -> tuple[Callable[[Mapping[str, Any]], str], list[str]]:
    """The edge after ``open_round``: the stage's first speaker, or the final decision.

    A run whose ``termination_reason`` is already set (a stop request drained by
    ``open_round``) skips the remaining stages.

    Args:
        setup: The meeting's settings.

    Returns:
        The routing function and the nodes it may pick (for the drawn graph).
    """
    firsts = list(dict.fromkeys(setup.after_open(s) for s in setup.stages))

    def after_open(state: Mapping[str, Any]) -> str:
        if state.get("termination_reason"):
            return DECIDE_NODE
        return setup.after_open(setup.stage(state.get("stage") or ""))

    return after_open, [*firsts, DECIDE_NODE]


def speaker_router(
    node: str, setup: MeetingSetup
) -> tuple[Callable[[Mapping[str, Any]], str], list[str]]:
    """The edge after a speaker: the next speaker of the stage running, or the controller.

    Args:
        node: The speaker's node.
        setup: The meeting's settings.

    Returns:
        The routing function and the nodes it may pick.
    """

    def next_speaker(state: Mapping[str, Any]) -> str:
        return setup.after(setup.stage(state.get("stage") or ""), node)

    return next_speaker, setup.successors(node)
