"""A thread's inbox in LangGraph's store: what a human sends a thread while it runs.

``debategraph interject`` and ``debategraph stop`` reach a thread that another process
is running (or that stopped in the middle of a round) through an inbox: items in
LangGraph's store (:class:`~langgraph.store.base.BaseStore`) under
``("debategraph", "inbox", <thread id>)``, one per message, keyed by a new uuid hex. The
graph's node that opens each round (or turn) reads the inbox of the thread it runs from
``runtime.store`` and records what it finds (see :func:`debategraph.nodes.rounds.open_round_node`).

Each item's value is ``{"kind": "interject" | "stop", "text": str, "created": unix time}``;
the inbox is read oldest first. Under ``langgraph dev`` or LangGraph's server the store is
the server's own: put such items with its store API and a running thread reads them alike.

:func:`open_store` opens the store of a ``--db`` value beside its checkpoints: a
``SqliteStore`` on a connection of its own to the same file, or a ``PostgresStore``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from debategraph.checkpoints.savers import DEFAULT_DB, open_database
from debategraph.checkpoints.threads import namespace_label

if TYPE_CHECKING:  # imported where used: the CLI's --help loads none of LangGraph
    from langgraph.store.base import BaseStore, Item


#: The kinds of inbox item: a human message to every agent, and a request to stop.
INTERJECT = "interject"
STOP = "stop"
Kind = Literal["interject", "stop"]
KINDS: frozenset[str] = frozenset({INTERJECT, STOP})
#: The namespace under which every thread's inbox lies.
NAMESPACE = ("debategraph", "inbox")
#: Items read at once: a boundary takes at most this many (the rest wait for the next).
MAX_ITEMS = 1000


@dataclass(frozen=True)
class InboxItem:
    """One message in a thread's inbox.

    Attributes:
        key: Its key in the store (a uuid hex); an interjection's transcript id.
        kind: ``interject`` or ``stop``.
        text: The interjection's text (``""`` for a stop).
        created: Unix time it was posted.
    """

    key: str
    kind: Kind
    text: str
    created: float


def inbox_namespace(thread_id: str) -> tuple[str, ...]:
    """The store namespace of a thread's inbox.

    A namespace label may hold no ``.``, so the thread id is written with ``%``-escapes
    for ``%`` and ``.`` (one id, one namespace).

    Args:
        thread_id: The thread.

    Returns:
        ``("debategraph", "inbox", <thread id, escaped>)``.
    """
    return (*NAMESPACE, namespace_label(thread_id))


def post(store: BaseStore, thread_id: str, kind: str, text: str = "") -> str:
    """Put a message in a thread's inbox.

    Args:
        store: The store.
        thread_id: The thread.
        kind: ``interject`` or ``stop``.
        text: The interjection's text (ignored for a stop).

    Returns:
        The item's key (a uuid hex).

    Raises:
        ValueError: If the kind is unknown or an interjection's text is empty.
    """
    key, value = inbox_item(kind, text)
    store.put(inbox_namespace(thread_id), key, value, index=False)
    return key


def inbox_item(kind: str, text: str = "") -> tuple[str, dict[str, Any]]:
    """A new inbox item's key and value, for any store API (a server's included).

    A ``langgraph-sdk`` client posts it to a thread that a server runs with
    ``client.store.put_item(list(inbox_namespace(thread_id)), key, value)``.

    Args:
        kind: ``interject`` or ``stop``.
        text: The interjection's text (ignored for a stop).

    Returns:
        ``(key, value)``: a new uuid hex, and ``{"kind", "text", "created"}``.

    Raises:
        ValueError: If the kind is unknown or an interjection's text is empty.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown inbox item kind {kind!r}: expected one of {sorted(KINDS)}")
    if kind == INTERJECT and not text.strip():
        raise ValueError("interjection text is empty")
    text = text.strip() if kind == INTERJECT else ""
    return uuid.uuid4().hex, {"kind": kind, "text": text, "created": time.time()}


