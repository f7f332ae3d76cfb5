"""One thread of any pattern, its graph compiled once: record, drive, read, start or resume.

A :class:`Run` is a thread's pattern and settings (its
:class:`~debategraph.checkpoints.threads.RunInfo`) with the graph built and compiled
once, on the thread's checkpointer (and the store that holds the inboxes, where it runs).
Every face runs threads through it: the CLI drives one with a human at its pauses
(:meth:`Run.drive`), the eval starts, resumes or reads back many at once
(:meth:`Run.complete`). A face renders; what a run does is decided here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from debategraph import registry
from debategraph.checkpoints.threads import (
    RunInfo,
    ThreadState,
    note_run_end,
    read_run,
    thread_config,
    thread_exists,
    thread_state,
    writer_elsewhere,
)
from debategraph.errors import CostLimitReached, ModelUnavailableError, UsageError
from debategraph.models.choice import run_binding
from debategraph.models.context import Context
from debategraph.models.money import Budget, spending
from debategraph.models.spec import ModelSpec
from debategraph.nodes.rounds import BOUNDARY_NODES
from debategraph.runs.start import build_graph

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.graph import StateGraph
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.store.base import BaseStore
    from langgraph.types import StreamMode

    Graph = CompiledStateGraph[Any, Any, Any, Any]

#: Called with each ``(mode, chunk)`` a run streams (a face's progress display).
OnChunk = Callable[[str, Any], None]
#: Asked at a pause with its payload: the reply to resume with, or ``None`` to stop there.
Ask = Callable[[Mapping[str, Any]], Any]
#: How :meth:`Run.complete` found a thread: started, resumed, or finished already.
Found = Literal["started", "resumed", "finished"]

T = TypeVar("T")


def run_on_loop(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, where an interrupt always ends it with ``KeyboardInterrupt``.

    ``asyncio.run`` turns Ctrl-C (and SIGTERM, which the CLI makes a Ctrl-C) into a
    cancel of ``main``, then into a ``KeyboardInterrupt``, except for a signal that lands
    as it installs its handler: it counts no interrupt then, and the cancel comes out as
    a bare ``CancelledError`` (a traceback, and no resumable thread named). Nothing else
    cancels the loop's main task, so here that error is the interrupt it stands for.

    Args:
        main: The coroutine (a run's stream, an eval's questions).

    Returns:
        What ``main`` returns.

    Raises:
        KeyboardInterrupt: On an interrupt, wherever it landed.
    """
    try:
        return asyncio.run(main)
    except asyncio.CancelledError:
        raise KeyboardInterrupt from None


def compile_graph(
    saver: BaseCheckpointSaver[Any],
    run: RunInfo,
    store: BaseStore | None = None,
    built: StateGraph[Any, Any, Any, Any] | None = None,
) -> Graph:
    """A thread's graph, compiled with its checkpointer (and store).

    Args:
        saver: The checkpointer.
        run: The thread's pattern and settings.
        store: The store that holds the threads' inboxes (``None``: a run reads none;
            reading and writing state needs none).
        built: The graph :func:`~debategraph.runs.start.build_graph` built already
            (``None``: built here).

    Returns:
        The compiled graph.
    """
    entry = registry.entry(run.pattern)
    # LangGraph's public way to extend the msgpack allowlist (for a pattern registered
    # after the saver was opened; the built-in ones are in it already)
    saver = saver.with_allowlist([(t.__module__, t.__name__) for t in entry.record_types()])
    builder = built if built is not None else build_graph(run.pattern, run.settings)
    graph: Graph = builder.compile(checkpointer=saver, store=store, name=entry.name)
    return graph


def require_run(saver: BaseCheckpointSaver[Any], thread: str, db: str) -> RunInfo:
    """The run info of a thread debategraph started.

    Args:
        saver: The checkpointer.
        thread: The thread id.
        db: The database (for the message).

    Returns:
        The run info.

    Raises:
        UsageError: If the thread is unknown or was not started by debategraph.
    """
    run = read_run(saver, thread)
    if run is None:
        if thread_exists(saver, thread):
            raise UsageError(f"thread {thread} in {db} was not started by debategraph")
        raise UsageError(f"unknown thread id {thread!r} in {db}: see debategraph threads --db {db}")
    return run


