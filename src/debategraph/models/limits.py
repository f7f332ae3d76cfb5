"""A cap on model calls in flight at once across every run of the process.

A run's own cap is LangGraph's ``max_concurrency`` (the CLI's ``--max-concurrency``):
how many of a step's nodes run at once. Many runs in one process (debates started with
``asyncio.gather``, a LangGraph server) add up; :func:`set_call_limit` caps them for the
whole process: the blocking calls of every thread share one count, the awaited calls of
an event loop another (a process runs its async runs on one loop). Without it (the
default) nothing but the runs' own settings bounds them.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import AsyncIterator, Iterator

_limit: int | None = None
#: Model calls in flight now, in this process (every call holds a place while it runs).
_in_flight = 0
_count_lock = threading.Lock()
_sync_gate: threading.BoundedSemaphore | None = None
_async_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def set_call_limit(limit: int | None) -> None:
    """Cap the model calls in flight at once in this process (``None``: no cap).

    Calls waiting for a place queue in the order they came. Set it before runs start:
    calls already waiting keep the cap they found.

    Args:
        limit: The most calls at once (>= 1), or ``None``.

    Raises:
        ValueError: If ``limit`` is below 1.
    """
    global _limit, _sync_gate
    if limit is not None and limit < 1:
        raise ValueError(f"call limit must be at least 1 (or None for no cap), got {limit}")
    _limit = limit
    _sync_gate = threading.BoundedSemaphore(limit) if limit is not None else None
    _async_gates.clear()


def call_limit() -> int | None:
    """The cap :func:`set_call_limit` set, or ``None``."""
    return _limit


def calls_in_flight() -> int:
    """How many model calls of this process are in flight now (for progress lines)."""
    return _in_flight


@contextlib.contextmanager
def _counted() -> Iterator[None]:
    global _in_flight
    with _count_lock:
        _in_flight += 1
    try:
        yield
    finally:
        with _count_lock:
            _in_flight -= 1


@contextlib.contextmanager
def sync_slot() -> Iterator[None]:
    """Hold one of the process's call places for a blocking call (counted in flight)."""
    gate = _sync_gate
    if gate is None:
        with _counted():
            yield
        return
    with gate, _counted():
        yield


@contextlib.asynccontextmanager
async def async_slot() -> AsyncIterator[None]:
    """Hold one of the process's call places for an awaited call (counted in flight).

    Each event loop has its own count (an ``asyncio.Semaphore`` belongs to one loop);
    a process runs its async runs on one loop.
    """
    limit = _limit
    if limit is None:
        with _counted():
            yield
        return
    loop = asyncio.get_running_loop()
    gate = _async_gates.get(loop)
    if gate is None:
        gate = _async_gates[loop] = asyncio.Semaphore(limit)
    async with gate:
        with _counted():
            yield
