"""The group chat's turn loop: begin an invocation, open and close a turn, route, review.

A turn is the chat's round (its ``max_rounds`` counts turns), so its functions have the
names every pattern's round has (``make_open_round``, ``termination_conditions``,
``make_close_round``, ``round_review``, each built from the setup record): a turn is
``open_round`` (the shared one: it drains the thread's inbox) -> ``select``
(:mod:`~debategraph.nodes.group_chat.selection`) -> the chosen agent's node
(:mod:`~debategraph.nodes.group_chat.speakers`) -> ``close_turn`` (the termination
conditions, model judges included), then the next turn, the review point ``human`` when
the chat pauses after each turn, or the end. ``begin`` runs once per invocation, before
its first turn: it takes the invocation's input.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from debategraph.nodes.agent import agent_of, tool_calls_of
from debategraph.nodes.conversation import chat_messages
from debategraph.nodes.dual import agent_node, loop_node
from debategraph.nodes.group_chat.setup import (
    BEGIN_NODE,
    CLOSE_TURN_NODE,
    JUDGE,
    SELECT_NODE,
    TASK_STAGE,
    GroupChatSetup,
    check_input,
)
from debategraph.nodes.messages import RESPOND_NODE
from debategraph.nodes.review import review_payload
from debategraph.nodes.rounds import (
    OPEN_ROUND_NODE,
    REVIEW_NODE,
    TIME_LIMIT,
    open_round_node,
    past_deadline,
    start_clock,
)
from debategraph.state.base import usage_update
from debategraph.state.records import USER, Turn, Usage
from debategraph.strategies.termination import (
    Condition,
    Fired,
    RoundOutcome,
    check_steps,
    describe_condition,
    time_limit,
    timeout,
)

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import Runnable
    from langgraph.runtime import Runtime

    from debategraph.models import CallResult, ModelBinding, Steps
    from debategraph.models.context import Context


def make_begin(setup: GroupChatSetup) -> Runnable[Any, Any]:
    """The node that takes an invocation's input (once per invocation).

    The task is the human's first message; a later ``message`` is another. ``reset``
    re-opens a finished chat (its conditions count afresh from this turn); a single
    turn's ``speaker`` is checked here. Each invocation starts the clock afresh: its
    ``deadline`` is now plus the termination's time limit, if it has one
    (:func:`~debategraph.strategies.termination.time_limit`).

    Args:
        setup: The chat's settings.

    Returns:
        The node runnable.

    Raises:
        ValueError: On an empty task (:func:`check_input`) or an unknown speaker (one
            line).
    """

    def begin_node(state: Mapping[str, Any]) -> dict[str, Any]:
        check_input(state)
        task = str(state["task"]).strip()
        speaker = state.get("speaker")
        if speaker is not None and setup.find(str(speaker)) is None:
            raise ValueError(
                f"speaker {speaker!r} is not an agent of this chat: use one of "
                f"{', '.join(setup.names)}"
            )
        rnd = int(state.get("round") or 0)
        update: dict[str, Any] = {"message": None, "reset": False, "next_speaker": None}
        turns: list[Turn] = []
        if not state.get("transcript"):
            turns.append(_human(task, 0))
            update.update(is_complete=False, termination_detail="", segment_start=0, usage=Usage())
        if state.get("is_complete") and (state.get("reset") or state.get("message")):
            update.update(
                is_complete=False,
                termination_reason=None,
                termination_detail="",
                segment_start=rnd,
            )
        elif state.get("is_complete"):
            update["speaker"] = None  # nothing runs: the request is dropped, not kept
            update["notes"] = [
                f"the chat is complete ({state.get('termination_reason')}): invoke it with "
                "reset=True or a new message to go on"
            ]
        if state.get("message"):
            turns.append(_human(str(state["message"]), rnd))
        if turns:
            update["transcript"] = turns
        update.update(start_clock(time_limit(setup.termination)))  # per invocation
        return update

    return loop_node(begin_node, name=BEGIN_NODE)


def _human(text: str, after: int) -> Turn:
    return Turn(
        agent=USER, agent_id=USER, role="user", content=text.strip(), stage=TASK_STAGE, round=after
    )


def after_begin(state: Mapping[str, Any]) -> str:
    """A finished chat invoked without ``reset`` (or a message) stays finished.

    Args:
        state: The chat state.

    Returns:
        ``open_round`` or :data:`~debategraph.nodes.messages.RESPOND_NODE`.
    """
    return RESPOND_NODE if state.get("is_complete") else OPEN_ROUND_NODE


def make_open_round(setup: GroupChatSetup) -> Runnable[Any, Any]:
    """The node that starts each turn: the shared one, which drains the inbox.

    It writes the new ``round`` (the turn) and records what the thread's inbox holds
    (see :func:`~debategraph.nodes.rounds.open_round_node`). The input check and the
    clock are ``begin``'s, which runs once per invocation (:func:`make_begin`): a chat
    goes on over several invocations, each with a clock of its own.

    Args:
        setup: The chat's settings.

    Returns:
        The node runnable.
    """
    return open_round_node()


def after_open(state: Mapping[str, Any]) -> str:
    """A stop drained from the inbox skips the turn.

    Args:
        state: The chat state.

    Returns:
        ``select`` or ``close_turn``.
    """
    return CLOSE_TURN_NODE if state.get("termination_reason") else SELECT_NODE


def stale_turns(turns: Sequence[Turn]) -> int:
    """How many of the latest agent messages in a row repeat something said before.

    Args:
        turns: The conversation, oldest first.

    Returns:
        The count (0 when the latest message is new).
    """
    said = [_normal(t.content) for t in turns if t.role == "agent"]
    count = 0
    for i in range(len(said) - 1, -1, -1):
        if said[i] and said[i] not in said[:i]:
            break
        count += 1
    return count


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def termination_conditions(setup: GroupChatSetup) -> list[Condition]:
    """The conditions ``close_turn`` checks after each turn.

    Args:
        setup: The chat's settings.

    Returns:
        The chat's one combined condition (``until``, ``termination``, the time limit
        and the turn cap, joined with ``|`` and ``&``; it always has a hard cap). Its
        parts are checked in order, model judges included (see
        :func:`~debategraph.strategies.termination.check_steps`).
    """
    return [setup.termination]


def make_close_round(setup: GroupChatSetup, model: ModelBinding | None) -> Runnable[Any, Any]:
    """The node that checks the termination conditions after a turn (``close_turn``).

    A stop drained at the turn's start ends the chat (``stopped``); past the chat's
    deadline it ends ``time_limit`` (the turn's call was cancelled or not made);
    otherwise the conditions (:func:`termination_conditions`) are checked in order, on
    the conversation (agents' and a human's messages: tool-call records are none). A
    model judge's call is made by the ``judge`` official (its own model, tools or agent,
    if given) and charged to it and its model. A single-turn invocation returns after
    its turn with the chat still open.

    Args:
        setup: The chat's settings.
        model: The chat's model (``None``: the run's context).

    Returns:
        The node.
    """
    agent = agent_of(setup.officials.get(JUDGE), model, JUDGE)
    conditions = termination_conditions(setup)

    def close_turn(state: Mapping[str, Any], runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        update: dict[str, Any] = {"next_speaker": None}
        if state.get("termination_reason") == "stopped":
            return {**update, "is_complete": True, "termination_detail": "a stop was requested"}
        transcript = state.get("transcript") or ()
        start = int(state.get("segment_start") or 0)
        turns = chat_messages(transcript)
        outcome = RoundOutcome(
            round=int(state["round"]) - start,
            usage=Usage.coerce(state.get("usage")),
            elapsed_s=time.time() - float(state.get("started_at") or time.time()),
            turns=turns,
            stale=stale_turns([t for t in turns if t.round > start]),
        )
        judged: list[CallResult[Any]] = []

        def ask(schema: type[Any], messages: list[BaseMessage]) -> Any:
            result = yield from agent.ask_steps(runtime, schema, messages)
            judged.append(result)
            return result

        fired: Fired | None = None
        if past_deadline(state):  # the turn's call was cut short: no judge, the time is up
            limit = time_limit(setup.termination)
            fired = Fired(TIME_LIMIT, describe_condition(timeout(limit)) if limit else TIME_LIMIT)
        else:
            for condition in conditions:  # in order: the first that fires ends the chat
                fired = yield from check_steps(condition, outcome, ask)
                if fired is not None:
                    break
        if judged:
            spent = Usage.total(r.usage for r in judged)
            update.update(usage_update(JUDGE, spent, judged[-1].model))
            calls = tool_calls_of(judged, JUDGE, int(state["round"]), JUDGE)
            if calls:
                update["transcript"] = calls
        if fired is not None:
            update.update(
                termination_reason=fired.reason, termination_detail=fired.detail, is_complete=True
            )
        elif state.get("speaker"):
            update["speaker"] = None  # a single turn: return, the chat stays open
        return update

    return agent_node(close_turn, CLOSE_TURN_NODE)


def after_turn(setup: GroupChatSetup) -> tuple[Callable[[Mapping[str, Any]], str], list[str]]:
    """The edge after a turn: the end, the review point, or the next turn.

    Args:
        setup: The chat's settings.

    Returns:
        The routing function and the nodes it may pick.
    """
    again = REVIEW_NODE if setup.pause_after_round else OPEN_ROUND_NODE

    def route(state: Mapping[str, Any]) -> str:
        if state.get("is_complete"):
            return RESPOND_NODE
        if state.get("speaker") is None and _single_turn_done(state):
            return RESPOND_NODE
        return again

    return route, [again, RESPOND_NODE]


def _single_turn_done(state: Mapping[str, Any]) -> bool:
    """Whether this turn was a single-turn invocation's (its record says ``named``)."""
    selections = state.get("selections") or []
    return (
        bool(selections)
        and selections[-1].method == "named"
        and selections[-1].turn == state.get("round")
    )


def round_review(setup: GroupChatSetup) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The payload of the pause after a turn.

    Args:
        setup: The chat's settings.

    Returns:
        Builds it from the state: the turn's speaker and message.
    """

    def payload(state: Mapping[str, Any]) -> dict[str, Any]:
        rnd = int(state["round"])
        said = [t for t in state.get("transcript") or () if t.round == rnd and t.role == "agent"]
        return review_payload(
            rnd - int(state.get("segment_start") or 0),
            setup.cap,
            "agent",
            word="turn",
            speaker=said[-1].agent if said else None,
            message=said[-1].content if said else "",
        )

    return payload
