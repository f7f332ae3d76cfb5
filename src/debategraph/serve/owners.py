"""Each user reaches their own threads, runs and inboxes only: checked where the server acts.

Aegra 0.6.0 keeps the user who made each thread, run and assistant, and most of its
routes look only at the user's own; but what it finally reads and writes is decided by
more than the route. A run's ``checkpoint`` and ``config.configurable`` (or its
assistant's config) may name another ``thread_id``, which Aegra merges over the route's;
a state update or a history's ``checkpoint`` does the same; a store request has several
namespace fields and Aegra acts on one of its choosing, under its own scoping. A check
that parses the request beside Aegra is a bypass waiting to happen.

So ownership is checked where the server acts, after everything is resolved: the
checkpointer and the store Aegra hands every route and every run are wrapped
(:mod:`debategraph.serve.owned_storage`). Each read or write of a thread's checkpoints
checks the thread it is about to touch (:func:`check_thread`), and each store operation
the namespace it is about to touch (:func:`check_namespace`), against the user who
signed in for the request (:mod:`debategraph.serve.caller`; a run started by the request
carries the same user to its end). Another user's thread is not found (404, as if it
did not exist); a namespace not theirs is refused (403). A user owns
``("users", <user>, ...)`` and a thread's own namespaces
``("debategraph", <kind>, <thread>, ...)`` (its inbox, its run ends) where the thread is
theirs.

On top of that, :func:`refusal` answers what the route alone says before Aegra acts:
a route under another user's thread (404, before Aegra writes that thread's metadata or
status on a run's behalf), a new thread given the id of another user's (409).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from debategraph.serve.caller import Caller, current

#: A route under one thread (its runs, state, history...).
THREAD_ROUTE = re.compile(r"^/threads/(?P<thread>[^/]+)/.")
#: The first label of namespaces that belong to one thread: ``("debategraph", kind, T)``.
THREAD_SPACE = "debategraph"
#: The first label of namespaces that belong to one user: ``("users", user)``.
USER_SPACE = "users"
#: ``config.configurable`` keys the server sets for a run (a client's value would win
#: over the route's thread, or pass for another user); ``langgraph_*`` keys too.
SERVER_KEYS = ("thread_id", "run_id", "user_id", "user_display_name")


def refused(status: int, line: str) -> Exception:
    """The exception Aegra's routes answer with ``status`` and ``line`` (one line)."""
    from fastapi import HTTPException

    return HTTPException(status, line)


async def owner_of(resource_id: str, kind: str = "thread") -> str | None:
    """Who made the thread (or assistant), in Aegra's tables (``None``: no such one).

    Args:
        resource_id: The thread's (or assistant's) id.
        kind: ``thread`` or ``assistant``.

    Returns:
        Its owner's identity (an assistant Aegra made for a graph: Aegra's own ``system``).
    """
    from sqlalchemy import select

    from debategraph.compat import aegra_assistant_table, aegra_session_maker, aegra_thread_table

    Thread, Assistant = aegra_thread_table(), aegra_assistant_table()

    table = Thread if kind == "thread" else Assistant
    key = Thread.thread_id if kind == "thread" else Assistant.assistant_id
    async with aegra_session_maker()() as session:
        owner = await session.scalar(select(table.user_id).where(key == resource_id))
    return None if owner is None else str(owner)


def created_id(method: str, path: str, body: Any) -> tuple[str, str] | None:
    """The kind and id a request creating a thread or an assistant asks for, if it does.

    Args:
        method: The HTTP method.
        path: The request's path.
        body: Its parsed JSON body.

    Returns:
        ``("thread" | "assistant", id)`` for ``POST /threads`` or ``POST /assistants``
        naming an id (as Aegra reads the body: :func:`_id_to_create`), else ``None``.
    """
    route = path.rstrip("/")
    if method != "POST" or route not in ("/threads", "/assistants"):
        return None
    kind = "thread" if route == "/threads" else "assistant"
    wanted = _id_to_create(kind, body)
    return None if wanted is None else (kind, wanted)


def _id_to_create(kind: str, body: Any) -> str | None:
    """The id a request creating a thread or assistant asks for, as Aegra reads the body.

    Read with Aegra's own request models (their aliases included: ``threadId``), so the
    id checked is the id Aegra will insert. A body they refuse is Aegra's to answer.
    """
    from pydantic import ValidationError

    from debategraph.compat import aegra_create_models

    ThreadCreate, AssistantCreate = aegra_create_models()
    model = ThreadCreate if kind == "thread" else AssistantCreate
    try:
        request = model.model_validate(body)
    except ValidationError:
        return None
    wanted = request.thread_id if kind == "thread" else request.assistant_id
    return wanted if isinstance(wanted, str) else None


