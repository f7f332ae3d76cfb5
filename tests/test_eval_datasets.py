"""Tests for the eval's datasets: GSM8K and MCQ JSONL files, their errors, the selection."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from debategraph.errors import UsageError
from debategraph.eval.datasets import Loaded, load_gsm8k, load_mcq, select
from debategraph.eval.records import Item

Loader = Callable[[Path], Loaded]


def write_lines(tmp_path: Path, *lines: Any, name: str = "data.jsonl") -> Path:
    """A JSONL file: dicts and lists are dumped, strings written as they are."""
    path = tmp_path / name
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def gsm(question: str = "2+3?", answer: Any = "2+3=5\n#### 5") -> dict[str, Any]:
    return {"question": question, "answer": answer}


def mcq(answer: Any = "B", choices: Any = ("Paris", "London", "Berlin")) -> dict[str, Any]:
    return {"question": "Capital of the UK?", "choices": list(choices), "answer": answer}


def usage_error(loader: Loader, path: Path) -> str:
    with pytest.raises(UsageError) as info:
        loader(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"--dataset {path}")
    return message


# --------------------------------------------------------------------------
# GSM8K
# --------------------------------------------------------------------------


def test_gsm8k_reads_questions_and_gold(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path,
        gsm("How many?", "Steps...\n#### 1,234"),
        "",
        gsm("Price?", "#### $18.50"),
        gsm("Loss?", "#### -7"),
        gsm("  Padded?  ", "#### 18.0"),
    )
    loaded = load_gsm8k(path)
    assert loaded == Loaded(
        items=(
            Item(line=1, question="How many?", gold="1234"),
            Item(line=3, question="Price?", gold="18.5"),
            Item(line=4, question="Loss?", gold="-7"),
            Item(line=5, question="Padded?", gold="18"),
        ),
        skipped=0,
        skipped_lines=(),
    )
    assert all(item.choices == () for item in loaded.items)


def test_gsm8k_gold_is_after_the_last_mark(tmp_path: Path) -> None:
    loaded = load_gsm8k(write_lines(tmp_path, gsm(answer="#### 3 then #### 4")))
    assert loaded.items[0].gold == "4"


def test_gsm8k_skips_unusable_gold(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path,
        gsm(answer="#### 5"),
        gsm(answer="#### five"),
        gsm(answer="no mark here: 5"),
        gsm(answer="#### 6"),
        gsm(answer="####"),
    )
    loaded = load_gsm8k(path)
    assert [item.gold for item in loaded.items] == ["5", "6"]
    assert loaded.skipped == 3
    assert loaded.skipped_lines == (2, 3, 5)


def test_gsm8k_ignores_extra_fields_crlf_and_a_bom(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    line = json.dumps({**gsm(), "id": 7})
    path.write_bytes(b"\xef\xbb\xbf" + f"{line}\r\n\r\n{line}\r\n".encode())
    loaded = load_gsm8k(path)
    assert [item.line for item in loaded.items] == [1, 3]


def test_gsm8k_all_skipped(tmp_path: Path) -> None:
    path = write_lines(tmp_path, gsm(answer="#### a"), gsm(answer="x"), gsm(answer="#### ?"))
    message = usage_error(load_gsm8k, path)
    assert message == (
        f"--dataset {path}: no questions (3 lines skipped: gold answer not a number "
        "(lines 1, 2, 3))"
    )


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_empty_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(text, encoding="utf-8")
    for loader in (load_gsm8k, load_mcq):
        assert usage_error(loader, path) == f"--dataset {path} is empty: it has no lines to read"


# --------------------------------------------------------------------------
# File errors
# --------------------------------------------------------------------------


@pytest.mark.parametrize("loader", [load_gsm8k, load_mcq])
def test_missing_file(tmp_path: Path, loader: Loader) -> None:
    path = tmp_path / "nope.jsonl"
    assert usage_error(loader, path) == f"--dataset {path}: no such file"


def test_directory(tmp_path: Path) -> None:
    assert usage_error(load_gsm8k, tmp_path) == (
        f"--dataset {tmp_path}: is a directory, not a JSONL file"
    )


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_lines(tmp_path, gsm())

    def refuse(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", refuse)
    assert usage_error(load_gsm8k, path) == f"--dataset {path}: cannot read it (Permission denied)"


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    good = json.dumps(gsm()).encode()
    path.write_bytes(good + b"\n" + good + b"\n" + b'{"question": "caf\xe9"}\n')
    message = usage_error(load_gsm8k, path)
    assert message == f"--dataset {path} line 3: not UTF-8 (byte 0xe9); save the file as UTF-8"


# --------------------------------------------------------------------------
# Line errors: each names the line
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ("{not json", "line 3: not JSON (Expecting property name enclosed in double quotes)"),
        ("hello", "line 3: not JSON (Expecting value)"),
        ('{"question": "x"} trailing', "line 3: not JSON (Extra data)"),
        ("[1, 2]", "line 3: not a JSON object but [1, 2] (each line needs question and answer)"),
        ('"text"', 'line 3: not a JSON object but "text" (each line needs question and answer)'),
    ],
)
def test_gsm8k_a_line_not_json_refuses_the_file(tmp_path: Path, bad: Any, expected: str) -> None:
    path = write_lines(tmp_path, gsm(), "", bad, gsm())
    assert usage_error(load_gsm8k, path) == f"--dataset {path} {expected}"


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ({"question": "x"}, "missing field 'answer'; each line needs question and answer"),
        ({"answer": "#### 1"}, "missing field 'question'; each line needs question and answer"),
        (
            {"question": 12, "answer": "#### 1"},
            "field 'question' must be a non-empty string, not 12",
        ),
        (
            {"question": "  ", "answer": "#### 1"},
            "field 'question' must be a non-empty string, not \"  \"",
        ),
        (
            {"question": "x", "answer": 5},
            "field 'answer' must be a string ending in '#### <number>', not 5",
        ),
        ({**gsm(), "subject": 3}, "field 'subject' must be a string, not 3"),
    ],
)
def test_gsm8k_a_bad_line_is_skipped_and_counted(tmp_path: Path, bad: Any, why: str) -> None:
    path = write_lines(tmp_path, gsm(), "", bad, gsm())
    loaded = load_gsm8k(path)
    assert [item.line for item in loaded.items] == [1, 4]
    assert (loaded.skipped, loaded.skipped_lines, loaded.why) == (1, (3,), (why,))
    assert loaded.skipped_note("line") == f"1 line skipped: {why} (line 3)"


def test_long_bad_values_are_cut_short(tmp_path: Path) -> None:
    path = write_lines(tmp_path, {"question": ["line\n" * 50], "answer": "#### 1"})
    message = usage_error(load_gsm8k, path)
    assert "no questions (1 line skipped: field 'question' must be a non-empty string, not [" in (
        message
    )
    assert message.endswith("... (line 1))")
    assert len(message) < 150 + len(str(path))


# --------------------------------------------------------------------------
# MCQ
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("B", "B"),
        ("b", "B"),
        (" c ", "C"),
        (0, "A"),
        (2, "C"),
        ("London", "B"),
        ("  london ", "B"),
        ("BERLIN", "C"),
    ],
)
def test_mcq_answer_forms(tmp_path: Path, answer: Any, gold: str) -> None:
    loaded = load_mcq(write_lines(tmp_path, mcq(answer)))
    assert loaded.items == (
        Item(
            line=1, question="Capital of the UK?", gold=gold, choices=("Paris", "London", "Berlin")
        ),
    )


def test_mcq_letter_first_then_text(tmp_path: Path) -> None:
    # A single letter is a letter, even when it is also another choice's text.
    loaded = load_mcq(write_lines(tmp_path, mcq("a", choices=("b", "a"))))
    assert loaded.items[0].gold == "A"


def test_mcq_exact_text_beats_a_case_insensitive_one(tmp_path: Path) -> None:
    loaded = load_mcq(write_lines(tmp_path, mcq("paris", choices=("Paris", "paris", "x"))))
    assert loaded.items[0].gold == "B"


def test_mcq_26_choices(tmp_path: Path) -> None:
    choices = [f"option {i}" for i in range(26)]
    loaded = load_mcq(write_lines(tmp_path, mcq("z", choices=choices)))
    assert loaded.items[0].gold == "Z"
    assert len(loaded.items[0].choices) == 26


def test_mcq_skips_answers_that_name_no_choice(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path,
        mcq("B"),
        mcq("D"),  # a letter beyond three choices
        mcq(3),  # an index beyond them
        mcq(-1),
        mcq("Rome"),
        mcq("PARIS", choices=("paris", "Paris", "x")),  # two choices read the same
        mcq(1),
    )
    loaded = load_mcq(path)
    assert [(item.line, item.gold) for item in loaded.items] == [(1, "B"), (7, "B")]
    assert loaded.skipped == 5
    assert loaded.skipped_lines == (2, 3, 4, 5, 6)


def test_mcq_all_skipped(tmp_path: Path) -> None:
    path = write_lines(tmp_path, mcq("Z"), mcq(9))
    message = usage_error(load_mcq, path)
    assert message == (
        f"--dataset {path}: no questions (2 lines skipped: answer names no choice (lines 1, 2))"
    )


_CHOICES_RULE = "the choices must be a list of 2 to 26 non-empty texts, not"
_ANSWER_RULE = "field 'answer' must be a choice letter, a 0-based index or a choice's text, not"


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        (
            {"question": "x", "answer": "A"},
            "missing field 'choices' (each line needs question, choices and answer)",
        ),
        (
            {"question": "x", "choices": ["a", "b"]},
            "missing field 'answer' (each line needs question, choices and answer)",
        ),
        (
            {"choices": ["a", "b"], "answer": "A"},
            "missing field 'question' (each line needs question, choices and answer)",
        ),
        ([1], "not a JSON object but [1] (each line needs question, choices and answer)"),
        (mcq(choices=["only one"]), f'{_CHOICES_RULE} ["only one"]'),
        (mcq(choices=[]), f"{_CHOICES_RULE} []"),
        (mcq(choices=["a", ""]), "choice B is empty"),
        (mcq(choices=["a", 2]), f'{_CHOICES_RULE} ["a", 2]'),
        ({**mcq(), "choices": "a,b"}, f'{_CHOICES_RULE} "a,b"'),
        (mcq(choices=[str(i) for i in range(27)]), f'{_CHOICES_RULE} ["0", "1", "2", "3", "4", '),
        (mcq(answer=None), f"{_ANSWER_RULE} null"),
        (mcq(answer=True), f"{_ANSWER_RULE} true"),
        (mcq(answer=1.0), f"{_ANSWER_RULE} 1.0"),
        (mcq(answer=["B"]), f'{_ANSWER_RULE} ["B"]'),
    ],
)
def test_mcq_a_bad_line_is_skipped_and_counted(tmp_path: Path, bad: Any, expected: str) -> None:
    path = write_lines(tmp_path, mcq(), bad)
    if expected.startswith("not a JSON object"):
        assert usage_error(load_mcq, path) == f"--dataset {path} line 2: {expected}"
        return
    loaded = load_mcq(path)
    assert [item.line for item in loaded.items] == [1]
    assert (loaded.skipped, loaded.skipped_lines) == (1, (2,))
    assert loaded.why[0].startswith(expected.replace(" (each", "; each").removesuffix(")"))


def test_a_blank_choice_skips_its_line_and_names_the_choice(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path, mcq(), mcq(choices=["a", "  ", "c"]), mcq(choices=["a", "b", ""]), mcq()
    )
    loaded = load_mcq(path)
    assert [item.line for item in loaded.items] == [1, 4]
    assert loaded.skipped_note("line") == (
        "2 lines skipped: choice B is empty (line 2); choice C is empty (line 3)"
    )


def test_mcq_line_not_json(tmp_path: Path) -> None:
    path = write_lines(tmp_path, mcq(), mcq(), mcq(), mcq(), mcq(), mcq(), "{'single': 'quotes'}")
    assert usage_error(load_mcq, path) == (
        f"--dataset {path} line 7: not JSON (Expecting property name enclosed in double quotes)"
    )


# --------------------------------------------------------------------------
# Selection
# --------------------------------------------------------------------------


def items(count: int) -> list[Item]:
    return [Item(line=i + 1, question=f"q{i}", gold=str(i)) for i in range(count)]


def lines(selection: list[Item]) -> list[int]:
    return [item.line for item in selection]


def test_select_everything_in_file_order() -> None:
    chosen, note = select(items(5), offset=0, limit=None, seed=None)
    assert lines(chosen) == [1, 2, 3, 4, 5]
    assert note is None


def test_select_a_window() -> None:
    chosen, note = select(items(10), offset=3, limit=4, seed=None)
    assert lines(chosen) == [4, 5, 6, 7]
    assert note is None
    assert lines(select(items(10), offset=7, limit=None, seed=None)[0]) == [8, 9, 10]
    assert lines(select(items(10), offset=6, limit=4, seed=None)[0]) == [7, 8, 9, 10]


def test_select_with_a_seed_shuffles_a_copy() -> None:
    source = items(50)
    first, _ = select(source, offset=0, limit=None, seed=7)
    again, _ = select(source, offset=0, limit=None, seed=7)
    other, _ = select(source, offset=0, limit=None, seed=8)
    assert lines(first) == lines(again)
    assert lines(first) != lines(other)
    assert sorted(lines(first)) == list(range(1, 51))
    assert lines(first) != list(range(1, 51))
    assert lines(source) == list(range(1, 51))  # the input is left alone


def test_select_with_a_seed_windows_tile_the_shuffle() -> None:
    source = items(30)
    whole, _ = select(source, offset=0, limit=None, seed=3)
    parts = [select(source, offset=start, limit=10, seed=3)[0] for start in (0, 10, 20)]
    assert lines(whole) == [line for part in parts for line in lines(part)]


def test_select_clamps_a_large_limit_with_a_note() -> None:
    chosen, note = select(items(120), offset=0, limit=500, seed=None)
    assert len(chosen) == 120
    assert note == "--limit 500 is more than the 120 questions from offset 0: using 120"
    chosen, note = select(items(120), offset=119, limit=2, seed=1)
    assert len(chosen) == 1
    assert note == "--limit 2 is more than the 1 question from offset 119: using 1"


def test_select_exact_limit_has_no_note() -> None:
    chosen, note = select(items(12), offset=2, limit=10, seed=None)
    assert len(chosen) == 10
    assert note is None


@pytest.mark.parametrize(
    ("offset", "limit", "message"),
    [
        (-1, None, "--offset -1: must be 0 or more"),
        (0, 0, "--limit 0: must be 1 or more (leave it out for every question)"),
        (0, -5, "--limit -5: must be 1 or more (leave it out for every question)"),
        (200, None, "--offset 200: the dataset has 120 questions"),
        (120, 5, "--offset 120: the dataset has 120 questions"),
    ],
)
def test_select_bad_values(offset: int, limit: int | None, message: str) -> None:
    with pytest.raises(UsageError) as info:
        select(items(120), offset=offset, limit=limit, seed=None)
    assert str(info.value) == message


def test_select_bad_offset_on_one_question() -> None:
    with pytest.raises(UsageError, match=r"^--offset 1: the dataset has 1 question$"):
        select(items(1), offset=1, limit=None, seed=None)
