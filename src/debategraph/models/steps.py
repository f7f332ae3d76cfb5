"""Running a call's steps: blocking (``invoke``) or awaited (``ainvoke``), one driver.

A model call's logic (:func:`~debategraph.models.structured_steps`,
:func:`~debategraph.models.text_steps`) is a generator that yields ``(runnable, input)`` for
each model call it needs, is sent the reply (or thrown the call's exception) and returns
the result. :func:`run_steps` runs it with blocking ``invoke`` calls, :func:`arun_steps`
awaits ``ainvoke`` on the running loop; both hold a place of the process's call cap
(:mod:`debategraph.models.limits`). A graph node written as such a generator gets a sync
and a native async path from one body (:func:`debategraph.nodes.dual.agent_node`).

This module imports no model client: graphs use it when they are declared, and the
model stack loads on the first call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeAlias, TypeVar

from langchain_core.runnables import Runnable  # LangGraph loads it anyway

from debategraph.models.limits import async_slot, sync_slot

R = TypeVar("R")

#: A call's logic, written once for :func:`run_steps` and :func:`arun_steps`: the generator
#: yields ``(runnable, input)`` for each model call it needs, is sent the reply (or thrown
#: the call's exception, which it handles or re-raises), and returns the call's result.
Steps: TypeAlias = Generator[tuple[Runnable[Any, Any], Any], Any, R]


async def _run(steps: Steps[R], call: Callable[[Runnable[Any, Any], Any], Awaitable[Any]]) -> R:
    """Run a call's steps: make each model call they yield and hand them its outcome.

    Args:
        steps: The generator (see :data:`Steps`).
        call: Makes one model call: ``(runnable, input) -> reply``.

    Returns:
        The generator's result.
    """
    try:
        runnable, prompt = next(steps)
        while True:
            try:
                out = await call(runnable, prompt)
            except Exception as exc:  # noqa: BLE001 - only forwarded: the steps re-raise it
                runnable, prompt = steps.throw(exc)
            else:
                runnable, prompt = steps.send(out)
    except StopIteration as done:
        result: R = done.value
        return result
    finally:  # cancelled or interrupted mid-call: end the steps now, not at collection
        steps.close()


async def _blocking(runnable: Runnable[Any, Any], prompt: Any) -> Any:
    """``runnable.invoke(prompt)``: it blocks, and never suspends the coroutine."""
    with sync_slot():
        return runnable.invoke(prompt)


async def _awaiting(runnable: Runnable[Any, Any], prompt: Any) -> Any:
    """``await runnable.ainvoke(prompt)``, on the running loop."""
    async with async_slot():
        return await runnable.ainvoke(prompt)


def run_steps(steps: Steps[R]) -> R:
    """Run steps with blocking ``invoke`` calls, on no event loop.

    :func:`_run` is driven by hand: with :func:`_blocking` it never suspends, so one
    ``send`` runs it to the end (its result comes as ``StopIteration.value``).

    Args:
        steps: The generator (see :data:`Steps`).

    Returns:
        The generator's result.
    """
    run = _run(steps, _blocking)
    try:
        run.send(None)
    except StopIteration as done:
        result: R = done.value
        return result
    run.close()  # cannot happen: nothing in it awaits anything that suspends
    raise RuntimeError("a blocking model call suspended")


async def arun_steps(steps: Steps[R]) -> R:
    """Run steps, awaiting each model call (``ainvoke``) on the running loop.

    Args:
        steps: The generator (see :data:`Steps`).

    Returns:
        The generator's result.
    """
    return await _run(steps, _awaiting)
