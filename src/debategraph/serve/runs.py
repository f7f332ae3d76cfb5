"""Requests that create runs: which graph, what input, and joins that hold nothing.

- :func:`kind_of` tells a request that creates a run (or creates or changes an
  assistant) from the rest.
- :func:`checked` checks a run's input with the check the CLI makes before Aegra sees it
  (Aegra learns of a bad input only when the graph fails in the background, after
  answering 200), and completes a run that goes on from its thread.
- :func:`run_ended` waits for a run's end holding no database connection (Aegra 0.6.0's
  join holds one of its few metadata connections while it waits, so a few clients
  joining their runs would starve every other request).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import MutableMapping
from typing import Any

from debategraph import registry
from debategraph.graphs.inputs import check_input

Scope = MutableMapping[str, Any]

#: The Agent Protocol routes that create a run (stateful and stateless).
RUN_ROUTES = re.compile(r"^/(threads/(?P<thread>[^/]+)/)?runs(/stream|/wait)?/?$")
#: The routes that create or change an assistant (POST /assistants, PATCH /assistants/ID).
ASSISTANT_ROUTES = re.compile(r"^/assistants(/(?P<assistant>[^/]+))?/?$")
#: A run's join route.
JOIN_ROUTE = re.compile(r"^/threads/[^/]+/runs/(?P<run>[^/]+)/join/?$")
#: A run's statuses once it has ended.
ENDED = frozenset({"success", "error", "interrupted", "timeout"})
#: How often a join looks up the status of a run another process runs, and for how long
#: (then Aegra's own join answers, as it does after its 30 s).
JOIN_POLL_S = 0.5
JOIN_WAIT_S = 300.0


def graph_of(assistant_id: Any) -> str | None:
    """The pattern a run's ``assistant_id`` names: a graph id or its default assistant.

    Args:
        assistant_id: The request's value.

    Returns:
        The pattern's name, or ``None`` for any other assistant.
    """
    from debategraph.compat import aegra_resolve_assistant_id

    names = registry.names()
    for name in names:
        if assistant_id in (name, aegra_resolve_assistant_id(name, names)):
            return name
    return None


async def has_checkpoint(thread_id: str | None) -> bool:
    """Whether the server's checkpointer holds a checkpoint of the thread.

    Args:
        thread_id: The thread (``None`` for a stateless run: it has none).

    Returns:
        Whether a run with no input has something to go on from.
    """
    if thread_id is None:
        return False
    from debategraph.compat import aegra_checkpointer

    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    return await aegra_checkpointer().aget_tuple(config) is not None


async def checked(request: Any, thread_id: str | None) -> tuple[str | None, Any]:
    """A run-creating request, checked (and completed) before Aegra sees it.

    Args:
        request: The request's parsed JSON body.
        thread_id: The thread it runs on (``None``: a stateless run).

    Returns:
        ``(error, request)``: the one-line reason its graph cannot start from the input
        (``None``: it can), and the request to hand on (a new object where it changed).
        A run with no input (none, or ``{}``) and no command goes on from the thread's
        last checkpoint, as on LangGraph's server: Aegra 0.6.0 refuses a run without
        input (422), so it is handed on with ``input: {}``, which
        :class:`~debategraph.graphs.served.ServedGraph` reads as no input. On a thread
        with nothing to go on from, the input is checked as a first input (and so
        refused with the pattern's own line).
    """
    if not isinstance(request, dict) or request.get("command") is not None:
        return None, request  # a command acts on the thread's state: nothing to check
    name = graph_of(request.get("assistant_id"))
    values = request.get("input")
    ongoing = await has_checkpoint(thread_id)
    if values in (None, {}):
        if ongoing or name is None:
            return None, {**request, "input": {}}
        values = {}
    elif name is None:
        return None, request  # another assistant's run: its graph checks it when it starts
    try:
        check_input(name, values, first=not ongoing)
    except ValueError as exc:
        return str(exc), request
    return None, request


def kind_of(scope: Scope) -> str | None:
    """``run`` or ``assistant`` for a request that creates one (or changes an assistant)."""
    if scope["type"] != "http":
        return None
    path, method = scope["path"], scope["method"]
    if method == "POST" and RUN_ROUTES.match(path):
        return "run"
    assistant = ASSISTANT_ROUTES.match(path)
    if assistant and (method, assistant.group("assistant") is None) in (
        ("POST", True),
        ("PATCH", False),
    ):
        return "assistant"
    return None


async def run_ended(run_id: str) -> None:
    """Return once a run has ended, holding no database connection while it runs.

    Args:
        run_id: The run.
    """
    from debategraph.compat import aegra_active_run, aegra_run_table, aegra_session_maker

    task = aegra_active_run(run_id)
    if task is not None:  # run by this process: wait on it
        await asyncio.wait({task})
        return
    from sqlalchemy import select

    Run = aegra_run_table()

    deadline = time.monotonic() + JOIN_WAIT_S
    while time.monotonic() < deadline:
        async with aegra_session_maker()() as session:
            status = await session.scalar(select(Run.status).where(Run.run_id == run_id))
        if status is None or status in ENDED:
            return
        await asyncio.sleep(JOIN_POLL_S)
