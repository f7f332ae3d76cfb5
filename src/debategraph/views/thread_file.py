"""A stored thread's page: read from its database as it stands now, and written to a file.

``debategraph view`` writes (and with ``--follow`` rewrites) it; the eval writes the
pages of the threads its ``report.html`` links to. The thread is read through
:mod:`debategraph.runs` (its run, state, wall time and, when it waits at its review,
the command that goes on with it) and :mod:`debategraph.checkpoints` (its forks, and
where their pages were written: :mod:`~debategraph.checkpoints.pages`); its pattern is
the registry's (:func:`~debategraph.registry.described`). Each page written is noted,
so that the pages of its origin and forks link to it by its name.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debategraph import registry
from debategraph.checkpoints import inbox
from debategraph.checkpoints.forking import lineage
from debategraph.checkpoints.pages import note_page, page_paths
from debategraph.checkpoints.savers import open_checkpointer
from debategraph.checkpoints.threads import thread_config
from debategraph.datafiles import write_whole
from debategraph.errors import UsageError
from debategraph.nodes.review import review_request
from debategraph.runs.human import resume_command, review_command
from debategraph.runs.results import thread_wall
from debategraph.runs.thread import Run, require_run
from debategraph.views.thread_page import render_page

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

#: The one status in which a thread moves on by itself.
MOVING = "running"


def thread_page(
    saver: BaseCheckpointSaver[Any],
    db: str,
    thread: str,
    *,
    refresh_s: int | None = None,
    path: Path | None = None,
) -> tuple[str, str]:
    """A thread's page as it stands now.

    Args:
        saver: The checkpointer of ``db``.
        db: The ``--db`` value (for messages, the thread's wall time, the resume line).
        thread: The thread id.
        refresh_s: Have a running thread's page reload this often (``None``: never).
        path: Where the page goes (its links to other threads' pages are relative to
            its folder; ``None``: this folder).

    Returns:
        The HTML and the thread's status.

    Raises:
        UsageError: If the thread is unknown (the line ``show`` gives).
    """
    run = require_run(saver, thread, db)
    pattern = registry.described(run.pattern)
    reading = Run.reading(saver, run, thread)
    snapshot = reading.graph.get_state(thread_config(thread))
    state = reading.state(thread)
    family = lineage(saver, thread)
    pauses = [interrupt.value for interrupt in snapshot.interrupts]
    reviewed = any(review_request(pause) is not None for pause in pauses)
    kin = [f.thread_id for f in family.forks]
    if family.origin is not None:
        kin.append(family.origin.thread_id)
    with inbox.open_store(db) as store:
        written = page_paths(store, kin)
    folder = (path or Path("page.html")).resolve().parent
    links = {t: Path(os.path.relpath(p, folder)).as_posix() for t, p in written.items()}
    html = render_page(
        thread,
        snapshot.values if isinstance(snapshot.values, dict) else {},
        pattern=pattern,
        status=state.status,
        wall_s=thread_wall(saver, db, thread),
        where=None if state.status == "finished" else state.where(),
        forked_from=family.origin,
        forks=family.forks,
        pauses=pauses,
        round_word=pattern.round_word,
        refresh_s=refresh_s if state.status == MOVING else None,
        resume=(review_command if reviewed else resume_command)(thread, db),
        links=links,
    )
    return html, state.status


def note_written(db: str, thread: str, path: Path) -> None:
    """Note that the page of ``thread`` was written to ``path`` (pages of its kin link there).

    Args:
        db: The checkpoint database.
        thread: The thread.
        path: The page's file.
    """
    with inbox.open_store(db) as store:
        note_page(store, thread, path)


def write_page(path: Path, html: str) -> None:
    """Write a page whole or not at all (a browser reloading it never finds half a page).

    Args:
        path: The file (``view --output``).
        html: The page.

    Raises:
        UsageError: If it cannot be written (``--output PATH: cannot write: why``).
    """
    try:
        write_whole(path, html)
    except OSError as exc:
        raise UsageError(f"--output {path}: cannot write: {exc.strerror or exc}") from exc


def write_thread_page(db: str, thread_id: str, path: Path) -> Path:
    """Write a thread's page to ``path`` (the eval's report links its threads' pages).

    Args:
        db: The checkpoint database (a SQLite path or a Postgres URL).
        thread_id: The thread.
        path: The file to write.

    Returns:
        ``path``.

    Raises:
        UsageError: If the thread is unknown or the file cannot be written (one line).
    """
    with open_checkpointer(db) as saver:
        html, _ = thread_page(saver, db, thread_id, path=path)
    write_page(path, html)
    note_written(db, thread_id, path)
    return path
