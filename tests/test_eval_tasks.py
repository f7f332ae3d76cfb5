r"""The standard benchmarks' readers and checkers: every format, every task's shapes, bad input.

Each test writes its small files in tmp_path, in the shape the task's publishers
distribute: JSONL, JSON, CSV and Parquet; ``hf:`` reads a fake local datasets cache.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from debategraph.errors import UsageError
from debategraph.eval.formats import read_rows
from debategraph.eval.questions import task_questions
from debategraph.eval.records import Item
from debategraph.eval.tasks import CHOICE_METRIC, MATH_METRIC, TASKS, YES_NO_METRIC
from debategraph.strategies.answers import extract_answer
from debategraph.strategies.math_answers import check_answer, last_boxed, math_equal

MMLU_ROWS = [
    {"question": "2+2?", "subject": "math", "choices": ["3", "4", "5", "6"], "answer": 1},
    {
        "question": "Red?",
        "subject": "art",
        "choices": ["red", "blue", "green", "grey"],
        "answer": 0,
    },
]


def write(path: Path, rows: list[dict[str, Any]], fmt: str | None = None) -> Path:
    """Rows in a file of the format its name ends in (``json``: an array)."""
    kind = fmt or path.suffix.lstrip(".")
    if kind == "jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    elif kind == "json":
        path.write_text(json.dumps(rows), encoding="utf-8")
    elif kind == "csv":
        with path.open("w", encoding="utf-8", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    else:
        import pyarrow
        import pyarrow.parquet

        pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), path)
    return path


def load(task: str, path: Path | str, seed: int = 0) -> list[Item]:
    return list(TASKS[task].load(str(path), seed)[0].items)


def error_of(task: str, path: Path | str) -> str:
    with pytest.raises(UsageError) as info:
        TASKS[task].load(str(path))
    message = str(info.value)
    assert "\n" not in message
    return message


# --------------------------------------------------------------------------
# Formats: JSONL, JSON (an array, or JSON Lines), CSV, Parquet
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["m.jsonl", "m.json", "m.parquet"])
def test_every_format_gives_the_same_mmlu_items(tmp_path: Path, name: str) -> None:
    items = load("mmlu", write(tmp_path / name, MMLU_ROWS))
    assert [(i.line, i.question, i.gold, i.choices) for i in items] == [
        (1, "2+2?", "B", ("3", "4", "5", "6")),
        (2, "Red?", "A", ("red", "blue", "green", "grey")),
    ]


def test_json_lines_saved_as_json_are_read(tmp_path: Path) -> None:
    """``datasets``' ``to_json`` writes JSON Lines into a ``.json`` file."""
    path = write(tmp_path / "m.json", MMLU_ROWS, fmt="jsonl")
    assert [i.gold for i in load("mmlu", path)] == ["B", "A"]


def test_the_original_mmlu_csv_has_no_header(tmp_path: Path) -> None:
    path = tmp_path / "abstract_algebra_test.csv"
    path.write_text('"2+2?",3,4,5,6,B\n"Red?",red,blue,green,grey,A\n', encoding="utf-8")
    items = load("mmlu", path)
    assert [(i.question, i.gold, i.choices[1]) for i in items] == [
        ("2+2?", "B", "4"),
        ("Red?", "A", "blue"),
    ]
    headers = [shape.fields for shape in TASKS["mmlu"].shapes]
    assert not read_rows(str(path), columns=TASKS["mmlu"].csv_columns, headers=headers).header


def test_a_line_break_inside_a_quoted_cell_stays_in_the_cell(tmp_path: Path) -> None:
    """GPQA and MMLU questions span lines: each is one question, its lines kept apart."""
    rows = [dict(GPQA[0], Question="Consider item 1.\nIs it red?"), dict(GPQA[1])]
    rows[1]["Correct Answer"] = "right2\r\nsecond line"
    items = load("gpqa", write(tmp_path / "gpqa.csv", rows))
    assert [i.question for i in items] == ["Consider item 1.\nIs it red?", "Q2?"]
    assert "right2\r\nsecond line" in items[1].choices
    path = tmp_path / "anatomy_test.csv"
    path.write_text('"Which item?\nConsider item 2.",a,"b\nc",d,e,B\r\nNext?,1,2,3,4,A\r\n')
    items = load("mmlu", path)
    assert [(i.line, i.question, i.choices[1]) for i in items] == [
        (1, "Which item?\nConsider item 2.", "b\nc"),
        (2, "Next?", "2"),
    ]


