"""``report.html`` and the pages of the threads it links, written into an eval's ``--out``.

The face that wrote an eval's result files (:func:`debategraph.eval.report.write_results`)
calls :func:`write_eval_pages` after them: the pages of a few threads of each mode go
under ``threads/`` (:func:`~debategraph.views.eval_page.thread_sample` picks them; each
is written from the database that holds it, :func:`~debategraph.views.thread_file.
write_thread_page`), then ``report.html`` linking them, its plots the bytes of the
``accuracy.png`` and ``dynamics.png`` just written. A thread whose page cannot be written
(gone from its database) gets no link and a note, and the page is written all the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from debategraph.errors import DebategraphError, UsageError
from debategraph.eval.advice import plain_answer
from debategraph.eval.records import Outcome
from debategraph.eval.report import write_out
from debategraph.eval.stats import Report
from debategraph.views.eval_page import (
    PLOTS,
    THREADS_FOLDER,
    render_report_page,
    thread_href,
    thread_sample,
)
from debategraph.views.thread_file import write_thread_page

#: The page's file in ``--out``.
REPORT_PAGE = "report.html"

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


def write_report_page(
    out_dir: Path,
    report: Report,
    meta: Mapping[str, Any],
    *,
    thread_pages: Mapping[str, Sequence[tuple[str, str]]] | None = None,
    lead: str = "",
) -> Path:
    """Write ``report.html`` into ``out_dir``, its plots those written there.

    Args:
        out_dir: ``--out``, holding the eval's result files.
        report: The eval's report.
        meta: What the page's header lists (``results.json``'s meta, with any notes).
        thread_pages: By mode label, ``(thread id, relative href)`` of the thread pages
            its row links to.
        lead: The page's opening paragraph (plain text); none when empty.

    Returns:
        The page's path.

    Raises:
        UsageError: If a plot cannot be read or the page cannot be written (one line
            naming the file); the page is written whole or not at all.
    """
    pngs = {}
    for name in PLOTS:
        try:
            pngs[name] = (out_dir / name).read_bytes()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise UsageError(f"--out {out_dir}: cannot read {name}: {exc.strerror or exc}") from exc
    page = render_report_page(report, meta, pngs=pngs, thread_pages=thread_pages, lead=lead)
    return write_out(out_dir / REPORT_PAGE, page)


def write_eval_pages(
    out_dir: Path,
    outcomes: Sequence[Outcome],
    report: Report,
    meta: Mapping[str, Any],
    dbs: tuple[str, Mapping[int, str]],
    writer: ThreadPageWriter = write_thread_page,
) -> tuple[Path, list[str]]:
    """Write the sampled threads' pages, then ``report.html`` linking them.

    The page opens with the plain answer (:func:`~debategraph.eval.advice.plain_answer`,
    as ``results.md`` does); a thread whose page could not be written is noted on it.

    Args:
        out_dir: ``--out``, where the eval's result files were just written.
        outcomes: The eval's outcomes.
        report: Their report.
        meta: ``results.json``'s meta.
        dbs: The database of the threads, and a question's own by its line (shards
            that kept their own).
        writer: Writes one thread's page.

    Returns:
        ``report.html``'s path, and a note for each thread whose page could not be
        written (the face shows them too).

    Raises:
        UsageError: If ``report.html`` cannot be written.
    """
    db, own = dbs
    links, missing = write_thread_pages(out_dir, outcomes, lambda line: own.get(line, db), writer)
    shown = {**meta, "notes": [*(meta.get("notes") or ()), *missing]}
    lead = plain_answer(report, meta)
    path = write_report_page(out_dir, report, shown, thread_pages=links, lead=lead)
    return path, missing
