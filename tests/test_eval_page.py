"""The eval's page ``report.html``: settings, inline plots, the tables, thread links, escaping."""

from __future__ import annotations

import base64
import json
import os
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from debategraph.errors import UsageError
from debategraph.eval.records import Outcome
from debategraph.eval.stats import Report, build_report
from debategraph.views import eval_files
from debategraph.views.eval_files import write_eval_files, write_thread_pages
from debategraph.views.eval_page import render_report_page, thread_href, thread_sample
from tests.test_eval_report import LABELS, META, OUTCOMES, REPORT, quick_plots

PNGS = {"accuracy.png": b"\x89PNG accuracy", "dynamics.png": b"\x89PNG dynamics"}


class Links(HTMLParser):
    """Every ``src`` and ``href`` of a page, the text of its cells, its tags."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.tags: list[str] = []
        self.cells: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.urls += [(tag, name, value or "") for name, value in attrs if name in {"src", "href"}]
        if tag in {"td", "th"}:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in {"td", "th"} and self._cell is not None:
            self.cells.append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def parsed(page: str) -> Links:
    links = Links()
    links.feed(page)
    links.close()
    return links


def assert_self_contained(page: str) -> Links:
    """The page's every src and href is a data: URI or a relative path; no script."""
    links = parsed(page)
    for tag, name, value in links.urls:
        parts = urlsplit(value)
        assert parts.scheme == "data" or not (parts.scheme or parts.netloc), (tag, name, value)
        assert not value.startswith("//"), value
    assert "script" not in links.tags
    return links


def sampled_links(outcomes: list[Outcome]) -> dict[str, list[tuple[str, str]]]:
    return {
        mode: [(o.thread_id, thread_href(o.thread_id)) for o in rows]
        for mode, rows in thread_sample(outcomes).items()
    }


def test_the_page_holds_the_settings_plots_tables_and_links() -> None:
    meta = {**META, "kind": "gsm8k", "rounds": 2, "wall_s": 12.5, "finished": "2026-11-27T18:00"}
    links = sampled_links(OUTCOMES)
    page = render_report_page(
        REPORT, meta, pngs=PNGS, thread_pages=links, lead="Vote: as good, cheaper."
    )
    found = assert_self_contained(page)
    images = [value for tag, _, value in found.urls if tag == "img"]
    assert images == [
        f"data:image/png;base64,{base64.b64encode(v).decode()}" for v in PNGS.values()
    ]
    hrefs = [unquote(value) for tag, _, value in found.urls if tag == "a"]
    assert hrefs == [href for rows in links.values() for _, href in rows]
    assert len(hrefs) == 12  # three threads for each of the four modes
    assert '<p class="lead">Vote: as good, cheaper.</p>' in page
    for shown in ("data/gsm8k.jsonl", "stub", "gsm8k", "12.5", "2026-11-27T18:00"):
        assert f"<dd>{shown}</dd>" in page
    for label in LABELS:
        assert label in found.cells
    single = REPORT.summaries[0]
    assert f"{single.accuracy:.3f} [{single.ci_low:.3f}, {single.ci_high:.3f}]" in found.cells
    for title in (
        "Accuracy and cost per mode and protocol",
        "Paired comparisons (exact McNemar test)",
        "Debate against a vote at the same token budget",
        "Debate dynamics per round",
        "Oracle and loss per mode and protocol",
    ):
        assert f"<h3>{title}</h3>" in page
    assert "910 vs 960" in found.cells and "1.05 (within 10%)" in found.cells


def test_a_page_without_links_or_lead_has_no_threads_column() -> None:
    page = render_report_page(REPORT, META, pngs=PNGS)
    assert "<th>threads</th>" not in page and 'class="lead"' not in page
    assert "<th>threads</th>" in render_report_page(
        REPORT, META, pngs=PNGS, thread_pages=sampled_links(OUTCOMES)
    )


def test_labels_names_and_lead_are_escaped() -> None:
    rows = [o for o in OUTCOMES if o.mode == "single"]
    odd = [replace(o, mode="<b>odd</b>") for o in rows]
    report = build_report(odd, ["<b>odd</b>"])
    meta = {"dataset": "<script>alert(1)</script>.jsonl", "model": 'm" onload="x'}
    links = {"<b>odd</b>": [("t<1>", 'threads/t"<1>.html')]}
    page = render_report_page(report, meta, pngs=PNGS, thread_pages=links, lead="<i>lead</i>")
    found = assert_self_contained(page)
    assert "<b>" not in page and "<script>" not in page and "<i>" not in page
    assert "&lt;b&gt;odd&lt;/b&gt;" in page
    assert "<title>Eval: &lt;script&gt;alert(1)&lt;/script&gt;.jsonl</title>" in page
    assert "<dd>m&quot; onload=&quot;x</dd>" in page
    assert "<b>odd</b>" in found.cells  # shown as the text it is
    assert ("a", "href", "threads/t%22%3C1%3E.html") in found.urls


