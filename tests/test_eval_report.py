"""The eval's result files, plots and tables: contents, atomic writes, one-line errors."""

from __future__ import annotations

import csv
import json
import os
from dataclasses import fields
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from rich.console import Console

from debategraph.errors import UsageError
from debategraph.eval.arithmetic import QUESTIONS_FILE, generate_arithmetic, write_questions
from debategraph.eval.dynamics import mode_dynamics
from debategraph.eval.figures import accuracy_figure, dynamics_figure
from debategraph.eval.records import Matched, ModeSummary, Outcome
from debategraph.eval.report import read_report, results_document, write_results
from debategraph.eval.shards import PLAN_FILE, write_plan
from debategraph.eval.stats import Report, build_report, summarize
from debategraph.eval.tables import markdown_table, results_table
from tests.test_write_whole import disk_full

MODES = ["single", "vote", "debate-full", "vote@6"]
LABELS = ["single", "vote", "debate-full", "debate-full/judge", "vote@6"]
MATCHED = [Matched("debate-full", "vote@6", 6, "k = 6: 900 tokens / 150 per answer")]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
FILES = ["accuracy.png", "dynamics.png", "results.csv", "results.json"]
META = {"dataset": Path("data/gsm8k.jsonl"), "model": "stub", "skipped": {"unreadable": 1}}


def rounds_of(line: int, agents: int, depth: int) -> str:
    """Solvers right when (line + solver + round) % 3 != 0: some flips every round."""
    return json.dumps(
        [
            {f"s{s}": "12" if (line + s + r) % 3 else "5" for s in range(1, agents + 1)}
            for r in range(depth)
        ]
    )


def make_outcomes() -> list[Outcome]:
    rows = []
    shapes = {"single": (1, 1, 150), "vote": (3, 1, 450), "debate-full": (3, 2, 900)}
    shapes["vote@6"] = (6, 1, 950)
    for index, (mode, (agents, depth, tokens)) in enumerate(shapes.items()):
        for line in range(1, 21):
            correct = (line + index) % 3 != 0
            decisions = ["plurality", "judge"] if depth > 1 else ["plurality"]
            for decision in decisions:
                right = correct if decision == "plurality" else line % 4 != 0
                rows.append(
                    Outcome(
                        mode=mode,
                        line=line,
                        gold="12",
                        answer=None if line == 7 else ("12" if right else "5"),
                        correct=right and line != 7,
                        prompt_tokens=tokens - 40 + line + (100 if decision == "judge" else 0),
                        completion_tokens=40,
                        calls=agents * depth,
                        wall_s=0.25 * (1 + index),
                        thread_id=f"eval-{mode}-{line}",
                        decision=decision,
                        rounds=rounds_of(line, agents, depth),
                    )
                )
    return rows


OUTCOMES = make_outcomes()
REPORT = build_report(OUTCOMES, MODES, MATCHED)
QUESTIONS = generate_arithmetic(3, operands=2, max_operand=9, seed=0)


def assert_png(path: Path, size: tuple[int, int]) -> None:
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC)
    with Image.open(path) as image:
        image.verify()
    with Image.open(path) as image:
        assert image.size == size