@dataclass(frozen=True)
class Completed:
    """A thread :meth:`Run.complete` ran to its end, or read back.

    Attributes:
        found: How it was found: ``started``, ``resumed`` or ``finished``.
        values: Its state values at the end (its transcript too).
        wall_s: Seconds this call took to run a thread it started (``None`` for one it
            resumed or read back: its checkpoints say).
    """

    found: Found
    values: dict[str, Any]
    wall_s: float | None


class Run:
    """A thread's pattern and settings, its graph compiled once on its checkpointer.

    Args:
        saver: The checkpointer of the thread's database.
        info: The thread's pattern and settings (stored with it).
        store: The store of the same database, whose inboxes a run reads at each round
            boundary and where the end of a run stopped early is noted (``None``: none).
        max_concurrency: The most tasks a step runs at once (``None``: LangGraph's).
        model: The model each run's context names, for a graph built without one (as
            LangGraph Studio and ``serve`` run it): ``None``, the context's default.
        built: The graph, built already (:func:`~.start.build_graph`: a new run's settings
            were checked by building it), compiled here rather than built again.
        max_cost: The most each :meth:`drive` may spend on priced calls (``--max-cost``;
            :mod:`debategraph.models.money`); ``None``: no limit.
    """

    def __init__(
        self,
        saver: BaseCheckpointSaver[Any],
        info: RunInfo,
        *,
        store: BaseStore | None = None,
        max_concurrency: int | None = None,
        model: ModelSpec | None = None,
        built: StateGraph[Any, Any, Any, Any] | None = None,
        max_cost: float | None = None,
    ) -> None:
        self.saver = saver
        self.info = info
        self.max_cost = max_cost
        self.max_concurrency = max_concurrency
        #: The nodes a thread of the pattern waits at between rounds (its description's,
        #: else the shared round loop's).
        self.boundary = registry.described(info.pattern).boundary_nodes or BOUNDARY_NODES
        self.context = None if model is None else Context(**asdict(model))
        self.graph = compile_graph(saver, info, store, built)

    @classmethod
    def reading(cls, saver: BaseCheckpointSaver[Any], info: RunInfo, thread_id: str) -> Run:
        """A stored thread's run to read (and write) its state: no model, key or tool.

        Its graph is built for reading (:func:`~.start.build_graph` with ``reading``):
        the agents' models, key variables, tools and own agents are not loaded, so
        every thread tool that reads (``threads``, ``show``, ``history``, ``export``,
        ``view``...) works without the keys or endpoints its run used.

        Args:
            saver: The checkpointer of the thread's database.
            info: The thread's pattern and settings (stored with it).
            thread_id: The thread (for the message).

        Returns:
            The run.

        Raises:
            UsageError: If its stored settings no longer build a graph (one line).
        """
        try:
            built = build_graph(info.pattern, info.settings, reading=True)
        except ValueError as exc:
            raise UsageError(
                f"thread {thread_id}: its stored settings cannot be read: {exc}"
            ) from exc
        return cls(saver, info, built=built)

    def config(self, thread_id: str) -> RunnableConfig:
        """The config a run of the thread is invoked with.

        Args:
            thread_id: The thread.

        Returns:
            Its thread id, the run's concurrency and metadata (its pattern and settings).
        """
        config: RunnableConfig = {**thread_config(thread_id), "metadata": self.info.to_metadata()}
        if self.max_concurrency is not None:
            config["max_concurrency"] = self.max_concurrency
        return config

    def state(self, thread_id: str) -> ThreadState:
        """Where the thread stands (the one reading every thread tool shares).

        Args:
            thread_id: The thread.

        Returns:
            Its state.
        """
        return thread_state(self.graph, thread_id, boundary=self.boundary)

    def values(self, thread_id: str) -> dict[str, Any]:
        """The thread's latest state values.

        Args:
            thread_id: The thread.

        Returns:
            Its values (empty for a thread never run).
        """
        values = self.graph.get_state(thread_config(thread_id)).values
        return values if isinstance(values, dict) else {}

    def record(self, thread_id: str, graph_input: Any) -> None:
        """Record a new thread: its input saved, before any node runs.

        The thread then exists in the database, so a process killed at any later moment
        leaves a thread that a resume continues from its input.

        Args:
            thread_id: The new thread's id.
            graph_input: The graph's input.
        """
        import debategraph.models.calls  # noqa: F401  # the model stack loads before the clock starts

        self.graph.invoke(
            graph_input, self.config(thread_id), context=self.context, interrupt_before="*"
        )

    def drive(
        self,
        thread_id: str,
        graph_input: Any,
        *,
        modes: list[StreamMode],
        on_chunk: OnChunk,
        ask: Ask,
    ) -> Any:
        """Stream the thread until it finishes or waits with nobody to answer.

        Each stream is a run of its own (a human's pause between two is no run's time);
        one that stops early (a failing endpoint, an interrupt) has its end noted in the
        store, so the time its last step ran counts in the thread's wall time, and its
        error goes up. Each step is saved before the next starts (``durability="sync"``),
        so a process killed at any moment loses at most the step in progress.

        Args:
            thread_id: The thread.
            graph_input: ``None`` (continue), the input, or a ``Command``.
            modes: The stream modes.
            on_chunk: Called with each ``(mode, chunk)``.
            ask: Asked at each pause: the reply resumes the thread, ``None`` leaves it
                waiting.

        Returns:
            ``None`` if the thread finished, else the payload of the pause it waits at.

        Raises:
            ModelUnavailableError: If the endpoint fails (the thread stays resumable).
            CostLimitReached: Before a call that could pass ``max_cost`` (the thread
                stays resumable).
            KeyboardInterrupt: On an interrupt (the thread stays resumable).
        """
        from langgraph.types import Command

        if self.context is not None:
            # the run's model bound before its first step (the embedded server started, a
            # remote client made): a model that cannot start fails here, before any node
            run_binding(self.context)
        budget = None if self.max_cost is None else Budget(self.max_cost)
        while True:
            config = self.config(thread_id)
            try:
                with spending(budget):
                    run_on_loop(self._stream(graph_input, config, modes, on_chunk))
            except (ModelUnavailableError, CostLimitReached, KeyboardInterrupt):
                if self.graph.store is not None:
                    note_run_end(self.graph.store, thread_id, config)
                raise
            if self.state(thread_id).status != "waiting":
                return None
            payload = self.graph.get_state(thread_config(thread_id)).interrupts[0].value
            reply = ask(payload)
            if reply is None:
                return payload
            graph_input = Command(resume=reply)

    async def _stream(
        self, graph_input: Any, config: RunnableConfig, modes: list[StreamMode], on_chunk: OnChunk
    ) -> None:
        """Stream a run on the event loop: a step's model calls are all in flight at once."""
        async for mode, chunk in self.graph.astream(
            graph_input, config, context=self.context, stream_mode=modes, durability="sync"
        ):
            on_chunk(mode, chunk)

    async def complete(self, thread_id: str, graph_input: Any) -> Completed:
        """Run the thread to its end: start it, resume it, or read it back if finished.

        Args:
            thread_id: The thread.
            graph_input: Its input (used only where it was never started).

        Returns:
            How it was found, its values and the seconds this call ran it.

        Raises:
            UsageError: If another live process is running the thread.
            ModelUnavailableError: If the endpoint fails (the thread stays resumable).
        """
        config = self.config(thread_id)
        snap = await self.graph.aget_state(config)
        found: Found
        if not snap.values:
            found = "started"
        elif snap.tasks:
            # Not ``snap.next``: a run stopped after a step's tasks all saved their
            # writes has tasks left to apply, and no ``next``.
            pid = writer_elsewhere(snap.metadata)
            if pid is not None:
                raise UsageError(
                    f"thread {thread_id} is being run by process {pid} (the same eval "
                    "running twice?): wait for it, or stop it, then rerun"
                )
            found, graph_input = "resumed", None
        else:
            return Completed("finished", dict(snap.values), None)
        if self.context is not None:
            # bound off the event loop: the embedded server may start (a thread read back
            # above starts nothing)
            await asyncio.to_thread(run_binding, self.context)
        started = time.perf_counter()
        await self.graph.ainvoke(graph_input, config, context=self.context, durability="sync")
        wall_s = time.perf_counter() - started if found == "started" else None
        values = (await self.graph.aget_state(config)).values  # the state: its transcript too
        return Completed(found, dict(values), wall_s)
