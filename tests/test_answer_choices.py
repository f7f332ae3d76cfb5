"""Tests for the choice mode of the answer extractor: a multiple-choice answer as its letter."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from debategraph.strategies import (
    CHOICE_LETTERS,
    choice_letter,
    extract_answer,
    normalize_choice,
)

CITIES = ("Paris", "London", "Berlin", "Madrid")


def read(text: str | None, *, loose: bool = False, choices: tuple[str, ...] = CITIES) -> str | None:
    return extract_answer(text, loose=loose, choices=choices)


# --------------------------------------------------------------------------
# Letters and their helpers
# --------------------------------------------------------------------------


def test_choice_letters() -> None:
    assert CHOICE_LETTERS == "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    assert [choice_letter(i) for i in (0, 1, 2, 25)] == ["A", "B", "C", "Z"]


@pytest.mark.parametrize("index", [-1, 26, 100])
def test_choice_letter_out_of_range(index: int) -> None:
    with pytest.raises(ValueError, match=r"not in 0\.\.25"):
        choice_letter(index)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("Paris", "paris"), ("  **Paris.** ", "paris"), ("New   York\n City", "new york city")],
)
def test_normalize_choice(raw: str, expected: str) -> None:
    assert normalize_choice(raw) == expected


def test_too_many_choices() -> None:
    with pytest.raises(ValueError, match="at most 26"):
        extract_answer("A", choices=[str(i) for i in range(27)])


# --------------------------------------------------------------------------
# The letter alone, marked letters, choice texts
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "B",
        "b",
        "(B)",
        "B)",
        "B.",
        "**B**",
        " B \n",
        "[B]",
        "(b).",
        "Option B",
        "choice b",
        "**(B)**",
    ],
)
@pytest.mark.parametrize("loose", [False, True])
def test_letter_alone(text: str, loose: bool) -> None:
    assert read(text, loose=loose) == "B"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Answer: B", "B"),
        ("answer: c", "C"),
        ("The answer is (C)", "C"),
        ("The answer is (c).", "C"),
        ("So the correct answer is option D.", "D"),
        ("#### D", "D"),
        ("Reasoning...\n#### A", "A"),
        ("\\boxed{B}", "B"),
        ("\\boxed{\\text{C}}", "C"),
        ("{{D}}", "D"),
        ("**Answer:** C", "C"),
        ("**Answer:**\n\nD", "D"),
        ("Final answer = B", "B"),
        ("The answer is A because Paris is the capital.", "A"),
        ("Answer: A is right", "A"),
        ("Answer: B) London", "B"),
        ("Answer: (B) London", "B"),
        ("The answer is: **B**", "B"),
        ("London seems right. Answer: Berlin.", "C"),
        ("Answer: madrid", "D"),
        ("the answer is a.", "A"),
    ],
)
@pytest.mark.parametrize("loose", [False, True])
def test_marked_letter_in_prose(text: str, expected: str, loose: bool) -> None:
    assert read(text, loose=loose) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Answer: A. On second thought, the answer is C",
        "Answer: B\nAnswer: C",
        "The answer is (A)... no wait, the answer is (C).",
        "\\boxed{A} then \\boxed{C}",
        "#### B\n#### C",
    ],
)
def test_last_marked_letter_wins(text: str) -> None:
    assert read(text) == "C"


def test_marks_keep_the_numeric_order() -> None:
    # As for numbers: a "####" answer beats an "Answer:" one wherever they stand.
    assert read("#### B\nAnswer: C") == "B"


def test_an_unreadable_last_mark_leaves_the_earlier_one() -> None:
    assert read("Answer: B. Why? The answer is obvious once you see it.") == "B"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Paris", "A"),
        ("  pArIs \n", "A"),
        ("berlin.", "C"),
        ("B) London", "B"),
        ("(C) Berlin", "C"),
        ("D. Madrid", "D"),
        ("**C) Berlin**", "C"),
    ],
)
@pytest.mark.parametrize("loose", [False, True])
def test_choice_text_and_letter_with_text(text: str, expected: str, loose: bool) -> None:
    assert read(text, loose=loose) == expected


def test_letter_with_text_keeps_the_letter() -> None:
    # The letter decides, even when the text that follows is another choice's.
    assert read("B) Paris") == "B"


def test_multi_word_choice_text() -> None:
    choices = ("New York City", "Los Angeles", "San Francisco")
    assert read("new  york city", choices=choices) == "A"
    assert read("Answer: Los Angeles", choices=choices) == "B"


# --------------------------------------------------------------------------
# Prose: only in loose mode, and exactly one choice
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The capital of France is Paris.", "A"),
        ("I would say Berlin, the capital of Germany", "C"),
        ("I pick (D) here", "D"),
        ("Both (A) and (C) look fine, but I go with (B)", "B"),
    ],
)
def test_loose_prose(text: str, expected: str) -> None:
    assert read(text, loose=True) == expected
    assert read(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Paris or London, hard to say",  # two choices named
        "Nothing fits.",
        "I pick (E)",  # beyond the choices
        "first (a), then (b)",  # lower-case enumerations are not marks
    ],
)
def test_loose_prose_without_one_answer(text: str) -> None:
    assert read(text, loose=True) is None


def test_a_choice_inside_a_longer_contained_one_does_not_count() -> None:
    choices = ("Paris", "Paris, Texas", "Dallas")
    assert read("It is Paris, Texas of course", loose=True, choices=choices) == "B"
    assert read("It is Paris in France", loose=True, choices=choices) == "A"


def test_choice_text_must_be_whole_words() -> None:
    choices = ("1", "10", "100")
    assert read("the result is 100 apples", loose=True, choices=choices) == "C"
    assert read("the result is 10 apples", loose=True, choices=choices) == "B"


# --------------------------------------------------------------------------
# The article trap and letters out of range
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "A cat sat on the mat.",
        "This is a hard one.",
        "The answer is a dog.",
        "Answer: A farmer owns the field.",
        "Answer: I think it is probably B",
        "I think it's B",
        "B is tempting, but I am not sure.",
        "The answer is therefore B",
        "e.g. A or B",
        "A.M. is the morning",
        "B12 is a vitamin",
    ],
)
@pytest.mark.parametrize("loose", [False, True])
def test_bare_letters_in_prose_are_not_answers(text: str, loose: bool) -> None:
    assert read(text, loose=loose) is None


@pytest.mark.parametrize("text", ["E", "(E)", "Answer: E", "#### F", "\\boxed{Z}", "e"])
@pytest.mark.parametrize("loose", [False, True])
def test_letters_beyond_the_choices(text: str, loose: bool) -> None:
    assert read(text, loose=loose) is None


def test_out_of_range_last_mark_is_no_answer() -> None:
    assert read("Answer: B\nAnswer: E") is None


def test_two_choices_only_have_a_and_b() -> None:
    assert read("C", choices=("yes", "no")) is None
    assert read("Answer: b", choices=("yes", "no")) == "B"
    assert read("No.", choices=("yes", "no")) == "B"


@pytest.mark.parametrize("text", [None, "", "   ", "I do not know."])
@pytest.mark.parametrize("loose", [False, True])
def test_no_answer(text: str | None, loose: bool) -> None:
    assert read(text, loose=loose) is None


def test_numeric_mode_is_unchanged_without_choices() -> None:
    assert extract_answer("Answer: B") is None
    assert extract_answer("#### 18", choices=None) == "18"
    assert extract_answer("I think 12, maybe 14", loose=True, choices=()) == "14"


def test_numeric_choices_read_as_choices() -> None:
    choices = ("12", "14", "16", "18")
    assert read("#### 16", choices=choices) == "C"
    assert read("14", choices=choices) == "B"


# --------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------

_choice_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=30
)
_choice_lists = st.lists(_choice_text, min_size=2, max_size=26)


@given(choices=_choice_lists, data=st.data())
def test_marked_letter_property(choices: list[str], data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(choices) - 1))
    letter = choice_letter(index)
    keys = {normalize_choice(choice) for choice in choices}
    for text in (f"Answer: {letter}", letter, f"({letter})", f"#### {letter.lower()}"):
        if normalize_choice(text) in keys and text != letter:
            continue  # a choice whose text is "Answer: B" is that choice
        assert extract_answer(text, choices=choices) == letter
        assert extract_answer(text, choices=choices, loose=True) == letter


@given(choices=_choice_lists, data=st.data())
def test_choice_text_property(choices: list[str], data: st.DataObject) -> None:
    keys = [normalize_choice(choice) for choice in choices]
    assume(all(keys) and len(set(keys)) == len(keys))
    # A choice that reads as a letter (``B``, ``(c).``) is the letter it reads as.
    assume(not any(extract_answer(choice, choices=["x"] * 26) for choice in choices))
    index = data.draw(st.integers(0, len(choices) - 1))
    assert extract_answer(choices[index], choices=choices) == choice_letter(index)
    assert extract_answer(choices[index], choices=choices, loose=True) == choice_letter(index)
