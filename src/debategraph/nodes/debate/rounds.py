"""The debate's round: open it, let each debater speak, close it, review it.

The loop itself (``open_round``, the review point ``human``, the routing) is the shared
one in :mod:`debategraph.nodes.rounds`; this module adds what is the debate's own, under
the names every pattern gives them (``make_open_round``, ``termination_conditions``,
``make_close_round``, ``round_review``, each built from the setup record): its
first-round outputs, the debater nodes, the termination conditions of ``close_round``
and the payload a human reviews.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from debategraph.nodes.agent import agent_of, recorded
from debategraph.nodes.debate.setup import ARGUE_STAGE, DebateSetup, check_input
from debategraph.nodes.debate.views import (
    debater_prompt,
    debater_view,
    is_argument,
    word_count,
)
from debategraph.nodes.dual import agent_node, loop_node
from debategraph.nodes.review import review_payload
from debategraph.nodes.rounds import ended, open_round_node, round_router
from debategraph.state.base import turn_update
from debategraph.state.debate import DebateState, WordCount
from debategraph.state.records import Turn, Usage
from debategraph.strategies.termination import (
    Condition,
    MaxRounds,
    RoundOutcome,
    Silence,
    first_fired,
)

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable
    from langgraph.runtime import Runtime

    from debategraph.models import ModelBinding, Steps
    from debategraph.models.context import Context


def first_round(state: Mapping[str, Any]) -> dict[str, Any]:
    """The outputs' starting values, written when round 1 opens.

    Args:
        state: The debate state.

    Returns:
        No verdict, no round done, no summary yet, and zero usage (so the key exists).
    """
    return {
        "verdict": None,
        "rounds_completed": 0,
        "summary": "",
        "summarized": 0,
        "usage": Usage(),
        "usage_by_agent": {},
    }


def make_open_round(setup: DebateSetup) -> Runnable[Any, Any]:
    """The node that starts each round: the shared one, with the debate's check and outputs.

    It writes the new ``round``; in round 1 also ``started_at`` (and the ``deadline`` of
    the debate's time limit, if it has one) and :func:`first_round`'s writes; and it
    drains the thread's inbox (see :func:`~debategraph.nodes.rounds.open_round_node`).
    It raises ``ValueError`` if the topic is empty (:func:`check_input`). Round 1 also
    writes ``stances``: each debater's side, by name.

    Args:
        setup: The debate's settings.

    Returns:
        The node runnable.
    """
    stances = {d.name: d.side for d in setup.debaters}

    def first(state: Mapping[str, Any]) -> dict[str, Any]:
        return {**first_round(state), "stances": stances}

    return open_round_node(check_input, first, time_limit_s=setup.time_limit_s)


def make_debater(name: str, setup: DebateSetup, model: ModelBinding | None) -> Runnable[Any, Any]:
    """Node in which one debater speaks (its own step: turns are sequential).

    The reply is prose (:meth:`~debategraph.nodes.agent.Agent.say_steps`), so its tokens
    stream with ``stream_mode="messages"``. The debater's own model, tools or agent (its
    record, see :func:`~debategraph.nodes.agent.agent_of`) make it; its tool calls are
    recorded before its argument. Its length is recorded as a :class:`WordCount`.

    Args:
        name: The debater (also the node's name).
        setup: The debate's settings.
        model: The model to call; ``None`` reads it from the run's context (Studio).

    Returns:
        The node function.
    """
    recipients = setup.others(name)
    agent = agent_of(setup.debater(name), model, name)

    def speak(state: DebateState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        view = debater_view(state, name, setup)
        result = yield from agent.say_steps(runtime, debater_prompt(view, setup))
        latest = view["latest"]
        turn = Turn(
            agent=name,
            content=result.text,
            stage=ARGUE_STAGE,
            round=view["round"],
            reply_to=(latest.id,) if latest else (),
            recipients=recipients,
            usage=result.usage,
            reason=result.reason,
        )
        records = recorded(result, turn)
        count = WordCount(
            turn_id=records[-1].id,
            debater=name,
            round=turn.round,
            words=word_count(result.text),
            limit=setup.words,
        )
        return {
            **turn_update(*records, so_far=state.get("transcript")),
            "word_counts": [count],
        }

    return agent_node(speak, name)


def termination_conditions(setup: DebateSetup) -> list[Condition]:
    """The conditions ``close_round`` checks, highest precedence first.

    Args:
        setup: The debate's settings.

    Returns:
        An empty round (``error``), then the round cap (``rounds_completed``). The
        moderator's ``settled`` is decided in its own node, after ``close_round``.
    """
    return [Silence(), MaxRounds(setup.max_rounds)]


def make_close_round(setup: DebateSetup, model: ModelBinding | None) -> Runnable[Any, Any]:
    """Node that records the finished round and whether the debate ends.

    Args:
        setup: The debate's settings.
        model: The graph's model: not called (a debate's round closes on its
            conditions alone; the moderator, if any, speaks in its own node).

    Returns:
        The node runnable.
    """
    conditions = termination_conditions(setup)

    def close_round(state: DebateState) -> dict[str, Any]:
        rnd = state["round"]
        this_round = [
            t
            for t in state.get("transcript", [])
            if is_argument(t) and t.round == rnd and t.agent in setup.names
        ]
        outcome = RoundOutcome(
            round=rnd,
            usage=Usage.coerce(state.get("usage")),
            answers=[t.content or None for t in this_round],
        )
        update: dict[str, Any] = {"rounds_completed": rnd}
        reason = ended(state, first_fired(conditions, outcome))
        if reason is not None:
            update["termination_reason"] = reason
        return update

    return loop_node(close_round)


def router(setup: DebateSetup, after: str) -> tuple[Callable[[Mapping[str, Any]], str], list[str]]:
    """The edge after ``after``: on to the rest of the round's tail, or to the finish.

    Args:
        setup: The debate's settings.
        after: ``close_round`` or ``moderator``.

    Returns:
        The routing function and the nodes it may pick (for the drawn graph).
    """
    # The round's tail (moderator, summarizer, review) already holds the review point.
    return round_router(setup.finish, pause_after_round=False, next_node=setup.next_step(after))


def round_review(setup: DebateSetup) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The payload of the pause after a round.

    Args:
        setup: The debate's settings.

    Returns:
        Builds, from the state: each debater's argument and word count, the moderator's
        call on the round, the summary and the round's tokens (see
        :func:`~debategraph.nodes.review.review_payload`).
    """

    def payload(state: Mapping[str, Any]) -> dict[str, Any]:
        rnd: int = state["round"]
        transcript: Sequence[Turn] = state.get("transcript", [])
        this_round = [t for t in transcript if t.round == rnd and t.role == "agent"]
        arguments = {t.agent: t.content for t in this_round if is_argument(t)}
        decisions = [d for d in state.get("moderator_decisions", []) if d.round == rnd]
        return review_payload(
            rnd,
            setup.max_rounds,
            "debater",
            arguments=arguments,
            word_counts={name: word_count(text) for name, text in arguments.items()},
            moderator=decisions[-1].model_dump(mode="json") if decisions else None,
            summary=state.get("summary", ""),
            tokens_this_round=Usage.total(t.usage for t in this_round).total_tokens,
        )

    return payload
