"""The round loop every pattern shares: open a round, review it, take interjections.

A pattern's graph is ``open_round -> <its agents> -> <its close>``, then back to
``open_round``, through the review point ``human`` when it pauses after each round
(:mod:`debategraph.nodes.review`: what it asks a human and the replies it takes), or on
to its finish once a termination condition fired. The nodes and the routing below are the
shared part; the thread tools find round boundaries with :data:`BOUNDARY_NODES`.

A human's interjection is a ``user`` :class:`~debategraph.state.records.Turn` in the
transcript, recorded after the round it follows; agents read it through
:func:`interjections` and :func:`interjection_prompt`. It arrives through the review
point, through ``update_state`` at a boundary, or, while another process runs the thread,
through the thread's inbox in LangGraph's store, which :func:`open_round_node` drains at
each boundary (with stop requests, which end the run after that round: :func:`ended`).

A time limit bounds a run's wall time: :func:`start_clock` writes ``started_at`` and the
``deadline`` when the run starts (the shared ``open_round`` in round 1, given the
pattern's ``time_limit_s``); every model call is bounded by it (see
:func:`debategraph.nodes.dual.agent_node`), and a round's close that finds it passed
ends the run with ``time_limit`` (:func:`ended`), whatever else fired: the finish nodes
then fall back at once, so the run ends a few seconds after its limit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from debategraph.nodes.messages import emit
from debategraph.prompts import HUMAN_INTERJECTION
from debategraph.state.records import USER, Turn, interjection

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable
    from langgraph.runtime import Runtime

    from debategraph.checkpoints.inbox import InboxItem
    from debategraph.models.context import Context
    from debategraph.state.base import TerminationReason

#: The node that starts each round.
OPEN_ROUND_NODE = "open_round"
#: The review point: pauses after a round until a human answers (:mod:`.review`).
REVIEW_NODE = "human"
#: Nodes a thread waits at between rounds: nothing of a round is half done there.
BOUNDARY_NODES = frozenset({OPEN_ROUND_NODE, REVIEW_NODE})

#: The termination reason of a run a human asked to stop.
STOPPED: TerminationReason = "stopped"
#: The termination reason of a run whose deadline passed.
TIME_LIMIT: TerminationReason = "time_limit"


def start_clock(time_limit_s: float | None, started_at: float | None = None) -> dict[str, Any]:
    """The writes that start a run's clock: ``started_at`` and its ``deadline``.

    Args:
        time_limit_s: The run's time limit in seconds (``None``: none).
        started_at: When it started (default: now).

    Returns:
        ``started_at`` and ``deadline`` (``None`` without a limit).
    """
    start = time.time() if started_at is None else float(started_at)
    return {
        "started_at": start,
        "deadline": None if time_limit_s is None else start + float(time_limit_s),
    }


def past_deadline(state: Mapping[str, Any]) -> bool:
    """Whether the run's deadline (if it has one) has passed.

    Args:
        state: The run state.

    Returns:
        True once ``time.time()`` reaches ``state["deadline"]``.
    """
    deadline = state.get("deadline")
    return isinstance(deadline, int | float) and time.time() >= deadline


def check_max_rounds(max_rounds: int | None, *, optional: bool = False) -> None:
    """Refuse a round cap below 1 (every pattern's ``max_rounds``).

    Args:
        max_rounds: The setting.
        optional: Whether ``None`` (no cap given) is allowed.

    Raises:
        ValueError: One line naming the value and what is allowed.
    """
    if max_rounds is None and optional:
        return
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 1:
        raise ValueError(f"max_rounds must be at least 1, got {max_rounds}")


def check_time_limit(time_limit_s: float | None, option: str = "time_limit_s") -> None:
    """Refuse a time limit that is not a positive number of seconds (``None``: none).

    Args:
        time_limit_s: The setting.
        option: Its name, for the message.

    Raises:
        ValueError: One line naming the value and what is allowed.
    """
    if time_limit_s is None:
        return
    if isinstance(time_limit_s, bool) or not isinstance(time_limit_s, int | float):
        raise ValueError(f"{option} must be a number of seconds, got {time_limit_s!r}")
    if not 0 < time_limit_s < float("inf"):
        raise ValueError(f"{option} must be a positive number of seconds, got {time_limit_s}")


def require_text(key: str, hint: str = "") -> Callable[[Mapping[str, Any]], None]:
    """The input check of a pattern whose run needs a non-empty text field.

    The CLI, the server and the graph itself all give its message (see
    :func:`debategraph.graphs.inputs.check_input`).

    Args:
        key: The field (``question``, ``topic``, ``task``).
        hint: What to give instead (default: a non-empty ``key``).

    Returns:
        ``check(state)``: raises ``ValueError`` (one line) when the field is empty.
    """
    message = f"{key} is empty: {hint or f'pass a non-empty {key!r}'}"
    unread = f"{key} is empty: messages has no human message to read it from; {hint or ''}"

    def check(state: Mapping[str, Any]) -> None:
        if not str(state.get(key) or "").strip():
            raise ValueError(unread.rstrip("; ") if state.get("messages") else message)

    return check


def round_opener(
    check: Callable[[Mapping[str, Any]], None] | None = None,
    first: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None,
    *,
    current_round: Callable[[Mapping[str, Any]], int] | None = None,
    time_limit_s: float | None = None,
) -> Callable[..., dict[str, Any]]:  # LangGraph's add_node types want a TypedDict input
    """The node function that starts the next round (the inbox aside: see :func:`open_round_node`).

    Args:
        check: Validates the input (raise ``ValueError`` with a one-line message).
        first: Extra writes of the first round (the outputs' starting values).
        current_round: Reads the round so far from the state (default: ``round``, 0
            when unset).
        time_limit_s: The run's time limit: round 1 writes its ``deadline``
            (:func:`start_clock`). ``None``: the round does not set one (a pattern
            that starts its clock elsewhere keeps it).

    Returns:
        The node function: it writes the new ``round`` (and ``started_at``, and the
        ``deadline`` if there is a time limit, in round 1).
    """

    def open_round(state: Mapping[str, Any]) -> dict[str, Any]:
        if check is not None:
            check(state)
        rnd = (current_round(state) if current_round else int(state.get("round") or 0)) + 1
        update: dict[str, Any] = {"round": rnd}
        emit("round", round=rnd)
        if rnd == 1:
            update["started_at"] = state.get("started_at") or time.time()
            if time_limit_s is not None:
                update.update(start_clock(time_limit_s, update["started_at"]))
            if first is not None:
                update.update(first(state))
        return update

    return open_round


def open_round_node(
    check: Callable[[Mapping[str, Any]], None] | None = None,
    first: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None,
    *,
    current_round: Callable[[Mapping[str, Any]], int] | None = None,
    name: str = OPEN_ROUND_NODE,
    time_limit_s: float | None = None,
) -> Runnable[Any, Any]:
    """The node runnable that starts each round (or a chat's turn), for ``add_node``.

    Besides what :func:`round_opener` writes, it drains the inbox of the thread it
    runs (:mod:`debategraph.checkpoints.inbox`) from ``runtime.store``: each
    interjection becomes a ``user`` turn after the round just finished (its id is the
    item's key, so an item is recorded once however often it is read), and a stop
    request sets ``termination_reason="stopped"``: the run ends after this round (the
    close nodes keep it, see :func:`ended`). A stop request is deleted when read (a
    stale one must not stop a later continuation); an interjection when a later
    boundary finds it in the transcript, so a crash before this step is saved loses
    none. Without a store or a thread id there is nothing to drain. Under ``ainvoke``
    the store is read through its async API.

    Args:
        check: As for :func:`round_opener`.
        first: As for :func:`round_opener`.
        current_round: As for :func:`round_opener`.
        name: The node's name in traces.
        time_limit_s: As for :func:`round_opener`.

    Returns:
        The node (sync and async paths).
    """
    from debategraph.checkpoints import inbox
    from debategraph.nodes.dual import dual_node

    open_round = round_opener(check, first, current_round=current_round, time_limit_s=time_limit_s)

    def node(state: Mapping[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
        update = open_round(state)
        thread = _thread_of(runtime)
        if runtime.store is None or thread is None:
            return update
        drained, done = drain(inbox.read(runtime.store, thread), state, update["round"] - 1)
        inbox.remove(runtime.store, thread, done)
        return {**update, **drained}

    async def anode(state: Mapping[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
        update = open_round(state)
        thread = _thread_of(runtime)
        if runtime.store is None or thread is None:
            return update
        items = await inbox.aread(runtime.store, thread)
        drained, done = drain(items, state, update["round"] - 1)
        await inbox.aremove(runtime.store, thread, done)
        return {**update, **drained}

    return dual_node(node, anode, name)


def _thread_of(runtime: Runtime[Context]) -> str | None:
    """The id of the thread being run, if it has one (and a store to hold its inbox)."""
    if runtime.store is None:
        return None
    from langgraph.config import get_config

    thread = get_config().get("configurable", {}).get("thread_id")
    return str(thread) if thread else None


def drain(
    items: Sequence[InboxItem], state: Mapping[str, Any], after_round: int
) -> tuple[dict[str, Any], list[str]]:
    """What a round boundary makes of a thread's inbox.

    Args:
        items: The inbox, oldest first.
        state: The run state (its transcript says which interjections are recorded).
        after_round: The round just finished (0 before the first).

    Returns:
        The state update (``transcript`` with the new interjections, and
        ``termination_reason="stopped"`` if a stop was asked), and the keys of the
        items to delete: stop requests, and interjections already recorded.
    """
    from debategraph.checkpoints.inbox import STOP

    recorded = {t.id for t in state.get("transcript") or () if t.role == USER}
    update: dict[str, Any] = {}
    turns: list[Turn] = []
    done: list[str] = []
    for item in items:
        if item.kind == STOP:
            update["termination_reason"] = STOPPED
            done.append(item.key)
        elif item.key in recorded:
            done.append(item.key)
        else:
            turns.append(interjection(item.text, after_round=after_round, id=item.key))
    if turns:
        update["transcript"] = turns
    return update, done


def ended(state: Mapping[str, Any], reason: TerminationReason | None) -> TerminationReason | None:
    """The reason a round's close ends the run with: a stop asked earlier, then the deadline.

    A stop drained when the round opened (see :func:`open_round_node`) is already in
    the state; a condition that fires at the round's close must not overwrite it. A
    round that closes past the run's deadline had its calls cancelled (or not made),
    so what its conditions read is no evidence: it ends ``time_limit``.

    Args:
        state: The run state.
        reason: What the close's own conditions say (``None``: none fired).

    Returns:
        ``stopped`` if a stop was asked, else ``time_limit`` past the deadline, else
        ``reason``.
    """
    if state.get("termination_reason") == STOPPED:
        return STOPPED
    return TIME_LIMIT if past_deadline(state) else reason


def interjections(transcript: Sequence[Turn], *, after_round: int | None = None) -> list[Turn]:
    """A human's interjections, oldest first.

    Args:
        transcript: The transcript.
        after_round: Only those made after this round (the ones new to its next round);
            ``None``: every one so far.

    Returns:
        The ``user`` records.
    """
    return [
        t
        for t in transcript
        if t.role == "user" and (after_round is None or t.round == after_round)
    ]


def interjection_prompt(turns: Sequence[Turn]) -> str:
    """The paragraph that puts a human's interjections in an agent's prompt.

    Args:
        turns: The interjections (see :func:`interjections`).

    Returns:
        The paragraph, or ``""`` when there are none.
    """
    notes = "\n".join(f"- {t.content}" for t in turns)
    return HUMAN_INTERJECTION.format(notes=notes) if notes else ""


class RoundEnd(TypedDict, total=False):
    """What the edge after a round reads of the state: only whether the run ended.

    The router's input schema. LangGraph hands a conditional edge a fresh copy of every
    channel its input schema names; naming only this one spares a copy of the whole
    state (transcript, usage, rounds...) after every round.
    """

    termination_reason: str | None


def round_router(
    finish: str, *, pause_after_round: bool, next_node: str = OPEN_ROUND_NODE
) -> tuple[Callable[[Any], str], list[str]]:
    """The edge after a round: to ``finish`` once a reason is set, else on.

    Args:
        finish: Where a finished run goes (an aggregator, a judge, ``END``...).
        pause_after_round: Go through :data:`REVIEW_NODE` between rounds.
        next_node: Where an unfinished run goes when it does not pause: the node that
            opens the next round (a pattern may keep an older name), or the rest of
            the round's tail (a debate's moderator, say).

    Returns:
        The routing function and the nodes it may pick (for the drawn graph).
    """
    again = REVIEW_NODE if pause_after_round else next_node

    def after_round(state: RoundEnd) -> str:
        return finish if state.get("termination_reason") else again

    return after_round, [again, finish]
