"""Every served pattern as an A2A agent on ``debategraph serve``, at ``/a2a/{graph_id}``.

``a2a-sdk`` serves it: per pattern, its agent card at
``/a2a/{graph_id}/.well-known/agent-card.json`` (where an A2A client looks for the
card of the agent whose URL is ``/a2a/{graph_id}``) and the JSON-RPC methods at
``/a2a/{graph_id}``: A2A 1.0's ``SendMessage``, ``SendStreamingMessage``, ``GetTask``,
``CancelTask`` (and the rest a task needs: ``ListTasks``, ``SubscribeToTask``), and the
same under A2A 0.3's names (``message/send``, ``message/stream``, ``tasks/get``,
``tasks/cancel``...). The work of a task is :class:`~debategraph.serve.a2a_runs.PatternExecutor`'s.

- **The card** is the registry line's: its name, its description and one skill (the
  line's help as the skill's name). It is public, as A2A expects of a card at its
  well-known path (a client reads it to learn how to sign in): it says nothing a user's
  request could not, and names no model or endpoint. Where the server signs users in,
  the card's security scheme is an HTTP bearer token (the server's tokens,
  :mod:`~debategraph.serve.auth`; ``X-Api-Key`` works too).
- **The methods need sign-in**: a request that does not sign in gets 401 and one line.
  Each user's tasks are their own (the task store keys them by user: another user's
  task id is not found), and a task's runs are the user's own runs on the server's own
  Agent Protocol (:mod:`~debategraph.serve.loopback`), with every check a run gets.
- **Tasks are kept in the server's database** (``a2a-sdk``'s ``DatabaseTaskStore``, table
  :data:`TASKS_TABLE`, on Aegra's engine), so each server process on one database finds
  a task another made; the conversation itself is the thread.
"""

from __future__ import annotations

import importlib.metadata
import logging
import warnings
from collections.abc import Iterable
from typing import Any

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import DefaultServerCallContextBuilder, create_jsonrpc_routes
from a2a.server.tasks import DatabaseTaskStore
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
)
from a2a.utils.constants import PROTOCOL_VERSION_0_3, PROTOCOL_VERSION_1_0
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from debategraph import registry
from debategraph.serve import caller
from debategraph.serve.a2a_runs import LOOPBACK, PatternExecutor
from debategraph.serve.asgi import ASGIApp, Receive, Scope, Send, json_response
from debategraph.serve.loopback import Loopback

log = logging.getLogger("debategraph.serve")

#: Where the A2A agents are mounted on the server.
PREFIX = "/a2a"
#: An agent card's path under its agent's URL (A2A's well-known path).
CARD_PATH = "/.well-known/agent-card.json"
#: The table of A2A tasks in the server's database.
TASKS_TABLE = "a2a_tasks"
#: The key of the signed-in user in an A2A request's scope.
USER_KEY = "debategraph.user"
#: The security scheme's name in a card.
BEARER = "bearer"
#: What a task's messages and artifacts hold.
TEXT = "text/plain"


def agent_card(graph_id: str, url: str, signs_in: bool) -> AgentCard:
    """The agent card of a served pattern: the registry line's description.

    Args:
        graph_id: The pattern.
        url: The agent's URL (its JSON-RPC endpoint).
        signs_in: Whether the server signs users in (the card names a bearer token).

    Returns:
        The card.
    """
    entry = registry.entry(graph_id)
    card = AgentCard(
        name=graph_id,
        description=entry.description or entry.help,
        version=importlib.metadata.version("debategraph"),
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=version)
            for version in (PROTOCOL_VERSION_1_0, PROTOCOL_VERSION_0_3)
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=[TEXT],
        default_output_modes=[TEXT],
        skills=[
            AgentSkill(
                id=graph_id,
                name=entry.help,
                description=entry.description or entry.help,
                tags=sorted({graph_id, entry.command}),
                input_modes=[TEXT],
                output_modes=[TEXT],
            )
        ],
    )
    if signs_in:
        scheme = HTTPAuthSecurityScheme(
            scheme="bearer", description="a token from the server's operator (serve --tokens)"
        )
        card.security_schemes[BEARER].CopyFrom(SecurityScheme(http_auth_security_scheme=scheme))
        requirement = SecurityRequirement()
        requirement.schemes[BEARER].SetInParent()
        card.security_requirements.append(requirement)
    return card


