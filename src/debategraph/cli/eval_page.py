"""The thread pages ``report.html`` links to: a few threads of each mode, under ``threads/``.

:func:`~debategraph.eval.page.thread_sample` picks them; each is written by ``debategraph
view``'s writer from the database that holds it. A thread that cannot be written (gone
from its database) gets no link and a note, and the report is written all the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from debategraph.cli.render import err
from debategraph.errors import DebategraphError
from debategraph.eval.page import THREADS_FOLDER, render_report_page, thread_href, thread_sample
from debategraph.eval.records import Outcome

if TYPE_CHECKING:
    from debategraph.eval.report import PageRenderer
    from debategraph.eval.stats import Report

#: Writes a thread's page: ``(db, thread id, path) -> path``.
ThreadPageWriter = Callable[[str, str, Path], Path]


def write_thread_pages(
    out_dir: Path,
    outcomes: Sequence[Outcome],
    db_of: Callable[[int], str],
    writer: ThreadPageWriter,
) -> tuple[dict[str, list[tuple[str, str]]], list[str]]:
    """Write the sampled threads' pages into ``out_dir/threads/``.

    Args:
        out_dir: ``--out``.
        outcomes: The eval's outcomes.
        db_of: The database of a question, by its line.
        writer: Writes one thread's page.

    Returns:
        By mode, ``(thread id, href relative to out_dir)`` of each page written; and a
        note for each thread whose page could not be written (naming it and why).
    """
    links: dict[str, list[tuple[str, str]]] = {}
    notes = []
    for mode, sample in thread_sample(outcomes).items():
        for outcome in sample:
            href = thread_href(outcome.thread_id)
            try:
                (out_dir / THREADS_FOLDER).mkdir(exist_ok=True)
                writer(db_of(outcome.line), outcome.thread_id, out_dir / href)
            except (DebategraphError, OSError) as exc:
                notes.append(f"no page for thread {outcome.thread_id} ({mode}): {exc}")
                continue
            links.setdefault(mode, []).append((outcome.thread_id, href))
    return links, notes


def report_page(
    out_dir: Path,
    outcomes: Sequence[Outcome],
    report: Report,
    meta: Mapping[str, Any],
    dbs: tuple[str, Mapping[int, str]],
) -> PageRenderer:
    """Write the sampled threads' pages; return what renders ``report.html`` linking them.

    The page opens with the plain answer (:func:`~debategraph.eval.advice.plain_answer`,
    as ``results.md`` does). A thread whose page could not be written is noted on stderr
    and on the page.

    Args:
        out_dir: ``--out``.
        outcomes: The eval's outcomes.
        report: Their report.
        meta: ``results.json``'s meta.
        dbs: The database of the threads, and a question's own by its line (shards
            that kept their own).

    Returns:
        The page's renderer, for :func:`~debategraph.eval.report.write_results`.
    """
    from debategraph.cli.view import write_thread_page
    from debategraph.eval.advice import plain_answer

    db, own = dbs
    links, missing = write_thread_pages(
        out_dir, outcomes, lambda line: own.get(line, db), write_thread_page
    )
    for note in missing:
        err.print(f"note: {escape(note)}")
    shown = {**meta, "notes": [*(meta.get("notes") or ()), *missing]}
    lead = plain_answer(report, meta)
    return lambda pngs: render_report_page(report, shown, pngs=pngs, thread_pages=links, lead=lead)
