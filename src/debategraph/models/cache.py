"""The response cache: a reply to a request made before, answered without a paid call.

Opt-in (``--cache PATH``): a SQLite file (:class:`ResponseCache`) that keeps every
successful reply by its request. A request is the model (its label and endpoint), the
parameters that change its reply (the bound ``response_format``, ``tools`` and
``tool_choice``; the chat model's model name, temperature, token cap...), the messages
as the endpoint reads them, and a **sample index**: how many identical requests the
same thread made before it in this run (outside a graph: the run's). So K solvers
sending one prompt at a temperature above 0 are K entries, K different samples; a rerun
of the thread asks for the same K and gets them back; a thread of another mode whose
first rounds send the same prompts finds them too. The key is a SHA-256 of that request:
no API key is in it, nor in the file.

:func:`cached_request` is what a model call asks first
(:func:`~debategraph.models.pacing.paced`): a hit is answered at once, before any rate
limit's wait, budget hold or paid call; a miss is called, and its reply kept
(:meth:`CachedRequest.keep`; two identical requests in flight at once both miss, and
the first reply is kept). A reply from the cache carries a mark (:func:`from_cache`)
its usage counts as a cache hit that cost nothing
(:func:`~debategraph.models.usage.usage_of`).

The cache a run's calls use is the one :func:`caching` opened around it (a contextvar,
as :func:`~debategraph.models.money.spending`: LangGraph's nodes, threads and tasks
started inside see it). The file is safe for the threads of one process and for several
processes at once (WAL, a busy timeout); a file that is not a cache is refused whole,
in one line, and nothing in it is written (:func:`open_cache`).
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseLanguageModel
from langchain_core.load import dumpd
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    convert_to_openai_messages,
    message_to_dict,
    messages_from_dict,
)
from langchain_core.runnables import Runnable, RunnableBinding
from langgraph.config import get_config
from pydantic import BaseModel

from debategraph.errors import UsageError

_log = logging.getLogger(__name__)

#: The key of a cached reply's ``response_metadata`` that marks it as one.
CACHE_MARK = "debategraph_cache_hit"
#: What a cache file's ``meta`` table says it is, and the format this version writes.
APPLICATION = "debategraph response cache"
FORMAT = 1
#: Seconds a write waits on another process's before it gives up.
BUSY_TIMEOUT_S = 30.0
#: The first bytes of every SQLite file.
SQLITE_HEADER = b"SQLite format 3\x00"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
    "reply TEXT NOT NULL, created REAL NOT NULL)",
)


def from_cache(reply: Any) -> bool:
    """Whether ``reply`` came from the response cache (not from a paid call)."""
    meta = getattr(reply, "response_metadata", None)
    return bool(meta.get(CACHE_MARK)) if isinstance(meta, dict) else False


class ResponseCache:
    """Replies kept by the SHA-256 of their request, in a SQLite file.

    Open one with :func:`open_cache` (which refuses a file that is not one); close it
    with :meth:`close` or a ``with`` block. Thread-safe.

    Attributes:
        path: The file.
        hits: Requests answered from it since it was opened.
        lookups: Requests looked up in it since it was opened.
    """

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        """A cache on an open connection to a checked file (see :func:`open_cache`)."""
        self.path = path
        self.hits = 0
        self.lookups = 0
        self._db = connection
        self._lock = threading.Lock()

    def get(self, key: str) -> AIMessage | None:
        """The reply kept for ``key``, marked as a cache hit (``None``: none kept).

        Args:
            key: The request's key (:func:`request_key`).

        Returns:
            The reply, a new message each time.
        """
        with self._lock:
            row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
            self.lookups += 1
            if row is None:
                return None
            self.hits += 1
        (message,) = messages_from_dict([json.loads(row[0])])
        if not isinstance(message, AIMessage):
            return None
        message.response_metadata = {**message.response_metadata, CACHE_MARK: True}
        return message

    def put(self, key: str, model: str, reply: BaseMessage) -> None:
        """Keep ``reply`` for ``key`` (the first one kept stays).

        Args:
            key: The request's key.
            model: The model's label (for whoever reads the file).
            reply: The reply (its tool calls and usage kept).
        """
        text = json.dumps(message_to_dict(reply), default=str, separators=(",", ":"))
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO replies (key, model, reply, created) VALUES (?, ?, ?, ?)",
                (key, model, text, time.time()),
            )

    def __len__(self) -> int:
        """The replies kept."""
        with self._lock:
            (count,) = self._db.execute("SELECT count(*) FROM replies").fetchone()
        return int(count)

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_cache(path: str | Path) -> ResponseCache:
    """The response cache at ``path``: a new one where there is no file (or an empty one).

    Args:
        path: ``--cache``: a SQLite file path.

    Returns:
        The cache, open.

    Raises:
        UsageError: One line (``--cache PATH: ...``), nothing in the file written: a file
            that is not SQLite, a SQLite file that is not a debategraph cache, a cache of
            a newer format, a PostgreSQL URL (not supported yet), a file that cannot be
            opened.
    """
    text = str(path)
    if text.startswith(("postgres://", "postgresql://")):
        raise UsageError(f"--cache {text}: a PostgreSQL cache is not supported yet; give a file")
    file = Path(text)
    try:
        new = not file.exists() or (file.is_file() and file.stat().st_size == 0)
        if not new:
            with file.open("rb") as head:
                if head.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
                    raise _not_a_cache(file, "not a SQLite file")
        db = sqlite3.connect(
            file, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
    except OSError as exc:
        raise UsageError(f"--cache {file}: cannot open: {exc.strerror or exc}") from None
    except sqlite3.Error as exc:
        raise UsageError(f"--cache {file}: cannot open: {exc}") from None
    try:
        if not new:
            _check_mark(db, file)  # reads only: a file refused is left as it was
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        for statement in _SCHEMA:
            db.execute(statement)
        db.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('application', ?), ('format', ?)",
            (APPLICATION, str(FORMAT)),
        )
        if new:
            _check_mark(db, file)  # another process may have made it first
    except UsageError:
        db.close()
        raise
    except sqlite3.Error as exc:
        db.close()
        raise UsageError(f"--cache {file}: cannot open: {exc}") from None
    return ResponseCache(file, db)


def _check_mark(db: sqlite3.Connection, file: Path) -> None:
    """Refuse a SQLite file that is not a cache this version reads (reads only)."""
    try:
        rows = dict(db.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.Error as exc:
        raise _not_a_cache(file, f"a SQLite database without its meta table: {exc}") from None
    if rows.get("application") != APPLICATION:
        raise _not_a_cache(file, "its meta table does not name one")
    version = str(rows.get("format", ""))
    if not version.isdigit():
        raise _not_a_cache(file, f"format {version!r}")
    if int(version) > FORMAT:
        raise UsageError(
            f"--cache {file}: a response cache of format {version}, written by a newer "
            f"debategraph (this one reads format {FORMAT})"
        )


def _not_a_cache(file: Path, why: str) -> UsageError:
    return UsageError(f"--cache {file}: not a debategraph response cache ({why})")


def request_key(
    model: str, endpoint: str, runnable: Runnable[Any, Any], prompt: Any, sample: int
) -> str:
    """The key of a request: a SHA-256 of its canonical JSON.

    Args:
        model: The model's label.
        endpoint: Its endpoint.
        runnable: What is called (a chat model, maybe bound to tools or a format).
        prompt: The messages sent.
        sample: Which of the identical requests this is (0, 1, ...).

    Returns:
        The hex digest.
    """
    return _digest(_sha256(_request(model, endpoint, runnable, prompt)), sample)


def _request(model: str, endpoint: str, runnable: Runnable[Any, Any], prompt: Any) -> str:
    """The request as canonical JSON, less its sample index."""
    body = {
        "model": model,
        "endpoint": endpoint,
        "parameters": parameters_of(runnable),
        "messages": _messages(prompt),
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":"), default=_plain)


def _digest(request: str, sample: int) -> str:
    """The key of a request's ``sample``, from its digest (its :func:`_sha256`)."""
    return _sha256(f"{request}:{sample}")


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def parameters_of(runnable: Runnable[Any, Any]) -> dict[str, Any]:
    """What a runnable sends besides the messages that changes the reply.

    The keyword arguments it is bound with (``response_format``, ``tools``,
    ``tool_choice``...; the outer binding's win) over the chat model's identifying
    parameters (its model name, temperature, token cap...: never its key or client).

    Args:
        runnable: A chat model, or a binding of one.

    Returns:
        The parameters.
    """
    bound: dict[str, Any] = {}
    while isinstance(runnable, RunnableBinding):
        bound = {**runnable.kwargs, **bound}
        runnable = runnable.bound
    model = dict(runnable._identifying_params) if isinstance(runnable, BaseLanguageModel) else {}
    return {**model, **bound}


