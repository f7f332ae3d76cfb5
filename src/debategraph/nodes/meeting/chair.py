"""The meeting's officials: the round controller, the chair's final decision, the review.

The controller is the meeting's round close (``make_close_round``, the node
``controller``, with its ``termination_conditions``). After each round it decides
whether the stage gets another round
(:class:`~debategraph.state.meeting.RoundDecision`); at the stage's round cap it moves on
without a call, and an unusable reply moves on too, so the loop always ends. At the end
the chair gives the typed :class:`~debategraph.state.meeting.FinalDecision`. Either may
have a model, tools or agent of its own (``officials=``); like the speakers, each records
its tool calls before its turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import HumanMessage, SystemMessage

from debategraph.nodes.agent import agent_of, recorded
from debategraph.nodes.conversation import as_messages, visible
from debategraph.nodes.dual import agent_node
from debategraph.nodes.meeting.prompts import (
    CHAIR_FALLBACK,
    CHAIR_SYSTEM,
    CHAIR_TASK,
    CONTROLLER_FALLBACK,
    CONTROLLER_SYSTEM,
    CONTROLLER_TASK,
    FINAL_DECISION,
)
from debategraph.nodes.meeting.setup import (
    CHAIR_AGENT,
    CONTROLLER_AGENT,
    CONTROLLER_NODE,
    DECIDE_NODE,
    DECISION_STAGE,
    MeetingSetup,
)
from debategraph.nodes.meeting.speakers import goal_line
from debategraph.nodes.messages import emit
from debategraph.nodes.review import review_payload
from debategraph.nodes.rounds import STOPPED, TIME_LIMIT, ended
from debategraph.state.base import turn_update
from debategraph.state.meeting import FinalDecision, MeetingState, RoundDecision, Stage
from debategraph.state.records import Turn, Usage
from debategraph.strategies.termination import Condition, RoundOutcome, Silence, first_fired

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable
    from langgraph.runtime import Runtime

    from debategraph.models import ModelBinding, Steps
    from debategraph.models.context import Context
    from debategraph.nodes.messages import Outcome


def round_turns(transcript: Sequence[Turn], stage: Stage, rnd: int) -> list[Turn]:
    """What the stage's participants said in round ``rnd``.

    Args:
        transcript: The transcript.
        stage: The stage.
        rnd: The shared round.

    Returns:
        Their turns, in speaking order.
    """
    return [
        t
        for t in transcript
        if t.role == "agent" and t.round == rnd and t.stage == stage.name and t.agent in stage.names
    ]


def controller_prompt(state: Mapping[str, Any], stage: Stage, setup: MeetingSetup) -> list[Any]:
    """The messages the controller reads: the conversation and the decision to make.

    Args:
        state: The meeting state.
        stage: The stage whose round just ended.
        setup: The meeting's settings.

    Returns:
        The prompt.
    """
    following = setup.next_stage(stage.name)
    task = CONTROLLER_TASK.format(
        stage_round=state.get("stage_round") or 1,
        max_rounds=setup.cap(stage),
        stage=stage.name,
        goal=goal_line(stage),
        next=f"stage {following.name}" if following else FINAL_DECISION,
    )
    seen = visible(state.get("transcript", []), None, setup.keep_last)
    return [
        SystemMessage(CONTROLLER_SYSTEM.format(topic=state["topic"])),
        *as_messages(seen, None),
        HumanMessage(task),
    ]


def next_step(decision: RoundDecision, stage: Stage, setup: MeetingSetup) -> dict[str, Any]:
    """The writes that carry out a decision: another round, the next stage, or the end.

    Args:
        decision: The decision on the round just ended.
        stage: Its stage.
        setup: The meeting's settings.

    Returns:
        ``stage_round`` (continue), ``stage`` and ``stage_round`` (next stage), or
        ``termination_reason="completed"`` after the last stage.
    """
    if decision.action == "continue":
        return {"stage_round": decision.stage_round + 1}
    following = setup.next_stage(stage.name)
    if following is None:
        return {"termination_reason": "completed"}
    return {"stage": following.name, "stage_round": 1}


def termination_conditions(setup: MeetingSetup) -> list[Condition]:
    """The conditions the round's close (the controller) checks before it decides.

    Args:
        setup: The meeting's settings.

    Returns:
        An empty round (``error``). The stages' round caps move the meeting on (see
        :func:`make_close_round`); once every stage ran it ends ``completed``.
    """
    return [Silence()]


def make_close_round(setup: MeetingSetup, model: ModelBinding | None) -> Runnable[Any, Any]:
    """Node in which the round controller decides: another round of the stage, or move on.

    The meeting's round close, the node ``controller``. A round in which every speaker
    said nothing ends the meeting (``error``, the :class:`Silence` condition of
    :func:`termination_conditions`); one that closes past the meeting's deadline ends it
    ``time_limit`` (its calls were cut short). At the stage's round cap the decision is
    ``next_stage``, forced, with no call; an unusable reply is ``next_stage`` with the
    reason recorded.

    Args:
        setup: The meeting's settings.
        model: The model to call (unless the official has its own,
            :attr:`MeetingSetup.officials`); ``None`` reads it from the run's context.

    Returns:
        The node.
    """
    agent = agent_of(setup.member(CONTROLLER_AGENT), model, CONTROLLER_AGENT)
    conditions = termination_conditions(setup)

    def control(state: MeetingState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        stage = setup.stage(state["stage"])
        rnd = state["round"]
        stage_round = state.get("stage_round") or 1
        said = [t.content.strip() or None for t in round_turns(state["transcript"], stage, rnd)]
        reason = ended(state, first_fired(conditions, RoundOutcome(round=rnd, answers=said)))
        if reason is not None:
            where = f"round {stage_round} of stage {stage.name}"
            note = {
                TIME_LIMIT: f"the time limit passed in {where}",
                STOPPED: f"a stop was requested in {where}",
            }.get(reason, f"nobody said anything in {where}")
            return {"termination_reason": reason, "notes": [f"{note}: the meeting ends"]}
        fields: dict[str, Any] = {
            "stage": stage.name,
            "stage_round": stage_round,
            "max_rounds": setup.cap(stage),
            "round": rnd,
        }
        update: dict[str, Any] = {}
        if stage_round >= setup.cap(stage):
            cap = f"stage {stage.name} reached its round cap ({setup.cap(stage)})"
            decision = RoundDecision(action="next_stage", reason=cap, forced=True, **fields)
        else:
            result = yield from agent.ask_steps(
                runtime, RoundDecision, controller_prompt(state, stage, setup)
            )
            if result.value is None:
                decision = RoundDecision(
                    action="next_stage",
                    reason=CONTROLLER_FALLBACK,
                    fallback=result.reason or "no reply",
                    **fields,
                )
            else:
                decision = result.value.model_copy(
                    update={**fields, "forced": False, "fallback": None}
                )
            turn = Turn(
                agent=CONTROLLER_AGENT,
                agent_id=CONTROLLER_AGENT,
                role="system",  # not part of the conversation the speakers read
                content=decision.reason,
                stage=stage.name,
                round=rnd,
                usage=result.usage,
                answer=decision.action,
                reason=decision.fallback,
            )
            update.update(turn_update(*recorded(result, turn), so_far=state.get("transcript")))
        update["controller_decisions"] = [decision]
        emit("decision", agent=CONTROLLER_AGENT, **decision.model_dump(mode="json"))
        update.update(next_step(decision, stage, setup))
        return update

    return agent_node(control, CONTROLLER_NODE)


def make_decide(setup: MeetingSetup, model: ModelBinding | None) -> Runnable[Any, Any]:
    """Node in which the chair gives the typed final decision over the whole conversation.

    No call when nobody spoke (a stop before the first round); an unusable reply is
    recorded as ``decision=None`` with a note. Either way the run ends cleanly.

    Args:
        setup: The meeting's settings.
        model: The model to call (unless the official has its own,
            :attr:`MeetingSetup.officials`); ``None`` reads it from the run's context.

    Returns:
        The node.
    """
    agent = agent_of(setup.member(CHAIR_AGENT), model, CHAIR_AGENT)
    roster = ", ".join(dict.fromkeys(n for s in setup.stages for n in s.names))

    def decide(state: MeetingState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        seen = visible(state.get("transcript", []), None, 0)
        if not any(t.role == "agent" for t in seen):
            return {"decision": None, "notes": [f"{CHAIR_FALLBACK}: nobody spoke"]}
        system = SystemMessage(CHAIR_SYSTEM.format(topic=state["topic"], roster=roster))
        messages = [system, *as_messages(seen, None), HumanMessage(CHAIR_TASK)]
        result = yield from agent.ask_steps(runtime, FinalDecision, messages)
        decision = result.value
        turn = Turn(
            agent=CHAIR_AGENT,
            agent_id=CHAIR_AGENT,
            content=decision.decision if decision else "",
            stage=DECISION_STAGE,
            round=state.get("round") or 0,
            reply_to=tuple(t.id for t in seen),
            usage=result.usage,
            reason=None if decision else result.reason,
        )
        update: dict[str, Any] = {
            **turn_update(*recorded(result, turn), so_far=state.get("transcript")),
            "decision": decision,
        }
        if decision is None:
            update["notes"] = [f"{CHAIR_FALLBACK}: {result.reason or 'no reply'}"]
        return update

    return agent_node(decide, DECIDE_NODE)


def round_review(setup: MeetingSetup) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The payload of the pause after a round.

    Args:
        setup: The meeting's settings.

    Returns:
        Builds, from the state: the stage and stage round just finished, what each
        participant said, the controller's decision, what comes next and the round's
        tokens (see :func:`~debategraph.nodes.review.review_payload`).
    """

    def payload(state: Mapping[str, Any]) -> dict[str, Any]:
        rnd: int = state["round"]
        transcript: Sequence[Turn] = state.get("transcript", [])
        decisions: Sequence[RoundDecision] = state.get("controller_decisions", [])
        last = decisions[-1] if decisions else None
        this_round = [t for t in transcript if t.round == rnd and t.role != "user"]
        return review_payload(
            rnd,
            setup.total_rounds,
            "participant",
            stage=last.stage if last else state.get("stage"),
            stage_round=last.stage_round if last else state.get("stage_round"),
            stage_rounds=last.max_rounds if last else None,
            messages={t.agent: t.content for t in this_round if t.role == "agent"},
            controller=last.model_dump(mode="json") if last else None,
            next_stage=state.get("stage"),
            next_stage_round=state.get("stage_round"),
            tokens_this_round=Usage.total(t.usage for t in this_round).total_tokens,
        )

    return payload


def outcome(state: Mapping[str, Any]) -> Outcome:
    """The meeting's outcome message: the chair's decision and its rationale.

    Args:
        state: The finished run's state.

    Returns:
        ``(chair, text)``; without a usable decision, why there is none.
    """
    decision: FinalDecision | None = state.get("decision")
    if decision is None:
        reason = state.get("termination_reason") or "completed"
        return CHAIR_AGENT, f"The meeting ended ({reason}) with no decision."
    return CHAIR_AGENT, f"{decision.decision} {decision.rationale}".strip()
