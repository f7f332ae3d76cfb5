"""The eval's tables: printed (Rich) and as Markdown (``results.md``, the README).

Both are the same cells, built once per section (:func:`sections`, which ``report.html``
shows as HTML: :mod:`debategraph.views.eval_tables`) from a report's figures as
``results.json`` rounds them (:func:`~debategraph.eval.report.read_report` of
:func:`~debategraph.eval.report.results_document`), so the tables of a run and of its
``results.json`` read back are the same text. A table too wide for the terminal is
split by its columns, none of its figures cut.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.table import Table
from rich.text import Text

from debategraph.eval.report import read_report, results_document
from debategraph.eval.significance import family
from debategraph.eval.stats import ALPHA, Report
from debategraph.models.money import money

_DASH = "\N{EM DASH}"


def _significance(p_value: float) -> str:
    """``significant`` below :data:`~debategraph.eval.stats.ALPHA`, else ``not significant``."""
    return "significant" if p_value < ALPHA else "not significant"


@dataclass(frozen=True)
class Section:
    """One table: its title, column headers, rows of cells and notes under it.

    Its first ``keys`` columns say what a row is: a table split to fit repeats them.
    """

    title: str
    headers: tuple[str, ...]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)
    keys: int = 1


def _format_p(p_value: float) -> str:
    """A p-value for a table: 3 decimals, or scientific notation below 0.001."""
    return f"{p_value:.3f}" if p_value >= 0.001 else f"{p_value:.1e}"


def _with_ci(value: float, ci: Sequence[float]) -> str:
    """``0.620 [0.522, 0.709]``."""
    return f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _rate(value: float | None, count: int) -> str:
    """``0.125 (3)``: a rate and the count behind it; a dash where there is none."""
    return _DASH if value is None else f"{value:.3f} ({count})"


def _summary_section(report: Report) -> Section:
    """Accuracy and cost per label."""
    pareto = set(report.pareto)
    rows = [
        [
            s.mode,
            str(s.n),
            _with_ci(s.accuracy, (s.ci_low, s.ci_high)),
            f"{s.abstention_rate:.1%}",
            f"{s.prompt_tokens:,.0f}",
            f"{s.completion_tokens:,.0f}",
            f"{s.tokens:,.0f}",
            f"{s.calls:.2f}",
            f"{s.wall_s:.2f}",
            "yes" if s.mode in pareto else "",
        ]
        for s in report.summaries
    ]
    headers: tuple[str, ...] = ("mode", "n", "accuracy (95% CI)", "abstain", "prompt tok/q")
    headers += ("completion tok/q", "total tok/q", "calls/q", "s/q", "Pareto")
    notes = []
    if any(s.errored for s in report.summaries):  # the column only where a row has some
        headers = (*headers[:2], "errored", *headers[2:])
        for row, s in zip(rows, report.summaries, strict=True):
            row.insert(2, str(s.errored))
        notes.append(
            "errored: questions whose calls kept failing (after the retries and --patience), "
            "left out of n and of every figure; the same command again retries them"
        )
    if any(s.cost is not None for s in report.summaries):  # only where a call had a price
        at = headers.index("calls/q")
        headers = (*headers[:at], "cost/q", *headers[at:])
        for row, s in zip(rows, report.summaries, strict=True):
            row.insert(at, _DASH if s.cost is None else money(s.cost))
        notes.append("cost/q: mean cost per question at the prices given (--price)")
    return Section("Accuracy and cost per mode and protocol", headers, rows, notes)


def _comparison_section(report: Report) -> Section:
    """The paired tests, with Holm's correction over those between modes and matched votes."""
    corrected = {(t.test.a, t.test.b): t.adjusted for t in family(report)}
    rows = []
    for c in report.comparisons:
        holm_p = corrected.get((c.a, c.b))
        judged = c.p_value if holm_p is None else holm_p
        rows.append(
            [
                f"{c.a} vs {c.b}",
                str(c.n),
                str(c.a_only),
                str(c.b_only),
                _format_p(c.p_value),
                _DASH if holm_p is None else _format_p(holm_p),
                _significance(judged),
            ]
        )
    headers = ("a vs b", "n", "a only", "b only", "McNemar p", "Holm p", "at 5%")
    notes = []
    if corrected:
        notes.append(
            f"Holm p: corrected by Holm's method over the {len(corrected)} tests between the "
            "modes and the matched votes (the plain answer's); at 5%: by it where there is "
            "one (a protocol's test against its mode stands alone)"
        )
    return Section("Paired comparisons (exact McNemar test)", headers, rows, notes)


