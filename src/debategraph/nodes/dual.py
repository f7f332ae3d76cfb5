"""Nodes with a sync and a native async path, written once.

LangGraph runs a plain function node under ``ainvoke``/``astream`` on asyncio's default
thread pool (a handful of workers): a model call then holds a thread while it waits, and
the calls of a round queue behind each other. Every node of this package is one of:

* :func:`agent_node`: a node that calls a model. Its body is a generator that
  ``yield from`` s the steps of each call (:meth:`Agent.ask_steps
  <debategraph.nodes.agent.Agent.ask_steps>`, :meth:`~debategraph.nodes.agent.Agent.say_steps`)
  and returns the node's update. Under ``invoke`` each call is a blocking ``invoke``; under
  ``ainvoke`` it is awaited on the event loop, on no thread, so a round's calls are all in
  flight at once (bounded by the run's ``max_concurrency``). The turns the update records
  stream once as messages (:func:`~debategraph.nodes.messages.said`). The run's ``deadline`` (its
  time limit, a state key: :func:`deadline_of`) bounds every call: one in flight when it
  passes is cancelled (under ``ainvoke``), none starts after it, and the call records
  its fallback with the reason.
* :func:`loop_node`: a node (or router) that only computes. Both paths call it directly:
  under ``ainvoke`` it runs on the event loop instead of hopping to a thread.
* :func:`dual_node`: a node whose two paths differ in more than the model calls (the
  open-round node reads the inbox with the store's sync or async methods).

All three are :class:`NodeLambda`: LangChain's public ``RunnableLambda(func, afunc=...)``
that makes no trace run of its own (LangGraph's run of the node is its trace, as for a
function node); a node reads its run's :class:`~langgraph.runtime.Runtime` with
LangGraph's public ``get_runtime()``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Generator, Mapping
from typing import TYPE_CHECKING, Any, cast

from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langgraph.runtime import Runtime, get_runtime

from debategraph.models.steps import arun_steps, run_steps
from debategraph.nodes.messages import said

if TYPE_CHECKING:
    from debategraph.models.context import Context

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


class NodeLambda(RunnableLambda[Any, Any]):
    """``RunnableLambda(func, afunc=...)`` as a graph node: called as it is, no run of its own.

    A ``RunnableLambda`` opens a callback run for every call (5.5% of the client CPU of a
    model call, in an A/B of 10 solver debates at once against the stub): inside
    a graph, the node's own run, which LangGraph opens, already traces it, as it does for
    a plain function node. Both methods pass ``kwargs`` on (``node.invoke(state,
    runtime=...)`` outside a graph).
    """

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Call the sync function."""
        return self.func(input, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Await the async function."""
        afunc = cast("Callable[..., Awaitable[Any]]", self.afunc)  # always given here
        return await afunc(input, **kwargs)


def runtime_here() -> Runtime[Context]:
    """The running graph's runtime (``get_runtime()``), or an empty one outside a graph.

    A node invoked on its own (a test, or a caller's code) gets what LangGraph gives a
    node function there: a ``Runtime`` with no context, store or writer. A node may also
    be given one, as ``node.invoke(state, runtime=...)``.
    """
    try:
        return get_runtime()
    except (KeyError, RuntimeError):  # no config, or a config of no graph
        return Runtime()


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

    def node(state: Any, runtime: Runtime[Context] | None = None) -> Any:
        return func(state, runtime or runtime_here())

    async def anode(state: Any, runtime: Runtime[Context] | None = None) -> Any:
        return await afunc(state, runtime or runtime_here())

    return NodeLambda(node, afunc=anode, name=name)


def agent_node(body: NodeBody, name: str | None = None) -> Runnable[Any, Any]:
    """A node that calls a model, from one generator body for both paths.

    Args:
        body: ``(state, runtime) -> generator`` (see :data:`NodeBody`).
        name: Its name in traces (default: the body's).

    Returns:
        The node runnable, for ``add_node``.
    """

    def node(state: Any, runtime: Runtime[Context]) -> Any:
        return said(run_steps(body(state, runtime), deadline=deadline_of(state)))

    async def anode(state: Any, runtime: Runtime[Context]) -> Any:
        return said(await arun_steps(body(state, runtime), deadline=deadline_of(state)))

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

        def node(state: Any, runtime: Runtime[Context] | None = None) -> Any:
            return func(state, runtime=runtime or runtime_here())

    else:
        node = func

    async def anode(state: Any, **kwargs: Any) -> Any:
        return node(state, **kwargs)

    return NodeLambda(node, afunc=anode, name=name or func.__name__)
