"""The eval's figures per subject and across epochs (``--epochs``).

:func:`subject_scores` scores each mode on each subject (MMLU's subject, MMLU-Pro's
category, GPQA's domain: :attr:`~debategraph.eval.records.Item.subject`) with its Wilson
interval; :func:`epoch_agreement` says how often a question's epochs gave the same
answer. Both read a mode's own rows (its plurality decision, and each matched vote's),
never the other protocols' rows of the same threads; both are empty where the run has no
subjects or one epoch. :mod:`~debategraph.eval.stats` puts them in the report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from debategraph.eval.paired import Rows, grouped
from debategraph.eval.records import Outcome
from debategraph.strategies.decisions import PLURALITY
from debategraph.strategies.intervals import wilson_interval


@dataclass(frozen=True)
class SubjectScore:
    """A mode's accuracy on one subject.

    Attributes:
        mode: The mode (its own rows: plurality).
        subject: The subject (``""``: rows the dataset names no subject for).
        n: Its scored rows (every epoch's).
        correct: Those answered right.
        accuracy: ``correct / n``.
        ci_low: Lower end of the 95% Wilson interval.
        ci_high: Upper end of it.
    """

    mode: str
    subject: str
    n: int
    correct: int
    accuracy: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class QuestionAgreement:
    """One question's answers across its epochs, in one mode.

    Attributes:
        line: The question's line.
        epochs: Its scored epochs.
        agreement: The share of them that gave its most common answer (no answer counts
            as an answer of its own).
        correct: The epochs that answered it right.
    """

    line: int
    epochs: int
    agreement: float
    correct: int


@dataclass(frozen=True)
class Agreement:
    """How often a mode's epochs agree: per question and over its questions.

    Attributes:
        mode: The mode (its own rows: plurality).
        questions: Questions with two scored epochs or more.
        agreement: Their mean :attr:`QuestionAgreement.agreement`.
        unanimous: The share of them whose epochs all gave one answer.
        by_question: Each question's figures, by line.
    """

    mode: str
    questions: int
    agreement: float
    unanimous: float
    by_question: tuple[QuestionAgreement, ...]


def _own_rows(outcomes: Sequence[Outcome], labels: Sequence[str]) -> dict[str, Rows]:
    """Each mode's own rows (plurality), in label order."""
    return {
        label: rows
        for label, rows in grouped(outcomes, labels).items()
        if rows.decision == PLURALITY
    }


def subject_scores(outcomes: Sequence[Outcome], labels: Sequence[str]) -> list[SubjectScore]:
    """Each mode's accuracy on each subject, where any row names one.

    Args:
        outcomes: Every outcome.
        labels: The labels or modes, in report order.

    Returns:
        Mode by mode in label order, its subjects sorted (rows of no subject last, as
        ``""``); empty where no row names a subject.
    """
    if not any(outcome.subject for outcome in outcomes):
        return []
    scores = []
    for label, rows in _own_rows(outcomes, labels).items():
        by_subject: dict[str, list[Outcome]] = {}
        for row in rows.lines.values():
            by_subject.setdefault(row.subject, []).append(row)
        for subject in sorted(by_subject, key=lambda s: (not s, s)):
            found = by_subject[subject]
            right = sum(row.correct for row in found)
            low, high = wilson_interval(right, len(found))
            scores.append(
                SubjectScore(label, subject, len(found), right, right / len(found), low, high)
            )
    return scores


def epoch_agreement(outcomes: Sequence[Outcome], labels: Sequence[str]) -> list[Agreement]:
    """How often each mode's epochs of a question agree, where a question has several.

    Args:
        outcomes: Every outcome.
        labels: The labels or modes, in report order.

    Returns:
        One per mode, in label order; empty where every question was asked once.
    """
    if all(outcome.epoch == 1 for outcome in outcomes):
        return []
    found = []
    for label, rows in _own_rows(outcomes, labels).items():
        answers: dict[int, list[Outcome]] = {}
        for (line, _), row in sorted(rows.lines.items()):
            answers.setdefault(line, []).append(row)
        questions = []
        for line, epochs in answers.items():
            if len(epochs) < 2:
                continue
            most = Counter(row.answer for row in epochs).most_common(1)[0][1]
            right = sum(row.correct for row in epochs)
            questions.append(QuestionAgreement(line, len(epochs), most / len(epochs), right))
        n = len(questions)
        mean = sum(q.agreement for q in questions) / n if n else 0.0
        unanimous = sum(q.agreement == 1.0 for q in questions) / n if n else 0.0
        found.append(Agreement(label, n, mean, unanimous, tuple(questions)))
    return found