def _messages(prompt: Any) -> Any:
    """The messages as the endpoint reads them (roles, content, tool calls; no ids)."""
    if isinstance(prompt, Sequence) and not isinstance(prompt, str):
        return convert_to_openai_messages(list(prompt))
    return convert_to_openai_messages(prompt)


def _plain(value: Any) -> Any:
    """A value JSON cannot write, as something stable it can."""
    if isinstance(value, type) and issubclass(value, BaseModel):
        return value.model_json_schema()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, BaseMessage):
        return dumpd(value)
    return f"{type(value).__module__}.{type(value).__qualname__}"


@dataclass
class _Scope:
    """A run's cache and how many of each request its threads made (the sample index)."""

    cache: ResponseCache
    made: dict[tuple[str | None, str], int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def sample(self, thread: str | None, request: str) -> int:
        with self.lock:
            index = self.made.get((thread, request), 0)
            self.made[(thread, request)] = index + 1
            return index


_SCOPE: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar(
    "debategraph_response_cache", default=None
)


def active_cache() -> ResponseCache | None:
    """The response cache the calls made here use (``None``: none)."""
    scope = _SCOPE.get()
    return None if scope is None else scope.cache


@contextmanager
def caching(cache: ResponseCache | None) -> Iterator[ResponseCache | None]:
    """Answer the calls made inside (threads and tasks started inside too) from ``cache``.

    Each ``caching`` counts its requests' samples from 0: a run inside it asks for the
    same samples as the run before it did.

    Args:
        cache: The cache, or ``None`` (no cache: a no-op).

    Yields:
        The cache.
    """
    token = _SCOPE.set(None if cache is None else _Scope(cache))
    try:
        yield cache
    finally:
        _SCOPE.reset(token)


@contextmanager
def cached_run(path: str | Path | None) -> Iterator[ResponseCache | None]:
    """Open the cache at ``path`` and answer the calls made inside from it; close it after.

    Args:
        path: ``--cache`` (``None``: no cache, a no-op).

    Yields:
        The cache, or ``None``.

    Raises:
        UsageError: If ``path`` is not a cache (see :func:`open_cache`), before anything
            inside runs.
    """
    if path is None:
        yield None
        return
    with open_cache(path) as cache, caching(cache):
        yield cache


@dataclass(frozen=True)
class CachedRequest:
    """A request looked up in the run's cache.

    Attributes:
        reply: The reply kept for it (``None``: a miss, to be called).
        key: Its key.
        model: The model's label.
        cache: The cache.
    """

    reply: AIMessage | None
    key: str
    model: str
    cache: ResponseCache

    def keep(self, reply: Any) -> None:
        """Keep the reply a miss was answered with (only a message is kept).

        A reply the file cannot take (locked past its busy timeout, a full disk) is not
        kept, with a warning: the call it answered stands.
        """
        if not isinstance(reply, BaseMessage):
            return
        try:
            self.cache.put(self.key, self.model, reply)
        except sqlite3.Error as exc:
            _log.warning("--cache %s: a reply was not kept: %s", self.cache.path, exc)


def cached_request(
    model: str, endpoint: str, runnable: Runnable[Any, Any], prompt: Any
) -> CachedRequest | None:
    """Look a call up in the run's cache, as its next sample (``None``: no cache).

    Args:
        model: The model's label.
        endpoint: Its endpoint.
        runnable: What is called.
        prompt: Its messages.

    Returns:
        The request, its reply where one is kept; ``None`` outside :func:`caching`.
    """
    scope = _SCOPE.get()
    if scope is None:
        return None
    request = _sha256(_request(model, endpoint, runnable, prompt))
    key = _digest(request, scope.sample(_thread_id(), request))
    try:
        reply = scope.cache.get(key)
    except sqlite3.Error as exc:  # the call is made, as without a cache
        _log.warning("--cache %s: a reply could not be read: %s", scope.cache.path, exc)
        reply = None
    return CachedRequest(reply, key, model, scope.cache)


def _thread_id() -> str | None:
    """The LangGraph thread this call is made in (``None``: outside a graph's run)."""
    try:
        config = get_config()
    except RuntimeError:
        return None
    thread = (config.get("configurable") or {}).get("thread_id")
    return None if thread is None else str(thread)
