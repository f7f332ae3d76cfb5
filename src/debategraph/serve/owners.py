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
(:func:`guard_storage`, at start). Each read or write of a thread's checkpoints
(:class:`OwnedSaver`) checks the thread it is about to touch, and each store operation
(:class:`OwnedStore`) the namespace it is about to touch, against the user who signed
in for the request (:func:`acting_as`; a run started by the request carries the same
user to its end). Another user's thread is not found (404, as if it did not exist);
a namespace not theirs is refused (403). A user owns ``("users", <user>, ...)`` and a
thread's own namespaces ``("debategraph", <kind>, <thread>, ...)`` (its inbox, its run
ends) where the thread is theirs.

On top of that, :func:`refusal` answers what the route alone says before Aegra acts:
a route under another user's thread (404, before Aegra writes that thread's metadata or
status on a run's behalf), a new thread given the id of another user's (409).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import re
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.store.base import (
    BaseStore,
    GetOp,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchOp,
)

#: A route under one thread (its runs, state, history...).
THREAD_ROUTE = re.compile(r"^/threads/(?P<thread>[^/]+)/.")
#: The first label of namespaces that belong to one thread: ``("debategraph", kind, T)``.
THREAD_SPACE = "debategraph"
#: The first label of namespaces that belong to one user: ``("users", user)``.
USER_SPACE = "users"
#: ``config.configurable`` keys the server sets for a run (a client's value would win
#: over the route's thread, or pass for another user); ``langgraph_*`` keys too.
SERVER_KEYS = ("thread_id", "run_id", "user_id", "user_display_name")


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


def caller() -> Caller | None:
    """The caller storage accesses are checked for here (``None``: none)."""
    return _caller.get()


