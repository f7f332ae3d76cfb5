r"""The answer extractor: turns what a solver wrote into a comparable answer.

A number for a numeric question (normalised, ``"1,234.50"`` -> ``"1234.5"``; a fraction such
as ``\frac{1}{2}`` or ``1/2`` as its decimal where it ends, else reduced), a choice
letter (``"A"``, ``"B"``...) for a multiple-choice one when the choices are given, or an
expression in its canonical form (``\frac{\sqrt{2}}{2}``, ``\left[1, 3\right)``) for a
question asked of that kind (:data:`AnswerKind`, given here to whoever reads answers: the
nodes, the eval, the CLI; written in :mod:`debategraph.state.records`, below, where the
states that hold a kind can import it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from debategraph.state.records import ANSWER_KINDS as ANSWER_KINDS
from debategraph.state.records import AnswerKind as AnswerKind
from debategraph.strategies.expressions import read_expression
from debategraph.strategies.numbers import FRACTION, NUMBER, normalize_value

_VALUE = rf"(?:{FRACTION})|(?:{NUMBER})"
_MARKED = [
    re.compile(rf"####\s*({_VALUE})"),
    re.compile(rf"\{{\{{\s*({_VALUE})\s*\}}\}}"),
    re.compile(rf"\\boxed\{{\s*({_VALUE})\s*\}}"),
    re.compile(rf"(?i)\banswer\s*(?:is|:|=)\s*\**\s*({_VALUE})"),
]
_ANY_NUMBER = re.compile(_VALUE)


# --------------------------------------------------------------------------
# Choice mode: a multiple-choice answer read as its letter
# --------------------------------------------------------------------------

#: The letters of the choices, in order: choice 0 is ``A``.
CHOICE_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

_LETTER = r"(?:\(\s*([A-Za-z])\s*\)|\[\s*([A-Za-z])\s*\]|([A-Za-z]))"
_OPTION_WORD = r"(?:(?i:option|choice|letter)\s*)?"
# The whole text is a letter: ``B``, ``b``, ``(B)``, ``B)``, ``B.``, ``**B**``, ``Option B``.
_ONLY_LETTER = re.compile(rf"[*_\s]*{_OPTION_WORD}[*_\s]*{_LETTER}\s*[.:)\]]?[*_\s.]*")
# A letter at the head of what follows a marker; a bare one must end there (not ``B12``,
# ``e.g.``); whether it is an article is decided by what follows it (see ``_head_letter``).
_HEAD_LETTER = re.compile(
    rf"[*_\s]*{_OPTION_WORD}[*_\s]*"
    r"(?:\(\s*([A-Za-z])\s*\)|\[\s*([A-Za-z])\s*\]|([A-Za-z])(?![\w'\u2019]|\.\w))"
)
# A letter that opens the text with its delimiter: ``B) Paris``, ``(B) Paris``, ``B. Paris``.
_START_LETTER = re.compile(
    r"[*_\s]*(?:\(\s*([A-Za-z])\s*\)|\[\s*([A-Za-z])\s*\]|([A-Za-z])\s*[.)\]](?!\w))"
)
_PAREN_LETTER = re.compile(r"\(([A-Z])\)")
# Marked answers, strongest first as in the numeric mode; each captures what follows the
# mark (a look-ahead, so two marks on one line are both found).
_CHOICE_MARKED = [
    re.compile(r"####[\s*_]*(?=([^\n]*))"),
    re.compile(r"\{\{([^{}\n]*)\}\}"),
    re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}"),
    re.compile(r"(?i)\banswer\s*(?:is\b\s*:?|:|=)[\s*_]*(?=([^\n]*))"),
]
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mathbf)\{([^{}]*)\}")
_FIRST_SENTENCE = re.compile(r"(?<=[.!?;])\s")
_WORD_AFTER = re.compile(r"\s+([A-Za-z]+)")
# After a bare ``A`` or ``I``, these words say it was a letter (``A because...``, ``A is
# right``); any other word says it was prose (``a dog``, ``I think``).
_AFTER_A_LETTER = frozenset(
    {"and", "as", "because", "but", "for", "given", "is", "or", "seems", "since", "was", "which"}
)


def choice_letter(index: int) -> str:
    """The letter of a choice.

    Args:
        index: The choice's 0-based position.

    Returns:
        ``"A"`` for 0, ``"B"`` for 1, ... ``"Z"`` for 25.

    Raises:
        ValueError: If ``index`` is not in 0..25.
    """
    if not 0 <= index < len(CHOICE_LETTERS):
        raise ValueError(f"choice index {index} is not in 0..{len(CHOICE_LETTERS) - 1}")
    return CHOICE_LETTERS[index]


#: What a multiple-choice question's choices must be (one letter each), as error messages say.
CHOICES_RULE = f"a list of 2 to {len(CHOICE_LETTERS)} non-empty texts"


def valid_choices(value: object) -> bool:
    """Whether ``value`` can be a question's choices: see :data:`CHOICES_RULE`.

    The one check of the dataset loader, the solver graph's input and ``solve --choice``.

    Args:
        value: The candidate.

    Returns:
        ``True`` for a list (or tuple) of 2 to 26 strings that are not blank.
    """
    return (
        isinstance(value, list | tuple)
        and 2 <= len(value) <= len(CHOICE_LETTERS)
        and all(isinstance(choice, str) and choice.strip() for choice in value)
    )


def choice_index(text: str, choices: Sequence[str]) -> int | None:
    """The one choice whose text ``text`` is, compared by :func:`normalize_choice`.

    Args:
        text: The text, e.g. ``"paris."``.
        choices: The choices' texts.

    Returns:
        Its 0-based index; ``None`` when no choice or several match.
    """
    return _choice_index(text, [normalize_choice(c) for c in choices])


def normalize_choice(text: str) -> str:
    """A choice's text as compared: case-folded, whitespace collapsed, no markup or final dot.

    Args:
        text: Text such as ``"  **Paris.** "``.

    Returns:
        ``"paris"``; an empty string if nothing is left.
    """
    collapsed = " ".join(text.split()).strip("*_`\"' ")
    return collapsed.rstrip(".").strip().casefold()


def _letter_of(match: re.Match[str] | None) -> str | None:
    if match is None:
        return None
    return next(group for group in match.groups() if group is not None).upper()


#: What a yes/no question's answer may say instead (``True``, ``FALSE``: any case).
_YES_NO = {"true": "yes", "false": "no"}


def _choice_index(text: str, keys: Sequence[str]) -> int | None:
    """The one choice whose normalised text is ``text`` (``None``: none or several).

    Where the choices are ``yes`` and ``no`` (and neither ``true`` nor ``false``), ``true``
    reads as ``yes`` and ``false`` as ``no``.
    """
    key = normalize_choice(text)
    if key in _YES_NO and key not in keys and {"yes", "no"} <= set(keys):
        key = _YES_NO[key]
    found = [i for i, choice in enumerate(keys) if key and choice == key]
    return found[0] if len(found) == 1 else None


def _head_letter(fragment: str) -> str | None:
    """The letter at the head of ``fragment``; never an article or an ``I`` opening prose."""
    match = _HEAD_LETTER.match(fragment)
    if match is None:
        return None
    word = _WORD_AFTER.match(fragment, match.end())
    prose = word is not None and word.group(1).casefold() not in _AFTER_A_LETTER
    if match.group(3) in ("a", "A", "I", "i") and prose:
        return None  # "the answer is a dog", "Answer: I think..."
    return _letter_of(match)


def _read_marked(fragment: str, keys: Sequence[str]) -> str | None:
    """The letter a marked fragment names: a letter, a choice's text, or a letter heading text."""
    fragment = _LATEX_TEXT.sub(r"\1", fragment).strip()
    letter = _letter_of(_ONLY_LETTER.fullmatch(fragment))
    if letter is not None:
        return letter
    for candidate in (fragment, _FIRST_SENTENCE.split(fragment, maxsplit=1)[0]):
        index = _choice_index(candidate, keys)
        if index is not None:
            return CHOICE_LETTERS[index]
    return _head_letter(fragment)