def _matched_section(report: Report) -> Section:
    """Each debate mode against its matched-budget vote (at 5%: after Holm's correction)."""
    corrected = {(t.test.a, t.test.b): t.adjusted for t in family(report)}
    rows = []
    for m in report.matched:
        ratio = _DASH if m.ratio is None else f"{m.ratio:.2f}"
        holm_p = corrected.get((m.mode, m.vote_mode), m.p_value)
        rows.append(
            [
                f"{m.mode} vs {m.vote_mode}",
                str(m.n),
                f"{m.tokens:,.0f} vs {m.vote_tokens:,.0f}",
                f"{ratio} ({'within' if m.within else 'not within'} 10%)",
                f"{m.accuracy:.3f} vs {m.vote_accuracy:.3f}",
                str(m.a_only),
                str(m.b_only),
                _format_p(m.p_value),
                _format_p(holm_p),
                _significance(holm_p),
            ]
        )
    headers: tuple[str, ...] = ("debate vs vote", "n", "total tok/q", "vote/debate tokens")
    headers += ("accuracy",)
    headers += ("debate only", "vote only", "McNemar p", "Holm p", "at 5%")
    notes = [f"{m.vote_mode}: {m.how}" for m in report.matched]
    if report.matched:
        notes.append("Holm p: as in the paired comparisons")
    return Section("Debate against a vote at the same token budget", headers, rows, notes)


def _escalation_section(report: Report) -> Section:
    """``vote-then-debate``: questions debated, tokens saved, its paired tests."""
    rows = []
    notes = []
    for e in report.escalation:
        every = _DASH if e.every_tokens is None else f"{e.every_tokens:,.0f}"
        saved = _DASH
        if e.saved_tokens is not None and e.saved_share is not None:
            saved = f"{e.saved_tokens:,.0f} ({e.saved_share:.0%})"
        tests = "; ".join(
            f"vs {c.b if c.a == e.mode else c.a}: p {_format_p(c.p_value)}" for c in e.tests
        )
        rows.append(
            [
                e.mode,
                e.agree,
                str(e.n),
                f"{e.debated} ({e.debated_share:.0%})",
                f"{e.tokens:,.0f}",
                f"{every} ({e.against})",
                saved,
                tests or _DASH,
            ]
        )
        notes.append(f"{e.mode}: every question debated is {e.how} from {e.basis}.")
    headers: tuple[str, ...] = ("mode", "agree", "n", "debated", "total tok/q")
    headers += ("debating all tok/q", "saved tok/q", "McNemar")
    return Section("Vote, then debate only where round 1 does not agree", headers, rows, notes)


def _rounds_section(report: Report) -> Section:
    """Per debate mode and round: accuracy, flips, conformity."""
    rows = [
        [
            entry.mode,
            str(r.round),
            str(r.threads),
            _with_ci(r.agent_accuracy, r.agent_ci),
            _with_ci(r.decision_accuracy, r.decision_ci),
            _rate(r.flip_to_wrong, r.flips_to_wrong),
            _rate(r.flip_to_right, r.flips_to_right),
            _rate(r.conformity, r.conformed),
        ]
        for entry in report.dynamics
        for r in entry.summary.rounds
    ]
    headers: tuple[str, ...] = ("mode", "round", "n", "agents (95% CI)")
    headers += ("plurality decision (95% CI)",)
    headers += ("flip to wrong", "flip to right", "conformity")
    notes = [
        "agents: share of the solvers' answers that are right; flip to wrong: share of the "
        "solvers right the round before that are not now (count); flip to right: share of "
        "those not right that are now; conformity: share of the solvers off the previous "
        "round's plurality that moved to it."
    ]
    return Section("Debate dynamics per round", headers, rows, notes, keys=2)


