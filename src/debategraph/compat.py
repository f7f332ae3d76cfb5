"""Every private LangGraph name this package uses, imported in one place.

LangGraph's public API has no operation for what :mod:`debategraph.checkpoints.maintenance`
does to stored checkpoints (copy a thread with its writes, store a full snapshot of a delta
channel), so it needs four names that LangGraph keeps private; and no public way to give a
node both a sync and an async function (:mod:`debategraph.nodes.dual`), which LangGraph's
own ``ToolNode`` does with ``RunnableCallable``. They may move or change in any release: no
other module imports them from LangGraph, and ``tests/test_compat.py`` checks each one's
location and the behaviour relied on here, so an upgrade that breaks one fails there with a
message naming it.

The other thing LangGraph does not promise is the layout of its savers' tables: the SQL
this package runs on them lives in :mod:`debategraph.checkpoints.tables` (and the lean
SQLite saver's table definitions in :mod:`debategraph.checkpoints.savers`), each listing
the tables and columns it names; ``tests/test_compat.py`` checks those lists against the
schema LangGraph's own savers create.

Checked against langgraph 1.2.22 and langgraph-checkpoint 4.3.2 (the bounds in
``pyproject.toml`` stop at their next major versions).

Attributes:
    NULL_TASK_ID: The task id LangGraph gives writes made outside any task (a
        ``Command``'s ``resume``, ``update`` and ``goto`` input). ``fork`` keeps only
        these writes at the fork point: the tasks of the next step run again.
        From ``langgraph._internal._constants``.
    MISSING: The "no stored value" sentinel. ``DeltaChannel.from_checkpoint(MISSING)``
        starts an empty channel (``None`` would be taken as a stored value); ``prune``
        passes it when ``get_delta_channel_history`` finds no seed; the ``messages``
        channel (:class:`~debategraph.state.reducers.MessagesChannel`) returns it for
        "nothing to save".
        From ``langgraph._internal._typing``.
    DeltaSnapshot: The blob type of a delta channel's full value in ``channel_values``;
        ``prune`` stores one in the oldest checkpoint it keeps, so that the ancestor
        walk stops there. The checkpoint serializer encodes it as its own msgpack
        extension type. ``langgraph.checkpoint.serde.types._DeltaSnapshot``.
    task_path_str: Formats a task's ``path`` tuple as the ``task_path`` string the
        SQLite and Postgres savers store with each write (a replay sorts a step's
        writes by it). ``fork`` uses it when it cannot read stored paths with SQL.
        From ``langgraph.pregel._algo``.
    RunnableCallable: A node runnable made of a sync and an async function; LangGraph
        injects ``runtime`` (and ``config``, ``writer``...) into both by parameter name.
        ``add_node`` wraps a plain sync function in one whose async side runs it on the
        default thread pool. From ``langgraph._internal._runnable``.
    StateLike: What LangGraph accepts as a state, input or output schema (a TypedDict,
        dataclass or pydantic model): the bound of ``StateGraph``'s type parameters,
        which :class:`~debategraph.graphs.skeleton.PatternGraph` passes on. Typing only.
        From ``langgraph._internal._typing``.
"""

from __future__ import annotations

from langgraph._internal._constants import NULL_TASK_ID
from langgraph._internal._runnable import RunnableCallable
from langgraph._internal._typing import MISSING, StateLike
from langgraph.checkpoint.serde.types import _DeltaSnapshot as DeltaSnapshot
from langgraph.pregel._algo import task_path_str

__all__ = [
    "MISSING",
    "NULL_TASK_ID",
    "DeltaSnapshot",
    "RunnableCallable",
    "StateLike",
    "task_path_str",
]
