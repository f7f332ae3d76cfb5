"""What a human sends a thread from the CLI: interjections and stop requests, and the line.

:func:`review_command` is the one line that tells a human how to go on with a thread
waiting at its review point (``debategraph resume THREAD --db DB --approve |
--interject TEXT``): the CLI prints it, a thread's page shows it.

A thread waiting at its review point, or stopped between rounds, takes an interjection at
once through ``update_state``; a thread another process is running, or one stopped in the
middle of a round, gets it (and a stop request) in its inbox in LangGraph's store
(:mod:`debategraph.checkpoints.inbox`), which the node that opens its next round reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from debategraph.checkpoints import inbox
from debategraph.checkpoints.threads import RunInfo, ThreadState, thread_config
from debategraph.described import Described
from debategraph.errors import UsageError
from debategraph.nodes.rounds import REVIEW_NODE
from debategraph.state.base import termination_word
from debategraph.state.records import Turn, interjection

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.store.base import BaseStore

    Graph = CompiledStateGraph[Any, Any, Any, Any]


#: What a thread waiting at its round review takes on the command line.
REVIEW_REPLIES = "--approve | --interject TEXT"


def resume_command(thread_id: str, db: str, cache: str | None = None) -> str:
    """The command that continues a thread.

    Args:
        thread_id: The thread.
        db: The ``--db`` value.
        cache: The response cache's file where the run uses one (the resumed run's
            calls are answered from it too).

    Returns:
        ``debategraph resume THREAD --db DB``, and ``--cache FILE`` with a cache.
    """
    also = f" --cache {cache}" if cache is not None else ""
    return f"debategraph resume {thread_id} --db {db}{also}"


def review_command(thread_id: str, db: str, cache: str | None = None) -> str:
    """What a human runs to go on with a thread waiting at its round review.

    Args:
        thread_id: The thread.
        db: The ``--db`` value.
        cache: The response cache's file, if the run uses one.

    Returns:
        :func:`resume_command` and :data:`REVIEW_REPLIES`.
    """
    return f"{resume_command(thread_id, db, cache)} {REVIEW_REPLIES}"


def refuse_running(thread_id: str, state: ThreadState) -> None:
    """Refuse to touch a thread another live process is running.

    Args:
        thread_id: The thread.
        state: Where it stands.

    Raises:
        UsageError: If it is running.
    """
    if state.status == "running":
        raise UsageError(
            f"thread {thread_id} is running (pid {state.pid}): wait until it stops or pauses"
        )


#: How :func:`interject` delivered a message: recorded in the thread's state now, or
#: posted to its inbox, to be recorded at its next round boundary.
Delivery = Literal["recorded", "posted"]


def interject(
    graph: Graph,
    thread_id: str,
    text: str,
    state: ThreadState,
    db: str,
    run: RunInfo | None = None,
    *,
    pattern: Described | None = None,
) -> Delivery:
    """Add a human message to a thread: now, or at its next round boundary.

    A thread waiting at its review point, or stopped between rounds, takes it at once
    through ``update_state`` (LangGraph's own API). A thread another process is running,
    or one stopped in the middle of a round, gets it in its inbox in the store
    (:mod:`debategraph.checkpoints.inbox`): the node that opens its next round records it.
    A message no round would read is refused (:func:`refuse_unread`).

    Args:
        graph: The thread's compiled graph.
        thread_id: The thread.
        text: The message.
        state: Where the thread stands.
        db: The ``--db`` value, whose store holds the inbox.
        run: The thread's run (its pattern and settings: how many rounds it may have);
            ``None``: only a finished or ending thread is refused.
        pattern: Its pattern's rounds (:func:`refuse_unread`).

    Returns:
        ``recorded`` or ``posted``.

    Raises:
        UsageError: If the text is empty, or no round of the thread will read it.
    """
    from langgraph.errors import InvalidUpdateError

    if not text.strip():
        raise UsageError("interjection text is empty")
    refuse_unread(graph, thread_id, state, run, pattern=pattern)
    if state.status == "running" or not (state.status == "waiting" or state.at_round_boundary):
        post_to_inbox(db, thread_id, inbox.INTERJECT, text)
        return "posted"
    turn = interjection(text, after_round=state.round or 0)
    # As the review node when waiting (that also answers its pause), else as the last node.
    as_node = REVIEW_NODE if state.status == "waiting" else None
    try:
        graph.update_state(thread_config(thread_id), {"transcript": [turn]}, as_node=as_node)
    except InvalidUpdateError as exc:
        raise UsageError(f"cannot interject into thread {thread_id} here: {exc}") from exc
    return "recorded"


def refuse_unread(
    graph: Graph,
    thread_id: str,
    state: ThreadState,
    run: RunInfo | None,
    shown: str | None = None,
    *,
    pattern: Described | None = None,
) -> None:
    """Refuse an interjection no round of the thread will read, before anything runs.

    A round reads what was sent before it opened. None will open after a finished
    thread, one whose state already ends it (a termination reason is set), or one whose
    last round (:attr:`~debategraph.described.Described.last_round`) has opened.

    Args:
        graph: The thread's compiled graph.
        thread_id: The thread.
        state: Where it stands.
        run: Its run (pattern and settings; ``None``: its round cap is not known).
        shown: The thread the message names (a fork's original; default ``thread_id``).
        pattern: Its pattern's rounds (``None``: they are called rounds, their cap is
            not known).

    Raises:
        UsageError: One line saying why, and how to interject where a round reads it.
    """
    word = pattern.round_word if pattern is not None else "round"
    name = shown or thread_id
    fork = f"debategraph fork {name} --at CHECKPOINT --interject TEXT"
    earlier = f"branch it from a checkpoint before its last {word} instead ({fork}; "
    earlier += f"see debategraph history {name})"
    refuse_finished(name, state, f"no {word} would read the interjection; {earlier}")
    values = graph.get_state(thread_config(thread_id)).values
    reason = values.get("termination_reason")
    cap = pattern.last_round(run.settings) if pattern is not None and run is not None else None
    if reason or (cap is not None and state.round is not None and state.round >= cap):
        ending = f"it is ending ({termination_word(reason)})"
        why = ending if reason else f"its last {word} ({cap}) has begun"
        raise UsageError(f"thread {name}: no {word} would read the interjection: {why}; {earlier}")


def refuse_finished(thread_id: str, state: ThreadState, instead: str) -> None:
    """Refuse to send anything to a finished thread.

    Args:
        thread_id: The thread.
        state: Where it stands.
        instead: What to do instead (the end of the message).

    Raises:
        UsageError: If it is finished.
    """
    if state.status == "finished":
        raise UsageError(f"thread {thread_id} is finished: {instead}")


def post_to_inbox(db: str, thread_id: str, kind: str, text: str = "") -> str:
    """Put a message in a thread's inbox in the store of ``db``.

    Args:
        db: The ``--db`` value.
        thread_id: The thread.
        kind: ``interject`` or ``stop``.
        text: An interjection's text.

    Returns:
        The item's key.

    Raises:
        UsageError: If the store cannot be opened.
    """
    with inbox.open_store(db) as store:
        return inbox.post(store, thread_id, kind, text)


def close_inbox(store: BaseStore, thread_id: str, transcript: Sequence[Turn]) -> list[str]:
    """Empty a finished thread's inbox: nothing will read it any more.

    Args:
        store: The store.
        thread_id: The thread.
        transcript: Its final transcript (which interjections it recorded).

    Returns:
        The texts of the interjections that came too late to be read.
    """
    items = inbox.read(store, thread_id)
    recorded = {t.id for t in transcript}
    inbox.remove(store, thread_id, [item.key for item in items])
    return [i.text for i in items if i.kind == inbox.INTERJECT and i.key not in recorded]