def _contained_choice(text: str, keys: Sequence[str]) -> int | None:
    """The one choice whose full text the prose contains (a longer one shadows its parts)."""
    haystack = " ".join(text.split()).casefold()
    contained = [
        i
        for i, key in enumerate(keys)
        if key and re.search(rf"(?<!\w){re.escape(key)}(?!\w)", haystack)
    ]
    alone = [i for i in contained if not any(j != i and keys[i] in keys[j] for j in contained)]
    return alone[0] if len(alone) == 1 else None


def _extract_choice(text: str, choices: Sequence[str], *, loose: bool) -> str | None:
    """The choice mode of :func:`extract_answer` (see there)."""
    if len(choices) > len(CHOICE_LETTERS):
        raise ValueError(f"{len(choices)} choices: at most {len(CHOICE_LETTERS)} have letters")
    letters = CHOICE_LETTERS[: len(choices)]
    keys = [normalize_choice(choice) for choice in choices]
    letter = _letter_of(_ONLY_LETTER.fullmatch(text.strip()))
    if letter is not None and letter in letters:
        return letter
    index = _choice_index(text, keys)
    if index is not None:
        return letters[index]
    for pattern in _CHOICE_MARKED:
        named = [_read_marked(fragment, keys) for fragment in pattern.findall(text)]
        marked = [letter for letter in named if letter is not None]
        if marked:
            return marked[-1] if marked[-1] in letters else None
    letter = _letter_of(_START_LETTER.match(text))
    if letter is not None and letter in letters:
        return letter
    if loose:
        in_range: list[str] = [found for found in _PAREN_LETTER.findall(text) if found in letters]
        if in_range:
            return in_range[-1]
        index = _contained_choice(text, keys)
        if index is not None:
            return letters[index]
    return None