def read(store: BaseStore, thread_id: str) -> list[InboxItem]:
    """A thread's inbox, oldest first (at most :data:`MAX_ITEMS`).

    Args:
        store: The store.
        thread_id: The thread.

    Returns:
        Its items; values that are no inbox item are left out.
    """
    return _items(store.search(inbox_namespace(thread_id), limit=MAX_ITEMS))


async def aread(store: BaseStore, thread_id: str) -> list[InboxItem]:
    """:func:`read`, through the store's async API.

    Args:
        store: The store.
        thread_id: The thread.

    Returns:
        Its items, oldest first.
    """
    return _items(await store.asearch(inbox_namespace(thread_id), limit=MAX_ITEMS))


def remove(store: BaseStore, thread_id: str, keys: Sequence[str]) -> None:
    """Delete items from a thread's inbox, in one batch.

    Args:
        store: The store.
        thread_id: The thread.
        keys: The items' keys (none: nothing is done).
    """
    if keys:
        store.batch(_deletes(thread_id, keys))


async def aremove(store: BaseStore, thread_id: str, keys: Sequence[str]) -> None:
    """:func:`remove`, through the store's async API.

    Args:
        store: The store.
        thread_id: The thread.
        keys: The items' keys.
    """
    if keys:
        await store.abatch(_deletes(thread_id, keys))


def _deletes(thread_id: str, keys: Sequence[str]) -> list[Any]:
    from langgraph.store.base import PutOp

    namespace = inbox_namespace(thread_id)
    return [PutOp(namespace, key, None) for key in keys]


def _items(found: Iterable[Item]) -> list[InboxItem]:
    """The inbox items among stored ones, oldest first (ties by key)."""
    items = []
    for item in found:
        value = item.value
        kind, text, created = value.get("kind"), value.get("text"), value.get("created")
        if kind not in KINDS or not isinstance(text, str) or not isinstance(created, int | float):
            continue
        if kind == INTERJECT and not text.strip():
            continue
        items.append(InboxItem(item.key, kind, text, float(created)))
    return sorted(items, key=lambda i: (i.created, i.key))


@contextlib.contextmanager
def open_store(db: str | os.PathLike[str] = DEFAULT_DB) -> Iterator[BaseStore]:
    """Open (and set up) the store of a ``--db`` value, beside its checkpoints.

    A SQLite file gets a ``SqliteStore`` on a connection of its own (WAL, a busy timeout:
    another process may be running a thread on the same file), opened without reading
    the file's header (a checkpointer of this process may have it open); a Postgres URL a
    ``PostgresStore`` (``pip install "debategraph[postgres]"``). Either has a working
    async API: its batches run on a thread of the store's own.

    Args:
        db: A SQLite file path (``sqlite:///`` prefix allowed) or a Postgres URL.

    Yields:
        The ready store; its connection is closed on exit.

    Raises:
        UsageError: If the database cannot be opened.
    """

    def make(conn: Any) -> BaseStore:
        conn.isolation_level = None  # autocommit: the store issues its own BEGIN/COMMIT
        store: BaseStore = _sqlite_store_class()(conn)
        return store

    # The checkpointer of this process may have the file open already: reading its header
    # now would drop that connection's locks (see check_sqlite_file); SQLite itself
    # refuses a file that is not a database.
    with open_database(db, _postgres_store_class, make, read_header=False) as store:
        yield store


@functools.cache
def _sqlite_store_class() -> type[Any]:
    """LangGraph's ``SqliteStore``, with an async API (defined on first use)."""
    from langgraph.store.sqlite import SqliteStore

    from debategraph.checkpoints.threaded import ThreadedStore

    class ThreadedSqliteStore(ThreadedStore, SqliteStore):
        """LangGraph's ``SqliteStore``, its batches also async, on a thread of its own."""

    return ThreadedSqliteStore


@functools.cache
def _postgres_store_class() -> type[Any]:
    """LangGraph's ``PostgresStore``, its async batches on a thread of its own."""
    from langgraph.store.postgres import PostgresStore

    from debategraph.checkpoints.threaded import ThreadedStore

    class ThreadedPostgresStore(ThreadedStore, PostgresStore):
        """LangGraph's ``PostgresStore``, ``abatch`` on its own thread (not asyncio's pool)."""

    return ThreadedPostgresStore
