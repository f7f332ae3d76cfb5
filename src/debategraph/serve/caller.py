"""Who signed in for the request being served, carried to every run it starts.

:func:`acting_as` sets the request's :class:`Caller` in a context variable for the time
the request is handled; a run Aegra starts meanwhile is a task created in that context,
so it keeps the same caller to its end. What reads it: the ownership checks
(:mod:`debategraph.serve.owners`, :mod:`debategraph.serve.owned_storage`) and a run's
token budget (:mod:`debategraph.serve.app`).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, field


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
