"""List and read the threads stored in a checkpointer."""

from __future__ import annotations

import asyncio
import json
import math
import os
import socket
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from debategraph.registry import current_settings

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.pregel import Pregel
    from langgraph.store.base import BaseStore

#: Checkpoint-metadata key under which a run's settings are stored (a JSON string).
RUN_METADATA_KEY = "debategraph"

#: Checkpoint-metadata keys naming the process that wrote a checkpoint.
PID_KEY = "debategraph_pid"
HOST_KEY = "debategraph_host"
#: Checkpoint-metadata key: when the run that wrote a checkpoint started (unix time). Each
#: invoke or resume is a run of its own; a thread's wall time sums its runs' spans.
RUN_STARTED = "debategraph_run"

ThreadStatus = Literal["running", "interrupted", "waiting", "finished", "failed"]


@dataclass(frozen=True)
class RunInfo:
    """What a thread was started with, read back from checkpoint metadata.

    Attributes:
        pattern: Which graph (``solver_debate``...).
        settings: The graph factory's keyword arguments.
        model: The model spec's fields (no API key).
    """

    pattern: str
    settings: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)

    def to_metadata(self) -> dict[str, str | int | float]:
        """Encode for ``config["metadata"]`` (LangGraph keeps only scalar values there).

        Also records which process writes the checkpoints, so another process can tell a
        running thread from one that stopped, and when this run started
        (:data:`RUN_STARTED`): call it once per invoke or resume. LangGraph copies these
        entries into every checkpoint's metadata; the SQLite saver ``open_checkpointer``
        opens stores the settings once per file, referenced from each checkpoint, and
        expands them again when it reads a checkpoint.

        Returns:
            The metadata entries.
        """
        payload = {"pattern": self.pattern, "settings": self.settings, "model": self.model}
        return {
            RUN_METADATA_KEY: json.dumps(payload, sort_keys=True),
            PID_KEY: os.getpid(),
            HOST_KEY: socket.gethostname(),
            RUN_STARTED: round(time.time(), 3),
        }

    @classmethod
    def from_metadata(cls, metadata: dict[str, Any] | None) -> RunInfo | None:
        """Decode what :meth:`to_metadata` wrote.

        Args:
            metadata: A checkpoint's metadata.

        Returns:
            The run info, or ``None`` if the checkpoint was not written by the CLI (or
            holds a reference to settings stored once that its saver did not expand:
            a saver other than ours reading our file).
        """
        raw = (metadata or {}).get(RUN_METADATA_KEY)
        if not isinstance(raw, str):
            return None
        try:
            data = json.loads(raw)
        except ValueError:  # a reference to settings stored once, not expanded
            return None
        if not isinstance(data, dict) or "pattern" not in data:
            return None
        pattern = str(data["pattern"])
        settings = current_settings(pattern, data.get("settings", {}))
        return cls(pattern, settings, dict(data.get("model", {})))


@dataclass(frozen=True)
class ThreadSummary:
    """One row of ``debategraph threads``."""

    thread_id: str
    run: RunInfo | None
    step: int
    updated: str


def thread_config(thread_id: str) -> RunnableConfig:
    """The config addressing a thread's latest checkpoint.

    Args:
        thread_id: The thread.

    Returns:
        The config.
    """
    return {"configurable": {"thread_id": thread_id}}


def list_threads(saver: BaseCheckpointSaver[Any]) -> list[ThreadSummary]:
    """Every root thread in the store, newest activity first.

    Args:
        saver: The checkpointer.

    Returns:
        One summary per thread (from its latest checkpoint).
    """
    runs: dict[str, RunInfo | None] = {}
    latest: dict[str, ThreadSummary] = {}
    for tup in saver.list(None):  # newest first within each thread
        conf = tup.config["configurable"]
        tid = str(conf["thread_id"])
        if conf.get("checkpoint_ns"):
            continue
        if tid not in latest:
            latest[tid] = ThreadSummary(
                thread_id=tid,
                run=None,
                step=int((tup.metadata or {}).get("step", -1)),
                updated=str(tup.checkpoint.get("ts", "")),
            )
        if runs.get(tid) is None:  # the newest checkpoint that names the run
            runs[tid] = RunInfo.from_metadata(dict(tup.metadata or {}))
    summaries = [replace(s, run=runs.get(s.thread_id)) for s in latest.values()]
    return sorted(summaries, key=lambda s: s.updated, reverse=True)


