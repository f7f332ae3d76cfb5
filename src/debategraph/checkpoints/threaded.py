"""The async side of the package's checkpointers: their sync methods, on a thread of their own.

LangGraph's ``SqliteSaver`` and ``PostgresSaver`` are sync only (their ``aput`` raises),
so a graph run with ``ainvoke``/``astream`` could not use them; the async savers beside
them are other classes, with their own connection handling. :class:`ThreadedAsync` gives a
sync saver every async method LangGraph calls, each running the sync method on one worker
thread that belongs to the saver: the event loop never waits on the database, and one
connection serves both paths, so everything the sync saver does (short versions, interned
metadata, the package's serializer) holds for async runs too.

LangGraph's ``SqliteStore`` is sync only too (its ``abatch`` raises), and
``PostgresStore.abatch`` runs on asyncio's default thread pool: :class:`ThreadedStore`
gives either an ``abatch`` on a thread of its own, the same way.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import (
        ChannelVersions,
        Checkpoint,
        CheckpointMetadata,
        CheckpointTuple,
    )
    from langgraph.store.base import Op, Result

T = TypeVar("T")


class OwnThread:
    """Mixin: one worker thread of the object's own, for running its sync methods.

    Put it before the class it extends; :meth:`close_thread` ends the thread.
    """

    _worker: ThreadPoolExecutor
    #: How the worker thread is named (in tracebacks and thread dumps).
    thread_name = "debategraph-checkpoints"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._worker = ThreadPoolExecutor(1, thread_name_prefix=self.thread_name)

    def close_thread(self) -> None:
        """End the worker thread once what was sent to it is done."""
        self._worker.shutdown(wait=True)

    async def _on_thread(self, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker, functools.partial(func, *args, **kwargs))


class ThreadedAsync(OwnThread):
    """Mixin for a sync checkpointer: its async methods run the sync ones on its thread.

    Put it before the saver class (``class S(ThreadedAsync, SqliteSaver)``). Clones made
    by ``with_allowlist`` share the thread. :meth:`close_thread` ends it.
    """

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """``get_tuple``, on the saver's thread."""
        get_tuple: Callable[[RunnableConfig], CheckpointTuple | None] = self.get_tuple  # type: ignore[attr-defined]
        return await self._on_thread(get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """``list``, read whole on the saver's thread, then yielded."""

        def read() -> list[CheckpointTuple]:
            found = self.list(config, filter=filter, before=before, limit=limit)  # type: ignore[attr-defined]
            return list(found)

        for tup in await self._on_thread(read):
            yield tup

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """``put``, on the saver's thread."""
        put: Callable[..., RunnableConfig] = self.put  # type: ignore[attr-defined]
        return await self._on_thread(put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """``put_writes``, on the saver's thread."""
        await self._on_thread(self.put_writes, config, writes, task_id, task_path)  # type: ignore[attr-defined]

    async def adelete_thread(self, thread_id: str) -> None:
        """``delete_thread``, on the saver's thread."""
        await self._on_thread(self.delete_thread, thread_id)  # type: ignore[attr-defined]

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Any:
        """``get_delta_channel_history``, whole walk in one trip to the saver's thread."""
        history = self.get_delta_channel_history  # type: ignore[attr-defined]
        return await self._on_thread(history, config=config, channels=channels)


class ThreadedStore(OwnThread):
    """Mixin for a sync LangGraph store: ``abatch`` runs ``batch`` on the store's thread.

    Put it before the store class (``class S(ThreadedStore, SqliteStore)``). Every async
    method of ``BaseStore`` (``aget``, ``asearch``, ``aput``, ``adelete``...) goes through
    ``abatch``.
    """

    thread_name = "debategraph-store"

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch``, on the store's thread.

        Args:
            ops: The operations.

        Returns:
            Their results, in order.
        """
        batch: Callable[[list[Op]], list[Result]] = self.batch  # type: ignore[attr-defined]
        return await self._on_thread(batch, list(ops))


def close_thread(owner: object) -> None:
    """End a saver's or store's worker thread, if it has one (see :class:`OwnThread`).

    Args:
        owner: The checkpointer or store.
    """
    if isinstance(owner, OwnThread):
        owner.close_thread()
