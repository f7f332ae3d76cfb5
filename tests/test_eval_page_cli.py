"""``report.html`` of ``eval arithmetic`` and ``eval report`` on the stub; its threads' pages."""

from __future__ import annotations

import base64
import contextlib
import csv
import io
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote

import pytest

from debategraph.cli.app import main
from debategraph.eval.records import Outcome
from debategraph.views.eval_files import write_thread_pages
from debategraph.views.shell import esc
from debategraph.views.thread_file import write_thread_page
from tests.conftest import stub_args
from tests.groups import one_worker
from tests.openai_stub import StubOpenAIServer
from tests.test_eval_page import Links, assert_self_contained

pytestmark = one_worker(__name__)  # a module-scoped fixture: one eval, read by every test


def sums(request: dict[str, object]) -> dict[str, object]:
    """'What is a + b?': right, except one too many where a is odd (some right, some wrong)."""
    found = re.search(r"What is (\d+) \+ (\d+)\?", json.dumps(request["messages"]))
    a, b = (int(found.group(1)), int(found.group(2))) if found else (0, -1)
    value = a + b + a % 2
    return {"reasoning": f"it is {value}", "answer": str(value), "confidence": 0.9}


@dataclass(frozen=True)
class Ran:
    """An eval's --out folder, what it printed (--json) and its page, parsed."""

    out: Path
    result: dict[str, object]
    page: str
    links: Links


def ran(out: Path, stdout: str) -> Ran:
    page = (out / "report.html").read_text(encoding="utf-8")
    return Ran(out, json.loads(stdout), page, assert_self_contained(page))


def run_quiet(args: list[str]) -> tuple[int, str, str]:
    """``debategraph ARGS``: exit status, stdout, stderr (run_cli's, for a module's fixture)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
        pytest.raises(SystemExit) as exit_info,
    ):
        main(args)
    code = exit_info.value.code
    return (code if isinstance(code, int) else 0), stdout.getvalue(), stderr.getvalue()


@pytest.fixture(scope="module")
def evals(tmp_path_factory: pytest.TempPathFactory) -> tuple[Ran, Ran]:
    """``eval arithmetic`` (three modes, the matched vote), then ``eval report`` of its folder."""
    root = tmp_path_factory.mktemp("evalpage")
    out, merged = root / "out", root / "merged"
    with StubOpenAIServer(sums) as server:
        args = ["eval", "arithmetic", "--count", "6", "--operands", "2", "--max-operand", "9"]
        args += ["--out", str(out), "--modes", "single,vote,debate-ring", "--agents", "2"]
        code, stdout, err = run_quiet([*args, *stub_args(server, out / "c.sqlite", "--json")])
        assert code == 0, err
        first = ran(out, stdout)
        server.reset_stats()
        args = ["eval", "report", str(out), "--out", str(merged), "--json"]
        code, stdout, err = run_quiet(args)
        assert code == 0, err
        assert not server.requests  # every thread read back
    return first, ran(merged, stdout)


def csv_rows(out: Path) -> list[dict[str, str]]:
    with (out / "results.csv").open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


@pytest.mark.parametrize("which", ["eval arithmetic", "eval report"])
def test_the_page_shows_every_mode_both_plots_and_the_figures(
    evals: tuple[Ran, Ran], which: str
) -> None:
    run = evals[0] if which == "eval arithmetic" else evals[1]
    assert run.result["files"]["html"] == str(run.out / "report.html")  # type: ignore[index]
    modes = run.result["modes"]
    assert isinstance(modes, list)
    labels = [m["mode"] for m in modes]
    assert labels[:3] == ["single", "vote", "debate-ring"] and labels[3].startswith("vote@")
    images = [value for tag, _, value in run.links.urls if tag == "img"]
    assert images == [
        "data:image/png;base64," + base64.b64encode((run.out / name).read_bytes()).decode()
        for name in ("accuracy.png", "dynamics.png")
    ]
    for mode in modes:
        assert mode["mode"] in run.links.cells
        low, high = mode["ci95"]
        assert f"{mode['accuracy']:.3f} [{low:.3f}, {high:.3f}]" in run.links.cells
        assert f"{mode['tokens']:,.0f}" in run.links.cells
    plain = (run.out / "results.md").read_text(encoding="utf-8").split("\n\n")[0]
    assert f'<p class="lead">{esc(plain)}</p>' in run.page  # the plain answer opens both
    meta = run.result["meta"]
    assert isinstance(meta, dict)
    assert f"<dd>{meta['finished']}</dd>" in run.page
    assert f"<dd>{meta['wall_s']}</dd>" in run.page


@pytest.mark.parametrize("which", ["eval arithmetic", "eval report"])
def test_each_mode_links_its_first_right_and_wrong_threads_pages(
    evals: tuple[Ran, Ran], which: str
) -> None:
    run = evals[0] if which == "eval arithmetic" else evals[1]
    rows = {r["thread_id"]: r for r in csv_rows(run.out) if r["decision"] == "plurality"}
    hrefs = [unquote(value) for tag, _, value in run.links.urls if tag == "a"]
    assert hrefs and all(re.fullmatch(r"threads/[^/]+\.html", href) for href in hrefs)
    linked: dict[str, list[dict[str, str]]] = {}
    for href in hrefs:
        assert (run.out / href).is_file(), href
        thread = href.removeprefix("threads/").removesuffix(".html")
        assert thread in (run.out / href).read_text(encoding="utf-8")
        linked.setdefault(rows[thread]["mode"], []).append(rows[thread])
    assert set(linked) == {r["mode"] for r in rows.values()}  # every mode, vote@K too
    for mode, found in linked.items():
        assert len(found) == 3, mode
        answered = {r["correct"] for r in rows.values() if r["mode"] == mode}
        assert {r["correct"] for r in found} == answered, mode  # a right and a wrong one


def test_a_thread_missing_from_the_database_is_noted_not_linked(
    evals: tuple[Ran, Ran], tmp_path: Path
) -> None:
    out = evals[0].out
    row = csv_rows(out)[0]
    gone = Outcome(row["mode"], 1, "1", "1", True, 1, 1, 1, 0.1, "eval-gone-1-0000000000")
    there = replace(gone, line=2, thread_id=row["thread_id"])
    links, notes = write_thread_pages(
        tmp_path, [gone, there], lambda line: str(out / "c.sqlite"), write_thread_page
    )
    assert links == {row["mode"]: [(there.thread_id, f"threads/{there.thread_id}.html")]}
    (note,) = notes
    assert note.startswith(f"no page for thread eval-gone-1-0000000000 ({row['mode']}): ")
    assert "\n" not in note
    assert [p.name for p in (tmp_path / "threads").iterdir()] == [f"{there.thread_id}.html"]
