"""The server's own Agent Protocol, called on behalf of the user who signed in.

A door of the server besides the Agent Protocol (A2A) starts, drives and stops its runs
by calling the server's Agent Protocol (threads, runs, streams, cancel) through
``langgraph-sdk``, at the address the request came in on and with the request's own
sign-in headers. So a run it makes passes every check a run gets, on the one path that
makes them: sign-in, each user's own threads (:mod:`~debategraph.serve.owners`), the
operator's model list (:mod:`~debategraph.serve.models`), the input check
(:mod:`~debategraph.serve.runs`) and the user's fair share (:mod:`~debategraph.serve.limits`).
Nothing of the server's own (its environment's LangSmith key, say) is sent.

Over the socket, not in-process: an in-process ASGI transport (``httpx.ASGITransport``)
hands a response over only once it has ended, and a door follows a run's stream as it
comes.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx
    from langgraph_sdk.client import LangGraphClient

#: The request headers that sign a user in (``serve/auth.py``'s), passed on as they came.
SIGN_IN_HEADERS = ("authorization", "x-api-key")
#: Seconds to connect and to send; reading a run's stream waits as long as the run.
CONNECT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Loopback:
    """Where and as whom to call the server's own Agent Protocol for one request.

    Attributes:
        url: The server's base URL, at the address the request came in on.
        headers: The request's sign-in headers and its ``Host`` (a name the server
            answers to: the request was let in with it).
    """

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, scope: MutableMapping[str, Any]) -> Loopback:
        """The loopback of an ASGI request.

        Args:
            scope: The request.

        Returns:
            The server's address as the request reached it, and the headers to send.

        Raises:
            ValueError: If the scope names no server address (not an HTTP request
                served on a socket).
        """
        server = scope.get("server")
        if not server or server[1] is None:
            raise ValueError("the request came in on no socket: no address to call back")
        host, port = str(server[0]), int(server[1])
        try:
            if ipaddress.ip_address(host).version == 6:
                host = f"[{host}]"
        except ValueError:
            pass  # a name, used as it is
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        passed = {name: headers[name] for name in (*SIGN_IN_HEADERS, "host") if name in headers}
        return cls(f"http://{host}:{port}", passed)

    def client(self) -> LangGraphClient:
        """A ``langgraph-sdk`` client of the server, signed in as the request was.

        Returns:
            The client (``aclose()`` it, or use it in ``async with``).
        """
        from langgraph_sdk import get_client

        # (connect, read, write, pool): a stream's read waits as long as its run.
        timeout = (CONNECT_TIMEOUT_S, None, CONNECT_TIMEOUT_S, CONNECT_TIMEOUT_S)
        return get_client(url=self.url, api_key=None, headers=dict(self.headers), timeout=timeout)


def refusal_line(exc: httpx.HTTPStatusError) -> str:
    """The server's one line for a request it refused: its body's ``message`` (or ``detail``).

    Args:
        exc: What ``langgraph-sdk`` raised for the refused request.

    Returns:
        The line (debategraph's ``message``, Aegra's ``detail``, else the status).
    """
    try:
        body = exc.response.json()
    except ValueError:
        body = None
    message = (body.get("message") or body.get("detail")) if isinstance(body, dict) else None
    return str(message or f"the server answered {exc.response.status_code}").splitlines()[0]
