"""``debategraph view``: a thread's page, written to a file, opened, and kept up to date.

The page (:func:`~debategraph.views.thread_file.thread_page`, the thread as it stands
now) is one self-contained HTML file: it opens offline, fetches nothing and runs no
script. ``--follow`` rewrites it after every new checkpoint until the thread stops moving
(finished, failed, waiting for a human or stopped); meanwhile the page tells the browser
to reload it.
"""

from __future__ import annotations

import time
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from debategraph.checkpoints.savers import DEFAULT_DB, open_checkpointer
from debategraph.checkpoints.threads import thread_config, writer_elsewhere
from debategraph.cli.group import app
from debategraph.cli.options import DbOpt
from debategraph.cli.render import err, write_output
from debategraph.views.thread_file import MOVING, note_written, thread_page
from debategraph.views.thread_page import page_name

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

#: How often ``--follow`` looks for a new checkpoint, and how often the page it writes
#: while the thread runs asks the browser to reload it (seconds).
FOLLOW_POLL_S = 2


def follow(write: Callable[[], str], wait: Callable[[], None]) -> int:
    """Write a page, then again after every wait, while the thread is running.

    Args:
        write: Writes the page; returns the thread's status.
        wait: Returns once there may be something new (a checkpoint, the writer gone).

    Returns:
        How many times the page was written.
    """
    writes = 1
    while write() == MOVING:
        wait()
        writes += 1
    return writes


def _next_checkpoint(saver: BaseCheckpointSaver[Any], thread: str) -> Callable[[], None]:
    """A wait that returns once ``thread`` has a new checkpoint or its writer is gone."""
    seen: list[object] = [None]

    def wait() -> None:
        while True:
            tup = saver.get_tuple(thread_config(thread))
            latest = None if tup is None else tup.config["configurable"].get("checkpoint_id")
            if latest != seen[0] or tup is None or writer_elsewhere(tup.metadata) is None:
                seen[0] = latest
                return
            time.sleep(FOLLOW_POLL_S)

    wait()  # note the checkpoint the first page shows
    return wait


@app.command()
def view(
    thread: Annotated[str, typer.Argument(help="The thread whose page to write.")],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="The page's file \\[default: THREAD.html in this folder]."
        ),
    ] = None,
    open_page: Annotated[
        bool, typer.Option("--open", help="Open the page in the web browser.")
    ] = False,
    follow_thread: Annotated[
        bool,
        typer.Option(
            "--follow",
            help="Rewrite the page after every checkpoint until the thread finishes, "
            "fails or waits (Ctrl-C stops).",
        ),
    ] = False,
    db: DbOpt = DEFAULT_DB,
) -> None:
    """Write a thread's page: one HTML file that opens offline (no script, nothing fetched)."""
    path = output if output is not None else Path(page_name(thread))
    opened = False
    written: list[bool] = []
    with open_checkpointer(db) as saver:

        def write() -> str:
            nonlocal opened
            html, status = thread_page(saver, db, thread, refresh_s=FOLLOW_POLL_S, path=path)
            write_output(path, html)
            if not written:  # the pages of its origin and forks link to this name
                note_written(db, thread, path)
                written.append(True)
            if open_page and not opened:
                webbrowser.open(path.resolve().as_uri())
                opened = True
            return status

        if not follow_thread:
            write()
        else:
            try:
                writes = follow(write, _next_checkpoint(saver, thread))
            except KeyboardInterrupt:
                shown = escape(str(path))
                err.print(f"stopped following thread {escape(thread)}; its page: {shown}")
                return
            err.print(f"thread {escape(thread)} stopped moving; page written {writes} times")
    err.print(f"wrote {escape(str(path))}")
