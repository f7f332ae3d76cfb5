"""Each user reaches their own threads, runs and inboxes only, whatever signs them in.

Aegra 0.6.0 keeps the user who made each thread, run and assistant, and most of its
routes look only at the user's own; but it lets a run be made on any thread
(``POST /threads/T/runs``, ``/runs/stream``, ``/runs/wait``: a second user could run on,
and so read, the first user's debate), and scopes only ``("users", <id>)`` store
namespaces (a second user could post into, or stop, another's debate through its inbox).
:func:`refusal` closes both for any auth handler (debategraph's tokens or the
operator's own), once the request has signed in: a thread of someone else's is not
found (404, as if it did not exist), a store namespace not theirs is refused (403).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl

from debategraph.checkpoints.inbox import NAMESPACE as INBOX
from debategraph.serve.guard import STORE_ROUTE

#: A route under one thread (its runs, state, history...).
THREAD_ROUTE = re.compile(r"^/threads/(?P<thread>[^/]+)/.")
#: Where a store request names its namespace.
NAMESPACE_FIELDS = ("namespace", "namespace_prefix", "prefix")


async def refusal(
    user: str, method: str, path: str, query: bytes, body: Any
) -> tuple[int, str] | None:
    """Why ``user`` may not make this request, if so: ``(status, one line)``.

    Args:
        user: The signed-in user's identity.
        method: The HTTP method.
        path: The request's path.
        query: Its query string.
        body: Its parsed JSON body (``None``: none).

    Returns:
        ``(404, ...)`` for another user's thread, ``(409, ...)`` for a new thread given
        the id of another user's, ``(403, ...)`` for a store namespace that is not the
        user's, else ``None``.
    """
    if method == "POST" and path.rstrip("/") == "/threads" and isinstance(body, dict):
        wanted = body.get("thread_id")
        if isinstance(wanted, str) and await owner_of(wanted) not in (None, user):
            return 409, f"thread {wanted!r} already exists: give another id, or none"
        return None
    route = THREAD_ROUTE.match(path)
    if route:
        owner = await owner_of(route.group("thread"))
        if owner is not None and owner != user:
            return 404, f"thread {route.group('thread')!r} not found"
        return None
    if not STORE_ROUTE.match(path):
        return None
    raw: Any = None
    if isinstance(body, dict):
        raw = next((body[k] for k in NAMESPACE_FIELDS if k in body), None)
    if raw is None:
        named = [v for k, v in parse_qsl(query.decode("utf-8", "replace")) if k == "namespace"]
        raw = named or None
    namespace = labels(raw)
    if not namespace or (namespace[0] == "users" and namespace[1:2] == [user]):
        return None  # Aegra puts an empty namespace under ("users", user)
    if tuple(namespace[:2]) == INBOX and len(namespace) >= 3:
        thread_id = namespace[2].replace("%2E", ".").replace("%25", "%")
        if await owner_of(thread_id) == user:
            return None
        return 403, f"thread {thread_id!r} is not one of yours: its inbox is not yours either"
    return 403, (
        f"namespace {'.'.join(namespace)!r} is not yours: you reach ('users', '{user}', ...) "
        "and the inbox of your own threads ('debategraph', 'inbox', THREAD)"
    )


def labels(raw: Any) -> list[str]:
    """A namespace as labels: a dotted string, or a list (of labels, or of dotted strings)."""
    items = [raw] if isinstance(raw, str) else raw if isinstance(raw, list | tuple) else []
    return [part for item in items for part in str(item).split(".") if part]


async def owner_of(thread_id: str) -> str | None:
    """Who made the thread, in Aegra's threads table (``None``: no such thread)."""
    from aegra_api.core.orm import Thread  # type: ignore[import-untyped]
    from sqlalchemy import select

    from debategraph.compat import aegra_session_maker

    async with aegra_session_maker()() as session:
        owner = await session.scalar(select(Thread.user_id).where(Thread.thread_id == thread_id))
    return None if owner is None else str(owner)
