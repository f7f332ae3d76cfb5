"""What an eval writes and prints at its end: the result files, ``report.html`` and its threads.

:func:`write_report` writes the pages of the threads ``report.html`` links to
(:func:`~debategraph.views.eval_files.write_eval_threads`), then the eval's result files
with ``report.html``, all of them or none
(:func:`~debategraph.views.eval_files.write_eval_files`), and prints the tables. A thread
whose page cannot be written (gone from its database) gets no link and a note, on stderr
and on the page, and the report is written all the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from debategraph.cli.render import emit_json, err, out
from debategraph.words import plural

if TYPE_CHECKING:
    from debategraph.eval.plan import EvalPlan
    from debategraph.eval.runner import EvalRun


def write_report(
    out_dir: Path,
    plan: EvalPlan,
    run: EvalRun,
    meta: Mapping[str, Any],
    json_output: bool,
    dbs: tuple[str, Mapping[int, str]],
) -> None:
    """Write the threads' pages, then the result files with ``report.html``; print the tables.

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

    from debategraph.eval.advice import results_markdown
    from debategraph.eval.progress import threads_line
    from debategraph.eval.runner import report_labels
    from debategraph.eval.stats import build_report
    from debategraph.eval.tables import results_table
    from debategraph.views.eval_files import write_eval_files, write_eval_threads

    labels = report_labels(plan, run)
    report = build_report(
        run.outcomes, labels, run.matched, agree=plan.agree, round_cap=plan.rounds
    )
    links, missing = write_eval_threads(out_dir, run.outcomes, dbs)
    for note in missing:
        err.print(f"note: {escape(note)}")
    markdown = results_markdown(report, meta)
    paths = write_eval_files(
        out_dir, run.outcomes, report, meta, markdown, thread_pages=links, notes=missing
    )
    if json_output:
        result = json.loads(paths["json"].read_text(encoding="utf-8"))
        emit_json({**result, "files": {k: str(v) for k, v in paths.items()}})
        return
    counts = meta["threads"]
    protocols = len({"plurality", *(meta.get("decisions") or ())})  # plurality: always a row
    shown = f" x {plural(protocols, 'decision')}" if protocols > 1 else ""
    epochs = meta.get("epochs") or 1
    asked = f" x {plural(epochs, 'epoch')}" if epochs > 1 else ""
    err.print(
        f"{plural(meta['questions'], 'question')}{asked} x {plural(len(labels), 'mode')}{shown}"
        f" · model {escape(str(meta['model']))} · {threads_line(counts)} · {meta['wall_s']:.1f} s"
    )
    cached = meta.get("cache") or {}
    if cached.get("hits"):
        err.print(
            f"{cached['hits']} of {plural(cached['calls'], 'model call')} answered from the "
            f"cache {escape(str(cached['file']))}"
        )
    if meta.get("metric"):
        err.print(f"metric: {escape(str(meta['metric']))}")
    for table in results_table(report, width=out.width):
        out.print(table)
    out.print(f"results: {escape(', '.join(str(p) for p in paths.values()))}")