async def check_thread(thread_id: Any) -> None:
    """Refuse (404) unless the caller, if any, owns the thread.

    Args:
        thread_id: The thread about to be read or written.

    Raises:
        HTTPException: 404 ``thread ... not found`` for a thread that is not the caller's
            (someone else's, or none at all).
    """
    who = current()
    if who is not None and not await _owns(who, str(thread_id)):
        raise refused(404, f"thread {str(thread_id)!r} not found")


async def _owns(who: Caller, thread: str) -> bool:
    """Whether ``who`` owns the thread (looked up once per request once it exists)."""
    owner = who.owners.get(thread)
    if owner is None:
        owner = await owner_of(thread)
        if owner is not None:
            who.owners[thread] = owner
    return owner == who.user


async def check_namespace(namespace: Sequence[str], *, listing: bool = False) -> None:
    """Refuse (403) unless the caller, if any, owns the namespace.

    Args:
        namespace: The namespace (or prefix) about to be read or written.
        listing: Whether it is a prefix whose descendants will be listed (a prefix
            must reach the part that says whose it is: ``("debategraph",)`` would list
            every thread's inbox).

    Raises:
        HTTPException: 403 naming the namespace and what the caller reaches.
    """
    who = current()
    if who is None:
        return
    labels = [str(label) for label in namespace]
    if _whose(labels, who.user) == "user":
        return
    thread = _thread_of(labels)
    if thread is not None:
        if await _owns(who, thread):
            return
        line = f"thread {thread!r} is not one of yours: its store namespaces are not yours either"
        raise refused(403, line)
    what = "prefix" if listing else "namespace"
    raise refused(
        403,
        f"{what} {'.'.join(labels) or '(empty)'!r} is not yours: you reach "
        f"('{USER_SPACE}', '{who.user}', ...) and your own threads' "
        f"('{THREAD_SPACE}', KIND, THREAD, ...)",
    )


def _whose(labels: list[str], user: str) -> str | None:
    """``"user"`` for the user's own namespace, else ``None``."""
    if len(labels) >= 2 and labels[0] == USER_SPACE and labels[1] == user:
        return "user"
    return None


def _thread_of(labels: list[str]) -> str | None:
    """The thread a thread's namespace belongs to (``None``: not a thread's namespace)."""
    if len(labels) >= 3 and labels[0] == THREAD_SPACE and "*" not in labels[:3]:
        return labels[2].replace("%2E", ".").replace("%25", "%")
    return None


async def refusal(user: str, method: str, path: str, body: Any) -> tuple[int, str] | None:
    """What the route alone says ``user`` may not do, before Aegra acts: ``(status, line)``.

    Args:
        user: The signed-in user's identity.
        method: The HTTP method.
        path: The request's path.
        body: Its parsed JSON body (``None``: none).

    Returns:
        ``(404, ...)`` for a route under another user's thread, ``(409, ...)`` for a new
        thread given the id of another user's, else ``None`` (what the request then reads
        or writes is checked where it is read or written).
    """
    created = created_id(method, path, body)
    if created is not None:
        kind, wanted = created
        if await owner_of(wanted, kind) not in (None, user):
            return 409, f"{kind} {wanted!r} already exists: give another id, or none"
        return None
    route = THREAD_ROUTE.match(path)  # not the creating routes: they name no thread
    if route:
        owner = await owner_of(route.group("thread"))
        if owner is not None and owner != user:
            return 404, f"thread {route.group('thread')!r} not found"
    return None


def server_keys_refusal(body: Any, thread: str | None) -> str | None:
    """Why a run's or assistant's body sets what the server sets, if it does (one line).

    Aegra merges a client's ``config.configurable`` and ``checkpoint`` over the thread
    the route names, and keeps a client's ``user_id`` or ``langgraph_auth_user``: none
    of them may take effect anyway (the storage checks
    :class:`~debategraph.serve.owned_storage.OwnedSaver` makes), but a client is told at
    once rather than by a failed run.

    Args:
        body: The parsed JSON body of a request creating a run or an assistant.
        thread: The thread the route names (``None``: an assistant's route).

    Returns:
        One line naming the field, or ``None``.
    """
    if not isinstance(body, dict):
        return None
    config = body.get("config")
    configurable = config.get("configurable") if isinstance(config, dict) else None
    given: dict[Any, Any] = configurable if isinstance(configurable, dict) else {}
    for key, value in given.items():
        if key == "thread_id" and thread is not None and value == thread:
            continue
        if key in SERVER_KEYS or str(key).startswith(("langgraph_", "__")):
            where = "the route names the thread" if key == "thread_id" else "who signed in does"
            return f"config.configurable.{key} is the server's to set: {where}"
    checkpoint = body.get("checkpoint")
    named = checkpoint.get("thread_id") if isinstance(checkpoint, dict) else None
    if named is not None and named != thread:
        return "checkpoint.thread_id must be the thread the route names (or left out)"
    return None
