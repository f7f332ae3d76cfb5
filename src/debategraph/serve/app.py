"""The app Aegra mounts for debategraph (``"http": {"app": "debategraph.serve.app:app"}``).

Aegra serves its Agent Protocol routes on this app, whose request check
(:class:`RequestCheck`) adds debategraph's rules, each in a module of its own:

- **At start**, the config's graphs are checked against the registry: a graph id
  debategraph does not have stops the server with one line (``debategraph serve``
  refuses it before the server starts; this covers ``aegra serve`` on an ``aegra.json``).
  The operator's model list (:mod:`debategraph.serve.models`) is read and set as the
  served graphs' context policy; the checkpointer and store Aegra hands every route and
  run are wrapped to check ownership where they act.
- **Browsers only where the operator says** (:mod:`~debategraph.serve.browsers`): a
  ``Host`` the server does not answer to, and a cross-origin request the config does not
  allow, are refused (403).
- **Fair shares** (:mod:`~debategraph.serve.limits`): each user's requests per minute and
  runs in flight (429 with ``Retry-After``), body size (413, unread), tokens per day.
- **Models by name only.** A request that creates a run or an assistant and whose
  ``context`` or ``config.configurable`` chooses an endpoint or a key, or names a model
  the list does not hold, gets a 403 or 422 with one line; no run or assistant is made.
- **Each user their own** (:mod:`~debategraph.serve.owners`): what a request reads or
  writes of threads and the store is checked where it is read or written.
- **Values the database cannot hold** get a 422 with one line
  (:mod:`~debategraph.serve.guard`); a 5xx leaves with one line and the request's id,
  never the exception's text (:mod:`~debategraph.serve.asgi`).
- **Before a run is created**, its input is checked with the check the CLI makes, and a
  join waits for its run holding no database connection (:mod:`~debategraph.serve.runs`).
- **Each pattern is an A2A agent** at ``/a2a/{graph_id}`` (:mod:`~debategraph.serve.a2a`),
  behind the same request check; its runs are made through the Agent Protocol above.
- **MCP** (:mod:`~debategraph.serve.mcp`): ``/mcp`` serves every pattern as an MCP tool,
  each call run through the routes above as its caller.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.routing import Route

from debategraph.errors import UsageError
from debategraph.graphs.served import ServedGraph
from debategraph.models.tracing import enable_tracing
from debategraph.serve import caller, graph_values, guard, owned_storage, owners
from debategraph.serve.a2a import PREFIX as A2A_PREFIX
from debategraph.serve.a2a import A2AApp
from debategraph.serve.asgi import (
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    internal_error,
    json_response,
    read_body,
    replay,
    request_id,
    without_exception_text,
)
from debategraph.serve.browsers import (
    ALLOWED_HOSTS_ENV,
    LOOPBACK_HOSTS,
    foreign_host,
    foreign_origin,
    host_name,
)
from debategraph.serve.config import served_graphs
from debategraph.serve.limits import (
    Place,
    RequestRate,
    RunsInFlight,
    TokenBudget,
    create_usage_table,
    holding_place,
    run_place,
    with_callback,
)
from debategraph.serve.mcp import MCP_PATH, McpEndpoint
from debategraph.serve.models import ModelList, RefusedContext, served_models
from debategraph.serve.query_tokens import install_log_filters, token_in_query
from debategraph.serve.runs import JOIN_ROUTE, RUN_ROUTES, checked, kind_of, run_ended

log = logging.getLogger("debategraph.serve")


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


class RequestCheck:
    """ASGI middleware: what the server refuses gets one line and a 4xx, never a run.

    In order: a ``Host`` the server does not answer to (403: a rebound name, see
    :data:`ALLOWED_HOSTS_ENV`); a foreign origin (403); a request that does not sign in
    goes to Aegra as it is (Aegra answers 401); more requests of the user than their
    rate allows (429, :mod:`~debategraph.serve.limits`); a body over the size limit
    (413, unread); a value the database cannot hold (422,
    :mod:`~debategraph.serve.guard`); a route under another user's thread (404,
    :mod:`~debategraph.serve.owners`); on a route that creates a run or an assistant,
    fields only the server sets, models the operator's list does not allow (403/422)
    and, for a run, an input its graph refuses (422) or one run more than the user may
    have in flight (429). What the request then reads or writes is checked where it is
    read or written, for the user who signed in (:func:`~debategraph.serve.caller.acting_as`).
    A join waits for its run holding no database connection. A 5xx leaves with one line
    and the request's id, never the exception's text (which may quote the database),
    and the connection stays open.

    Attributes:
        app: The next ASGI app.
        models: The operator's model list (and its limits).
        origins: The origins allowed to send requests from a browser.
        hosts: The ``Host`` names the server answers to (``*``: any).
        rate: Requests per minute per user.
        runs: Runs in flight per user.
    """

    def __init__(
        self,
        app: ASGIApp,
        models: ModelList | None = None,
        origins: frozenset[str] = frozenset(),
        hosts: frozenset[str] = frozenset(),
    ) -> None:
        """Wrap ``app``.

        Args:
            app: The next ASGI app.
            models: The operator's model list (default: the server's, read at start).
            origins: Allowed cross-origin origins (default: the served config's).
            hosts: Allowed ``Host`` names (default: the server's, read at start).
        """
        self.app = app
        self.models = models or SERVED.models
        self.origins = origins or SERVED.origins
        self.hosts = hosts or SERVED.hosts
        self.rate = RequestRate(self.models.limits.requests_per_minute)
        self.runs = RunsInFlight(self.models.limits.runs_in_flight)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the request as the class says, then hand it on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = without_exception_text(send, scope)
        try:
            await self._checked(scope, receive, send)
        except Exception:  # an error boundary: logged with its id, answered in one line
            log.exception("debategraph: request %s %s failed", request_id(), scope["path"])
            if not getattr(send, "started", False):
                await json_response(send, 500, internal_error())

    async def _checked(self, scope: Scope, receive: Receive, send: Send) -> None:
        host = foreign_host(scope, self.hosts)
        if host is not None:
            why = (
                f"host {host!r} is not one this server answers to: the operator allows it "
                "with serve --allowed-host NAME"
            )
            await json_response(send, 403, {"error": "forbidden", "message": why})
            return
        origin = foreign_origin(scope, self.origins)
        if origin is not None:
            why = f"cross-origin requests from {origin} are not allowed (see http.cors)"
            await json_response(send, 403, {"error": "forbidden", "message": why})
            return
        line = token_in_query(scope.get("query_string", b""), scope["path"])
        if line is not None:  # a token in the URL: refused, and masked in the access logs
            await json_response(send, 400, {"error": "bad_request", "message": line})
            return
        passed, user = await caller.signed_in(scope)
        if not passed:  # Aegra answers 401 (or serves a public route)
            await self.app(scope, receive, send)
            return
        who = user or caller.ANONYMOUS
        wait = self.rate.take(who)
        if wait is not None:
            line = f"too many requests: at most {self.rate.per_minute} a minute per user"
            await json_response(send, 429, {"error": "too_many_requests", "message": line}, wait)
            return
        creates_run = kind_of(scope) == "run"
        if creates_run and self.runs.full(who):  # said before a byte is read: cheap
            await self._too_many_runs(send)
            return
        has_body = scope["method"] in ("POST", "PUT", "PATCH", "DELETE")
        raw = b""
        if has_body:
            read = await read_body(scope, receive, self.models.limits.body_bytes)
            if isinstance(read, str):
                await json_response(send, 413, {"error": "payload_too_large", "message": read})
                return
            if read is None:  # the client went away
                return
            raw = read
        refused, raw = await self.refusal(scope, user, raw)
        if refused is not None:
            status, line = refused
            code = {403: "forbidden", 404: "not_found", 409: "conflict"}.get(
                status, "validation_error"
            )
            await json_response(send, status, {"error": code, "message": line})
            return
        place = self.runs.admit(who) if creates_run else None
        if creates_run and place is None:
            await self._too_many_runs(send)
            return
        join = JOIN_ROUTE.match(scope["path"]) if scope["method"] == "GET" else None
        if join:
            await run_ended(join.group("run"))
        query = guard.store_query(scope["path"], scope.get("query_string", b""))
        scope = {**scope, "query_string": query}
        if has_body:
            headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(raw)).encode()))
            scope = {**scope, "headers": headers}
            receive = replay([{"type": "http.request", "body": raw}], receive)
        token = run_place.set(place)
        try:
            with caller.acting_as(user):
                await self.app(scope, receive, _giving_back(send, place))
        finally:
            run_place.reset(token)
            if place is not None and not getattr(send, "started", False):
                place.give_back()  # no answer at all: no run either

    async def _too_many_runs(self, send: Send) -> None:
        line = (
            f"you have {self.runs.cap} runs in flight, the most a user may: "
            "retry once one has ended"
        )
        payload = {"error": "too_many_requests", "message": line}
        await json_response(send, 429, payload, RunsInFlight.RETRY_AFTER_S)

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
        line = guard.body_refusal(raw)
        if line is not None:
            return (422, line), raw
        is_json, body = guard.parse(raw)
        line = guard.refusal(method, path, query, body)
        if line is None and (created := owners.created_id(method, path, body)) is not None:
            line = guard.bad_id(*created)  # the id Aegra will insert, read as Aegra reads it
        if line is not None:
            return (422, line), raw
        if user is not None:
            theirs = await owners.refusal(user, method, path, body)
            if theirs is not None:
                return theirs, raw
        line = await graph_values.refusal(method, path, body)  # after: never another's graph
        if line is not None:
            return (422, line), raw
        kind = kind_of(scope)
        if kind is None or not is_json:
            return None, raw
        route = RUN_ROUTES.match(path) if kind == "run" else None
        thread = route.group("thread") if route else None
        line = owners.server_keys_refusal(body, thread)
        if line is not None:
            return (422, line), raw
        models = refused_models(body, self.models)
        if models is not None:
            return (models.status, str(models)), raw
        normal = guard.normalised(body)
        if kind == "run":
            error, normal = await checked(normal, thread)
            if error is not None:
                return (422, error), raw
        return None, raw if normal is body else json.dumps(normal).encode()


def _giving_back(send: Send, place: Place | None) -> Send:
    """``send``, giving the run's place back when the request to create it is refused."""
    if place is None:
        return send

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] >= 400:
            place.give_back()
        await send(message)

    return sending


def check_served_config() -> None:
    """Refuse to serve a config that names a graph the registry does not have.

    Raises:
        UsageError: One line naming the graph and the ones debategraph has.
    """
    from debategraph.compat import aegra_config_path, aegra_load_config

    config = aegra_load_config()
    if config is not None:
        served_graphs(config, str(aegra_config_path()))


class Served:
    """What this server process serves with: the model list, allowed origins and hosts.

    Read once, when the app is imported (Aegra imports it at start), so a model list
    that cannot be read stops the server before it answers anything.
    """

    def __init__(self) -> None:
        """Read the model list and the config's CORS origins; set the graphs' policy."""
        from debategraph.compat import aegra_http_config

        self.models = served_models()
        http = aegra_http_config()
        cors = http.get("cors") or {}
        self.origins = frozenset(str(o) for o in cors.get("allow_origins") or ())
        named = os.environ.get(ALLOWED_HOSTS_ENV, "").split(",")
        self.hosts = LOOPBACK_HOSTS | {host_name(h) for h in named if h.strip()}
        ServedGraph.context_policy = self.models.resolve
        ServedGraph.config_policy = self.budgeted

    def budgeted(self, config: Any) -> Any:
        """A run's config, counting its model calls against its user's tokens for the day.

        The user is the one who signed in for the request that started the run (never a
        field of the config, which a client may set).
        """
        who = caller.current()
        budget = self.models.limits.tokens_per_day
        if who is None or budget is None:
            return config
        return with_callback(config, TokenBudget(who.user, budget))


SERVED = Served()
#: ``/mcp``: every pattern as an MCP tool (:mod:`debategraph.serve.mcp`).
MCP = McpEndpoint(SERVED.models)


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    """Check the served config when the server starts (inside Aegra's own start-up).

    Runs are traced from then on where the ``OTEL_*`` variables name an endpoint
    (:func:`~debategraph.models.tracing.enable_tracing`).
    """
    install_log_filters()  # no token sent in a URL is written to the logs
    try:
        check_served_config()
    except UsageError as exc:
        log.error("debategraph: error: %s", exc)
        raise SystemExit(2) from None
    from debategraph.compat import hold_aegra_runs

    owned_storage.guard_storage()
    hold_aegra_runs(holding_place)
    await create_usage_table()
    enable_tracing()
    yield


app = FastAPI(title="debategraph", lifespan=lifespan)
app.mount(A2A_PREFIX, A2AApp())
app.router.routes.append(Route(MCP_PATH, MCP, include_in_schema=False))
app.add_middleware(RequestCheck)
