"""``/mcp`` on ``debategraph serve``: every pattern as an MCP tool, over streamable HTTP.

The tools are :mod:`debategraph.runs.mcp_server`'s, as ``debategraph mcp`` serves them
over stdio, less what a client of a server may not choose: a tool takes its text and,
optionally, a model by name from the operator's list (an enum of its names); rounds and
agents are the served graph's (as on the Agent Protocol).

A call runs its pattern through the server's own Agent Protocol, on behalf of the
caller: with ``langgraph-sdk``, over the loopback address the request arrived on, with
the caller's own ``Authorization`` (or ``X-Api-Key``) header and ``Host``, it creates a
thread, then streams a run of the pattern on it (``stream_mode="custom"``: each round's
event becomes an MCP progress notification). So every rule the server applies to a run
applies to this one, at the one place it is applied, with nothing parsed twice: sign-in,
the owner of the thread (no other user reads it), the operator's model list, the
caller's fair share (a request, a run in flight, tokens for the day), the input check.
An in-process ASGI transport would do the same, but ``httpx`` hands back an ASGI
response only once it is whole: no progress before the end.

The endpoint itself answers a request that does not sign in with 401 (Aegra answers
for its own routes; ``/mcp`` is the app's): :class:`~debategraph.serve.app.RequestCheck`
hands such a request on unchecked. It is a stateless MCP server (no session to keep
between requests), so several server processes on one database serve it alike.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from debategraph.errors import UsageError
from debategraph.runs.mcp_server import Call, Offer, mcp_server
from debategraph.serve import caller
from debategraph.serve.asgi import Receive, Scope, Send, json_response
from debategraph.words import one_line

if TYPE_CHECKING:
    from debategraph.serve.models import ModelList

#: Where the endpoint is.
MCP_PATH = "/mcp"
#: What a request that does not sign in is told.
SIGN_IN = "sign in: send your token as 'Authorization: Bearer TOKEN' or 'X-Api-Key'"
#: The request headers a call's Agent Protocol requests carry over (who the caller is).
CALLER_HEADERS = ("authorization", "x-api-key", "host")
#: Seconds a loopback request may wait for a read (a run's stream: its slowest round).
READ_TIMEOUT_S = 600.0


class McpEndpoint:
    """The ``/mcp`` endpoint: an ASGI app, run for the app's lifetime (:meth:`running`).

    Args:
        models: The operator's model list (the names a call may choose from).
    """

    def __init__(self, models: ModelList) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        help_ = f"A model of the server's list, by name (default: {models.default})."
        offer = Offer(settings=False, models=tuple(models.models), model_help=help_)
        self.server = mcp_server("debategraph", offer, self._runs)
        self.sessions = StreamableHTTPSessionManager(app=self.server, stateless=True)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Serve calls in this context (the app's lifespan)."""
        async with self.sessions.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one request: 401 unless it signed in, else MCP."""
        from debategraph.compat import aegra_authenticate_handler

        if aegra_authenticate_handler() is not None and caller.current() is None:
            await json_response(send, 401, {"error": "unauthorized", "message": SIGN_IN})
            return
        await self.sessions.handle_request(scope, receive, send)

    async def _runs(self, call: Call, feed: Any) -> str:
        """Run a call on this server's Agent Protocol as its caller: the thread's id."""
        import httpx

        request = self.server.request_context.request
        try:
            async with _as_caller(request) as client:
                thread_id = str((await client.threads.create())["thread_id"])
                try:
                    await _stream(client, thread_id, call, feed)
                except httpx.HTTPStatusError:
                    await client.threads.delete(thread_id)  # refused: no run, no empty thread
                    raise
        except httpx.HTTPStatusError as exc:
            raise UsageError(_refusal(exc.response)) from None
        except httpx.TransportError as exc:
            raise UsageError(f"the server could not reach its own Agent Protocol: {exc}") from None
        return thread_id


async def _stream(client: Any, thread_id: str, call: Call, feed: Any) -> None:
    """Run a call's pattern on the thread, streaming its custom events to ``feed``."""
    context = {"model": call.model} if call.model is not None else None
    async for part in client.runs.stream(
        thread_id, call.pattern, input=call.graph_input(), context=context, stream_mode="custom"
    ):
        if part.event == "custom":
            await feed(part.data)
        elif part.event == "error":
            raise UsageError(f"the run failed: {_message(part.data)}")


@contextlib.asynccontextmanager
async def _as_caller(request: Any) -> AsyncIterator[Any]:
    """A ``langgraph-sdk`` client of this server, on the loopback, signed in as the caller."""
    from langgraph_sdk import get_client

    host, port = request.scope["server"]
    address = f"[{host}]" if ":" in host else host
    headers = {k: request.headers[k] for k in CALLER_HEADERS if k in request.headers}
    client = get_client(
        url=f"{request.url.scheme}://{address}:{port}",
        api_key=None,  # never a key from this process's environment: the caller's own
        headers=headers,
        timeout=(5.0, READ_TIMEOUT_S, READ_TIMEOUT_S, 5.0),
    )
    try:
        yield client
    finally:
        await client.aclose()


def _refusal(response: Any) -> str:
    """A refused Agent Protocol request's line: its status and the server's message."""
    try:
        body = response.json()
    except ValueError:
        body = None
    return f"{response.status_code}: {_message(body) or response.reason_phrase}"


def _message(body: Any) -> str:
    """The message of an error body (debategraph's ``message``, Aegra's ``detail``)."""
    if isinstance(body, dict):
        for key in ("message", "detail", "error"):
            if body.get(key):
                return one_line(str(body[key]))
    return one_line(str(body or ""))
