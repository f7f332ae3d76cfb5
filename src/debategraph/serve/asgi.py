"""The ASGI plumbing of the server's request check: bodies, one-line answers, scrubbed 5xx.

- :func:`read_body` reads a request's body whole, unless it is over the size limit: by
  its ``Content-Length`` before any of it is read, else as soon as what came exceeds it.
- :func:`json_response` answers one JSON line (``error``, ``message``), with a
  ``Retry-After`` where the client should come back.
- :func:`without_exception_text` makes every 5xx leave with one line and the request's
  id (Aegra's correlation id, which its log lines carry), never the exception's text,
  which may quote the database; the 5xx is logged with the id.
- :func:`replay` hands a body already read on to the next app.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from debategraph.serve.limits import retry_after

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("debategraph.serve")


async def read_body(scope: Scope, receive: Receive, limit: int | None) -> bytes | str | None:
    """A request's body, read whole unless it is over ``limit`` bytes.

    Args:
        scope: The request.
        receive: Its ASGI receive.
        limit: The most bytes a body may have (``None``: no limit).

    Returns:
        The body; the one-line refusal of one over the limit (by its ``Content-Length``
        before any of it is read, else as soon as what came exceeds it); ``None`` when the
        client went away.
    """
    too_big = f"the request body is over the server's limit of {limit:,} bytes"
    if limit is not None:
        headers = {k.lower(): v for k, v in scope["headers"]}
        declared = headers.get(b"content-length", b"").strip()
        if declared.isdigit() and int(declared) > limit:
            return too_big
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if limit is not None and size > limit:
            return too_big
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def request_id() -> str:
    """The request's id (Aegra's correlation id, which its log lines carry)."""
    from asgi_correlation_id import correlation_id

    return correlation_id.get() or "-"


def internal_error() -> dict[str, str]:
    """The one line of a 5xx: the request's id to find it in the log, nothing else."""
    return {
        "error": "internal_error",
        "message": f"the server failed on this request (id {request_id()}: "
        "the server's log has it)",
    }


def without_exception_text(send: Send, scope: Scope) -> Send:
    """``send``, with the body of a 5xx replaced by one line that quotes nothing.

    The returned callable's ``started`` says whether a response has begun.
    """
    failed = False

    async def scrubbed(message: Message) -> None:
        nonlocal failed
        if message["type"] == "http.response.start":
            scrubbed.started = True  # type: ignore[attr-defined]
        if message["type"] == "http.response.start" and message["status"] >= 500:
            failed = True
            log.error(
                "debategraph: request %s %s %s answered %s",
                request_id(),
                scope["method"],
                scope["path"],
                message["status"],
            )
            body = json.dumps(internal_error()).encode()
            headers = [(b"content-type", b"application/json")]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({**message, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        if failed:
            return  # the original body: dropped
        await send(message)

    scrubbed.started = False  # type: ignore[attr-defined]
    return scrubbed


def replay(messages: list[Message], then: Receive | None = None) -> Receive:
    """A receive that gives ``messages`` first, then hands on to ``then`` (if any)."""
    pending = list(messages)

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}

    return receive


async def json_response(
    send: Send, status: int, payload: dict[str, Any], retry_after_s: float | None = None
) -> None:
    """Answer ``payload`` as JSON with ``status`` (and ``Retry-After`` where given)."""
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if retry_after_s is not None:
        headers.append((b"retry-after", retry_after(retry_after_s).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
