"""The checkpointer and store Aegra hands every route and run, wrapped to check each access.

Ownership is checked where the server acts, after Aegra has resolved everything a
request names (see :mod:`debategraph.serve.owners` for why): :func:`guard_storage`
(at start) wraps Aegra's checkpointer in an :class:`OwnedSaver`, each read or write of
which checks the thread it is about to touch, and its store in an :class:`OwnedStore`,
each operation of which checks the namespace it is about to touch, both for the caller
of the request (:mod:`debategraph.serve.caller`; a run it starts carries the same).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
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

from debategraph.serve.caller import current
from debategraph.serve.owners import check_namespace, check_thread, refused


def _thread_of_config(config: RunnableConfig | None) -> Any:
    """The thread a checkpoint config names (``None``: none)."""
    configurable = (config or {}).get("configurable") or {}
    return configurable.get("thread_id")


def _on_loop(coro: Any, loop: asyncio.AbstractEventLoop) -> Any:
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
            if current() is not None:
                raise refused(404, "a thread must be named")
            return
        await check_thread(thread)

    def _check_sync(self, config: RunnableConfig | None) -> None:
        if current() is not None:
            _on_loop(self._check(config), self.saver.loop)  # type: ignore[attr-defined]

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
                if current() is not None and not prefixes:
                    raise refused(403, "a namespace listing must name a prefix of yours")
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
        if current() is not None:
            _on_loop(self._check(ops), self.store.loop)  # type: ignore[attr-defined]
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