def test_write_results(tmp_path: Path) -> None:
    out = tmp_path / "new" / "run"  # created when missing
    paths = write_results(out, OUTCOMES, REPORT, META)
    assert paths == {
        "json": out / "results.json",
        "csv": out / "results.csv",
        "png": out / "accuracy.png",
        "dynamics": out / "dynamics.png",
    }
    assert sorted(p.name for p in out.iterdir()) == FILES

    document = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert list(document) == ["meta", "modes", "comparisons", "matched", "dynamics"]
    assert document["meta"] == {
        "dataset": "data/gsm8k.jsonl",
        "model": "stub",
        "skipped": {"unreadable": 1},
    }
    assert [m["mode"] for m in document["modes"]] == LABELS
    single, judged = document["modes"][0], document["modes"][3]
    summary = REPORT.summaries[0]
    assert set(single) == {f.name for f in fields(ModeSummary)} | {"ci95", "pareto"}
    assert (single["n"], single["decision"], judged["decision"]) == (20, "plurality", "judge")
    assert single["accuracy"] == round(summary.accuracy, 4)
    assert single["ci95"] == [round(summary.ci_low, 4), round(summary.ci_high, 4)]
    assert single["abstention_rate"] == 0.05
    assert single["prompt_tokens"] == 120.5  # 110 + mean line 10.5
    assert single["tokens"] == 160.5
    assert [m["mode"] for m in document["modes"] if m["pareto"]] == list(REPORT.pareto)

    assert [(c["a"], c["b"]) for c in document["comparisons"]] == [
        ("single", "vote"),
        ("single", "debate-full"),
        ("vote", "debate-full"),
        ("debate-full", "debate-full/judge"),
        ("debate-full", "vote@6"),
    ]
    first = document["comparisons"][0]
    assert set(first) == {"a", "b", "n", "a_only", "b_only", "p_value", "significant"}
    assert first["significant"] is (first["p_value"] < 0.05)

    (matched,) = document["matched"]
    assert matched == {
        "mode": "debate-full",
        "vote_mode": "vote@6",
        "k": 6,
        "how": MATCHED[0].how,
        "n": 20,
        "tokens": 910.5,
        "vote_tokens": 960.5,
        "ratio": round(960.5 / 910.5, 4),
        "within": True,
        "accuracy": REPORT.matched[0].accuracy,
        "vote_accuracy": REPORT.matched[0].vote_accuracy,
        "a_only": REPORT.matched[0].a_only,
        "b_only": REPORT.matched[0].b_only,
        "p_value": round(REPORT.matched[0].p_value, 6),
        "significant": False,
    }

    (dynamics,) = document["dynamics"]
    assert dynamics["mode"] == "debate-full"
    assert dynamics["threads"] == 20
    assert [r["round"] for r in dynamics["rounds"]] == [1, 2]
    second = dynamics["rounds"][1]
    assert len(second["agent_ci"]) == 2
    flip = REPORT.dynamics[0].summary.rounds[1].flip_to_wrong
    assert flip is not None
    assert second["flip_to_wrong"] == round(flip, 4)
    assert [d["label"] for d in dynamics["decisions"]] == ["debate-full", "debate-full/judge"]

    with paths["csv"].open(newline="", encoding="utf-8") as stream:
        rows = list(csv.reader(stream))
    assert rows[0] == [f.name for f in fields(Outcome)]
    assert rows[0][-7:] == [
        "decision",
        "rounds",
        "error",
        "cost",
        "cache_hits",
        "subject",
        "epoch",
    ]  # new go last
    assert len(rows) == 1 + len(OUTCOMES)
    abstained = next(row for row in rows[1:] if row[1] == "7")
    assert abstained[3] == ""
    assert abstained[rows[0].index("thread_id")] == "eval-single-7"
    assert json.loads(rows[-1][rows[0].index("rounds")]) == json.loads(OUTCOMES[-1].rounds)

    assert_png(paths["png"], (800, 560))
    assert_png(paths["dynamics"], (1100, 460))


