"""Running a call's steps: blocking (``invoke``) or awaited (``ainvoke``), one driver.

A model call's logic (:func:`~debategraph.models.structured_steps`,
:func:`~debategraph.models.text_steps`) is a generator that yields ``(runnable, input)`` for
each model call it needs, is sent the reply (or thrown the call's exception) and returns
the result. :func:`run_steps` runs it with blocking ``invoke`` calls, :func:`arun_steps`
awaits ``ainvoke`` on the running loop; both hold a place of the process's call cap
(:mod:`debategraph.models.limits`). A graph node written as such a generator gets a sync
and a native async path from one body (:func:`debategraph.nodes.dual.agent_node`).

Both take an optional ``deadline`` (a Unix time, the run's time limit): a call is not
made at or after it, and under ``arun_steps`` a call still in flight when it passes is
cancelled. Either way the steps are thrown :class:`TimeLimitReached`, which the calls of
:mod:`debategraph.models.calls` record as their fallback (no retry). Under ``run_steps``
a call already started runs to its end (or its request timeout): a blocking call cannot
be cancelled from its own thread.

This module imports no model client: graphs use it when they are declared, and the
model stack loads on the first call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Generator
from contextlib import AbstractContextManager
from typing import Any, TypeAlias, TypeVar

from langchain_core.runnables import Runnable  # LangGraph loads it anyway

from debategraph.models.limits import async_slot, sync_slot

R = TypeVar("R")

#: A call's logic, written once for :func:`run_steps` and :func:`arun_steps`: the generator
#: yields ``(runnable, input)`` for each model call it needs, is sent the reply (or thrown
#: the call's exception, which it handles or re-raises), and returns the call's result.
Steps: TypeAlias = Generator[tuple[Runnable[Any, Any], Any], Any, R]

#: The context a call is made in, made from its runnable and its input; it gives what
#: takes the reply (see :func:`tagged`).
Around: TypeAlias = Callable[
    [Runnable[Any, Any], Any], AbstractContextManager[Callable[[Any], None]]
]

#: Makes one model call: ``(runnable, input, deadline) -> reply``.
Call: TypeAlias = Callable[[Runnable[Any, Any], Any, "float | None"], Awaitable[Any]]

#: Why a call was not made: the run's deadline had passed.
NOT_MADE = "time limit reached: call not made (past the run's deadline)"


class TimeLimitReached(Exception):
    """Thrown into a call's steps: the run's time limit passed before the call ended.

    Its message says what happened to the call (cancelled after how long, or not made);
    the calls of :mod:`debategraph.models.calls` record it as their fallback reason.

    Attributes:
        in_flight_s: How long the cancelled call was in flight; ``None``: not made.
    """

    def __init__(self, in_flight_s: float | None = None) -> None:
        self.in_flight_s = in_flight_s
        if in_flight_s is None:
            super().__init__(NOT_MADE)
        else:
            super().__init__(f"time limit reached: call cancelled after {in_flight_s:.1f} s")


def remaining(deadline: float | None) -> float | None:
    """Seconds left until ``deadline`` (negative once past), or ``None`` without one.

    Args:
        deadline: A Unix time, or ``None``.

    Returns:
        The seconds left.
    """
    return None if deadline is None else deadline - time.time()


def tagged(
    steps: Steps[R],
    metadata: dict[str, Any],
    around: Around | None = None,
    tags: list[str] | None = None,
) -> Steps[R]:
    """The same steps, each model call made with ``metadata`` (and ``tags``) on its config.

    An agent's calls carry its name this way (``lc_agent_name``), so a caller streaming
    with ``stream_mode="messages"`` reads whose tokens each chunk holds.

    Args:
        steps: A call's steps.
        metadata: Added to every yielded runnable's config.
        around: Makes a context for each call from its runnable and input: the call is made
            inside it and the callable it gives is handed the reply (a trace's span,
            see :mod:`debategraph.models.tracing`).
        tags: Added to every yielded runnable's config (see :func:`quiet`).

    Returns:
        Steps that yield each runnable bound to the metadata and return what ``steps``
        return.
    """
    config: dict[str, Any] = {"metadata": metadata}
    if tags:
        config["tags"] = tags
    try:
        runnable, prompt = next(steps)
        while True:
            try:
                if around is None:
                    out = yield runnable.with_config(**config), prompt
                else:
                    with around(runnable, prompt) as answered:
                        out = yield runnable.with_config(**config), prompt
                        answered(out)
            except Exception as exc:  # noqa: BLE001 - only forwarded: the steps re-raise it
                runnable, prompt = steps.throw(exc)
            else:
                runnable, prompt = steps.send(out)
    except StopIteration as done:
        result: R = done.value
        return result
    finally:
        steps.close()


def quiet(steps: Steps[R]) -> Steps[R]:
    """The same steps, their model calls kept out of ``stream_mode="messages"``.

    Each call carries LangGraph's public ``TAG_NOSTREAM``: a structured reply's JSON, a
    tool loop's requests and a speaker pick are no one's words. The turn they make
    reaches the messages stream whole, as its node returns it
    (:func:`debategraph.nodes.messages.said`).

    Args:
        steps: A call's steps.

    Returns:
        Steps that return what ``steps`` return.
    """
    from langgraph.constants import TAG_NOSTREAM

    return tagged(steps, {}, tags=[TAG_NOSTREAM])


async def _run(steps: Steps[R], call: Call, deadline: float | None = None) -> R:
    """Run a call's steps: make each model call they yield and hand them its outcome.

    Args:
        steps: The generator (see :data:`Steps`).
        call: Makes one model call: ``(runnable, input, deadline) -> reply``.
        deadline: The Unix time after which no call is made (``None``: none).

    Returns:
        The generator's result.
    """
    try:
        runnable, prompt = next(steps)
        while True:
            try:
                out = await call(runnable, prompt, deadline)
            except Exception as exc:  # noqa: BLE001 - only forwarded: the steps re-raise it
                runnable, prompt = steps.throw(exc)
            else:
                runnable, prompt = steps.send(out)
    except StopIteration as done:
        result: R = done.value
        return result
    finally:  # cancelled or interrupted mid-call: end the steps now, not at collection
        steps.close()


async def _blocking(runnable: Runnable[Any, Any], prompt: Any, deadline: float | None) -> Any:
    """``runnable.invoke(prompt)``: it blocks, and never suspends the coroutine.

    Raises:
        TimeLimitReached: If the deadline passed before the call could start.
    """
    with sync_slot():
        left = remaining(deadline)
        if left is not None and left <= 0:
            raise TimeLimitReached
        return runnable.invoke(prompt)


async def _awaiting(runnable: Runnable[Any, Any], prompt: Any, deadline: float | None) -> Any:
    """``await runnable.ainvoke(prompt)``, on the running loop, cancelled at the deadline.

    The deadline bounds the wait for a place of the process's call cap too: a call
    still waiting for one then is not made.

    Raises:
        TimeLimitReached: If the deadline passed before the call started, or while it
            was in flight (the call is cancelled).
    """
    left = remaining(deadline)
    if left is None:
        async with async_slot():
            return await runnable.ainvoke(prompt)
    if left <= 0:
        raise TimeLimitReached
    started: float | None = None
    window = asyncio.timeout(left)
    try:
        async with window, async_slot():
            started = time.perf_counter()
            return await runnable.ainvoke(prompt)
    except TimeoutError:
        if not window.expired():
            raise  # the call's own timeout, not the deadline
        in_flight = None if started is None else time.perf_counter() - started
        raise TimeLimitReached(in_flight) from None


def run_steps(steps: Steps[R], *, deadline: float | None = None) -> R:
    """Run steps with blocking ``invoke`` calls, on no event loop.

    :func:`_run` is driven by hand: with :func:`_blocking` it never suspends, so one
    ``send`` runs it to the end (its result comes as ``StopIteration.value``).

    Args:
        steps: The generator (see :data:`Steps`).
        deadline: The Unix time at or after which no call starts (``None``: none); a
            call already started runs to its end.

    Returns:
        The generator's result.
    """
    run = _run(steps, _blocking, deadline)
    try:
        run.send(None)
    except StopIteration as done:
        result: R = done.value
        return result
    run.close()  # cannot happen: nothing in it awaits anything that suspends
    raise RuntimeError("a blocking model call suspended")


async def arun_steps(steps: Steps[R], *, deadline: float | None = None) -> R:
    """Run steps, awaiting each model call (``ainvoke``) on the running loop.

    Args:
        steps: The generator (see :data:`Steps`).
        deadline: The Unix time at which a call in flight is cancelled and after which
            none is made (``None``: none).

    Returns:
        The generator's result.
    """
    return await _run(steps, _awaiting, deadline)
