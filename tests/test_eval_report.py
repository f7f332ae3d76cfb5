"""The eval's result files and tables: contents, atomic writes, one-line errors."""

from __future__ import annotations

import csv
import json
import os
from dataclasses import fields
from pathlib import Path

import pytest
from rich.console import Console

from debategraph.errors import UsageError
from debategraph.eval.records import Comparison, ModeSummary, Outcome
from debategraph.eval.report import markdown_table, results_table, write_results
from debategraph.eval.stats import compare, summarize

MODES = ["single", "vote", "debate-ring"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
Results = tuple[list[Outcome], list[ModeSummary], list[Comparison]]


def make_outcomes() -> list[Outcome]:
    rows = []
    for mode_index, mode in enumerate(MODES):
        for line in range(1, 21):
            correct = (line + mode_index) % 3 != 0
            rows.append(
                Outcome(
                    mode=mode,
                    line=line,
                    gold="12",
                    answer=None if line == 7 else ("12" if correct else "5"),
                    correct=correct and line != 7,
                    prompt_tokens=150 * (1 + 4 * mode_index) + line,
                    completion_tokens=40 * (1 + mode_index),
                    calls=1 + 4 * mode_index,
                    wall_s=0.25 * (1 + mode_index),
                    thread_id=f"eval-{mode}-{line}",
                )
            )
    return rows


@pytest.fixture
def results() -> Results:
    outcomes = make_outcomes()
    return outcomes, summarize(outcomes, MODES), compare(outcomes, MODES)


META = {"dataset": Path("data/gsm8k.jsonl"), "model": "stub", "skipped": {"unreadable": 1}}


def test_write_results(tmp_path: Path, results: Results) -> None:
    outcomes, summaries, comparisons = results
    out = tmp_path / "new" / "run"  # created when missing
    paths = write_results(out, outcomes, summaries, comparisons, META)
    assert paths == {
        "json": out / "results.json",
        "csv": out / "results.csv",
        "png": out / "accuracy.png",
    }
    assert sorted(p.name for p in out.iterdir()) == ["accuracy.png", "results.csv", "results.json"]

    document = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert document["meta"] == {
        "dataset": "data/gsm8k.jsonl",
        "model": "stub",
        "skipped": {"unreadable": 1},
    }
    assert [m["mode"] for m in document["modes"]] == MODES
    single = document["modes"][0]
    expected_keys = {f.name for f in fields(summaries[0])} | {"ci95"}
    assert set(single) == expected_keys
    assert single["n"] == 20
    assert single["accuracy"] == round(summaries[0].accuracy, 4)
    assert single["ci95"] == [round(summaries[0].ci_low, 4), round(summaries[0].ci_high, 4)]
    assert single["abstention_rate"] == 0.05
    assert single["prompt_tokens"] == round(summaries[0].prompt_tokens, 1)
    assert [(c["a"], c["b"]) for c in document["comparisons"]] == [
        ("single", "vote"),
        ("single", "debate-ring"),
        ("vote", "debate-ring"),
    ]
    assert set(document["comparisons"][0]) == {"a", "b", "n", "a_only", "b_only", "p_value"}

    with paths["csv"].open(newline="", encoding="utf-8") as stream:
        rows = list(csv.reader(stream))
    assert rows[0] == [f.name for f in fields(Outcome)]
    assert rows[0][:3] == ["mode", "line", "gold"]
    assert len(rows) == 1 + len(outcomes)
    abstained = next(row for row in rows[1:] if row[1] == "7")
    assert abstained[3] == ""
    assert abstained[rows[0].index("thread_id")] == "eval-single-7"
    assert rows[0][-2:] == ["usage_by_agent", "usage_by_model"]

    png = paths["png"].read_bytes()
    assert png.startswith(PNG_MAGIC)
    assert len(png) > 5000


def test_rewrite_replaces_and_leaves_no_temp_files(
    tmp_path: Path,
    results: Results,
) -> None:
    outcomes, summaries, comparisons = results
    write_results(tmp_path, outcomes, summaries, comparisons, {"run": 1})
    write_results(tmp_path, outcomes[:5], summaries[:1], [], {"run": 2})
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "accuracy.png",
        "results.csv",
        "results.json",
    ]
    assert json.loads((tmp_path / "results.json").read_text())["meta"] == {"run": 2}
    assert len((tmp_path / "results.csv").read_text().splitlines()) == 6


def test_no_results_still_writes(tmp_path: Path) -> None:
    paths = write_results(tmp_path, [], [], [], {})
    assert json.loads(paths["json"].read_text()) == {"meta": {}, "modes": [], "comparisons": []}
    assert paths["png"].read_bytes().startswith(PNG_MAGIC)


def test_unwritable_out_dir_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a folder")
    out = blocker / "results"
    with pytest.raises(UsageError) as caught:
        write_results(out, make_outcomes(), [], [], {})
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"--out {out}: cannot write results.json: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_failed_write_leaves_no_partial_files(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    results: Results,
) -> None:
    from matplotlib.figure import Figure

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, os.strerror(28))

    monkeypatch.setattr(Figure, "savefig", full_disk)
    outcomes, summaries, comparisons = results
    with pytest.raises(UsageError, match=r"cannot write accuracy\.png: No space left on device$"):
        write_results(tmp_path, outcomes, summaries, comparisons, {})
    assert list(tmp_path.iterdir()) == []  # neither the JSON nor the CSV, nor a temp file


def test_failed_rewrite_keeps_the_old_files(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    results: Results,
) -> None:
    outcomes, summaries, comparisons = results
    write_results(tmp_path, outcomes, summaries, comparisons, {"run": 1})
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("renderer crashed")

    from matplotlib.figure import Figure

    monkeypatch.setattr(Figure, "savefig", broken)
    with pytest.raises(RuntimeError):
        write_results(tmp_path, outcomes, summaries, comparisons, {"run": 2})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_results_table_renders_the_interval(
    results: Results,
) -> None:
    _, summaries, comparisons = results
    console = Console(record=True, width=120)
    tables = results_table(summaries, comparisons)
    console.print(*tables)
    text = console.export_text()
    single = summaries[0]
    assert f"{single.accuracy:.3f} [{single.ci_low:.3f}, {single.ci_high:.3f}]" in text
    assert "5.0%" in text  # abstentions
    assert "single vs vote" in text
    assert "McNemar p" in text
    for mode in MODES:
        assert mode in text


def test_results_table_without_comparisons(
    results: Results,
) -> None:
    _, summaries, _ = results
    assert len(results_table(summaries[:1], [])) == 1


def test_markdown_table(results: Results) -> None:
    _, summaries, comparisons = results
    markdown = markdown_table(summaries, comparisons)
    first, second = markdown.rstrip("\n").split("\n\n")
    lines = first.splitlines()
    assert lines[0].startswith("| mode | n | accuracy (95% CI) |")
    assert lines[1].startswith("| :--- | ---: |")
    assert len(lines) == 2 + len(summaries)
    single = summaries[0]
    assert lines[2].startswith(
        f"| single | 20 | {single.accuracy:.3f} [{single.ci_low:.3f}, {single.ci_high:.3f}] |"
    )
    comparison_lines = second.splitlines()
    assert comparison_lines[0] == "| a vs b | n | a only | b only | McNemar p |"
    assert len(comparison_lines) == 2 + len(comparisons)
    assert comparison_lines[2].startswith("| single vs vote | 20 |")
    assert markdown_table(summaries, []).count("\n\n") == 0
