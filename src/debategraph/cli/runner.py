"""Running a thread from the command line: its options checked, its run shown.

What a run does (its thread recorded, streamed, paused, resumed, finished) is
:mod:`debategraph.runs`'; this module turns the options into a run, asks the human at
its pauses, shows its progress and prints its result. Every run is durable: its thread
is recorded in the checkpoint database (its input and settings) before its id is
printed, so a kill at any moment after that leaves a thread ``debategraph resume``
continues.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from rich.markup import escape

from debategraph.checkpoints import inbox
from debategraph.checkpoints.threads import RunInfo, thread_exists
from debategraph.cli import interrupts
from debategraph.cli.patterns import get_pattern
from debategraph.cli.patterns.declaration import Pattern
from debategraph.cli.render import emit_json, err, models_label, print_result
from debategraph.errors import (
    CostLimitReached,
    DebategraphError,
    ModelUnavailableError,
    UsageError,
)
from debategraph.nodes.review import hitl_response, review_request
from debategraph.runs.finish import archive_thread, default_archive, thread_result
from debategraph.runs.human import close_inbox
from debategraph.runs.start import Checked, Launch
from debategraph.runs.thread import Run

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.types import StreamMode


#: Settings whose CLI option is spelled otherwise: a factory's message names the option.
OPTION_OF = {"max_rounds": "--rounds"}


def reader(saver: BaseCheckpointSaver[Any], run: RunInfo, thread_id: str) -> Run:
    """A thread's run to read and write its state (no model, no key, no store).

    Args:
        saver: The checkpointer.
        run: The thread's pattern and settings.
        thread_id: The thread (for messages).

    Returns:
        The run (:meth:`Run.reading <debategraph.runs.thread.Run.reading>`).
    """
    return Run.reading(saver, run, thread_id)


def _interactive(json_output: bool) -> bool:
    return not json_output and sys.stdin.isatty() and sys.stderr.isatty()


def _ask(payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Ask the human at a round boundary: Enter approves, text interjects, q stops here."""
    request = review_request(payload)
    err.print(f"[bold]{escape(request['description'] if request else 'Paused.')}[/bold]")
    try:
        text = err.input("[Enter] continue · type a message to interject · q to stop here: ")
    except EOFError:
        return None
    if text.strip().lower() == "q":
        return None
    return hitl_response("respond", text) if text.strip() else hitl_response("approve")


def _never(payload: Mapping[str, Any]) -> None:
    """Nobody answers a pause (``--json``, or no terminal): the thread waits."""