def base_url(scope: Scope) -> str:
    """The server's URL as the request named it (its scheme and ``Host``)."""
    headers = {k.lower(): v for k, v in scope["headers"]}
    host = headers.get(b"host", b"").decode("latin-1")
    if not host:
        server = scope.get("server") or ("127.0.0.1", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{scope.get('scheme', 'http')}://{host}"


def served_graph_ids() -> list[str]:
    """The patterns this server serves (its config's graphs), each an A2A agent."""
    from debategraph.compat import aegra_config_path, aegra_load_config
    from debategraph.serve.config import served_graphs

    config = aegra_load_config()
    if config is None:
        return registry.names()
    return served_graphs(config, str(aegra_config_path()))


def signs_in() -> bool:
    """Whether this server signs users in (it has an auth handler)."""
    from debategraph.compat import aegra_authenticate_handler

    return aegra_authenticate_handler() is not None


def task_store() -> DatabaseTaskStore:
    """The A2A task store: ``a2a-sdk``'s on the server's database, keyed by user."""
    from sqlalchemy.exc import SAWarning

    from debategraph.compat import aegra_session_maker

    maker: Any = aegra_session_maker()  # SQLAlchemy's async_sessionmaker, bound to the engine
    with warnings.catch_warnings():  # a2a-sdk's model of a named table reuses its class name
        warnings.filterwarnings("ignore", "This declarative base already", SAWarning)
        return DatabaseTaskStore(maker.kw["bind"], table_name=TASKS_TABLE)


class SignedInUser(User):
    """A user who signed in (or Aegra's ``anonymous`` where nobody does): a task's owner.

    Attributes:
        name: Their identity.
    """

    def __init__(self, name: str) -> None:
        """The user ``name``."""
        self.name = name

    @property
    def is_authenticated(self) -> bool:
        """Always: :class:`A2AApp` lets no other request through to a method."""
        return True

    @property
    def user_name(self) -> str:
        """Their identity (what the task store keys their tasks by)."""
        return self.name


class CallContexts(DefaultServerCallContextBuilder):
    """An A2A request's call context: who signed in, and how to call the server for them.

    ``a2a-sdk``'s own (the request's headers, which its version check reads, and its
    extensions), with the user :class:`A2AApp` found signed in (the task store's owner)
    and the request's :class:`~debategraph.serve.loopback.Loopback` in its state.
    """

    def build(self, request: Request) -> ServerCallContext:
        """The call context of ``request``."""
        context = super().build(request)
        context.state[LOOPBACK] = Loopback.of(request.scope)
        return context

    def build_user(self, request: Request) -> User:
        """The user who signed in for ``request``."""
        return SignedInUser(str(request.scope.get(USER_KEY) or caller.ANONYMOUS))


def routes(graph_ids: Iterable[str]) -> list[BaseRoute]:
    """The A2A routes of each pattern: its card and its JSON-RPC endpoint.

    Args:
        graph_ids: The served patterns.

    Returns:
        Starlette routes, relative to :data:`PREFIX`.
    """
    store = task_store()
    contexts = CallContexts()
    found: list[BaseRoute] = []
    for graph_id in graph_ids:
        path = f"/{graph_id}"

        async def card(request: Request, graph_id: str = graph_id) -> Response:
            url = f"{base_url(request.scope)}{PREFIX}/{graph_id}"
            return JSONResponse(agent_card_to_dict(agent_card(graph_id, url, signs_in())))

        handler = DefaultRequestHandler(
            agent_executor=PatternExecutor(graph_id),
            task_store=store,
            agent_card=agent_card(graph_id, f"{PREFIX}{path}", signs_in()),
        )
        found.append(Route(path + CARD_PATH, card, methods=["GET"]))
        found += create_jsonrpc_routes(
            handler,
            path,
            context_builder=contexts,
            enable_v0_3_compat=True,
        )
    return found


class A2AApp:
    """The ASGI app mounted at :data:`PREFIX`: cards for anyone, methods for the signed in.

    Built on its first request (the task store needs the database Aegra opens at start).
    """

    def __init__(self) -> None:
        """Build nothing yet."""
        self._app: ASGIApp | None = None

    def _built(self) -> ASGIApp:
        if self._app is None:
            self._app = Starlette(routes=routes(served_graph_ids()))
        return self._app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer an A2A request (401 where a method's request does not sign in)."""
        if scope["type"] != "http":
            return
        if not scope["path"].endswith(CARD_PATH):
            passed, user = await caller.signed_in(scope)
            if not passed:
                line = "sign in: send Authorization: Bearer TOKEN (the server's operator issues it)"
                await json_response(send, 401, {"error": "unauthorized", "message": line})
                return
            scope[USER_KEY] = user or caller.ANONYMOUS
        await self._built()(scope, receive, send)