def test_the_sample_is_the_first_right_the_first_wrong_then_the_first_others() -> None:
    def row(mode: str, line: int, correct: bool, **extra: str) -> Outcome:
        return Outcome(mode, line, "1", "1", correct, 1, 1, 1, 0.1, f"{mode}-{line}", **extra)

    rows = [row("a", line, line >= 4) for line in (6, 5, 4, 3, 2, 1)]  # wrong 1-3, right 4-6
    rows += [row("a", 1, True, decision="judge"), row("b", 1, True), row("b", 2, True)]
    rows += [row("b", line, True) for line in (3, 4)]
    rows += [row("c", line, line < 4) for line in range(1, 7)]  # right 1-3, wrong 4-6
    sample = thread_sample(rows)
    assert {mode: [o.line for o in found] for mode, found in sample.items()} == {
        "a": [1, 2, 4],  # by line: the first wrong (1), the first right (4), then 2
        "b": [1, 2, 3],  # all right: the first three
        "c": [1, 2, 4],  # the first right (1), the first wrong (4), then 2
    }
    assert thread_sample(list(reversed(rows))) == sample  # the order they come in: no matter
    assert [o.line for o in thread_sample(rows, size=1)["a"]] == [4]
    assert all(o.decision == "plurality" for found in sample.values() for o in found)


def test_the_page_is_written_from_the_plots_written_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = quick_plots(monkeypatch)
    given: list[dict[str, bytes]] = []

    def page(report: Report, meta: dict[str, object], **kwargs: Any) -> str:
        given.append(dict(kwargs["pngs"]))
        return render_report_page(report, meta, **kwargs)

    monkeypatch.setattr(eval_files, "render_report_page", page)
    paths = write_eval_files(tmp_path, OUTCOMES, REPORT, META)
    assert paths["html"] == tmp_path / "report.html"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["accuracy.png", "dynamics.png", "results.csv", "results.json", "report.html"]
    )
    assert len(saved) == 2  # each figure rendered once
    assert given == [{name: (tmp_path / name).read_bytes() for name in PNGS}]
    html = paths["html"].read_text(encoding="utf-8")
    for name in PNGS:
        encoded = base64.b64encode((tmp_path / name).read_bytes()).decode()
        assert f'src="data:image/png;base64,{encoded}"' in html
    for mode in json.loads(paths["json"].read_text())["modes"]:
        assert f"<td>{mode['mode']}</td>" in html


def test_a_page_that_cannot_be_written_leaves_no_file_and_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    quick_plots(monkeypatch)

    def full_disk(*args: object, **kwargs: object) -> str:
        raise OSError(28, os.strerror(28))

    monkeypatch.setattr(eval_files, "render_report_page", full_disk)
    with pytest.raises(UsageError) as caught:
        write_eval_files(tmp_path, OUTCOMES, REPORT, META)
    assert (
        str(caught.value) == f"--out {tmp_path}: cannot write report.html: No space left on device"
    )
    assert list(tmp_path.iterdir()) == []  # none of the others either, nor a temp file


def test_a_thread_missing_from_its_database_gets_no_link_and_a_note(tmp_path: Path) -> None:
    written: list[tuple[str, str, Path]] = []

    def writer(db: str, thread_id: str, path: Path) -> Path:
        if thread_id == "eval-vote-2":
            raise UsageError(f"no thread {thread_id!r} in this database")
        written.append((db, thread_id, path))
        path.write_text("page", encoding="utf-8")
        return path

    links, notes = write_thread_pages(tmp_path, OUTCOMES, lambda line: f"db{line % 2}", writer)
    assert links["vote"] == [
        ("eval-vote-1", "threads/eval-vote-1.html"),
        ("eval-vote-3", "threads/eval-vote-3.html"),
    ]
    assert notes == [
        "no page for thread eval-vote-2 (vote): no thread 'eval-vote-2' in this database"
    ]
    assert len(written) == 11 and {db for db, _, _ in written} == {"db0", "db1"}
    assert all((db, path) == (f"db{int(t.rsplit('-', 1)[1]) % 2}", tmp_path / thread_href(t))
               for db, t, path in written)  # fmt: skip
    for rows in links.values():
        for _, href in rows:
            assert (tmp_path / href).is_file()


def test_a_page_that_cannot_be_staged_leaves_no_file_either(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from debategraph.eval import report

    quick_plots(monkeypatch)
    real_stage = report.stage

    def stage(path: Path, write: Any) -> Path:
        if path.name == "report.html":  # staged last: the others are staged already
            raise OSError(28, os.strerror(28))
        return real_stage(path, write)

    monkeypatch.setattr(report, "stage", stage)
    with pytest.raises(UsageError) as caught:
        write_eval_files(tmp_path, OUTCOMES, REPORT, META, "# results\n")
    assert (
        str(caught.value) == f"--out {tmp_path}: cannot write report.html: No space left on device"
    )
    assert list(tmp_path.iterdir()) == []
