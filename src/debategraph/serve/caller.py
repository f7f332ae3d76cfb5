"""Who signed in for the request being served, carried to every run it starts.

:func:`acting_as` sets the request's :class:`Caller` in a context variable for the time
the request is handled; a run Aegra starts meanwhile is a task created in that context,
so it keeps the same caller to its end. :func:`signed_in` says whether a request signs
in, and as whom (the request check asks it, and so does a door of the server's own,
A2A's, which answers 401 itself). What reads it: the ownership checks
(:mod:`debategraph.serve.owners`, :mod:`debategraph.serve.owned_storage`) and a run's
token budget (:mod:`debategraph.serve.app`).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Caller:
    """Who signed in for a request, and the owners of the threads it has looked up.

    Attributes:
        user: The signed-in user's identity.
        owners: Thread id -> its owner, as found (only threads that exist: one made
            later in the request is looked up again).
    """

    user: str
    owners: dict[str, str] = field(default_factory=dict)


#: Who a request is, for its fair share and its A2A tasks, where nobody signs in (Aegra's
#: own name for everyone then).
ANONYMOUS = "anonymous"

_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar(
    "debategraph_caller", default=None
)


@contextlib.contextmanager
def acting_as(user: str | None) -> Iterator[None]:
    """Check every storage access in this context (and the runs it starts) for ``user``.

    A run Aegra starts while handling the request is a task created in this context, so
    it keeps the request's caller to its end.

    Args:
        user: The signed-in user (``None``: nobody signs in on this server: no check).
    """
    token = _caller.set(None if user is None else Caller(user))
    try:
        yield
    finally:
        _caller.reset(token)


def current() -> Caller | None:
    """The caller storage accesses are checked for here (``None``: none)."""
    return _caller.get()


async def signed_in(scope: MutableMapping[str, Any]) -> tuple[bool, str | None]:
    """Whether the request passes the server's auth handler, and as whom.

    Args:
        scope: The request.

    Returns:
        ``(True, identity)`` when it signs in, ``(True, None)`` with no auth handler
        (everyone is Aegra's ``anonymous``), ``(False, None)`` when it does not.
    """
    from langgraph_sdk import Auth

    from debategraph.compat import aegra_authenticate_handler

    handler = aegra_authenticate_handler()
    if handler is None:
        return True, None
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
    try:
        user = await handler(headers)
    except Auth.exceptions.HTTPException:
        return False, None
    identity = user.get("identity") if isinstance(user, Mapping) else None
    return identity is not None, None if identity is None else str(identity)
