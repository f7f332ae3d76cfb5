"""Nodes with a sync and a native async path, written once.

LangGraph runs a plain function node under ``ainvoke``/``astream`` on asyncio's default
thread pool (a handful of workers): a model call then holds a thread while it waits, and
the calls of a round queue behind each other. Every node of this package is one of:

* :func:`agent_node`: a node that calls a model. Its body is a generator that
  ``yield from`` s the steps of each call (:meth:`Agent.ask_steps
  <debategraph.nodes.agent.Agent.ask_steps>`, :meth:`~debategraph.nodes.agent.Agent.say_steps`)
  and returns the node's update. Under ``invoke`` each call is a blocking ``invoke``; under
  ``ainvoke`` it is awaited on the event loop, on no thread, so a round's calls are all in
  flight at once (bounded by the run's ``max_concurrency``). The run's ``deadline`` (its
  time limit, a state key: :func:`deadline_of`) bounds every call: one in flight when it
  passes is cancelled (under ``ainvoke``), none starts after it, and the call records
  its fallback with the reason.
* :func:`loop_node`: a node (or router) that only computes. Both paths call it directly:
  under ``ainvoke`` it runs on the event loop instead of hopping to a thread.
* :func:`dual_node`: a node whose two paths differ in more than the model calls (the
  open-round node reads the inbox with the store's sync or async methods).

All three are LangChain's public ``RunnableLambda(func, afunc=...)``; a node reads its
run's :class:`~langgraph.runtime.Runtime` with LangGraph's public ``get_runtime()``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Generator, Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import Runnable, RunnableLambda
from langgraph.runtime import get_runtime

from debategraph.models.steps import arun_steps, run_steps

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from debategraph.context import Context

#: A node body: yields ``(runnable, input)`` for each model call (``yield from`` a call's
#: steps), is sent the reply, and returns the node's state update.
NodeBody = Callable[[Any, "Runtime[Context]"], Generator[tuple[Any, Any], Any, Any]]


def deadline_of(state: Any) -> float | None:
    """The run's deadline (a Unix time) as its state holds it, or ``None``.

    Written when the run starts from the pattern's time limit (see
    :func:`debategraph.nodes.rounds.start_clock`); a state without one (no time limit,
    or a thread of an older version) has none.

    Args:
        state: The node's input state.

    Returns:
        The deadline, or ``None``.
    """
    value = state.get("deadline") if isinstance(state, Mapping) else None
    return float(value) if isinstance(value, int | float) else None


def dual_node(
    func: Callable[[Any, Runtime[Context]], Any],
    afunc: Callable[[Any, Runtime[Context]], Awaitable[Any]],
    name: str,
) -> Runnable[Any, Any]:
    """A node with a sync and an async function, each given the state and the runtime.

    Args:
        func: ``(state, runtime) -> update``, for ``invoke``/``stream``.
        afunc: The same, awaited, for ``ainvoke``/``astream``.
        name: Its name in traces.

    Returns:
        The node runnable, for ``add_node``.
    """

    def node(state: Any) -> Any:
        return func(state, get_runtime())

    async def anode(state: Any) -> Any:
        return await afunc(state, get_runtime())

    return RunnableLambda(node, afunc=anode, name=name)


def agent_node(body: NodeBody, name: str | None = None) -> Runnable[Any, Any]:
    """A node that calls a model, from one generator body for both paths.

    Args:
        body: ``(state, runtime) -> generator`` (see :data:`NodeBody`).
        name: Its name in traces (default: the body's).

    Returns:
        The node runnable, for ``add_node``.
    """

    def node(state: Any, runtime: Runtime[Context]) -> Any:
        return run_steps(body(state, runtime), deadline=deadline_of(state))

    async def anode(state: Any, runtime: Runtime[Context]) -> Any:
        return await arun_steps(body(state, runtime), deadline=deadline_of(state))

    return dual_node(node, anode, name or body.__name__)


def loop_node(func: Callable[..., Any], name: str | None = None) -> Runnable[Any, Any]:
    """A node or router that only computes: both paths call it directly.

    Args:
        func: ``(state) -> update`` (or a route). It may take ``runtime``; it must not
            block (no model call, no file or network I/O).
        name: The node's name (default: the function's).

    Returns:
        The runnable, for ``add_node`` or ``add_conditional_edges``.
    """
    if "runtime" in inspect.signature(func).parameters:

        def node(state: Any) -> Any:
            return func(state, runtime=get_runtime())

    else:
        node = func

    async def anode(state: Any) -> Any:
        return node(state)

    return RunnableLambda(node, afunc=anode, name=name or func.__name__)
