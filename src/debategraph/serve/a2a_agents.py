"""The A2A agents of the served patterns: their cards, their routes and the task store.

What :class:`~debategraph.serve.a2a.A2AApp` serves once the first A2A request comes
(``a2a-sdk`` is imported then, not when the server starts):

- :func:`agent_card`: a pattern's card, from its registry line (its name, description and
  help); the security scheme an HTTP bearer token where the server signs users in.
- :func:`routes`: per pattern, the card at its well-known path and ``a2a-sdk``'s
  JSON-RPC endpoint (A2A 1.0's method names and, on the same endpoint, 0.3's), its
  tasks worked by :class:`~debategraph.serve.a2a_runs.PatternExecutor`.
- :func:`task_store`: ``a2a-sdk``'s ``DatabaseTaskStore`` in the server's database
  (table :data:`TASKS_TABLE`, on Aegra's engine), keyed by user, so every server
  process on one database finds a task another made.
- :class:`CallContexts`: a request's call context, with the user who signed in and the
  request's :class:`~debategraph.serve.loopback.Loopback`.
"""

from __future__ import annotations

import importlib.metadata
import warnings
from collections.abc import Iterable
from typing import Any

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
from a2a.utils.constants import (
    AGENT_CARD_WELL_KNOWN_PATH,
    PROTOCOL_VERSION_0_3,
    PROTOCOL_VERSION_1_0,
)
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from debategraph import registry
from debategraph.serve.a2a_runs import LOOPBACK, PatternExecutor
from debategraph.serve.asgi import Scope
from debategraph.serve.loopback import Loopback

#: The table of A2A tasks in the server's database.
TASKS_TABLE = "a2a_tasks"
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


class CallContexts(DefaultServerCallContextBuilder):
    """An A2A request's call context: who signed in, and how to call the server for them.

    ``a2a-sdk``'s own: the request's headers (which its version check reads), its
    extensions and its user (the scope's ``user``, whom
    :class:`~debategraph.serve.a2a.A2AApp` found signed in: the owner of the tasks the
    request makes or reads), with the request's
    :class:`~debategraph.serve.loopback.Loopback` in its state.
    """

    def build(self, request: Request) -> ServerCallContext:
        """The call context of ``request``."""
        context = super().build(request)
        context.state[LOOPBACK] = Loopback.of(request.scope)
        return context


def routes(graph_ids: Iterable[str]) -> list[BaseRoute]:
    """The A2A routes of each pattern: its card and its JSON-RPC endpoint.

    Args:
        graph_ids: The served patterns.

    Returns:
        Starlette routes, relative to where they are mounted.
    """
    store = task_store()
    contexts = CallContexts()
    found: list[BaseRoute] = []
    for graph_id in graph_ids:
        path = f"/{graph_id}"

        async def card(request: Request, graph_id: str = graph_id) -> Response:
            url = f"{base_url(request.scope)}{request.scope.get('root_path', '')}/{graph_id}"
            return JSONResponse(agent_card_to_dict(agent_card(graph_id, url, signs_in())))

        handler = DefaultRequestHandler(
            agent_executor=PatternExecutor(graph_id),
            task_store=store,
            agent_card=agent_card(graph_id, path, signs_in()),
        )
        found.append(Route(path + AGENT_CARD_WELL_KNOWN_PATH, card, methods=["GET"]))
        found += create_jsonrpc_routes(
            handler,
            path,
            context_builder=contexts,
            enable_v0_3_compat=True,
        )
    return found
