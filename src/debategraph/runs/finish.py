"""A finished thread: its result read once, and archived.

A thread's end is the same whichever face ran it: its values are read, its result made
(:func:`~debategraph.runs.results.result_of`, with its wall time) and the thread written
to the archive beside its database (:func:`~debategraph.checkpoints.archive.archive_debate`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from debategraph.errors import UsageError
from debategraph.runs.results import result_of, thread_wall

if TYPE_CHECKING:
    from debategraph.described import Described
    from debategraph.runs.thread import Run

#: Archive of Postgres checkpoints, in the working directory. A SQLite database ``FILE`` is
#: archived beside it in ``FILE-archive.sqlite``: a file of its own, so pruning checkpoints
#: shrinks the checkpoint file and the archive can be copied or served (Datasette) alone.
POSTGRES_ARCHIVE = "debates-archive.sqlite"
ARCHIVE_SUFFIX = "-archive"


def default_archive(db: str) -> str:
    """Where finished threads of ``db`` are archived unless another archive is named.

    Args:
        db: The checkpoint database (SQLite path or Postgres URL).

    Returns:
        ``x.sqlite`` -> ``x-archive.sqlite``; a Postgres URL -> ``debates-archive.sqlite``.
    """
    from debategraph.checkpoints.savers import is_postgres_url, sqlite_path

    if is_postgres_url(db):
        return POSTGRES_ARCHIVE
    path = sqlite_path(db)
    return str(path.with_name(f"{path.stem}{ARCHIVE_SUFFIX}{path.suffix or '.sqlite'}"))


def thread_result(
    run: Run, pattern: Described, db: str, thread_id: str, values: Mapping[str, Any]
) -> dict[str, Any]:
    """A thread's result, with its wall time as its checkpoints (and store) tell it.

    Args:
        run: The thread's run.
        pattern: What its pattern is (its result fields).
        db: Its database (whose store notes the ends of runs stopped early).
        thread_id: The thread.
        values: Its state values.

    Returns:
        The result (:func:`~debategraph.runs.results.result_of`).
    """
    return result_of(pattern, thread_id, values, thread_wall(run.saver, db, thread_id))


def archive_thread(
    archive: str,
    pattern: Described,
    db: str,
    thread_id: str,
    values: Mapping[str, Any],
    wall_s: float,
) -> None:
    """Write a finished thread into its archive.

    Args:
        archive: The archive's path.
        pattern: What the thread's pattern is.
        db: Its database (for the message).
        thread_id: The thread.
        values: Its state values.
        wall_s: Its wall time.

    Raises:
        UsageError: If the archive cannot be written, saying the thread itself is safe.
    """
    from debategraph.checkpoints.archive import archive_debate

    try:
        archive_debate(
            archive,
            thread_id=thread_id,
            pattern=pattern,
            values=values,
            status="finished",
            wall_s=wall_s,
        )
    except UsageError as exc:
        raise UsageError(f"{exc} (the debate itself is saved in {db}, thread {thread_id})") from exc
