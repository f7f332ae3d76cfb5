"""The eval's records: a question, one question's outcome in one mode, a mode's summary."""

from __future__ import annotations

from dataclasses import dataclass

from debategraph.strategies.answers import AnswerKind
from debategraph.strategies.decisions import PLURALITY
from debategraph.strategies.math_answers import Checker


@dataclass(frozen=True)
class Item:
    r"""One question of a dataset.

    Attributes:
        line: Its line number in the dataset file (1-based): its id in results.
        question: The question text.
        gold: The gold answer: a normalised number, or a choice letter (``A``, ``B``...).
        choices: The choices of a multiple-choice question, in letter order; empty for
            a numeric question.
        checker: How an answer is checked against ``gold``: ``exact`` (the same number
            or letter) or ``math`` (equivalent by math-verify: MATH, GSM-Hard).
        answer_kind: What the solvers answer a question without choices with: a
            ``number``, or an ``expression`` (MATH: ``\sqrt{2}``, ``[1, 3)``).
        subject: Its subject or category where the dataset names one (MMLU's subject,
            MMLU-Pro's category, GPQA's domain): the results score each apart; ``""``:
            none.
        epoch: Which asking of the question this is (``--epochs N``: 1 to N), each its
            own thread.
    """

    line: int
    question: str
    gold: str
    choices: tuple[str, ...] = ()
    checker: Checker = "exact"
    answer_kind: AnswerKind = "number"
    subject: str = ""
    epoch: int = 1


@dataclass(frozen=True)
class Outcome:
    """One question answered in one mode: a row of ``results.csv``.

    Attributes:
        mode: The mode (``single``, ``vote``, ``debate-ring``, ``debate-full``).
        line: The question's line in the dataset.
        gold: The gold answer.
        answer: The mode's answer; ``None`` when it abstained (no extractable answer).
        correct: Whether ``answer`` is ``gold`` by the question's checker.
        prompt_tokens: Prompt tokens the question used in this mode.
        completion_tokens: Completion tokens it used.
        calls: Model calls it made.
        wall_s: Wall time of its thread: by the clock when this run ran it from its
            start, else from its first checkpoint to its last (for a thread resumed
            after an interruption, the time it lay interrupted counts too).
        thread_id: The checkpointed thread that holds it.
        usage_by_agent: Per agent, its prompt tokens, completion tokens, calls and
            model time (seconds, the sum of its calls'), as JSON text
            (``{"solver_1": [120, 40, 2, 0.41]}``).
        usage_by_model: The same per model (its spec, never a key).
        reason: Why the row is wrong without its answer being compared (no answer
            could be read, the checker cannot parse it); empty otherwise (and in
            results written before this field).
        debated: Whether the thread went on past round 1 (its solvers heard each
            other): every question of a debate mode, none of a vote, and in
            ``vote-then-debate`` the questions whose first round did not agree.
        first_round_tokens: The total tokens of its round-1 calls (independent answers).
        decision: The decision protocol that gave ``answer`` (its spec:
            ``plurality``, ``weighted``, ``supermajority:2/3:plurality``, ``judge``...).
            The tokens and calls of a ``judge`` row include the judge's.
        rounds: Each round's answers by solver, as JSON text
            (``[{"solver_1": "18", "solver_2": null}, ...]``): what the debate
            dynamics are measured from.
        error: Why the question has no outcome in this mode: its calls kept failing
            (the endpoint's one line). Such a row is never scored: it counts as
            ``errored``, apart from the accuracy, and the next run of the same command
            resumes its thread. Empty otherwise (and in results written before it).
        cost: What its calls cost at the operator's prices (:mod:`debategraph.models.
            money`), a judge's included on a ``judge`` row; empty where no call had a
            price.
        cache_hits: Its calls answered from the response cache.
        subject: The question's subject or category (``""``: the dataset names none).
        epoch: Which asking of the question it is (``--epochs``; 1 in results
            written before it).
    """

    mode: str
    line: int
    gold: str
    answer: str | None
    correct: bool
    prompt_tokens: int
    completion_tokens: int
    calls: int
    wall_s: float
    thread_id: str
    usage_by_agent: str = "{}"
    usage_by_model: str = "{}"
    reason: str = ""
    debated: bool = False
    first_round_tokens: int = 0
    decision: str = "plurality"
    rounds: str = "[]"
    error: str = ""
    cost: float | None = None
    cache_hits: int = 0
    subject: str = ""
    epoch: int = 1

    @property
    def key(self) -> tuple[int, int]:
        """What pairs the rows of two labels: the question's line and the epoch."""
        return (self.line, self.epoch)

    @property
    def label(self) -> str:
        """The row's name in summaries: ``mode``, or ``mode/decision`` beside plurality."""
        return self.mode if self.decision == PLURALITY else f"{self.mode}/{self.decision}"


@dataclass(frozen=True)
class ModeSummary:
    """A row label's figures over the questions it answered: an entry of ``results.json``.

    A label is a mode under its decision protocol (see :attr:`Outcome.label`).

    Attributes:
        mode: The label (``debate-full``, ``debate-full/judge``).
        n: Questions answered.
        correct: Questions answered right.
        accuracy: ``correct / n``.
        ci_low: Lower end of the 95% Wilson interval of the accuracy.
        ci_high: Upper end of it.
        abstention_rate: Share of questions with no answer.
        prompt_tokens: Mean prompt tokens per question.
        completion_tokens: Mean completion tokens per question.
        calls: Mean model calls per question.
        wall_s: Mean wall time per question.
        decision: The decision protocol's spec (``plurality`` for a mode's own rows).
        tokens: Mean total (prompt + completion) tokens per question.
        errored: Questions whose calls kept failing: left out of every figure above
            (``n`` counts the others).
        cost: Mean cost per question at the operator's prices (``None``: no call of
            its questions had a price).
        cache_hits: Its questions' calls answered from the response cache.
    """

    mode: str
    n: int
    correct: int
    accuracy: float
    ci_low: float
    ci_high: float
    abstention_rate: float
    prompt_tokens: float
    completion_tokens: float
    calls: float
    wall_s: float
    decision: str
    tokens: float
    errored: int = 0
    cost: float | None = None
    cache_hits: int = 0


@dataclass(frozen=True)
class Comparison:
    """An exact McNemar test between two modes on the questions both answered.

    Attributes:
        a: The first mode.
        b: The second mode.
        n: Questions both answered.
        a_only: Questions ``a`` got right and ``b`` wrong.
        b_only: Questions ``b`` got right and ``a`` wrong.
        p_value: Two-sided exact p-value (binomial on the discordant pairs); 1.0 when
            there are none.
    """

    a: str
    b: str
    n: int
    a_only: int
    b_only: int
    p_value: float


@dataclass(frozen=True)
class Matched:
    """A debate mode and the vote of independent samples run at its token budget.

    Attributes:
        mode: The debate mode.
        vote_mode: The vote's mode, ``vote@K``: K solvers answer once each, then a
            plurality vote.
        k: The vote's solvers.
        how: One line on how ``k`` was chosen (the debate's mean total tokens per
            question over the mean tokens of one independent answer).
    """

    mode: str
    vote_mode: str
    k: int
    how: str
