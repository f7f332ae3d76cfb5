"""An eval's ``--out``: its result files with ``report.html``, and the threads the page links.

The face that ends an eval calls :func:`write_eval_threads` first: the pages of a few
threads of each mode go under ``threads/`` (:func:`~debategraph.views.eval_page.
thread_sample` picks them; each is written from the database that holds it,
:func:`~debategraph.views.thread_file.write_thread_page`). A thread whose page cannot be
written (gone from its database) gets no link and a note. Then :func:`write_eval_files`
renders the eval's result files (:func:`~debategraph.eval.report.render_results`), renders
``report.html`` linking those threads, its plots the PNG bytes just rendered, and writes
them all in one :func:`~debategraph.eval.report.write_files`: all of them or none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from debategraph.errors import DebategraphError
from debategraph.eval.advice import plain_answer
from debategraph.eval.records import Outcome
from debategraph.eval.report import cannot_write, render_results, result_keys, write_files
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


def write_eval_threads(
    out_dir: Path,
    outcomes: Sequence[Outcome],
    dbs: tuple[str, Mapping[int, str]],
    writer: ThreadPageWriter = write_thread_page,
) -> tuple[dict[str, list[tuple[str, str]]], list[str]]:
    """Write the pages of the threads ``report.html`` will link to.

    Args:
        out_dir: ``--out``.
        outcomes: The eval's outcomes.
        dbs: The database of the threads, and a question's own by its line (shards
            that kept their own).
        writer: Writes one thread's page.

    Returns:
        As :func:`write_thread_pages`: the links by mode, and a note for each thread whose
        page could not be written (the face shows them, the page too).
    """
    db, own = dbs
    return write_thread_pages(out_dir, outcomes, lambda line: own.get(line, db), writer)


def write_eval_files(
    out_dir: Path,
    outcomes: Sequence[Outcome],
    report: Report,
    meta: Mapping[str, Any],
    markdown: str | None = None,
    *,
    thread_pages: Mapping[str, Sequence[tuple[str, str]]] | None = None,
    notes: Sequence[str] = (),
) -> dict[str, Path]:
    """Write the eval's result files and ``report.html``, all of them or none.

    The page opens with the plain answer (:func:`~debategraph.eval.advice.plain_answer`,
    as ``results.md`` does); its plots are the bytes of ``accuracy.png`` and
    ``dynamics.png`` as rendered for those files (each figure rendered once).

    Args:
        out_dir: ``--out``.
        outcomes: The eval's outcomes.
        report: Their report.
        meta: ``results.json``'s meta.
        markdown: ``results.md``'s text (``None``: no ``results.md``).
        thread_pages: By mode label, ``(thread id, relative href)`` of the thread pages
            its row links to (:func:`write_eval_threads`).
        notes: Notes the page adds to ``meta``'s (threads whose page could not be written).

    Returns:
        The paths written, by :func:`~debategraph.eval.report.write_results`' keys, then
        ``"html"`` (report.html).

    Raises:
        UsageError: If a file cannot be rendered or staged (one line naming it); then
            none is written (:func:`~debategraph.eval.report.write_files`).
    """
    try:
        files = render_results(outcomes, report, meta, markdown)
    except OSError as exc:
        raise cannot_write(out_dir, exc.filename, exc) from exc
    shown = {**meta, "notes": [*(meta.get("notes") or ()), *notes]}
    pngs = {name: files[name] for name in PLOTS if name in files}
    lead = plain_answer(report, meta)
    try:
        page = render_report_page(report, shown, pngs=pngs, thread_pages=thread_pages, lead=lead)
    except OSError as exc:
        raise cannot_write(out_dir, REPORT_PAGE, exc) from exc
    paths = write_files(out_dir, {**files, REPORT_PAGE: page.encode("utf-8")})
    keys = {**result_keys(markdown is not None), "html": REPORT_PAGE}
    return {key: paths[name] for key, name in keys.items()}
