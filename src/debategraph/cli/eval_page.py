"""What an eval writes and prints at its end: the result files, ``report.html`` and its threads.

:func:`write_report` writes the result files and prints the tables. The thread pages
``report.html`` links to are a few threads of each mode, under ``threads/``:
:func:`~debategraph.eval.page.thread_sample` picks them; each is written by ``debategraph
view``'s writer from the database that holds it. A thread that cannot be written (gone
from its database) gets no link and a note, and the report is written all the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from debategraph.cli.render import emit_json, err, out
from debategraph.errors import DebategraphError
from debategraph.eval.page import THREADS_FOLDER, render_report_page, thread_href, thread_sample
from debategraph.eval.records import Outcome
from debategraph.words import plural

if TYPE_CHECKING:
    from debategraph.eval.plan import EvalPlan
    from debategraph.eval.report import PageRenderer
    from debategraph.eval.runner import EvalRun
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


def write_report(
    out_dir: Path,
    plan: EvalPlan,
    run: EvalRun,
    meta: Mapping[str, Any],
    json_output: bool,
    dbs: tuple[str, Mapping[int, str]],
) -> None:
    """Write the result files (``report.html`` and its threads' pages too); print the tables.

    Args:
        out_dir: ``--out``.
        plan: The plan.
        run: What the run found.
        meta: ``results.json``'s meta.
        json_output: Print ``results.json`` (with the files' paths) instead of tables.
        dbs: The database of the threads, and a question's own by its line (shards
            that kept their own).

    Raises:
        UsageError: If a file cannot be written.
    """
    import json

    from debategraph.cli.eval_page import report_page
    from debategraph.eval.advice import results_markdown
    from debategraph.eval.report import write_results
    from debategraph.eval.runner import report_labels
    from debategraph.eval.stats import build_report
    from debategraph.eval.tables import results_table

    labels = report_labels(plan, run)
    report = build_report(
        run.outcomes, labels, run.matched, agree=plan.agree, round_cap=plan.rounds
    )
    page = report_page(out_dir, run.outcomes, report, meta, dbs)
    markdown = results_markdown(report, meta)
    paths = write_results(out_dir, run.outcomes, report, meta, markdown, page=page)
    if json_output:
        result = json.loads(paths["json"].read_text(encoding="utf-8"))
        emit_json({**result, "files": {k: str(v) for k, v in paths.items()}})
        return
    counts = meta["threads"]
    protocols = len({"plurality", *(meta.get("decisions") or ())})  # plurality: always a row
    shown = f" x {plural(protocols, 'decision')}" if protocols > 1 else ""
    err.print(
        f"{plural(meta['questions'], 'question')} x {plural(len(labels), 'mode')}{shown} · model "
        f"{escape(str(meta['model']))} · {counts['started']} started, {counts['resumed']} "
        f"resumed, {counts['finished']} read back from checkpoints · {meta['wall_s']:.1f} s"
    )
    if meta.get("metric"):
        err.print(f"metric: {escape(str(meta['metric']))}")
    for table in results_table(report, width=out.width):
        out.print(table)
    out.print(f"results: {escape(', '.join(str(p) for p in paths.values()))}")