def test_a_csv_with_a_header_is_read_by_its_names(tmp_path: Path) -> None:
    """Its columns in any order; the header row is no question."""
    rows = [{"answer": "B", "question": "2+2?", "A": "3", "B": "4", "C": "5", "D": "6"}]
    items = load("mmlu", write(tmp_path / "m.csv", rows))
    assert [(i.question, i.gold, i.choices) for i in items] == [("2+2?", "B", ("3", "4", "5", "6"))]


# --------------------------------------------------------------------------
# Each task in its publishers' shapes
# --------------------------------------------------------------------------


def test_mmlu_pro_reads_ten_options_and_drops_the_padding(tmp_path: Path) -> None:
    options = [f"o{i}" for i in range(10)]
    rows = [
        {"question": "q1", "options": options, "answer": "J", "answer_index": 9, "category": "x"},
        {
            "question": "q2",
            "options": ["a", "b", "c", "N/A", "N/A"],
            "answer": "",
            "answer_index": 2,
        },
    ]
    items = load("mmlu-pro", write(tmp_path / "p.parquet", rows))
    assert [(i.gold, len(i.choices)) for i in items] == [("J", 10), ("C", 3)]


GPQA = [
    {
        "Question": f"Q{n}?",
        "Correct Answer": f"right{n}",
        "Incorrect Answer 1": f"w1-{n}",
        "Incorrect Answer 2": f"w2-{n}",
        "Incorrect Answer 3": f"w3-{n}",
    }
    for n in range(1, 9)
]


def test_gpqa_shuffles_its_choices_the_same_for_the_same_seed(tmp_path: Path) -> None:
    path = write(tmp_path / "gpqa_diamond.csv", GPQA)
    first, again, other = load("gpqa", path, 7), load("gpqa", path, 7), load("gpqa", path, 8)
    assert first == again
    assert [i.choices for i in first] != [i.choices for i in other]
    for item in first:  # the gold letter names the right answer wherever it went
        assert item.choices[ord(item.gold) - ord("A")] == f"right{item.line}"
    assert len({i.gold for i in first}) > 1  # not always first, as the file lists it
    meta = task_questions("gpqa", str(path), (0, None, None), choice_seed=7).meta
    assert meta["choice_seed"] == 7 and meta["metric"] == CHOICE_METRIC


def test_math_reads_boxed_solutions_and_math500_answers(tmp_path: Path) -> None:
    hendrycks = [
        {
            "problem": "Half of one?",
            "solution": "It is $\\boxed{\\frac{1}{2}}$.",
            "level": "Level 1",
            "type": "Algebra",
        },
        {"problem": "No box?", "solution": "It is one half.", "level": "Level 1", "type": "x"},
    ]
    items = load("math", write(tmp_path / "math.json", hendrycks))
    assert [(i.line, i.gold, i.checker) for i in items] == [(1, "\\frac{1}{2}", "math")]
    math500 = [{"problem": "Root?", "answer": "\\sqrt{2}", "solution": "\\boxed{x}"}]
    assert [i.gold for i in load("math", write(tmp_path / "m500.jsonl", math500))] == ["\\sqrt{2}"]


def test_gsm_hard_reads_numeric_targets(tmp_path: Path) -> None:
    rows = [{"input": "Big sum?", "target": 3.0, "code": "..."}, {"input": "x?", "target": -12.5}]
    items = load("gsm-hard", write(tmp_path / "gsmhard.jsonl", rows))
    assert [(i.question, i.gold, i.checker) for i in items] == [
        ("Big sum?", "3", "math"),
        ("x?", "-12.5", "math"),
    ]