def answer_form(choices: Sequence[str] | None, kind: AnswerKind = "number") -> str:
    """The form a question's answer takes: what picks its prompt, its reply schema, its name.

    Args:
        choices: The question's choices (``None`` or empty: none).
        kind: How a question without choices is answered.

    Returns:
        ``choice`` (a question with choices), else ``number`` or ``expression``.
    """
    return "choice" if choices else kind


def extract_answer(
    text: str | None,
    *,
    loose: bool = False,
    choices: Sequence[str] | None = None,
    kind: AnswerKind = "number",
) -> str | None:
    r"""Extract the final answer from a solver's text: a number, a choice letter, an expression.

    Numeric mode (no ``choices``): marked answers win, last one first: ``#### 18``,
    ``{{18}}``, ``\boxed{18}``, ``Answer: 18``. With ``loose=True`` (for a field that
    should hold only the answer) the last number in the text is taken when nothing is
    marked. A fraction of whole numbers (``\frac{1}{2}``, ``\dfrac{1}{2}``, ``1/2``) is a
    number too: :func:`normalize_value` (``0.5``; ``1/3`` stays a reduced fraction).

    Choice mode (``choices`` given, non-empty): the answer is the letter of a choice, in
    this order:

    1. the whole text is a letter: ``B``, ``b``, ``(B)``, ``B)``, ``B.``, ``**B**``,
       ``Option B``; or the whole text is one choice's text (case and whitespace
       ignored; ``true``/``false`` are ``yes``/``no`` where those are the choices);
    2. a marked answer, the same marks and order as the numeric mode (``#### D``,
       ``{{B}}``, ``\boxed{B}``, ``Answer: B``, ``The answer is (C)``, ``answer is
       option B``); the last one wins. What follows the mark may be a letter, a choice's
       text, or a letter heading text (``Answer: B) Paris``). A bare ``a``/``A``/``I``
       followed by a word is prose (``the answer is a dog``), never a letter;
    3. a letter that opens the text with its delimiter: ``B) Paris``, ``(B) Paris``,
       ``B. Paris``;
    4. with ``loose=True`` only: the last upper-case ``(C)`` anywhere, then a prose
       answer that contains exactly one choice's full text (a choice contained in
       another contained one does not count: ``Paris, Texas`` is not ``Paris``).

    A bare letter elsewhere in prose never counts. A letter beyond the choices (``E``
    with four) is no answer: ``None`` when it is the last marked one.

    Expression mode (``kind="expression"``, no ``choices``): the marked answer kept
    whole (``\boxed{...}`` with its braces balanced, ``#### ...``, ``Answer: ...``), or
    with ``loose=True`` the whole text unless it is prose, in the canonical form of
    :func:`~debategraph.strategies.expressions.canonical_expression`, so that answers
    math-verify reads as one object are one text.

    Args:
        text: The text to read.
        loose: Accept an unmarked number (numeric mode); accept ``(C)`` anywhere and a
            choice's text inside prose (choice mode).
        choices: The choices' texts, in letter order. ``None`` or empty: numeric mode,
            or expression mode.
        kind: How a question without choices is answered (``number`` or ``expression``).

    Returns:
        The normalised number, the choice letter or the expression; ``None`` when there
        is no answer
        (an abstention, never a vote).

    Raises:
        ValueError: If more than 26 choices are given (there are no more letters).
    """
    if choices:
        return _extract_choice(text or "", choices, loose=loose)
    if not text:
        return None
    if kind == "expression":
        return read_expression(text, loose=loose)
    for pattern in _MARKED:
        found = pattern.findall(text)
        if found:
            return normalize_value(found[-1])
    if loose:
        found = _ANY_NUMBER.findall(text)
        if found:
            return normalize_value(found[-1])
    return None