def quick_plots(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Figures save a stand-in (rendering is what test_write_results checks); the figure's
    first line of text is recorded."""
    from matplotlib.figure import Figure

    saved: list[str] = []

    def savefig(figure: Figure, stream: Any, **kwargs: object) -> None:
        saved.append(figure.axes[0].get_title())
        stream.write(f"{PNG_MAGIC!r} {len(saved)}".encode())

    monkeypatch.setattr(Figure, "savefig", savefig)
    return saved


def test_rewrite_replaces_and_leaves_no_temp_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = quick_plots(monkeypatch)
    write_results(tmp_path, OUTCOMES, REPORT, {"run": 1})
    few = OUTCOMES[:5]
    write_results(tmp_path, few, build_report(few, MODES), {"run": 2})
    assert len(saved) == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == FILES
    assert json.loads((tmp_path / "results.json").read_text())["meta"] == {"run": 2}
    assert len((tmp_path / "results.csv").read_text().splitlines()) == 6
    assert (tmp_path / "dynamics.png").read_bytes().endswith(b" 4")


def test_no_results_still_writes(tmp_path: Path) -> None:
    paths = write_results(tmp_path, [], build_report([], MODES), {})
    assert json.loads(paths["json"].read_text()) == {
        "meta": {},
        "modes": [],
        "comparisons": [],
        "matched": [],
        "dynamics": [],
    }
    assert_png(paths["png"], (800, 560))
    assert_png(paths["dynamics"], (640, 320))  # says there are no debate modes


def test_dynamics_figure_degenerate_cases() -> None:
    figure = dynamics_figure([])
    assert "no debate modes" in figure.axes[0].texts[0].get_text()
    # One round only (a debate mode whose threads all stopped after round 1).
    rows = [
        Outcome("debate-full", 1, "12", "12", True, 10, 1, 1, 0.1, "t", rounds=rounds_of(1, 3, 2))
    ]
    (entry,) = mode_dynamics(rows, ["debate-full"])
    one = type(entry)(
        entry.mode,
        entry.summary.model_copy(update={"rounds": entry.summary.rounds[:1]}),
        entry.decisions,
    )
    figure = dynamics_figure([one])
    assert any("one round only" in text.get_text() for text in figure.axes[1].texts)


def test_accuracy_labels_do_not_overlap() -> None:
    # Eight labels crowded at two budgets, the protocol rows of two debate modes.
    rows = []
    for mode, tokens in (("debate-ring", 1000), ("debate-full", 1040)):
        for index, decision in enumerate(
            ("plurality", "weighted", "supermajority:2/3:plurality", "judge")
        ):
            rows += [
                Outcome(
                    mode,
                    line,
                    "1",
                    "1",
                    line <= 10 + index,
                    tokens,
                    0,
                    1,
                    0.1,
                    "t",
                    decision=decision,
                )
                for line in range(1, 21)
            ]
    summaries = summarize(rows, ["debate-ring", "debate-full"])
    figure = accuracy_figure(summaries, ["debate-ring"])
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    labels = [
        text for text in figure.axes[0].texts if text.get_text() in {s.mode for s in summaries}
    ]
    assert len(labels) == 8
    boxes = [text.get_window_extent(renderer) for text in labels]
    for a, b in combinations(boxes, 2):
        assert not a.overlaps(b)


def test_unwritable_out_dir_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a folder")
    out = blocker / "results"
    with pytest.raises(UsageError) as caught:
        write_results(out, OUTCOMES, REPORT, {})
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"--out {out}: cannot write results.json: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_failed_write_leaves_no_partial_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from matplotlib.figure import Figure

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, os.strerror(28))

    monkeypatch.setattr(Figure, "savefig", full_disk)
    with pytest.raises(UsageError, match=r"cannot write accuracy\.png: No space left on device$"):
        write_results(tmp_path, OUTCOMES, REPORT, {})
    assert list(tmp_path.iterdir()) == []  # neither the JSON nor the CSV, nor a temp file


@pytest.mark.parametrize("name", [QUESTIONS_FILE, PLAN_FILE])
def test_questions_and_plan_are_written_whole_or_fail_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    write = {
        QUESTIONS_FILE: lambda: write_questions(tmp_path / QUESTIONS_FILE, QUESTIONS),
        PLAN_FILE: lambda: write_plan(tmp_path, {"rounds": 2}),
    }[name]
    assert write() == tmp_path / name
    assert [p.name for p in tmp_path.iterdir()] == [name]
    disk_full(monkeypatch)
    with pytest.raises(UsageError) as caught:
        write()
    monkeypatch.undo()
    assert str(caught.value) == f"--out {tmp_path}: cannot write {name}: No space left on device"
    assert [p.name for p in tmp_path.iterdir()] == [name]  # the old one, and no temporary file


def test_failed_rewrite_keeps_the_old_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = quick_plots(monkeypatch)
    write_results(tmp_path, OUTCOMES, REPORT, {"run": 1})
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    from matplotlib.figure import Figure

    def broken(figure: Figure, stream: Any, **kwargs: object) -> None:
        if figure.axes[0].get_title() == "Accuracy per round":  # dynamics.png
            raise RuntimeError("renderer crashed")
        stream.write(b"new")

    monkeypatch.setattr(Figure, "savefig", broken)
    with pytest.raises(RuntimeError):
        write_results(tmp_path, OUTCOMES, REPORT, {"run": 2})
    assert len(saved) == 2
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def rendered(report: Report) -> str:
    console = Console(record=True, width=200)
    console.print(*results_table(report))
    return console.export_text()


def test_results_table() -> None:
    text = rendered(REPORT)
    single = REPORT.summaries[0]
    assert f"{single.accuracy:.3f} [{single.ci_low:.3f}, {single.ci_high:.3f}]" in text
    assert "5.0%" in text  # abstentions
    for title in (
        "Accuracy and cost per mode and protocol",
        "Paired comparisons (exact McNemar test)",
        "Debate against a vote at the same token budget",
        "Debate dynamics per round",
        "Oracle and loss per mode and protocol",
    ):
        assert title in text
    assert "single vs vote" in text
    assert "debate-full vs debate-full/judge" in text
    assert "not significant" in text
    assert "910 vs 960" in text  # total tokens a question, debate vs its vote
    assert "1.05 (within 10%)" in text
    assert f"vote@6: {MATCHED[0].how}" in text
    for label in LABELS:
        assert label in text


def test_results_table_of_one_mode() -> None:
    rows = [o for o in OUTCOMES if o.mode == "single"]
    (table,) = results_table(build_report(rows, ["single"]))
    assert table.title == "Accuracy and cost per mode and protocol"


def test_markdown_table() -> None:
    markdown = markdown_table(REPORT)
    assert markdown.endswith(
        " |\n\n_oracle: some solver gave the gold answer in some round; "
        "loss: the oracle holds and the decision is wrong._\n"
    )
    parts = markdown.rstrip("\n").split("\n\n")
    assert parts[0] == "**Accuracy and cost per mode and protocol**"
    lines = parts[1].splitlines()
    assert lines[0].startswith("| mode | n | accuracy (95% CI) |")
    assert lines[1].startswith("| :--- | ---: |")
    assert len(lines) == 2 + len(LABELS)
    single = REPORT.summaries[0]
    assert lines[2].startswith(
        f"| single | 20 | {single.accuracy:.3f} [{single.ci_low:.3f}, {single.ci_high:.3f}] |"
    )
    assert parts[2] == "**Paired comparisons (exact McNemar test)**"
    comparisons = parts[3].splitlines()
    assert comparisons[0] == "| a vs b | n | a only | b only | McNemar p | Holm p | at 5% |"
    assert len(comparisons) == 2 + len(REPORT.comparisons)
    assert comparisons[2].startswith("| single vs vote | 20 |")
    assert comparisons[2].endswith("| not significant |")
    assert "**Debate against a vote at the same token budget**" in parts
    assert f"_vote@6: {MATCHED[0].how}_" in parts
    only = build_report([o for o in OUTCOMES if o.mode == "single"], ["single"])
    assert markdown_table(only).count("\n\n") == 1  # a title and one table


def test_read_report_gives_the_same_tables() -> None:
    text = json.dumps(results_document(REPORT, META), default=str)
    again = read_report(json.loads(text))
    assert markdown_table(again) == markdown_table(REPORT)
    assert again.pareto == REPORT.pareto
    with pytest.raises(ValueError, match=r"^not a results\.json document: KeyError 'modes'$"):
        read_report({"meta": {}})