def test_strategyqa_is_a_yes_no_question(tmp_path: Path) -> None:
    rows = [{"qid": "a", "question": "Is ice cold?", "answer": True}]
    rows.append({"qid": "b", "question": "Is fire cold?", "answer": False})
    items = load("strategyqa", write(tmp_path / "s.json", rows))
    assert [(i.choices, i.gold) for i in items] == [(("yes", "no"), "A"), (("yes", "no"), "B")]
    csv_items = load("strategyqa", write(tmp_path / "s.csv", rows))
    assert [i.gold for i in csv_items] == ["A", "B"]  # "True"/"False" as text


@pytest.mark.parametrize("name", ["s.csv", "s.jsonl"])
def test_strategyqa_reads_true_and_false_in_any_case(tmp_path: Path, name: str) -> None:
    answers = ["TRUE", "false", "True", "FALSE", "yes", "No", "maybe"]
    rows = [{"question": f"q{i}?", "answer": a} for i, a in enumerate(answers)]
    loaded, _ = TASKS["strategyqa"].load(str(write(tmp_path / name, rows)))
    assert [i.gold for i in loaded.items] == ["A", "B", "A", "B", "A", "B"]
    assert loaded.items[0].choices == ("yes", "no")
    assert (loaded.skipped_lines, loaded.why) == ((7,), ("no gold answer",))


@pytest.mark.parametrize(
    ("reply", "letter"),
    [("True", "A"), ("false", "B"), ("FALSE.", "B"), ("Answer: true", "A"), ("yes", "A")],
)
def test_a_yes_no_answer_of_true_or_false_is_read(reply: str, letter: str) -> None:
    assert extract_answer(reply, choices=("yes", "no"), loose=True) == letter
    assert extract_answer("true", choices=("up", "down"), loose=True) is None  # only yes/no


def test_arc_and_csqa_read_labelled_choices(tmp_path: Path) -> None:
    arc = [
        {
            "id": "1",
            "question": "Which?",
            "choices": {"text": ["x", "y", "z"], "label": ["1", "2", "3"]},
            "answerKey": "2",
        },
        {  # the publishers' own JSONL nests them
            "id": "2",
            "question": {
                "stem": "Nested?",
                "choices": [{"label": "A", "text": "p"}, {"label": "B", "text": "q"}],
            },
            "answerKey": "B",
        },
    ]
    items = load("arc", write(tmp_path / "arc.jsonl", arc))
    assert [(i.question, i.gold, i.choices) for i in items] == [
        ("Which?", "B", ("x", "y", "z")),
        ("Nested?", "B", ("p", "q")),
    ]
    csqa = [
        {
            "id": "c",
            "question": "Where?",
            "question_concept": "place",
            "choices": {"label": ["A", "B", "C", "D", "E"], "text": ["a", "b", "c", "d", "e"]},
            "answerKey": "E",
        }
    ]
    assert [i.gold for i in load("csqa", write(tmp_path / "csqa.parquet", csqa))] == ["E"]


def test_medqa_reads_option_mappings_and_lists(tmp_path: Path) -> None:
    rows = [
        {
            "question": "Drug?",
            "options": {"A": "a", "B": "b", "C": "c", "D": "d", "E": "e"},
            "answer_idx": "D",  # its letter alone
        },
        {"question": "Dose?", "options": ["one", "two", "three", "four"], "answer": "three"},
    ]
    items = load("medqa", write(tmp_path / "medqa.jsonl", rows))
    assert [(i.gold, len(i.choices)) for i in items] == [("D", 5), ("C", 4)]


# --------------------------------------------------------------------------
# Checkers
# --------------------------------------------------------------------------


def test_equivalent_math_answers_match_and_others_do_not() -> None:
    assert math_equal("0.5", "\\frac{1}{2}").correct
    assert check_answer("0.5", "\\frac{1}{2}", "math").correct
    assert not math_equal("0.5", "\\frac{1}{3}").correct
    assert math_equal("1.4142135623731", "\\sqrt{2}").correct
    assert check_answer("18", "18.0", "math").correct
    assert not check_answer("0.5", "\\frac{1}{2}", "exact").correct  # strings differ