def read_run(saver: BaseCheckpointSaver[Any], thread_id: str) -> RunInfo | None:
    """The run info of a thread's latest checkpoint.

    Args:
        saver: The checkpointer.
        thread_id: The thread.

    Returns:
        The run info; ``None`` if the thread does not exist or was not started by the CLI.
    """
    # The latest checkpoint normally carries it; one written by ``update_state`` (an
    # interjection from Studio, say) may not, so look further back.
    # Close the generator when done: SqliteSaver holds its lock while a list is open.
    tuples = saver.list(thread_config(thread_id))
    try:
        for tup in tuples:
            run = RunInfo.from_metadata(dict(tup.metadata or {}))
            if run is not None:
                return run
    finally:
        close = getattr(tuples, "close", None)
        if close is not None:
            close()
    return None


#: Checkpoint metadata key: the time (ISO 8601) of a thread's first checkpoint, noted by
#: ``prune`` before this version; read for threads written without :data:`RUN_STARTED`.
THREAD_STARTED = "debategraph_thread_started"
#: Checkpoint metadata key: the thread's wall time (seconds), noted by ``prune`` on the
#: oldest checkpoint it keeps, so the runs whose checkpoints it deleted still count.
THREAD_WALL = "debategraph_thread_wall"
#: Checkpoint metadata key: the thread a checkpoint was copied from by ``fork``; a copied
#: checkpoint is the origin's history, none of the fork's runs.
COPIED_FROM = "debategraph_copied_from"
#: The store namespace under which the end of each run that stopped early (failed or
#: interrupted, after its last checkpoint) is noted: ``(..., <thread id>)``, key the run.
RUN_ENDS = ("debategraph", "run_ends")


def wall_time(
    stamps: Iterable[tuple[object, Mapping[str, Any]]], ends: Mapping[float, float]
) -> float:
    """The time a thread ran: the sum of its runs' spans, without the gaps between them.

    A run is one invoke or resume: its checkpoints carry its start (:data:`RUN_STARTED`);
    it spans from that start to its last checkpoint, or to its noted end (``ends``)
    where it stopped early after that. Checkpoints written by ``update_state`` (an
    interjection, an eval's verdict) or copied by ``fork`` from another thread are no
    run's. Checkpoints written before runs were stamped count as one run, from the first
    of them to the last (:data:`THREAD_STARTED` standing for the first once pruned).

    Args:
        stamps: Each root checkpoint's time (ISO 8601, as LangGraph writes ``ts``) and
            metadata, any order.
        ends: Run start -> unix time it stopped, for runs that stopped early.

    Returns:
        Seconds (0.0 for a thread with no run).
    """
    noted: float | None = None
    runs: dict[float, float] = {}
    unstamped: list[datetime] = []
    for ts, metadata in stamps:
        if metadata.get(COPIED_FROM) is not None:
            continue
        wall = metadata.get(THREAD_WALL)
        if isinstance(wall, int | float):
            noted = max(noted or 0.0, float(wall))
        if metadata.get("source") == "update":
            continue
        stamp = _timestamp(ts)
        started = metadata.get(RUN_STARTED)
        if not isinstance(started, int | float):
            moments = (stamp, _timestamp(metadata.get(THREAD_STARTED)))
            unstamped += [moment for moment in moments if moment is not None]
        elif stamp is not None:
            runs[float(started)] = max(runs.get(float(started), started), stamp.timestamp())
    if noted is not None:  # pruned: the thread finished, the note holds all its runs
        return noted
    for started, ended in ends.items():
        runs[started] = max(runs.get(started, started), ended)
    total = math.fsum(max(0.0, last - first) for first, last in runs.items())
    if len(unstamped) >= 2:
        total += (max(unstamped) - min(unstamped)).total_seconds()
    return total