def _loss_section(report: Report) -> Section:
    """Per debate mode and protocol: the oracle, the final accuracy and the loss."""
    rows = [
        [
            result.label,
            str(result.threads),
            _with_ci(result.oracle, result.oracle_ci),
            _with_ci(result.final_accuracy, result.final_ci),
            _with_ci(result.loss, result.loss_ci),
        ]
        for entry in report.dynamics
        for result in entry.decisions
    ]
    headers = ("mode", "n", "oracle (95% CI)", "decision (95% CI)", "loss (95% CI)")
    notes = [
        "oracle: some solver gave the gold answer in some round; loss: the oracle holds and "
        "the decision is wrong."
    ]
    return Section("Oracle and loss per mode and protocol", headers, rows, notes)


def _subjects_section(report: Report) -> Section:
    """Each mode's accuracy per subject: a row per subject, a column per mode."""
    modes = list(dict.fromkeys(s.mode for s in report.subjects))
    subjects = list(dict.fromkeys(s.subject for s in report.subjects))
    cells = {(s.mode, s.subject): s for s in report.subjects}
    rows = []
    for subject in subjects:
        row = [subject or "(none)"]
        for mode in modes:
            s = cells.get((mode, subject))
            row.append(_DASH if s is None else f"{s.accuracy:.3f} ({s.correct}/{s.n})")
        rows.append(row)
    notes = [
        "each mode's own decision (plurality); right/scored in brackets, every epoch's "
        "answer counted; results.json has each subject's 95% Wilson interval."
    ]
    return Section("Accuracy per subject", ("subject", *modes), rows, notes)


def _agreement_section(report: Report) -> Section:
    """Each mode's agreement across epochs."""
    rows = [
        [a.mode, str(a.questions), f"{a.agreement:.3f}", f"{a.unanimous:.3f}"]
        for a in report.agreement
    ]
    headers = ("mode", "questions", "agreement", "all epochs agree")
    notes = [
        "agreement: the share of a question's epochs that gave its most common answer, "
        "averaged over the questions asked more than once; accuracy counts every epoch's "
        "answer. results.json has each question's."
    ]
    return Section("Agreement across epochs", headers, rows, notes)


def sections(report: Report) -> list[Section]:
    """The tables of a report: the summary always, the others where they have rows.

    Each is shown printed (:func:`results_table`), as Markdown (:func:`markdown_table`)
    and as HTML (:func:`debategraph.views.eval_tables.html_tables`, ``report.html``'s).

    The cells show the figures as ``results.json`` rounds them, so the tables of a
    report and of its ``results.json`` read back are the same.
    """
    report = read_report(results_document(report, {}))
    found = [
        _summary_section(report),
        _comparison_section(report),
        _matched_section(report),
        _escalation_section(report),
        _rounds_section(report),
        _loss_section(report),
        _subjects_section(report),
        _agreement_section(report),
    ]
    return [found[0], *(s for s in found[1:] if s.rows)]