def test_an_answer_the_checker_cannot_parse_is_wrong_with_its_reason() -> None:
    checked = math_equal("@@", "\\frac{1}{2}")
    assert (
        not checked.correct and "the answer '@@' cannot be parsed by math-verify" in checked.reason
    )
    assert check_answer(None, "B").reason == "no answer could be read"
    assert check_answer("B", "B").reason == ""


def test_last_boxed_balances_braces() -> None:
    assert last_boxed("\\boxed{1} then \\boxed{\\frac{a}{b}} end") == "\\frac{a}{b}"
    assert last_boxed("\\boxed{1} and \\boxed{unclosed") == "1"
    assert last_boxed("no box") is None


# --------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------


def test_a_file_of_unknown_shape_names_its_fields_and_the_shapes_read(tmp_path: Path) -> None:
    path = write(tmp_path / "x.jsonl", [{"prompt": "?", "label": 1}])
    message = error_of("mmlu", path)
    assert message.startswith(f"--dataset {path}: not a MMLU file: its fields are label, prompt;")
    assert "cais/mmlu (question, choices, answer)" in message
    assert "JSONL, JSON, CSV, Parquet" in message


def test_rows_without_an_answer_are_counted_and_noted(tmp_path: Path) -> None:
    rows = [*MMLU_ROWS, {"question": "None?", "choices": ["a", "b"], "answer": None}]
    chosen = task_questions("mmlu", str(write(tmp_path / "m.jsonl", rows)), (0, None, None))
    assert len(chosen.items) == 2
    assert chosen.meta["skipped"] == 1 and chosen.meta["skipped_lines"] == [3]
    assert chosen.meta["skipped_why"] == ["its answer names no choice"]
    assert chosen.notes == ["1 row skipped: its answer names no choice (row 3)"]
    assert chosen.meta["metric"] == CHOICE_METRIC and chosen.meta["format"] == "jsonl"


def test_a_blank_choice_skips_its_row_not_the_file(tmp_path: Path) -> None:
    """GPQA with one incorrect answer left blank, MMLU's CSV with an empty cell."""
    rows = [dict(GPQA[0]), dict(GPQA[1], **{"Incorrect Answer 2": " "}), dict(GPQA[2])]
    chosen = task_questions("gpqa", str(write(tmp_path / "g.csv", rows)), (0, None, None))
    assert [item.line for item in chosen.items] == [1, 3]
    assert chosen.meta["skipped_lines"] == [2]
    assert re.fullmatch(r"choice [A-D] is empty", chosen.meta["skipped_why"][0])
    assert chosen.notes[0].startswith("1 row skipped: choice ")
    path = tmp_path / "anatomy_test.csv"
    path.write_text('"2+2?",3,4,,6,B\n"Red?",red,blue,green,grey,A\n', encoding="utf-8")
    loaded, _ = TASKS["mmlu"].load(str(path))
    assert [i.question for i in loaded.items] == ["Red?"]
    assert (loaded.skipped_lines, loaded.why) == ((1,), ("choice C is empty",))


def test_a_file_of_bad_rows_only_names_why(tmp_path: Path) -> None:
    path = write(tmp_path / "m.jsonl", [{"question": "q", "choices": "abc", "answer": 0}])
    assert error_of("mmlu", path) == (
        f"--dataset {path}: no questions (1 row skipped: field 'choices' is \"abc\" (row 1))"
    )


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("e.csv", ""),
        ("e.csv", "\n\n"),
        ("e.jsonl", "\n"),
        ("e.json", "[]"),
        ("h.csv", "question,A,B,C,D,answer\n"),
    ],
)
def test_an_empty_file_is_called_empty(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert error_of("mmlu", path) == f"--dataset {path} is empty: it has no rows to read"


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("x.txt", "hi", "unknown file ending '.txt'"),
        ("x.parquet", "not parquet", "not a Parquet file"),
        ("x.json", "[1, 2]", "item 1: not a JSON object"),
        ("x.jsonl", "{}\n[", "line 2: not JSON"),
    ],
)
def test_a_bad_file_is_one_line(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert message in error_of("mmlu", path)


def test_a_missing_extra_says_which_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "math_verify", None)  # import fails as if not installed
    message = error_of("math", tmp_path / "m.jsonl")
    assert message == "--task math needs math_verify: pip install 'debategraph[eval]'"


