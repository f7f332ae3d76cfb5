"""The server's error boundary: a 5xx leaves with one line and an id, never the exception.

In-process, through the request check (:class:`debategraph.serve.app.RequestCheck`) in
front of an app that fails; the server-process tests (``test_serve_safety.py``'s
schemathesis run, ``test_serve_values.py``) show the same from outside.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from tests.backends import require_module

SECRET = "SELECT password FROM users -- the database's own text"


def call(app: Any, path: str = "/threads/search") -> tuple[int, dict[bytes, bytes], bytes]:
    """One request through ``app`` (ASGI), as a server would make it."""
    sent: list[dict[str, Any]] = []
    scope = {
        "type": "http",
        "method": "POST",
        "path": path,
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")],
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), body


@pytest.fixture
def check() -> Any:
    require_module("aegra_api", "pip install -e '.[dev]' installs the serve extra (aegra-api)")
    from debategraph.serve.app import RequestCheck
    from debategraph.serve.models import DEFAULT_LIST

    return lambda app: RequestCheck(app, DEFAULT_LIST, frozenset({"*"}), frozenset({"*"}))


def test_an_exception_becomes_one_line_with_an_id(
    check: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async def failing(scope: Any, receive: Any, send: Any) -> None:
        raise RuntimeError(SECRET)

    with caplog.at_level(logging.ERROR, logger="debategraph.serve"):
        status, headers, body = call(check(failing))
    assert status == 500
    assert headers[b"content-type"] == b"application/json"
    text = body.decode()
    assert "the server failed on this request (id " in text
    assert SECRET not in text and "RuntimeError" not in text and "Traceback" not in text
    assert SECRET in caplog.text  # the log has it, under the same id


def test_a_5xx_body_is_replaced(check: Any) -> None:
    async def leaking(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 500, "headers": []})
        await send({"type": "http.response.body", "body": SECRET.encode()})

    status, _, body = call(check(leaking))
    assert status == 500
    assert SECRET.encode() not in body and b"the server failed on this request" in body


def test_a_started_response_is_not_answered_twice(check: Any) -> None:
    """An exception after the answer began ends it as it is (the log has the rest)."""

    async def late(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"[]"})
        raise RuntimeError(SECRET)

    status, _, body = call(check(late))
    assert (status, body) == (200, b"[]")
