"""What the server refuses on a thread's own routes: values the thread's graph cannot take.

Checked once the thread is known to be the caller's (after
:func:`debategraph.serve.owners.refusal`), since it reads the thread's graph from Aegra's
threads table: a state update whose ``as_node`` the thread's graph has no node of, that
gives none where LangGraph cannot tell it (the last step ran several nodes at once), whose
``checkpoint_ns`` names a subgraph the graph does not have, or whose ``values`` the
state's fields (their reducers) cannot take; and a thread ``metadata.graph_id`` other than
the thread's own (each later read of its state would fail). Each is a 500 in Aegra 0.6.0;
here, a 422 with one line.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, get_args, get_origin

from debategraph.serve.guard import clipped

#: A thread's own route (``PATCH`` changes its metadata).
THREAD_ROUTE = re.compile(r"^/threads/(?P<thread>[^/]+)/?$")
#: A thread's state route (``POST`` with ``values`` updates it).
STATE_ROUTE = re.compile(r"^/threads/(?P<thread>[^/]+)/state/?$")


async def refusal(method: str, path: str, body: Any) -> str | None:
    """Why a request on a thread names what the thread's graph does not have, if it does.

    A state update (``POST /threads/T/state`` with ``values``) fails in LangGraph when its
    ``as_node`` is not a node of the thread's graph, or when it gives none and the
    thread's last step ran several nodes at once (LangGraph cannot tell which one the
    update comes from). A thread's ``metadata.graph_id`` changed (``PATCH /threads/T``) to
    another graph makes every later read of its state fail. Each needs the thread's graph,
    from Aegra's threads table: call this once the thread is known to be the caller's.

    Args:
        method: The HTTP method.
        path: The request's path.
        body: Its parsed JSON body (checked by :func:`refusal` first).

    Returns:
        One line naming the value and what is allowed, or ``None``.
    """
    if not isinstance(body, dict):
        return None
    state = STATE_ROUTE.match(path) if method == "POST" else None
    if state and body.get("values") is not None:
        return await _bad_update(state.group("thread"), body)
    thread = THREAD_ROUTE.match(path) if method == "PATCH" else None
    metadata = body.get("metadata")
    if thread and isinstance(metadata, dict) and metadata.get("graph_id") is not None:
        stored = await thread_metadata(thread.group("thread"))
        own, wanted = _graph_id(stored), metadata["graph_id"]
        if stored is not None and wanted != own:  # no such thread: Aegra answers 404
            now = f"'{own}'" if own else "none yet"
            return (
                f"metadata.graph_id {clipped(repr(wanted))} is not the thread's graph ({now}): "
                "a run sets it; leave it out"
            )
    return None


async def _bad_update(thread_id: str, body: dict[str, Any]) -> str | None:
    """Why a state update fails on the thread's graph: its node, namespace or values."""
    graph_id = _graph_id(await thread_metadata(thread_id))
    graph = await served_graph(graph_id)
    if graph is None:
        return None  # no graph yet, or one not served: Aegra answers for it
    nodes = ", ".join(str(name) for name in graph.nodes)
    node = body.get("as_node")
    if node is not None and node not in graph.nodes:
        return f"as_node {clipped(repr(node))} is not a node of graph {graph_id!r}: one of {nodes}"
    given = body.get("checkpoint")
    checkpoint: dict[str, Any] = given if isinstance(given, dict) else {}
    namespace = body.get("checkpoint_ns") or checkpoint.get("checkpoint_ns")
    if namespace and next(iter(graph.get_subgraphs()), None) is None:
        return (
            f"checkpoint_ns {clipped(repr(namespace))} names a subgraph, and graph "
            f"{graph_id!r} has none: leave it out"
        )
    if node is None and not namespace:
        checkpoint_id = body.get("checkpoint_id") or checkpoint.get("checkpoint_id")
        if await _ambiguous(graph, thread_id, checkpoint_id):
            return (
                f"the thread's last step ran several nodes of graph {graph_id!r} at once, so "
                f"the update must say which one it comes from: give as_node, one of {nodes}"
            )
    return _bad_values(graph, graph_id, body["values"])


async def _ambiguous(graph: Any, thread_id: str, checkpoint_id: Any) -> bool:
    """Whether LangGraph cannot tell which node a state update without ``as_node`` is as.

    Asks the graph as :meth:`~langgraph.pregel.Pregel.aupdate_state` does, on the
    checkpoint the update starts from (the thread's latest, or the one the body names).
    """
    from debategraph.compat import aegra_checkpointer, infer_as_node

    configurable = {"thread_id": thread_id, "checkpoint_ns": ""}
    if isinstance(checkpoint_id, str):
        configurable["checkpoint_id"] = checkpoint_id
    saved = await aegra_checkpointer().aget_tuple({"configurable": configurable})
    return saved is not None and infer_as_node(graph, saved.checkpoint["versions_seen"]) is None


def _bad_values(graph: Any, graph_id: str | None, values: Any) -> str | None:
    """Why a state update's values do not fit the graph's state, if they do not.

    Each value is handed to an empty copy of its state channel (its reducer, where it has
    one), as the update would hand it to the thread's: a reducer that cannot take it
    raises there, not in the middle of the update.
    """
    update: dict[str, Any] = {}
    for item in values if isinstance(values, list) else [values]:
        update.update(item if isinstance(item, dict) else {})  # Aegra merges a list so
    for key, value in update.items():
        spec = graph.channels.get(key)
        if spec is None or key.startswith("__") or ":" in key:
            continue  # not a state field: the update leaves it out
        try:
            spec.copy().update([value])
        except (TypeError, ValueError, AttributeError, KeyError):  # what a reducer raises
            return (
                f"values.{clipped(key)} {clipped(json.dumps(value))} does not fit the state of "
                f"graph {graph_id!r}: {key} holds {_type_name(spec.ValueType)}"
            )
    return None


def _type_name(value_type: Any) -> str:
    """A state field's type as written, without modules or its reducer (``list[Turn]``)."""
    if get_origin(value_type) is Annotated:
        value_type = get_args(value_type)[0]
    text = value_type.__name__ if isinstance(value_type, type) else repr(value_type)
    return re.sub(r"\b(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_])", "", text)


async def thread_metadata(thread_id: str) -> dict[str, Any] | None:
    """A thread's metadata, as Aegra keeps it (``None``: no such thread).

    Args:
        thread_id: The thread.

    Returns:
        Its metadata (``graph_id`` names the graph its runs run).
    """
    from sqlalchemy import select

    from debategraph.compat import aegra_session_maker, aegra_thread_table

    Thread = aegra_thread_table()
    async with aegra_session_maker()() as session:
        row = await session.execute(
            select(Thread.metadata_json).where(Thread.thread_id == thread_id)
        )
        found = row.first()
    if found is None:
        return None
    return dict(found[0]) if isinstance(found[0], dict) else {}


def _graph_id(metadata: dict[str, Any] | None) -> str | None:
    graph_id = (metadata or {}).get("graph_id")
    return graph_id if isinstance(graph_id, str) else None


async def served_graph(graph_id: str | None) -> Any:
    """The compiled graph the server serves by that id (``None``: none).

    Args:
        graph_id: The graph's id in the server's config.

    Returns:
        Aegra's compiled graph (without its checkpointer), or ``None``.
    """
    if graph_id is None:
        return None
    from debategraph.compat import aegra_served_graph

    try:
        return await aegra_served_graph(graph_id)
    except ValueError:  # not served
        return None