def test_math_is_equivalence_by_the_task_table() -> None:
    assert {t.name: t.metric for t in TASKS.values() if t.checker == "math"} == {
        "math": MATH_METRIC,
        "gsm-hard": MATH_METRIC,
    }
    assert TASKS["strategyqa"].metric == YES_NO_METRIC


# --------------------------------------------------------------------------
# hf:NAME from the local datasets cache, offline
# --------------------------------------------------------------------------


def test_hf_not_in_the_cache_says_how_to_fetch_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "empty")
    message = error_of("mmlu", "hf:someone/nothing:test")
    assert "'someone/nothing' (default, split 'test') is not in the local datasets cache" in (
        message
    )
    assert "datasets.load_dataset('someone/nothing')" in message
    assert "hf download someone/nothing --repo-type dataset" in message


def fake_cache(cache: Path, name: str, rows: list[dict[str, Any]], split: str = "test") -> None:
    """``name`` as ``load_dataset`` left it in the datasets cache: what it reads offline.

    The parquet builder prepares the split into an Arrow file and its
    ``dataset_info.json``, moved to where a hub dataset's cached copy lies
    (``NAMESPACE___NAME/CONFIG/VERSION/HASH``, the file named after the dataset).
    """
    import shutil

    import pyarrow
    import pyarrow.parquet
    from datasets.packaged_modules.parquet.parquet import Parquet

    source = cache.parent / "source.parquet"
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), source)
    short = name.split("/")[-1]
    builder = Parquet(
        cache_dir=str(cache / "build"),
        dataset_name=short,
        config_name="default",
        data_files={split: str(source)},
        hash="0123abcd",
        version="0.0.0",
    )
    builder.download_and_prepare()
    target = cache / name.replace("/", "___") / "default" / "0.0.0" / "0123abcd"
    target.parent.mkdir(parents=True)
    shutil.move(builder.cache_dir, target)


def test_hf_reads_a_dataset_from_the_local_cache_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    cache = tmp_path / "cache"
    fake_cache(cache, "someone/tiny-mmlu", MMLU_ROWS)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    chosen = task_questions("mmlu", "hf:someone/tiny-mmlu:test", (0, None, None))
    assert [(i.question, i.gold) for i in chosen.items] == [("2+2?", "B"), ("Red?", "A")]
    assert chosen.meta["format"] == "hf" and chosen.meta["dataset"] == "hf:someone/tiny-mmlu:test"
    assert "split 'train'" in error_of("mmlu", "hf:someone/tiny-mmlu:train")


def test_dynamics_read_a_math_gold_as_the_answers_write_it() -> None:
    r"""A debate on MATH: ``0.5`` is right for ``\frac{1}{2}`` in every round, as in accuracy."""
    from debategraph.eval.dynamics import mode_dynamics
    from debategraph.eval.records import Outcome

    rounds = json.dumps([{"s1": "0.25", "s2": "0.5"}, {"s1": "0.5", "s2": "0.5"}])
    row = Outcome("debate-full", 1, "\\frac{1}{2}", "0.5", True, 1, 1, 1, 0.1, "t", rounds=rounds)
    (found,) = mode_dynamics([row], ["debate-full"])
    summary = found.summary
    assert (summary.final_accuracy, summary.oracle, summary.loss) == (1.0, 1.0, 0.0)
    assert [r.agent_accuracy for r in summary.rounds] == [0.5, 1.0]
