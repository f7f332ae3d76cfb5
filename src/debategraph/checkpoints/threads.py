"""List and read the threads stored in a checkpointer."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel

#: Checkpoint-metadata key under which a run's settings are stored (a JSON string).
RUN_METADATA_KEY = "debategraph"

ThreadStatus = Literal["finished", "failed", "waiting", "interrupted"]


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

    def to_metadata(self) -> dict[str, str]:
        """Encode for ``config["metadata"]`` (LangGraph keeps only scalar values there).

        Returns:
            The metadata entry.
        """
        payload = {"pattern": self.pattern, "settings": self.settings, "model": self.model}
        return {RUN_METADATA_KEY: json.dumps(payload, sort_keys=True)}

    @classmethod
    def from_metadata(cls, metadata: dict[str, Any] | None) -> RunInfo | None:
        """Decode what :meth:`to_metadata` wrote.

        Args:
            metadata: A checkpoint's metadata.

        Returns:
            The run info, or ``None`` if the checkpoint was not written by the CLI.
        """
        raw = (metadata or {}).get(RUN_METADATA_KEY)
        if not isinstance(raw, str):
            return None
        data = json.loads(raw)
        return cls(data["pattern"], dict(data.get("settings", {})), dict(data.get("model", {})))


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
    seen: dict[str, ThreadSummary] = {}
    for tup in saver.list(None):
        conf = tup.config["configurable"]
        tid = str(conf["thread_id"])
        if conf.get("checkpoint_ns") or tid in seen:
            continue
        seen[tid] = ThreadSummary(
            thread_id=tid,
            run=RunInfo.from_metadata(dict(tup.metadata or {})),
            step=int((tup.metadata or {}).get("step", -1)),
            updated=str(tup.checkpoint.get("ts", "")),
        )
    return sorted(seen.values(), key=lambda s: s.updated, reverse=True)


def read_run(saver: BaseCheckpointSaver[Any], thread_id: str) -> RunInfo | None:
    """The run info of a thread's latest checkpoint.

    Args:
        saver: The checkpointer.
        thread_id: The thread.

    Returns:
        The run info; ``None`` if the thread does not exist or was not started by the CLI.
    """
    tup = saver.get_tuple(thread_config(thread_id))
    return None if tup is None else RunInfo.from_metadata(dict(tup.metadata or {}))


def thread_exists(saver: BaseCheckpointSaver[Any], thread_id: str) -> bool:
    """Whether any checkpoint exists for ``thread_id``.

    Args:
        saver: The checkpointer.
        thread_id: The thread.

    Returns:
        True if it exists.
    """
    return saver.get_tuple(thread_config(thread_id)) is not None


def thread_status(graph: Pregel[Any, Any, Any, Any], thread_id: str) -> ThreadStatus:
    """Where a thread stands, from its latest state snapshot.

    Args:
        graph: The compiled graph (with the thread's checkpointer).
        thread_id: The thread.

    Returns:
        ``finished`` (nothing left to run), ``failed`` (a task raised), ``waiting``
        (an interrupt awaits a human) or ``interrupted`` (stopped mid-run; resumable).
    """
    snap = graph.get_state(thread_config(thread_id))
    # Not ``snap.next``: it omits tasks whose writes were saved, so a run stopped after
    # every task of a step finished (but before the next step) would look finished.
    if not snap.tasks:
        return "finished"
    if any(task.error for task in snap.tasks):
        return "failed"
    if snap.interrupts:
        return "waiting"
    return "interrupted"