def thread_wall_time(
    saver: BaseCheckpointSaver[Any], thread_id: str, store: BaseStore | None = None
) -> float:
    """The time a thread ran, in seconds (:func:`wall_time` of its checkpoints).

    The one wall time every command shows for a thread (a run's result, ``show``,
    ``export``, the archive): it is read from the checkpoints (and the run ends noted in
    the store), so it is the same whichever process asks. Time a thread spent stopped or
    waiting between runs does not count; a fork counts only its own runs. Pruning notes
    the thread's wall time on the oldest checkpoint it keeps (:data:`THREAD_WALL`).

    Args:
        saver: The checkpointer.
        thread_id: The thread.
        store: The store of the same database, where the ends of runs that stopped early
            are noted (:func:`note_run_end`); ``None``: none counted.

    Returns:
        Seconds (0.0 for a thread that never ran, or none).
    """
    stamps: list[tuple[object, Mapping[str, Any]]] = []
    # Close the generator when done: SqliteSaver holds its lock while a list is open.
    tuples = saver.list(thread_config(thread_id))
    try:
        for tup in tuples:
            if tup.config["configurable"].get("checkpoint_ns"):
                continue  # a subgraph's
            stamps.append((tup.checkpoint.get("ts"), dict(tup.metadata or {})))
    finally:
        close = getattr(tuples, "close", None)
        if close is not None:
            close()
    return wall_time(stamps, run_ends(store, thread_id) if store is not None else {})


def note_run_end(store: BaseStore, thread_id: str, config: RunnableConfig) -> None:
    """Note that the run of ``config`` stopped now (failed or interrupted).

    Its last checkpoint may be long before: the step it was running when it stopped
    (a call timing out, retried) wrote none.

    Args:
        store: The store of the thread's database.
        thread_id: The thread.
        config: The config the run was started with (its metadata names the run).
    """
    started = (config.get("metadata") or {}).get(RUN_STARTED)
    if isinstance(started, int | float):
        value = {"started": float(started), "ended": round(time.time(), 3)}
        store.put(_run_ends_namespace(thread_id), repr(float(started)), value, index=False)


def run_ends(store: BaseStore, thread_id: str) -> dict[float, float]:
    """The ends :func:`note_run_end` noted for a thread's runs.

    Args:
        store: The store.
        thread_id: The thread.

    Returns:
        Run start -> unix time it stopped.
    """
    ends: dict[float, float] = {}
    for item in store.search(_run_ends_namespace(thread_id), limit=10_000):
        started, ended = item.value.get("started"), item.value.get("ended")
        if isinstance(started, int | float) and isinstance(ended, int | float):
            ends[float(started)] = float(ended)
    return ends


def _run_ends_namespace(thread_id: str) -> tuple[str, ...]:
    return (*RUN_ENDS, namespace_label(thread_id))


def namespace_label(thread_id: str) -> str:
    """A thread id as a store namespace label (which may hold no ``.``).

    It is written with ``%``-escapes for ``%`` and ``.``: one id, one label.

    Args:
        thread_id: The thread.

    Returns:
        The label.
    """
    return thread_id.replace("%", "%25").replace(".", "%2E")


