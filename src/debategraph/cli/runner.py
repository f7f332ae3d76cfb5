"""Running a thread of any pattern: start, stream, pause, finish, archive.

Every run is durable: its thread is recorded in the checkpoint database (its input and
settings) before its id is printed, so a kill at any moment after that leaves a thread
``debategraph resume`` continues. The checks of a run's agents and their models are in
:mod:`~debategraph.cli.agent_models`, the result a run prints in
:mod:`~debategraph.cli.results`.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from rich.markup import escape

from debategraph import registry
from debategraph.checkpoints import inbox
from debategraph.checkpoints.threads import (
    RunInfo,
    ThreadState,
    note_run_end,
    read_run,
    thread_config,
    thread_exists,
    thread_state,
)
from debategraph.cli import interrupts
from debategraph.cli.agent_models import own_agents, own_specs, refuse_tools_on_embedded
from debategraph.cli.human import close_inbox
from debategraph.cli.options import ARCHIVE_SUFFIX, POSTGRES_ARCHIVE
from debategraph.cli.patterns import get_pattern
from debategraph.cli.patterns.declaration import Launch, Pattern
from debategraph.cli.render import emit_json, err, model_label, print_result
from debategraph.cli.results import result_of, thread_wall
from debategraph.cli.served import check_served
from debategraph.errors import DebategraphError, ModelUnavailableError, UsageError
from debategraph.models.spec import ModelSpec
from debategraph.nodes.rounds import APPROVE, INTERJECT

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.store.base import BaseStore
    from langgraph.types import StreamMode

    Graph = CompiledStateGraph[Any, Any, Any, Any]

# cli/evaluate.py imports these from here (the checks before a run are in agent_models)
__all__ = [
    "Runner",
    "check_concurrency",
    "compile_graph",
    "default_archive",
    "launch",
    "own_specs",
    "refuse_tools_on_embedded",
    "require_run",
    "spec_record",
    "validate_settings",
]


def default_archive(db: str) -> str:
    """Where finished debates of ``--db`` are archived unless ``--archive`` says otherwise.

    Args:
        db: The ``--db`` value.

    Returns:
        ``x.sqlite`` -> ``x-archive.sqlite``; a Postgres URL -> ``debates-archive.sqlite``.
    """
    from debategraph.checkpoints.savers import is_postgres_url, sqlite_path

    if is_postgres_url(db):
        return POSTGRES_ARCHIVE
    path = sqlite_path(db)
    return str(path.with_name(f"{path.stem}{ARCHIVE_SUFFIX}{path.suffix or '.sqlite'}"))


def check_concurrency(value: int | None) -> None:
    """Refuse a ``--max-concurrency`` below 1.

    Args:
        value: The option's value.

    Raises:
        UsageError: If it is below 1.
    """
    if value is not None and value < 1:
        raise UsageError(f"--max-concurrency {value} must be at least 1")


#: Settings whose CLI option is spelled otherwise: a factory's message names the option.
OPTION_OF = {"max_rounds": "--rounds"}


def validate_settings(pattern: Pattern, settings: Mapping[str, Any]) -> None:
    """Build (not compile) the pattern's graph once, so bad settings fail before a thread.

    Args:
        pattern: The pattern.
        settings: The factory's keyword arguments.

    Raises:
        UsageError: With the factory's one-line message.
    """
    try:
        registry.entry(pattern.name).build()(None, **settings)
    except ValueError as exc:
        message = str(exc)
        for setting, option in OPTION_OF.items():
            if message.startswith(f"{setting} "):
                message = option + message.removeprefix(setting)
        raise UsageError(message) from exc


def compile_graph(
    saver: BaseCheckpointSaver[Any],
    run: RunInfo,
    binding: Any = None,
    store: BaseStore | None = None,
) -> Graph:
    """A thread's graph, compiled with its checkpointer (and store).

    Args:
        saver: The checkpointer.
        run: The thread's pattern and settings.
        binding: The model (``None``: the graph reads it from the run's context).
        store: The store that holds the threads' inboxes (``None``: a run reads none;
            reading and writing state needs none).

    Returns:
        The compiled graph.
    """
    entry = registry.entry(run.pattern)
    # LangGraph's public way to extend the msgpack allowlist (for a pattern registered
    # after the saver was opened; the built-in ones are in it already)
    saver = saver.with_allowlist([(t.__module__, t.__name__) for t in entry.record_types()])
    graph: Graph = entry.build()(binding, **run.settings).compile(
        checkpointer=saver, store=store, name=entry.name
    )
    return graph


def require_run(saver: BaseCheckpointSaver[Any], thread: str, db: str) -> RunInfo:
    """The run info of a thread the CLI started.

    Args:
        saver: The checkpointer.
        thread: The thread id.
        db: The ``--db`` value (for the message).

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


