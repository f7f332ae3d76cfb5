"""Checkpointers from a URL, and reading the threads they hold."""

from debategraph.checkpoints.inbox import open_store
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
