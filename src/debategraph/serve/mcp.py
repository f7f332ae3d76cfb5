"""``/mcp`` on ``debategraph serve``: every pattern as an MCP tool, over streamable HTTP.

The tools are :mod:`debategraph.runs.mcp_server`'s, as ``debategraph mcp`` serves them
over stdio, less what a client of a server may not choose: a tool takes its text and,
optionally, a model by name from the operator's list (an enum of its names); rounds and
agents are the served graph's (as on the Agent Protocol).

A call runs its pattern through the server's own Agent Protocol, on behalf of the
caller (:mod:`~debategraph.serve.loopback`, as A2A's tasks do): it creates a thread,
then streams a run of the pattern on it (``stream_mode="custom"``: each round's event
becomes an MCP progress notification). So every rule the server applies to a run applies
to this one, at the one place it is applied, with nothing parsed twice: sign-in, the
owner of the thread (no other user reads it), the operator's model list, the caller's
fair share (a request, a run in flight, tokens for the day), the input check. A refused
run leaves no thread: the one made for it is deleted.

The endpoint itself answers a request that does not sign in with 401 (Aegra answers
for its own routes; ``/mcp`` is the app's): :class:`~debategraph.serve.app.RequestCheck`
hands such a request on unchecked. It is a stateless MCP server (no session to keep
between requests: each request is served by a session manager of its own), so several
server processes on one database serve it alike; the ``mcp`` SDK is imported, and the
server built, on the first request, so a server that serves none pays nothing for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from debategraph.errors import UsageError
from debategraph.serve import caller
from debategraph.serve.asgi import Receive, Scope, Send, json_response
from debategraph.words import one_line

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from debategraph.runs.mcp_server import Call
    from debategraph.serve.models import ModelList

#: Where the endpoint is.
MCP_PATH = "/mcp"
#: What a request that does not sign in is told.
SIGN_IN = "sign in: send your token as 'Authorization: Bearer TOKEN' or 'X-Api-Key'"


class McpEndpoint:
    """The ``/mcp`` endpoint, an ASGI app: 401 unless a request signs in, else MCP.

    Args:
        models: The operator's model list (the names a call may choose from).
    """

    def __init__(self, models: ModelList) -> None:
        self.models = models
        self._server: Server[Any, Any] | None = None

    @property
    def server(self) -> Server[Any, Any]:
        """The MCP server of the patterns (built on first use)."""
        if self._server is None:
            from debategraph.runs.mcp_server import Offer, mcp_server

            models = self.models
            help_ = f"A model of the server's list, by name (default: {models.default})."
            offer = Offer(settings=False, models=tuple(models.models), model_help=help_)
            self._server = mcp_server("debategraph", offer, self._runs)
        return self._server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one request: 401 unless it signs in, else MCP (stateless)."""
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        if scope["type"] != "http":
            return
        passed, _user = await caller.signed_in(scope)
        if not passed:
            await json_response(send, 401, {"error": "unauthorized", "message": SIGN_IN})
            return
        sessions = StreamableHTTPSessionManager(app=self.server, stateless=True)
        async with sessions.run():
            await sessions.handle_request(scope, receive, send)

    async def _runs(self, call: Call, feed: Any) -> str:
        """Run a call on this server's Agent Protocol as its caller: the thread's id."""
        import httpx

        from debategraph.serve.loopback import Loopback, refusal_line

        request = self.server.request_context.request
        if request is None:  # only a call served over HTTP runs (this endpoint's are)
            raise UsageError("a call reached /mcp with no HTTP request to run it as")
        try:
            async with Loopback.of(request.scope).client() as client:
                thread_id = str((await client.threads.create())["thread_id"])
                try:
                    await _stream(client, thread_id, call, feed)
                except httpx.HTTPStatusError:
                    await client.threads.delete(thread_id)  # refused: no run, no empty thread
                    raise
        except httpx.HTTPStatusError as exc:
            raise UsageError(refusal_line(exc)) from None
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
            data = part.data
            message = data.get("message") if isinstance(data, dict) else data
            raise UsageError(f"the run failed: {one_line(str(message))}")