def pattern_state(graph: Graph, thread: str, pattern_name: str) -> ThreadState:
    """Where a thread stands (the one reading ``show``, ``resume``, ``view``... share).

    Args:
        graph: The thread's compiled graph (:func:`compile_graph`).
        thread: The thread id.
        pattern_name: Its pattern, whose round-boundary nodes say where it may wait.

    Returns:
        Its state.
    """
    return thread_state(graph, thread, boundary=_boundary(get_pattern(pattern_name)))


def spec_record(spec: ModelSpec) -> dict[str, Any]:
    """A model spec as stored with a thread (without its API key).

    Args:
        spec: The spec.

    Returns:
        Its fields.
    """
    record = asdict(spec)
    record.pop("api_key", None)
    return record


def _interactive(json_output: bool) -> bool:
    return not json_output and sys.stdin.isatty() and sys.stderr.isatty()


def _ask(payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Ask the human at a round boundary: Enter approves, text interjects, q stops here."""
    err.print(f"[bold]{escape(str(payload.get('message', 'Paused.')))}[/bold]")
    try:
        text = err.input("[Enter] continue · type a message to interject · q to stop here: ")
    except EOFError:
        return None
    if text.strip().lower() == "q":
        return None
    return {INTERJECT: text} if text.strip() else {APPROVE: True}


class Runner:
    """Runs one thread of a pattern to its end, a pause or a failure, and reports it."""

    def __init__(
        self,
        saver: BaseCheckpointSaver[Any],
        run: RunInfo,
        spec: ModelSpec,
        db: str,
        max_concurrency: int | None,
        json_output: bool,
        archive: str | None,
        report: str | None = None,
    ) -> None:
        self.saver = saver
        self.report = report
        self.run_info = run
        self.db = db
        self.pattern = get_pattern(run.pattern)
        self.max_concurrency = max_concurrency or self.pattern.agents_per_round(run.settings)
        # The embedded model serves as many requests at once as the run makes of it: the
        # agents with models (or agents) of their own call elsewhere.
        slots = max(1, self.max_concurrency - len(own_agents(run.settings)))
        self.spec = replace(spec, slots=slots).validated() if spec.is_local else spec
        self.json_output = json_output
        self.archive = archive or default_archive(db)
        self.graph = compile_graph(saver, run)

    def _config(self, thread_id: str) -> RunnableConfig:
        return {
            **thread_config(thread_id),
            "max_concurrency": self.max_concurrency,
            "metadata": self.run_info.to_metadata(),
        }

    def start(self, thread_id: str, graph_input: dict[str, Any]) -> None:
        """Record a new thread (its input, before any node runs), then run it.

        The thread exists in the database before its id is printed, so a process killed
        at any later moment leaves a thread that ``resume`` continues from its input; an
        interrupt from then on names it (:mod:`~debategraph.cli.interrupts`).

        Args:
            thread_id: The new thread's id.
            graph_input: The graph's input.
        """
        import debategraph.models.calls  # noqa: F401  # the model stack loads before the clock starts

        try:
            self.graph.invoke(graph_input, self._config(thread_id), interrupt_before="*")
        except KeyboardInterrupt:
            if thread_exists(self.saver, thread_id):  # interrupted once it was recorded
                interrupts.resumable(thread_id, self.db)
            raise
        self.run(thread_id, None)

    def run(self, thread_id: str, graph_input: Any) -> None:
        """Stream the thread until it finishes, pauses or fails.

        The graph runs with the store of ``--db`` beside its checkpointer, so each round
        boundary reads what ``debategraph interject`` and ``debategraph stop`` sent the
        thread meanwhile; a finished thread's inbox is emptied.

        Args:
            thread_id: The thread.
            graph_input: ``None`` (continue) or a ``Command``.

        Raises:
            ModelUnavailableError: If the endpoint fails (the thread stays resumable).
        """
        interrupts.resumable(thread_id, self.db)
        err.print(
            f"thread [bold]{thread_id}[/bold] · db {escape(self.db)} · "
            f"model {escape(model_label(self.spec))} · "
            f"{self.pattern.describe(self.run_info.settings)}"
        )
        from debategraph.models import bind_model

        binding = bind_model(self.spec)
        with inbox.open_store(self.db) as store:
            graph = compile_graph(self.saver, self.run_info, binding, store)
            if not self._drive(graph, thread_id, graph_input):
                return
            values = self.graph.get_state(thread_config(thread_id)).values
            late = close_inbox(store, thread_id, values.get("transcript") or [])
        word = self.pattern.round_word
        for text in late:
            err.print(f"note: interjection came after the last {word}, not read: {escape(text)}")
        self.finish(thread_id)

    def _drive(self, graph: Graph, thread_id: str, graph_input: Any) -> bool:
        """Run the thread's graph until it finishes (True) or waits (False).

        Each stream is a run of its own (a human's pause between two is no run's time);
        one that stops early has its end noted in the graph's store, so the time its
        last step ran counts in the thread's wall time.
        """
        from debategraph.cli.render import Progress

        progress = Progress(self.pattern, stream_text=not self.json_output)
        modes: list[StreamMode] = ["updates", "messages"] if progress.stream_text else ["updates"]
        while True:
            config = self._config(thread_id)
            try:
                asyncio.run(_stream(graph, graph_input, config, modes, progress))
            except (ModelUnavailableError, KeyboardInterrupt) as exc:
                if graph.store is not None:
                    note_run_end(graph.store, thread_id, config)
                self._stopped_early(thread_id, exc)
            state = thread_state(graph, thread_id, boundary=_boundary(self.pattern))
            if state.status != "waiting":
                break
            payload = graph.get_state(thread_config(thread_id)).interrupts[0].value
            reply = _ask(payload) if _interactive(self.json_output) else None
            if reply is None:
                self._report_waiting(thread_id, payload)
                return False
            from langgraph.types import Command

            graph_input = Command(resume=reply)
        return True

    def _stopped_early(self, thread_id: str, exc: BaseException) -> NoReturn:
        """End a run the graph did not finish: one line with the resume command.

        The one place a reason a run stops early becomes its line, its exit code and (with
        ``--json``) its result; the thread stays resumable. An interrupt ends with
        :func:`~debategraph.cli.interrupts.exit_interrupted` (exit 130); a failing
        endpoint with its error (exit 1).

        Args:
            thread_id: The thread.
            exc: Why the run stopped.

        Raises:
            DebategraphError: The error, with the resume command (exit code its own).
        """
        if isinstance(exc, KeyboardInterrupt):
            interrupts.exit_interrupted()
        if self.json_output:
            result = self._result(thread_id)
            emit_json({**result, "termination_reason": "error", "error": str(exc)})
        resume = interrupts.resume_command(thread_id, self.db)
        error = type(exc) if isinstance(exc, DebategraphError) else ModelUnavailableError
        raise error(f"{exc}; thread {thread_id} is resumable: {resume}") from exc

    def finish(self, thread_id: str) -> None:
        """Archive a finished thread, write its report (if any) and print its result.

        Args:
            thread_id: The thread.

        Raises:
            UsageError: If the archive or the report cannot be written (the checkpoints
                are intact).
        """
        from debategraph.checkpoints.archive import archive_debate

        interrupts.resumable(thread_id, self.db)  # resuming a finished thread re-archives it
        values = self.graph.get_state(thread_config(thread_id)).values
        wall_s = thread_wall(self.saver, self.db, thread_id)
        result = result_of(self.pattern, thread_id, values, wall_s)
        path = self._write_report(thread_id, values)
        if path is not None:
            result["report_file"] = str(path)
        try:
            archive_debate(
                self.archive,
                thread_id=thread_id,
                pattern=self.pattern,
                values=values,
                status="finished",
                wall_s=wall_s,
            )
        except UsageError as exc:
            print_result(self.pattern, result, self.json_output)
            raise UsageError(
                f"{exc} (the debate itself is saved in {self.db}, thread {thread_id})"
            ) from exc
        print_result(self.pattern, result, self.json_output, db=self.db)

    def _write_report(self, thread_id: str, values: Mapping[str, Any]) -> Path | None:
        spec = self.pattern.report
        if spec is None:
            return None
        text = spec.render(values, self.pattern.title(values))
        if text is None:
            return None
        path = Path(self.report or spec.default_name.format(thread_id=thread_id))
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--report {path}: cannot write: {exc.strerror}") from exc
        return path

    def _result(self, thread_id: str) -> dict[str, Any]:
        values = self.graph.get_state(thread_config(thread_id)).values
        wall_s = thread_wall(self.saver, self.db, thread_id)
        return result_of(self.pattern, thread_id, values, wall_s)

    def _report_waiting(self, thread_id: str, payload: Any) -> None:
        hint = f"{interrupts.resume_command(thread_id, self.db)} --approve | --interject TEXT"
        if self.json_output:
            result = self._result(thread_id)
            emit_json({**result, "status": "waiting", "interrupt": payload, "resume": hint})
            return
        err.print(f"thread {thread_id} is waiting after round {payload.get('round')}: {hint}")


async def _stream(
    graph: Graph, graph_input: Any, config: RunnableConfig, modes: list[StreamMode], progress: Any
) -> None:
    """Stream a run on the event loop: a step's model calls are all in flight at once.

    Each step is saved before the next starts (``durability="sync"``), so a process
    killed at any moment loses at most the step in progress.
    """
    async for mode, chunk in graph.astream(
        graph_input, config, stream_mode=modes, durability="sync"
    ):
        progress.show(mode, chunk)


def _boundary(pattern: Pattern) -> frozenset[str]:
    from debategraph.cli.render import boundary_nodes

    return boundary_nodes(pattern)


def launch(
    pattern: Pattern,
    launched: Launch,
    *,
    pause_after_round: bool,
    spec: ModelSpec,
    db: str,
    thread: str | None,
    max_concurrency: int | None,
    json_output: bool,
    archive: str | None,
    report: str | None = None,
) -> None:
    """Validate a new run's settings, open the database and run a new thread.

    Args:
        pattern: The pattern.
        launched: What its command made of the options.
        pause_after_round: The shared ``--pause-after-round``.
        spec: The model.
        db: ``--db``.
        thread: ``--thread`` (generated when ``None``).
        max_concurrency: ``--max-concurrency``.
        json_output: ``--json``.
        archive: ``--archive``.
        report: ``--report``, for patterns that write one.

    Raises:
        UsageError: On bad input (a model its endpoint does not serve, tools on the
            embedded model), before anything is written or called.
    """
    from debategraph.checkpoints.savers import open_checkpointer

    if thread is not None and not thread.strip():
        raise UsageError("--thread is empty: give a thread id or leave it out")
    check_concurrency(max_concurrency)
    settings = {**launched.settings, "pause_after_round": pause_after_round}
    refuse_tools_on_embedded(settings, spec)
    validate_settings(pattern, settings)
    check_served(own_specs(settings), spec)
    for note in launched.notes:
        err.print(f"note: {escape(note)}")
    run = RunInfo(pattern.name, settings, spec_record(spec))
    with open_checkpointer(db) as saver:
        thread_id = thread or uuid.uuid4().hex[:12]
        if thread_exists(saver, thread_id):
            raise UsageError(
                f"thread {thread_id} already exists in {db}: "
                f"continue it with debategraph resume {thread_id}"
            )
        runner = Runner(saver, run, spec, db, max_concurrency, json_output, archive, report)
        runner.start(thread_id, launched.input)
