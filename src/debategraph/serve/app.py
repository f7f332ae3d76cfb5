"""The app Aegra mounts for debategraph (``"http": {"app": "debategraph.serve.app:app"}``).

Aegra serves its Agent Protocol routes on this app, which adds these of debategraph's:

- **At start**, the config's graphs are checked against the registry: a graph id
  debategraph does not have stops the server with one line (``debategraph serve``
  refuses it before the server starts; this covers ``aegra serve`` on an ``aegra.json``).
  The operator's model list (:mod:`debategraph.serve.models`) is read and set as the
  served graphs' context policy.
- **Models by name only.** A request that creates a run or an assistant and whose
  ``context`` or ``config.configurable`` chooses an endpoint or a key, or names a model
  the list does not hold, gets a 403 or 422 with one line; no run or assistant is made.
- **Each user their own.** Signed in, a user reaches only their own threads (runs on
  them included) and their own threads' inboxes (:mod:`~debategraph.serve.owners`).
- **Values the database cannot hold** get a 422 with one line, and a 5xx leaves without
  the exception's text (:mod:`~debategraph.serve.guard`).
- **No cross-origin requests** but from the origins the config's ``http.cors`` allows
  (none by default): Aegra's CORS answers preflights; a request a browser sends without
  one (a form's POST) is refused here with a 403.
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
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from debategraph import registry
from debategraph.errors import UsageError
from debategraph.graphs.inputs import check_input
from debategraph.graphs.served import ServedGraph
from debategraph.models.tracing import enable_tracing
from debategraph.serve import guard, owners
from debategraph.serve.config import served_graphs
from debategraph.serve.models import ModelList, RefusedContext, served_models

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("debategraph.serve")

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


def refused_models(request: Any, models: ModelList) -> RefusedContext | None:
    """Why a run's or assistant's request may not run with the models it names, if so.

    Args:
        request: The request's parsed JSON body.
        models: The operator's model list.

    Returns:
        The refusal (its line and status), or ``None``.
    """
    if not isinstance(request, dict):
        return None
    config = request.get("config")
    configurable = config.get("configurable") if isinstance(config, dict) else None
    try:
        models.check(request.get("context"), "context")
        models.check(configurable, "config.configurable")
    except RefusedContext as exc:
        return exc
    return None


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


def foreign_origin(scope: Scope, allowed: frozenset[str]) -> str | None:
    """The ``Origin`` of a cross-origin request the config does not allow, if so.

    Args:
        scope: The request.
        allowed: The origins ``http.cors.allow_origins`` lists (``*``: any).

    Returns:
        The refused origin, or ``None`` (no ``Origin``, the server's own, or allowed).
    """
    if scope["type"] != "http" or "*" in allowed:
        return None
    headers: dict[bytes, bytes] = {k.lower(): v for k, v in scope["headers"]}
    origin = headers.get(b"origin", b"").decode("latin-1")
    if not origin or origin in allowed:
        return None
    host = headers.get(b"host", b"").decode("latin-1")
    if origin.split("://", 1)[-1] == host:
        return None  # the server's own page
    return origin


async def signed_in(scope: Scope) -> tuple[bool, str | None]:
    """Whether the request passes the server's auth handler, and as whom.

    Args:
        scope: The request.

    Returns:
        ``(True, identity)`` when it signs in, ``(True, None)`` with no auth handler
        (everyone is Aegra's ``anonymous``), ``(False, None)`` when it does not.
    """
    from aegra_api.core.auth_middleware import (  # type: ignore[import-untyped]
        get_auth_instance,
    )
    from langgraph_sdk import Auth

    handler = getattr(get_auth_instance(), "_authenticate_handler", None)
    if handler is None:
        return True, None
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
    try:
        user = await handler(headers)
    except Auth.exceptions.HTTPException:
        return False, None
    identity = user.get("identity") if isinstance(user, Mapping) else None
    return identity is not None, None if identity is None else str(identity)


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
    from aegra_api.core.orm import Run  # type: ignore[import-untyped]
    from sqlalchemy import select

    from debategraph.compat import aegra_session_maker

    deadline = time.monotonic() + JOIN_WAIT_S
    while time.monotonic() < deadline:
        async with aegra_session_maker()() as session:
            status = await session.scalar(select(Run.status).where(Run.run_id == run_id))
        if status is None or status in ENDED:
            return
        await asyncio.sleep(JOIN_POLL_S)


class RequestCheck:
    """ASGI middleware: what the server refuses gets one line and a 4xx, never a run.

    In order: a foreign origin (403); a request that does not sign in goes to Aegra as it
    is (Aegra answers 401); a value the database cannot hold (422,
    :mod:`~debategraph.serve.guard`); another user's thread (404) or store namespace
    (403, :mod:`~debategraph.serve.owners`); on a route that creates a run or an assistant,
    models the operator's list does not allow (403/422) and, for a run, an input its
    graph refuses (422). A join waits for its run holding no database connection. A 5xx
    Aegra answers leaves without the exception's text (which may quote the database).

    Attributes:
        app: The next ASGI app.
        models: The operator's model list.
        origins: The origins allowed to send requests from a browser.
    """

    def __init__(
        self,
        app: ASGIApp,
        models: ModelList | None = None,
        origins: frozenset[str] = frozenset(),
    ) -> None:
        """Wrap ``app``.

        Args:
            app: The next ASGI app.
            models: The operator's model list (default: the server's, read at start).
            origins: Allowed cross-origin origins (default: the served config's).
        """
        self.app = app
        self.models = models or SERVED.models
        self.origins = origins or SERVED.origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the request as the class says, then hand it on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        origin = foreign_origin(scope, self.origins)
        if origin is not None:
            why = f"cross-origin requests from {origin} are not allowed (see http.cors)"
            await _json(send, 403, {"error": "forbidden", "message": why})
            return
        send = _without_exception_text(send)
        passed, user = await signed_in(scope)
        if not passed:  # Aegra answers 401 (or serves a public route)
            await self.app(scope, receive, send)
            return
        has_body = scope["method"] in ("POST", "PUT", "PATCH", "DELETE")
        raw = b""
        if has_body:
            chunks: list[bytes] = []
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    await self.app(scope, _replay([message]), send)
                    return
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    break
            raw = b"".join(chunks)
        refused, raw = await self.refusal(scope, user, raw)
        if refused is not None:
            status, line = refused
            code = {403: "forbidden", 404: "not_found", 409: "conflict"}.get(
                status, "validation_error"
            )
            await _json(send, status, {"error": code, "message": line})
            return
        join = JOIN_ROUTE.match(scope["path"]) if scope["method"] == "GET" else None
        if join:
            await run_ended(join.group("run"))
        query = guard.store_query(scope["path"], scope.get("query_string", b""))
        scope = {**scope, "query_string": query}
        if not has_body:
            await self.app(scope, receive, send)
            return
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(raw)).encode()))
        scope = {**scope, "headers": headers}
        await self.app(scope, _replay([{"type": "http.request", "body": raw}], receive), send)

    async def refusal(
        self, scope: Scope, user: str | None, raw: bytes
    ) -> tuple[tuple[int, str] | None, bytes]:
        """Why a signed-in request is refused (``(status, line)``), and the body to hand on.

        Args:
            scope: The request.
            user: Who signed in (``None``: nobody does on this server).
            raw: Its body.

        Returns:
            ``(refusal or None, body)``: the body completed where a run goes on from its
            thread, or with a ``null`` object left out.
        """
        method, path = scope["method"], scope["path"]
        query = scope.get("query_string", b"")
        is_json, body = guard.parse(raw)
        line = guard.refusal(method, path, query, body)
        if line is not None:
            return (422, line), raw
        if user is not None:
            theirs = await owners.refusal(user, method, path, query, body)
            if theirs is not None:
                return theirs, raw
        kind = kind_of(scope)
        if kind is None or not is_json:
            return None, raw
        models = refused_models(body, self.models)
        if models is not None:
            return (models.status, str(models)), raw
        normal = guard.normalised(body)
        if kind == "run":
            route = RUN_ROUTES.match(path)
            error, normal = await checked(normal, route.group("thread") if route else None)
            if error is not None:
                return (422, error), raw
        return None, raw if normal is body else json.dumps(normal).encode()


def _without_exception_text(send: Send) -> Send:
    """``send``, with the body of a 5xx replaced by one line that quotes nothing."""
    failed = False

    async def scrubbed(message: Message) -> None:
        nonlocal failed
        if message["type"] == "http.response.start" and message["status"] >= 500:
            failed = True
            body = json.dumps(
                {"error": "internal_error", "message": "the server failed on this request"}
            ).encode()
            headers = [(b"content-type", b"application/json")]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({**message, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        if failed:
            return  # the original body: dropped
        await send(message)

    return scrubbed


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
    from aegra_api.config import load_config  # type: ignore[import-untyped]

    from debategraph.compat import aegra_config_path

    config = load_config()
    if config is not None:
        served_graphs(config, str(aegra_config_path()))


class Served:
    """What this server process serves with: the model list and the allowed origins.

    Read once, when the app is imported (Aegra imports it at start), so a model list
    that cannot be read stops the server before it answers anything.
    """

    def __init__(self) -> None:
        """Read the model list and the config's CORS origins; set the graphs' policy."""
        from aegra_api.config import load_http_config

        self.models = served_models()
        http = load_http_config() or {}
        cors = http.get("cors") or {}
        self.origins = frozenset(str(o) for o in cors.get("allow_origins") or ())
        ServedGraph.context_policy = self.models.resolve


SERVED = Served()


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    """Check the served config when the server starts (inside Aegra's own start-up).

    Runs are traced from then on where the ``OTEL_*`` variables name an endpoint
    (:func:`~debategraph.models.tracing.enable_tracing`).
    """
    try:
        check_served_config()
    except UsageError as exc:
        log.error("debategraph: error: %s", exc)
        raise SystemExit(2) from None
    enable_tracing()
    yield


app = FastAPI(title="debategraph", lifespan=lifespan)
app.add_middleware(RequestCheck)
