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
- **Tasks are kept in the server's database** (``a2a-sdk``'s ``DatabaseTaskStore``), so
  each server process on one database finds a task another made; the conversation
  itself is the thread.

This module is the mount alone; what it serves is :mod:`~debategraph.serve.a2a_agents`'s,
built (and ``a2a-sdk`` imported) when the first A2A request comes, so a server that
serves no A2A request pays nothing for it at start.
"""

from __future__ import annotations

from debategraph.serve import caller
from debategraph.serve.asgi import ASGIApp, Receive, Scope, Send, json_response

#: Where the A2A agents are mounted on the server.
PREFIX = "/a2a"


class A2AApp:
    """The ASGI app mounted at :data:`PREFIX`: cards for anyone, methods for the signed in.

    Built on its first request (the task store needs the database Aegra opens at start).
    """

    def __init__(self) -> None:
        """Build nothing yet."""
        self._app: ASGIApp | None = None

    def _built(self) -> ASGIApp:
        if self._app is None:
            from starlette.applications import Starlette

            from debategraph.serve.a2a_agents import routes, served_graph_ids

            self._app = Starlette(routes=routes(served_graph_ids()))
        return self._app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer an A2A request: a ``GET`` (a card) for anyone, a method signed in or 401.

        The user who signed in is the scope's ``user`` (Starlette's place for it, where
        ``a2a-sdk`` reads who sent a request).
        """
        if scope["type"] != "http":
            return
        if scope["method"] != "GET":  # every method is a POST; a GET reads a card
            from starlette.authentication import SimpleUser

            passed, user = await caller.signed_in(scope)
            if not passed:
                line = "sign in: send Authorization: Bearer TOKEN (the server's operator issues it)"
                await json_response(send, 401, {"error": "unauthorized", "message": line})
                return
            scope["user"] = SimpleUser(user or caller.ANONYMOUS)
        await self._built()(scope, receive, send)