def _rich_tables(section: Section, width: int | None) -> list[Table]:
    """A section as Rich tables of plain-text cells that fit ``width`` columns.

    Cells are ``Text`` (so ``[0.61, 0.79]`` is not markup) and never cut or folded: a
    section too wide for ``width`` is split by columns into tables that fit, each
    repeating the key columns (what the row is) and titled ``(continued)`` after the
    first; a header wraps at its spaces where its column is narrower. The notes go under
    the last, wrapped at ``width``.
    """
    groups = _column_groups(section, width)
    tables = []
    for number, columns in enumerate(groups):
        last = number == len(groups) - 1
        notes = [textwrap.fill(n, width) if width else n for n in section.notes]
        caption = Text("\n".join(notes)) if notes and last else None
        title = section.title if number == 0 else f"{section.title} (continued)"
        table = Table(title=title, caption=caption, caption_justify="left")
        for index, column_width in columns:
            table.add_column(
                Text(section.headers[index]),
                justify="left" if index < section.keys else "right",
                width=column_width,
            )
        for row in section.rows:
            table.add_row(*(Text(row[index]) for index, _ in columns))
        tables.append(table)
    return tables


#: What a Rich table adds to its columns' text: a border and a space either side each,
#: and the closing border.
_COLUMN_EXTRA, _TABLE_EXTRA = 3, 1


def _widths(section: Section, index: int) -> tuple[int, int]:
    """A column's least width and the width that holds its header on one line.

    The least holds its widest cell whole and its header's longest word.
    """
    cells = [len(row[index]) for row in section.rows]
    header = section.headers[index]
    least = max([*cells, *(len(word) for word in header.split()), 1])
    return least, max(least, len(header))


def _column_groups(section: Section, width: int | None) -> list[list[tuple[int, int]]]:
    """The section's columns, with their widths, in groups that fit ``width``.

    Each group starts with the key columns; columns get their least width, then what
    room is left widens them toward a one-line header, left to right. ``None``: one
    group, every column as wide as its header and cells.
    """
    count = len(section.headers)
    widths = [_widths(section, index) for index in range(count)]
    if width is None:
        return [[(index, widths[index][1]) for index in range(count)]]
    keys = list(range(min(section.keys, count)))
    groups: list[list[int]] = [list(keys)]
    for index in range(len(keys), count):
        group = groups[-1]
        used = sum(widths[i][0] + _COLUMN_EXTRA for i in group) + _TABLE_EXTRA
        if used + widths[index][0] + _COLUMN_EXTRA > width and len(group) > len(keys):
            groups.append(list(keys))
        groups[-1].append(index)
    placed = []
    for group in groups:
        room = width - _TABLE_EXTRA - sum(widths[i][0] + _COLUMN_EXTRA for i in group)
        sized = []
        for index in group:
            least, whole = widths[index]
            extra = max(0, min(whole - least, room))
            room -= extra
            sized.append((index, least + extra))
        placed.append(sized)
    return placed


def results_table(report: Report, width: int | None = None) -> list[Table]:
    """The printed report's tables.

    Accuracy and cost per label, then the paired tests, the matched-budget votes, the
    dynamics per round and the oracle and loss (each where there is something to show).

    Args:
        report: The report.
        width: The columns they are printed in (a terminal's, 80 when piped): a table
            wider is split by its columns into tables that fit, none of its figures cut.
            ``None``: one table per section, however wide.

    Returns:
        The tables, to print with ``console.print(*tables)``.
    """
    return [table for section in sections(report) for table in _rich_tables(section, width)]


def _markdown(section: Section) -> str:
    """One titled GitHub Markdown table, its notes below it (first column left-aligned)."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    rule = "| " + " | ".join(":---" if i == 0 else "---:" for i in range(len(section.headers)))
    rule += " |"
    parts = [
        f"**{section.title}**",
        "\n".join([line(section.headers), rule, *(line(row) for row in section.rows)]),
    ]
    parts += [f"_{note}_" for note in section.notes]
    return "\n\n".join(parts)


def markdown_table(report: Report) -> str:
    """The printed report's tables as GitHub Markdown (for the README and ``docs/eval/``).

    Args:
        report: The report.

    Returns:
        Each table under its bold title, its notes in italics below it, separated by
        blank lines and ending in a newline.
    """
    return "\n\n".join(_markdown(section) for section in sections(report)) + "\n"