class Runner:
    """Runs one thread of a pattern to its end, a pause or a failure, and reports it.

    A context manager: entering opens the store of ``--db`` (whose inboxes the run reads
    at each round boundary) and compiles the run's graph, built once
    (:mod:`debategraph.runs.start`); :attr:`thread` reads and writes the thread's state
    with that same graph.
    """

    def __init__(
        self,
        saver: BaseCheckpointSaver[Any],
        checked: Checked,
        db: str,
        json_output: bool,
        archive: str | None,
        report: str | None = None,
        pattern: Pattern | None = None,
        max_cost: float | None = None,
    ) -> None:
        self.saver = saver
        self.max_cost = max_cost
        self.report = report
        self.checked = checked
        self.run_info = checked.info
        self.spec = checked.spec
        self.db = db
        self.pattern = pattern or get_pattern(checked.info.pattern)
        self.described = self.pattern.described
        self.json_output = json_output
        self.archive = archive
        self._stack = ExitStack()
        self._run: Run | None = None

    def __enter__(self) -> Runner:
        store = self._stack.enter_context(inbox.open_store(self.db))
        self._run = Run(
            self.saver,
            self.run_info,
            store=store,
            max_concurrency=self.checked.max_concurrency,
            model=self.spec,
            built=self.checked.graph,
            max_cost=self.max_cost,
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    @property
    def thread(self) -> Run:
        """The thread's run (the runner entered)."""
        if self._run is None:
            raise RuntimeError("enter the Runner first")
        return self._run

    def start(self, thread_id: str, graph_input: dict[str, Any]) -> None:
        """Record a new thread (its input, before any node runs), then run it.

        The thread exists in the database before its id is printed, and an interrupt
        from then on names it (:mod:`~debategraph.cli.interrupts`).

        Args:
            thread_id: The new thread's id.
            graph_input: The graph's input.
        """
        try:
            self.thread.record(thread_id, graph_input)
        except KeyboardInterrupt:
            if thread_exists(self.saver, thread_id):  # interrupted once recorded
                interrupts.resumable(thread_id, self.db)
            raise
        self.run(thread_id, None)

    def run(self, thread_id: str, graph_input: Any) -> None:
        """Stream the thread until it finishes, pauses or fails.

        The run reads, at each round boundary, what ``debategraph interject`` and
        ``debategraph stop`` sent the thread meanwhile; a finished thread's inbox is
        emptied.

        Args:
            thread_id: The thread.
            graph_input: ``None`` (continue) or a ``Command``.

        Raises:
            ModelUnavailableError: If the endpoint fails (the thread stays resumable).
        """
        from debategraph.cli.render import Progress

        run = self.thread
        interrupts.resumable(thread_id, self.db)
        err.print(
            f"thread [bold]{thread_id}[/bold] · db {escape(self.db)} · "
            f"{escape(models_label(self.spec, self.run_info.settings))} · "
            f"{self.described.describe(self.run_info.settings)}"
        )
        progress = Progress(self.pattern, stream_text=not self.json_output)
        modes: list[StreamMode] = ["updates", "messages"] if progress.stream_text else ["updates"]
        ask = _ask if _interactive(self.json_output) else _never
        try:
            with progress.watching_waits():
                waiting = run.drive(
                    thread_id, graph_input, modes=modes, on_chunk=progress.show, ask=ask
                )
        except (ModelUnavailableError, CostLimitReached, KeyboardInterrupt) as exc:
            self._stopped_early(run, thread_id, exc)
        values = run.values(thread_id)
        if waiting is not None:
            self._report_waiting(run, thread_id, waiting, values)
            return
        store = run.graph.store
        late = close_inbox(store, thread_id, values.get("transcript") or []) if store else []
        word = self.described.round_word
        for text in late:
            err.print(f"note: interjection came after the last {word}, not read: {escape(text)}")
        self.finish(run, thread_id, values)

    def _stopped_early(self, run: Run, thread_id: str, exc: BaseException) -> NoReturn:
        """End a run the graph did not finish: one line with the resume command.

        The one place a reason a run stops early becomes its line, its exit code and (with
        ``--json``) its result; the thread stays resumable. An interrupt ends with
        :func:`~debategraph.cli.interrupts.exit_interrupted` (exit 130); a failing
        endpoint with its error (exit 1).

        Args:
            run: The thread's run.
            thread_id: The thread.
            exc: Why the run stopped.

        Raises:
            DebategraphError: The error, with the resume command (exit code its own).
        """
        if isinstance(exc, KeyboardInterrupt):
            interrupts.exit_interrupted()
        if self.json_output:
            result = self._result(run, thread_id, run.values(thread_id))
            emit_json({**result, "termination_reason": "error", "error": str(exc)})
        resume = interrupts.resume_command(thread_id, self.db)
        error = type(exc) if isinstance(exc, DebategraphError) else ModelUnavailableError
        raise error(f"{exc}; thread {thread_id} is resumable: {resume}") from exc

    def finish(self, run: Run, thread_id: str, values: Mapping[str, Any] | None = None) -> None:
        """Archive a finished thread, write its report (if any) and print its result.

        Args:
            run: The thread's run.
            thread_id: The thread.
            values: Its state values, where they were read already.

        Raises:
            UsageError: If the archive or the report cannot be written (the checkpoints
                are intact).
        """
        interrupts.resumable(thread_id, self.db)  # resuming a finished thread re-archives it
        if values is None:
            values = run.values(thread_id)
        result = self._result(run, thread_id, values)
        path = self._write_report(thread_id, values)
        if path is not None:
            result["report_file"] = str(path)
        try:
            archive_thread(
                self.archive or default_archive(self.db),
                self.described,
                self.db,
                thread_id,
                values,
                result["wall_s"],
            )
        except UsageError:
            print_result(self.pattern, result, self.json_output)
            raise
        print_result(self.pattern, result, self.json_output, db=self.db)

    def _write_report(self, thread_id: str, values: Mapping[str, Any]) -> Path | None:
        spec = self.described.report
        if spec is None:
            return None
        text = spec.render(values, self.described.title(values))
        if text is None:
            return None
        path = Path(self.report or spec.default_name.format(thread_id=thread_id))
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--report {path}: cannot write: {exc.strerror}") from exc
        return path

    def _result(self, run: Run, thread_id: str, values: Mapping[str, Any]) -> dict[str, Any]:
        return thread_result(run, self.described, self.db, thread_id, values)

    def _report_waiting(
        self, run: Run, thread_id: str, payload: Any, values: Mapping[str, Any]
    ) -> None:
        hint = interrupts.review_command(thread_id, self.db)
        if self.json_output:
            result = self._result(run, thread_id, values)
            emit_json({**result, "status": "waiting", "interrupt": payload, "resume": hint})
            return
        request = review_request(payload)
        where = f" after round {request['args'].get('round')}" if request else ""
        err.print(f"thread {thread_id} is waiting{where}: {hint}")


def launch(
    pattern: Pattern,
    checked: Checked,
    launched: Launch,
    *,
    db: str,
    thread: str | None,
    json_output: bool,
    archive: str | None,
    report: str | None = None,
    max_cost: float | None = None,
) -> None:
    """Open the database and run a new thread of a checked run.

    Args:
        pattern: The pattern.
        checked: The run, checked (:func:`~debategraph.runs.start.new_run`).
        launched: What its command made of the options (its input, its notes).
        db: ``--db``.
        thread: ``--thread`` (generated when ``None``).
        json_output: ``--json``.
        archive: ``--archive``.
        report: ``--report``, for patterns that write one.
        max_cost: ``--max-cost``: the most the run may spend on priced calls.

    Raises:
        UsageError: If the thread exists already (nothing is written).
    """
    from debategraph.checkpoints.savers import open_checkpointer

    for note in launched.notes:
        err.print(f"note: {escape(note)}")
    with open_checkpointer(db) as saver:
        thread_id = thread or uuid.uuid4().hex[:12]
        if thread_exists(saver, thread_id):
            raise UsageError(
                f"thread {thread_id} already exists in {db}: "
                f"continue it with debategraph resume {thread_id}"
            )
        with Runner(saver, checked, db, json_output, archive, report, pattern, max_cost) as runner:
            runner.start(thread_id, launched.input)
