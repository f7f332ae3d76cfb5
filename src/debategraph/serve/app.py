"""The app Aegra mounts for debategraph (``"http": {"app": "debategraph.serve.app:app"}``).

Aegra serves its Agent Protocol routes on this app, which adds three things of debategraph's:

- **At start**, the config's graphs are checked against the registry: a graph id
  debategraph does not have stops the server with one line (``debategraph serve``
  refuses it before the server starts; this covers ``aegra serve`` on an ``aegra.json``).
- **Before a run is created**, its input is checked with the check the CLI makes
  (:func:`debategraph.graphs.inputs.check_input`): a bad input gets a 422 whose
  ``message`` is the CLI's one line, and no run or thread is written. Aegra itself only
  learns of a bad input when the graph fails in the background, after answering 200.
- **A join waits without a database connection.** Aegra 0.6.0's ``GET
  /threads/{thread}/runs/{run}/join`` holds one of its few metadata connections while it
  waits (up to 30 s, then it answers with whatever output the run has so far), so a few
  clients joining their runs starve every other request. The app waits for the run's end
  first (on the run's task in this process, or by looking up its status on another's),
  then hands the join on, which answers at once.

A run names its graph by graph id or by the id of the default assistant Aegra derives
from it; a run of another assistant (one a client created) is checked by its graph when
it starts.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from debategraph import registry
from debategraph.errors import UsageError
from debategraph.graphs.inputs import check_input
from debategraph.serve.config import served_graphs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("debategraph.serve")

#: The Agent Protocol routes that create a run (stateful and stateless).
RUN_ROUTES = re.compile(r"^/(threads/(?P<thread>[^/]+)/)?runs(/stream|/wait)?/?$")
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
    from aegra_api.utils.assistants import resolve_assistant_id  # type: ignore[import-untyped]

    names = registry.names()
    for name in names:
        if assistant_id in (name, resolve_assistant_id(name, names)):
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
    from aegra_api.core.database import db_manager  # type: ignore[import-untyped]

    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    return await db_manager.get_checkpointer().aget_tuple(config) is not None


async def checked(body: bytes, thread_id: str | None) -> tuple[str | None, bytes]:
    """A run-creating request's body, checked (and completed) before Aegra sees it.

    Args:
        body: The request's JSON body.
        thread_id: The thread it runs on (``None``: a stateless run).

    Returns:
        ``(error, body)``: the one-line reason its graph cannot start from the input
        (``None``: it can), and the body to hand on. A run with no input (none, or
        ``{}``) and no command goes on from the thread's last checkpoint, as on
        LangGraph's server: Aegra 0.6.0 refuses a run without input (422), so it is
        handed on with ``input: {}``, which :class:`~debategraph.graphs.studio.ServedGraph`
        reads as no input. On a thread with nothing to go on from, the input is checked
        as a first input (and so refused with the pattern's own line).
    """
    try:
        request = json.loads(body or b"{}")
    except ValueError:
        return None, body  # Aegra answers malformed JSON itself
    if not isinstance(request, dict) or request.get("command") is not None:
        return None, body  # a command acts on the thread's state: nothing to check
    name = graph_of(request.get("assistant_id"))
    values = request.get("input")
    ongoing = await has_checkpoint(thread_id)
    if values in (None, {}):
        if ongoing or name is None:
            request["input"] = {}
            return None, json.dumps(request).encode()
        values = {}
    elif name is None:
        return None, body  # another assistant's run: its graph checks it when it starts
    try:
        check_input(name, values, first=not ongoing)
    except ValueError as exc:
        return str(exc), body
    return None, body


async def run_ended(run_id: str) -> None:
    """Return once a run has ended, holding no database connection while it runs.

    Args:
        run_id: The run.
    """
    from aegra_api.api.runs import active_runs  # type: ignore[import-untyped]

    task = active_runs.get(run_id)
    if task is not None:  # run by this process: wait on it
        await asyncio.wait({task})
        return
    from aegra_api.core.orm import Run, _get_session_maker  # type: ignore[import-untyped]
    from sqlalchemy import select

    deadline = time.monotonic() + JOIN_WAIT_S
    while time.monotonic() < deadline:
        async with _get_session_maker()() as session:
            status = await session.scalar(select(Run.status).where(Run.run_id == run_id))
        if status is None or status in ENDED:
            return
        await asyncio.sleep(JOIN_POLL_S)


class InputCheck:
    """ASGI middleware: a refused input gets a 422, never a run; a join waits unconnected."""

    def __init__(self, app: ASGIApp) -> None:
        """Wrap ``app``.

        Args:
            app: The next ASGI app.
        """
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check a run-creating POST's input, or wait out a join; then hand it on."""
        if scope["type"] == "http" and scope["method"] == "GET":
            join = JOIN_ROUTE.match(scope["path"])
            if join:
                await run_ended(join.group("run"))
        route = RUN_ROUTES.match(scope["path"]) if scope["type"] == "http" else None
        if route is None or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message]), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        error, body = await checked(b"".join(chunks), route.group("thread"))
        if error is not None:
            await _json(send, 422, {"error": "validation_error", "message": error})
            return
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
        scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        await self.app(scope, _replay([{"type": "http.request", "body": body}], receive), send)


def _replay(messages: list[Message], then: Receive | None = None) -> Receive:
    pending = list(messages)

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}

    return receive


async def _json(send: Send, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def check_served_config() -> None:
    """Refuse to serve a config that names a graph the registry does not have.

    Raises:
        UsageError: One line naming the graph and the ones debategraph has.
    """
    from aegra_api.config import _resolve_config_path, load_config  # type: ignore[import-untyped]

    config = load_config()
    if config is not None:
        served_graphs(config, str(_resolve_config_path()))


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    """Check the served config when the server starts (inside Aegra's own start-up)."""
    try:
        check_served_config()
    except UsageError as exc:
        log.error("debategraph: error: %s", exc)
        raise SystemExit(2) from None
    yield


app = FastAPI(title="debategraph", lifespan=lifespan)
app.add_middleware(InputCheck)