def _timestamp(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def thread_exists(saver: BaseCheckpointSaver[Any], thread_id: str) -> bool:
    """Whether any checkpoint exists for ``thread_id``.

    Args:
        saver: The checkpointer.
        thread_id: The thread.

    Returns:
        True if it exists.
    """
    return saver.get_tuple(thread_config(thread_id)) is not None


@dataclass(frozen=True)
class ThreadState:
    """Where a thread stands.

    Attributes:
        status: ``running`` (its process is alive), ``interrupted`` (stopped; resumable),
            ``waiting`` (an interrupt awaits a human), ``finished`` or ``failed`` (a task
            raised; resumable once the cause is fixed).
        round: The round it reached (``None`` if it has none).
        pending: Nodes still to run in the current step.
        done: Nodes of the current step whose results are saved.
        error: The error of a failed task, if any.
        pid: The process that wrote its latest checkpoint, if recorded.
        boundary: The pattern's round-boundary nodes (see ``thread_state``).
    """

    status: ThreadStatus
    round: int | None
    pending: tuple[str, ...]
    done: tuple[str, ...]
    error: str | None = None
    pid: int | None = None
    boundary: frozenset[str] = frozenset()

    @property
    def at_round_boundary(self) -> bool:
        """Whether the thread stopped between rounds (nothing of a round half done)."""
        return not self.done and set(self.pending) <= self.boundary

    def where(self) -> str:
        """Human-readable position, e.g. ``round 2, pending solver_3``."""
        parts = [f"round {self.round}"] if self.round is not None else []
        if self.pending:
            parts.append("next " + ", ".join(self.pending))
        if self.error:
            parts.append(self.error)
        return "; ".join(parts) or "-"


def thread_state(
    graph: Pregel[Any, Any, Any, Any], thread_id: str, boundary: frozenset[str] = frozenset()
) -> ThreadState:
    """Where a thread stands, from its latest state snapshot and checkpoint metadata.

    Args:
        graph: The compiled graph (with the thread's checkpointer).
        thread_id: The thread.
        boundary: The nodes a thread of this pattern waits at between rounds (the
            pattern says which); a thread whose next nodes are all among them stopped
            at a round boundary.

    Returns:
        The thread's state.
    """
    snap = graph.get_state(thread_config(thread_id))
    metadata = dict(snap.metadata or {})
    pid = metadata.get(PID_KEY)
    pid = pid if isinstance(pid, int) else None
    # Not ``snap.next``: it omits tasks whose writes were saved, so a run stopped after
    # every task of a step finished (but before the next step) would look finished.
    pending = tuple(t.name for t in snap.tasks if t.result is None)  # failed ones re-run
    done = tuple(t.name for t in snap.tasks if t.result is not None)
    # A task cancelled by an interrupt (Ctrl-C, a stop) saved a CancelledError: no failure.
    errors = [t.error for t in snap.tasks if t.error and not _cancelled(t.error)]
    values = snap.values if isinstance(snap.values, dict) else {}
    rnd = values.get("round")
    status: ThreadStatus
    if not snap.tasks:
        status = "finished"
    elif snap.interrupts:
        status = "waiting"
    elif writer_elsewhere(metadata) is not None:
        status = "running"
    elif errors:
        status = "failed"
    else:
        status = "interrupted"
    error = _error_text(errors[0]) if errors else None
    return ThreadState(
        status, rnd if isinstance(rnd, int) else None, pending, done, error, pid, boundary
    )


def _cancelled(error: object) -> bool:
    """Whether a task's saved error is a cancellation (stored as its repr by LangGraph)."""
    if isinstance(error, asyncio.CancelledError):
        return True
    return isinstance(error, str) and error.startswith("CancelledError(")


def thread_status(graph: Pregel[Any, Any, Any, Any], thread_id: str) -> ThreadStatus:
    """Shortcut for ``thread_state(graph, thread_id).status``.

    Args:
        graph: The compiled graph (with the thread's checkpointer).
        thread_id: The thread.

    Returns:
        The status.
    """
    return thread_state(graph, thread_id).status


def _error_text(error: object) -> str:
    """One line for a task's error (checkpointers may hand it back as its ``repr``)."""
    return " ".join(str(error).split())[:200]


def writer_elsewhere(metadata: Mapping[str, Any] | None) -> int | None:
    """Another live debategraph process on this host that wrote a checkpoint, if any.

    Args:
        metadata: The checkpoint's metadata (:meth:`RunInfo.to_metadata` names its writer).

    Returns:
        That process's id; ``None`` when this process wrote it, the writer is gone, is on
        another host, or is not named.
    """
    pid = (metadata or {}).get(PID_KEY)
    host = (metadata or {}).get(HOST_KEY)
    if not isinstance(pid, int) or pid == os.getpid() or host != socket.gethostname():
        return None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return pid if b"debategraph" in cmdline else None
