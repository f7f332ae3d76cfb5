"""The eval's page, ``report.html``: its settings, both plots and its tables in one file.

The page is :func:`~debategraph.views.shell.document`'s shell: self-contained, no script, no
request. The plots are the bytes written to ``accuracy.png`` and ``dynamics.png`` (a
figure is rendered once), inlined as ``data:`` URIs; the tables are
:func:`~debategraph.views.eval_tables.html_tables`, the same cells the terminal and
``results.md`` show. Each mode's row links to the pages of a few of its threads
(:func:`thread_sample` picks them; :mod:`~debategraph.views.eval_files` writes them,
under ``threads/``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from debategraph.eval.progress import threads_line
from debategraph.eval.records import Outcome
from debategraph.eval.stats import Report
from debategraph.strategies.decisions import PLURALITY
from debategraph.views.eval_tables import html_tables
from debategraph.views.shell import data_uri, document, esc

#: Threads linked per mode.
SAMPLE_SIZE = 3

#: Where a thread's page goes in ``--out`` (and its href from ``report.html``).
THREADS_FOLDER = "threads"

#: The plots, by file name, with their images' alternative text.
PLOTS = {
    "accuracy.png": "Accuracy against tokens per question, per mode (the Pareto front marked)",
    "dynamics.png": "Accuracy per round, flips and the oracle, per debate mode",
}

#: The settings the page's header lists, by their key in ``results.json``'s meta.
SETTINGS = {
    "kind": "task",
    "dataset": "dataset",
    "model": "model",
    "questions": "questions",
    "modes": "modes",
    "decisions": "decisions",
    "judges": "judges",
    "agents": "agents",
    "rounds": "rounds",
    "neighbours": "neighbours",
    "matched": "matched-budget votes",
    "seed": "seed",
    "offset": "offset",
    "limit": "limit",
    "shard": "shard",
    "shards": "merged shards",
    "threads": "threads",
    "judge_calls": "judge calls",
    "finished": "finished at",
    "wall_s": "wall time (s)",
    "load": "load average (1, 5, 15 min)",
}

_STYLE = """
dl.settings { display: grid; grid-template-columns: max-content auto; gap: .1rem 1rem; }
dl.settings dt { color: var(--muted); } dl.settings dd { margin: 0; }
p.lead { font-size: 1.05rem; border-left: 4px solid var(--accent); padding-left: .75rem; }
figure { margin: 1rem 0; } figure img { max-width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: .9rem; }
td.num { white-space: nowrap; } td a { display: block; white-space: nowrap; }
"""


def thread_sample(outcomes: Sequence[Outcome], size: int = SAMPLE_SIZE) -> dict[str, list[Outcome]]:
    """A few threads of each mode, the same for the same outcomes.

    From each mode's own rows (its plurality decision), by question line: the first
    answered right, the first not, then the first others, up to ``size``.

    Args:
        outcomes: The eval's outcomes.
        size: Threads per mode at most.

    Returns:
        Each mode's sampled outcomes (one per thread), modes in the order they come.
    """
    by_mode: dict[str, list[Outcome]] = {}
    for outcome in sorted(outcomes, key=lambda o: o.line):
        if outcome.decision == PLURALITY:
            by_mode.setdefault(outcome.mode, []).append(outcome)
    sample: dict[str, list[Outcome]] = {}
    for mode, rows in by_mode.items():
        first = [
            found
            for correct in (True, False)
            if (found := next((row for row in rows if row.correct is correct), None))
        ]
        rest = [row for row in rows if row not in first]
        sample[mode] = sorted([*first, *rest][:size], key=lambda o: o.line)
    return sample


def thread_href(thread_id: str) -> str:
    """A thread's page, relative to ``report.html``: ``threads/<thread_id>.html``."""
    return f"{THREADS_FOLDER}/{thread_id}.html"


def _value(value: Any) -> str:
    """A meta value as text: a list joined by commas, a mapping as ``key: value`` pairs."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return ", ".join(f"{key}: {_value(item)}" for key, item in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(_value(item) for item in value)
    return str(value)


def _setting(key: str, value: Any) -> str:
    """A setting's text: ``threads`` in words (:func:`~debategraph.eval.progress.threads_line`)."""
    if key == "threads" and isinstance(value, Mapping):
        return threads_line(value)
    return _value(value)


def _settings(meta: Mapping[str, Any]) -> str:
    """The header's list of settings: those of :data:`SETTINGS` that meta holds and are set."""
    rows = [
        f"<dt>{esc(label)}</dt><dd>{esc(_setting(key, meta[key]))}</dd>"
        for key, label in SETTINGS.items()
        if meta.get(key) not in (None, "", [], {})
    ]
    return '<dl class="settings">\n' + "\n".join(rows) + "\n</dl>"


def _plots(pngs: Mapping[str, bytes]) -> str:
    """Each plot of :data:`PLOTS` that ``pngs`` holds, as an inline image with its caption."""
    return "\n".join(
        f'<figure><img src="{data_uri(pngs[name], "image/png")}" alt="{esc(alt)}">'
        f"<figcaption>{esc(name)}</figcaption></figure>"
        for name, alt in PLOTS.items()
        if name in pngs
    )


def render_report_page(
    report: Report,
    meta: Mapping[str, Any],
    *,
    pngs: Mapping[str, bytes],
    thread_pages: Mapping[str, Sequence[tuple[str, str]]] | None = None,
    lead: str = "",
) -> str:
    """``report.html``: the eval's settings, plots and tables as one self-contained page.

    Args:
        report: The report (its tables show the figures as ``results.json`` rounds them).
        meta: ``results.json``'s meta (the header lists the settings it holds).
        pngs: The plots' bytes by file name (``accuracy.png``, ``dynamics.png``).
        thread_pages: By mode label, ``(thread id, relative href)`` of the thread pages
            its row links to.
        lead: An opening paragraph (plain text, escaped here); none when empty.

    Returns:
        The page.
    """
    dataset = meta.get("dataset") or meta.get("kind") or "eval"
    notes = "".join(f"<li>{esc(note)}</li>" for note in meta.get("notes") or ())
    parts = [
        f"<h1>Eval: {esc(dataset)}</h1>",
        f'<p class="lead">{esc(lead)}</p>' if lead else "",
        _settings(meta),
        f'<ul class="muted">{notes}</ul>' if notes else "",
        "<h2>Accuracy and dynamics</h2>",
        _plots(pngs),
        "<h2>Tables</h2>",
        html_tables(report, thread_pages, "threads"),
    ]
    return document(f"Eval: {dataset}", "\n".join(part for part in parts if part), style=_STYLE)