def _refused(status: int, line: str) -> Exception:
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
    who = _caller.get()
    if who is not None and not await _owns(who, str(thread_id)):
        raise _refused(404, f"thread {str(thread_id)!r} not found")


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
    who = _caller.get()
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
        raise _refused(403, line)
    what = "prefix" if listing else "namespace"
    raise _refused(
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


def _thread_of_config(config: RunnableConfig | None) -> Any:
    configurable = (config or {}).get("configurable") or {}
    return configurable.get("thread_id")


def _run(coro: Any, loop: asyncio.AbstractEventLoop) -> Any:
    """Run a check from a worker thread on the server's loop (as the wrapped savers do)."""
    return asyncio.run_coroutine_threadsafe(coro, loop).result()


class OwnedSaver(BaseCheckpointSaver[Any]):
    """A checkpointer that lets the caller touch only their own threads' checkpoints.

    Every method that names a thread (by its config or its id) checks it with
    :func:`check_thread` before handing on to the wrapped saver. A listing with no
    thread (every thread's checkpoints) is refused to a caller.

    Attributes:
        saver: The wrapped saver (Aegra's ``AsyncPostgresSaver``).
    """

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        """Wrap ``saver``."""
        super().__init__(serde=saver.serde)
        self.saver = saver

    def __getattr__(self, name: str) -> Any:
        """Anything else the wrapped saver has (its pool, loop, setup...)."""
        return getattr(self.saver, name)

    @property
    def config_specs(self) -> list[Any]:
        """The wrapped saver's."""
        return list(self.saver.config_specs)

    async def _check(self, config: RunnableConfig | None) -> None:
        thread = _thread_of_config(config)
        if thread is None:
            if _caller.get() is not None:
                raise _refused(404, "a thread must be named")
            return
        await check_thread(thread)

    def _check_sync(self, config: RunnableConfig | None) -> None:
        if _caller.get() is not None:
            _run(self._check(config), self.saver.loop)  # type: ignore[attr-defined]

    # -- async: what the server runs ------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The wrapped saver's, for the caller's thread only."""
        await self._check(config)
        return await self.saver.aget_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """The wrapped saver's, for the caller's thread only."""
        await self._check(config)
        async for item in self.saver.alist(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """The wrapped saver's, for the caller's thread only."""
        await self._check(config)
        return await self.saver.aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """The wrapped saver's, for the caller's thread only."""
        await self._check(config)
        await self.saver.aput_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """The wrapped saver's, for the caller's thread only."""
        await check_thread(thread_id)
        await self.saver.adelete_thread(thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """The wrapped saver's, between the caller's threads only."""
        await check_thread(source_thread_id)
        await check_thread(target_thread_id)
        await self.saver.acopy_thread(source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """The wrapped saver's, for the caller's threads only."""
        for thread in thread_ids:
            await check_thread(thread)
        await self.saver.aprune(thread_ids, strategy=strategy)

    async def aget_delta_channel_history(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped saver's, for the caller's thread only."""
        config = kwargs.get("config", args[0] if args else None)
        await self._check(config)
        return await self.saver.aget_delta_channel_history(*args, **kwargs)

    # -- sync: the same checks, on the server's loop --------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The wrapped saver's, for the caller's thread only."""
        self._check_sync(config)
        return self.saver.get_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """The wrapped saver's, for the caller's thread only."""
        self._check_sync(config)
        return self.saver.list(config, filter=filter, before=before, limit=limit)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """The wrapped saver's, for the caller's thread only."""
        self._check_sync(config)
        return self.saver.put(config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """The wrapped saver's, for the caller's thread only."""
        self._check_sync(config)
        self.saver.put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """The wrapped saver's, for the caller's thread only."""
        self._check_sync({"configurable": {"thread_id": thread_id}})
        self.saver.delete_thread(thread_id)

    def get_delta_channel_history(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped saver's, for the caller's thread only."""
        self._check_sync(kwargs.get("config", args[0] if args else None))
        return self.saver.get_delta_channel_history(*args, **kwargs)

    def get_next_version(self, current: Any, channel: None) -> Any:
        """The wrapped saver's."""
        return self.saver.get_next_version(current, channel)


class OwnedStore(BaseStore):
    """A store that lets the caller touch only their own namespaces.

    Every operation goes through :meth:`abatch` / :meth:`batch`, which check each
    operation's namespace (a get, put or delete), prefix (a search) or prefix condition
    (a namespace listing, which must have one) with :func:`check_namespace`.

    Attributes:
        store: The wrapped store (Aegra's ``AsyncPostgresStore``).
    """

    def __init__(self, store: BaseStore) -> None:
        """Wrap ``store``."""
        self.store = store

    def __getattr__(self, name: str) -> Any:
        """Anything else the wrapped store has (its pool, loop, setup...)."""
        return getattr(self.store, name)

    async def _check(self, ops: Iterable[Op]) -> None:
        for op in ops:
            if isinstance(op, GetOp | PutOp):
                await check_namespace(op.namespace)
            elif isinstance(op, SearchOp):
                await check_namespace(op.namespace_prefix, listing=True)
            elif isinstance(op, ListNamespacesOp):
                prefixes = [c.path for c in op.match_conditions or () if c.match_type == "prefix"]
                if _caller.get() is not None and not prefixes:
                    raise _refused(403, "a namespace listing must name a prefix of yours")
                for prefix in prefixes:
                    await check_namespace(prefix, listing=True)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """The wrapped store's, for the caller's namespaces only."""
        ops = list(ops)
        await self._check(ops)
        return await self.store.abatch(ops)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """The wrapped store's, for the caller's namespaces only."""
        ops = list(ops)
        if _caller.get() is not None:
            _run(self._check(ops), self.store.loop)  # type: ignore[attr-defined]
        return self.store.batch(ops)


def guard_storage() -> None:
    """Wrap the checkpointer and store Aegra hands every route and run (at start).

    Idempotent: a saver or store already wrapped stays as it is.
    """
    from debategraph.compat import aegra_storage, set_aegra_storage

    saver, store = aegra_storage()
    set_aegra_storage(
        saver if isinstance(saver, OwnedSaver) else OwnedSaver(saver),
        store if isinstance(store, OwnedStore) else OwnedStore(store),
    )


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
    if method == "POST" and path.rstrip("/") in ("/threads", "/assistants"):
        kind = "thread" if path.rstrip("/") == "/threads" else "assistant"
        wanted = _id_to_create(kind, body)
        if wanted is not None and await owner_of(wanted, kind) not in (None, user):
            return 409, f"{kind} {wanted!r} already exists: give another id, or none"
        return None
    route = THREAD_ROUTE.match(path)
    if route:
        owner = await owner_of(route.group("thread"))
        if owner is not None and owner != user:
            return 404, f"thread {route.group('thread')!r} not found"
    return None


def server_keys_refusal(body: Any, thread: str | None) -> str | None:
    """Why a run's or assistant's body sets what the server sets, if it does (one line).

    Aegra merges a client's ``config.configurable`` and ``checkpoint`` over the thread
    the route names, and keeps a client's ``user_id`` or ``langgraph_auth_user``: none
    of them may take effect anyway (the storage checks :class:`OwnedSaver` makes), but
    a client is told at once rather than by a failed run.

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
