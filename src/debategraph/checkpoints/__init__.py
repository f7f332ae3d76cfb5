"""Checkpointers from a URL, and reading the threads they hold.

:func:`open_checkpointer` opens a SQLite file or a Postgres URL the way the CLI does
(compressed blobs, settings stored once, the records of every registered pattern
allowed); the names exported here are the documented API. The modules: ``savers``
(opening a ``--db`` value), ``backends`` (the saver classes it opens: the lean SQLite
saver, the threaded Postgres one), ``serde`` (the serializer), ``threads`` and
``thread_values`` (a thread's run, status and values), ``inbox`` (interjections and stop
requests, in LangGraph's store), ``maintenance`` (history, and what ``forking`` and
``pruning`` share), ``tables`` (the SQL on LangGraph's checkpoint tables, see
:mod:`debategraph.compat`), ``archive`` (a plain table of
finished threads), ``threaded`` (async methods on a thread of their own).
"""

from debategraph.checkpoints.inbox import inbox_item, inbox_namespace, open_store
from debategraph.checkpoints.savers import (
    DEFAULT_DB,
    check_sqlite_file,
    connect_sqlite,
    is_postgres_url,
    open_checkpointer,
    sqlite_path,
)
from debategraph.checkpoints.threads import (
    HOST_KEY,
    PID_KEY,
    RUN_METADATA_KEY,
    RunInfo,
    ThreadState,
    ThreadStatus,
    ThreadSummary,
    list_threads,
    read_run,
    thread_config,
    thread_exists,
    thread_state,
    thread_status,
)

__all__ = [
    "DEFAULT_DB",
    "HOST_KEY",
    "PID_KEY",
    "RUN_METADATA_KEY",
    "RunInfo",
    "ThreadState",
    "ThreadStatus",
    "ThreadSummary",
    "check_sqlite_file",
    "connect_sqlite",
    "inbox_item",
    "inbox_namespace",
    "is_postgres_url",
    "list_threads",
    "open_checkpointer",
    "open_store",
    "read_run",
    "sqlite_path",
    "thread_config",
    "thread_exists",
    "thread_state",
    "thread_status",
]
