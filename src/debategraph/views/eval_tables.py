"""The eval's tables as HTML, for ``report.html``: the cells the terminal and ``results.md`` show.

The cells are :func:`debategraph.eval.tables.sections`' (built once per table from the
figures as ``results.json`` rounds them); here they are escaped with
:func:`~debategraph.views.shell.esc` and laid out as HTML tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import quote

from debategraph.eval.stats import Report
from debategraph.eval.tables import Section, sections
from debategraph.views.shell import esc

#: Links from a row of the summary table, by its label: ``(text, relative href)`` pairs.
RowLinks = Mapping[str, Sequence[tuple[str, str]]]


def _html(section: Section, links: RowLinks, links_header: str) -> str:
    """One titled HTML table, its notes below it; cells escaped, figures right-aligned.

    Where ``links`` is not empty, a last column ``links_header`` holds each row's links
    (by its first cell), their hrefs percent-encoded.
    """
    headers = [*section.headers, links_header] if links else list(section.headers)

    def cell(tag: str, index: int, text: str) -> str:
        numeric = ' class="num"' if section.keys <= index < len(section.headers) else ""
        return f"<{tag}{numeric}>{text}</{tag}>"

    def row_links(key: str) -> str:
        return " ".join(
            f'<a href="{esc(quote(href))}">{esc(text)}</a>' for text, href in links.get(key, ())
        )

    head = "".join(cell("th", i, esc(header)) for i, header in enumerate(headers))
    body = []
    for row in section.rows:
        cells = [esc(text) for text in row] + ([row_links(row[0])] if links else [])
        body.append("<tr>" + "".join(cell("td", i, text) for i, text in enumerate(cells)) + "</tr>")
    notes = "".join(f'<p class="muted">{esc(note)}</p>' for note in section.notes)
    return (
        f"<h3>{esc(section.title)}</h3>\n<table>\n<thead><tr>{head}</tr></thead>\n"
        f"<tbody>\n" + "\n".join(body) + f"\n</tbody>\n</table>\n{notes}"
    )


def html_tables(report: Report, links: RowLinks | None = None, links_header: str = "") -> str:
    """The printed report's tables as HTML (for ``report.html``), each under an ``<h3>`` title.

    Args:
        report: The report.
        links: Links to show in a last column of the summary table (accuracy and cost
            per label), by the row's label; a label without any gets an empty cell.
        links_header: That column's header.

    Returns:
        The tables and their notes (escaped), in the order of
        :func:`~debategraph.eval.tables.results_table`.
    """
    return "\n".join(
        _html(section, (links or {}) if number == 0 else {}, links_header)
        for number, section in enumerate(sections(report))
    )
