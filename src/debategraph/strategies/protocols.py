"""The decision protocols, one small class each, and what a protocol decides.

A protocol is a subclass of :class:`DecisionRule`: its name, the arguments it takes (a
threshold, a fallback: its syntax for the help and error text follows from them), how it
checks its threshold, when it is not reached, how it decides, and whether it consults a
judge. :mod:`debategraph.strategies.decisions` keeps the table of them (parsing, the
rule text, validation and deciding all read it); a new protocol is one class registered
with :func:`~debategraph.strategies.decisions.register_protocol`.

What a protocol decides is a :class:`~debategraph.state.records.Decided`, a record of no
pattern. The solver debate's node turns it into its state's ``Decision`` record (which
extends it); no strategy knows a pattern.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import ClassVar

from debategraph.state.records import Decided
from debategraph.strategies.voting import Vote

__all__ = [
    "DEFAULT_THRESHOLD",
    "Abstain",
    "Confidence",
    "Decided",
    "DecisionRule",
    "Judge",
    "Plurality",
    "Supermajority",
    "Tally",
    "Unanimity",
    "Weighted",
    "fraction_text",
]

#: The supermajority's threshold when none is given.
DEFAULT_THRESHOLD = Fraction(2, 3)
#: The confidence protocol's threshold when none is given.
DEFAULT_CONFIDENCE = Fraction(4, 5)


@dataclass(frozen=True)
class Tally:
    """What a protocol decides from: the answers, their vote, and the judge's pick.

    Attributes:
        spec: The deciding protocol's spec (recorded in the result).
        answers: Solver -> its final answer (``None`` abstains), in solver order.
        vote: The plurality vote of ``answers`` (ties broken by confidence).
        confidences: Solver -> its stated confidence (``None``: not stated).
        threshold: The protocol's threshold, where it takes one.
        judged: The judge's pick, where the caller asked the judge (``None``: none).
        judge_reason: Why the judge gave no pick (its call's reason).
        judge_model: The judge's model label, recorded.
    """

    spec: str
    answers: Mapping[str, str | None]
    vote: Vote
    confidences: Mapping[str, float | None] = field(default_factory=dict)
    threshold: Fraction | None = None
    judged: str | None = None
    judge_reason: str | None = None
    judge_model: str | None = None

    @property
    def top(self) -> int:
        """Solvers that gave the plurality's answer (0 when every solver abstained)."""
        return self.vote.votes[self.vote.answer] if self.vote.answer is not None else 0

    def held(self) -> str:
        """``2 of 4 for 18`` (or ``no answers``), for the reason of a shortfall."""
        if self.vote.answer is None:
            return "no answers"
        return f"{self.top} of {len(self.answers)} for {self.vote.answer}"

    def agreement(self, answer: str | None) -> float:
        """Solvers that gave ``answer`` / solvers, rounded as the vote rounds it."""
        if answer is None or not self.answers:
            return 0.0
        return round(self.vote.votes[answer] / len(self.answers), 4)

    def decided(self, answer: str | None, **extra: str | None) -> Decided:
        """The result that ``answer`` was decided, with the vote's table.

        Args:
            answer: The decided answer.
            **extra: ``tie_break``, ``fallback``, ``reason``, ``judge_model``.

        Returns:
            The result.
        """
        return Decided(
            protocol=self.spec,
            answer=answer,
            votes=self.vote.votes,
            agreement=self.agreement(answer),
            abstentions=self.vote.abstentions,
            **extra,
        )


def fraction_text(value: Fraction) -> str:
    """A threshold as the reduced fraction ``a/b`` (``1/1`` for 1)."""
    return f"{value.numerator}/{value.denominator}"


class DecisionRule:
    """One decision protocol: subclass it, set its class attributes, register it.

    Attributes:
        name: How the protocol is written (lower case), and what its results record.
        takes_threshold: Whether it takes a ``THRESHOLD`` argument (checked by
            :meth:`check_threshold`; its default is :attr:`default_threshold`).
        takes_fallback: Whether it takes a ``FALLBACK`` (used when it is not reached,
            :meth:`shortfall`; its default is ``plurality``).
        note: What its arguments allow, for the rule text (e.g. the threshold's range).
        standalone: Whether it is a protocol of its own (``abstain`` is a fallback only).
        is_fallback: Whether another protocol may fall back to it.
        consults_judge: Whether it decides by the judge's pick.
        default_threshold: The threshold when none is given.
    """

    name: ClassVar[str]
    takes_threshold: ClassVar[bool] = False
    takes_fallback: ClassVar[bool] = False
    note: ClassVar[str] = ""
    standalone: ClassVar[bool] = True
    is_fallback: ClassVar[bool] = False
    consults_judge: ClassVar[bool] = False
    default_threshold: ClassVar[Fraction | None] = None

    @classmethod
    def syntax(cls) -> str:
        """How it is written, for the help and error text: ``unanimity[:FALLBACK]``."""
        taken = (("THRESHOLD", cls.takes_threshold), ("FALLBACK", cls.takes_fallback))
        params = [p for p, on in taken if on]
        return cls.name + "".join(f"[:{p}" for p in params) + "]" * len(params)

    @classmethod
    def check_threshold(cls, value: Fraction, raw: str) -> str | None:
        """Why ``value`` is no threshold of this protocol, or ``None`` if it is one.

        Args:
            value: The threshold.
            raw: How it was written (named in the problem).
        """
        return None

    @classmethod
    def shortfall(cls, tally: Tally) -> str | None:
        """Why the protocol was not reached (one line), ``None`` if it decides itself."""
        return None

    @classmethod
    def decide(cls, tally: Tally) -> Decided:
        """The protocol's own result (when it is reached)."""
        raise NotImplementedError(f"decision protocol {cls.name!r} decides nothing")

    @classmethod
    def decide_after(cls, tally: Tally, why: str) -> Decided:
        """The result as the fallback of a protocol that was not reached (``why``).

        Args:
            tally: What to decide from (under the first protocol's spec).
            why: Why the first protocol was not reached.
        """
        update = {"fallback": cls.name, "reason": f"{why}: {cls.name} decided"}
        return cls.decide(tally).model_copy(update=update)


class Plurality(DecisionRule):
    """The most common answer (ties broken by summed confidence, then the earliest solver)."""

    name = "plurality"
    is_fallback = True

    @classmethod
    def decide(cls, tally: Tally) -> Decided:
        """The vote's answer and tie-break."""
        return tally.decided(tally.vote.answer, tie_break=tally.vote.tie_break)


class Weighted(DecisionRule):
    """The answer with the highest summed confidence; ties by votes, then earliest solver."""

    name = "weighted"
    is_fallback = True

    @classmethod
    def decide(cls, tally: Tally) -> Decided:
        """The answer of the highest summed confidence (unstated counts as 0)."""
        stated: dict[str, list[float]] = {}
        for solver, answer in tally.answers.items():
            if answer is not None:
                stated.setdefault(answer, []).append(tally.confidences.get(solver) or 0.0)
        # Summed exactly, then rounded: 0.1 + 0.2 and 0.3 are the same weight.
        weight = {answer: round(math.fsum(values), 9) for answer, values in stated.items()}
        tie_break: str | None = None
        winner: str | None = None
        if weight:
            best = max(weight.values())
            tied = [a for a in weight if weight[a] == best]  # in the order solvers gave them
            winner = tied[0]
            if len(tied) > 1:
                most = max(tally.vote.votes[a] for a in tied)
                leaders = [a for a in tied if tally.vote.votes[a] == most]
                winner = leaders[0]
                how = "vote count" if len(leaders) == 1 else "the earliest solver"
                tie_break = (
                    f"tie between {', '.join(tied)} (summed confidence {best:g} each) "
                    f"broken by {how}"
                )
        return tally.decided(winner, tie_break=tie_break)


class _Share(Plurality):
    """A protocol whose threshold is a share in (``above``, 1], with a fallback."""

    takes_threshold = True
    takes_fallback = True
    is_fallback = False
    above: ClassVar[Fraction]

    @classmethod
    def check_threshold(cls, value: Fraction, raw: str) -> str | None:
        """A threshold is a share in (``above``, 1]."""
        if cls.above < value <= 1:
            return None
        return f"{cls.name} threshold {raw} is not in ({float(cls.above):g}, 1]"


class Supermajority(_Share):
    """The top answer if its share of the solvers is at least THRESHOLD, else FALLBACK."""

    name = "supermajority"
    note = "THRESHOLD in (0.5, 1], e.g. 0.75 or 2/3"
    default_threshold = DEFAULT_THRESHOLD

    above = Fraction(1, 2)

    @classmethod
    def shortfall(cls, tally: Tally) -> str | None:
        """No top answer of the threshold's share."""
        threshold = tally.threshold or DEFAULT_THRESHOLD
        n = len(tally.answers)
        if n and Fraction(tally.top, n) >= threshold:
            return None
        return f"no {fraction_text(threshold)} supermajority ({tally.held()})"


class Unanimity(Plurality):
    """The answer every solver gave, else FALLBACK."""

    name = "unanimity"
    takes_fallback = True
    is_fallback = False

    @classmethod
    def shortfall(cls, tally: Tally) -> str | None:
        """Not every solver gave the top answer."""
        n = len(tally.answers)
        if n and tally.top == n:
            return None
        return f"no unanimity ({tally.held()})"


class Confidence(_Share):
    """The top answer if its backers' summed confidence over all solvers reaches THRESHOLD.

    With every solver behind one answer at confidence 0.9 the share is 0.9; with two of
    three behind it at 0.9 it is 0.6: agreement and confidence in one figure (an unstated
    confidence counts as 0). Else FALLBACK.
    """

    name = "confidence"
    note = "confidence's THRESHOLD in (0, 1], e.g. 0.8"
    default_threshold = DEFAULT_CONFIDENCE

    above = Fraction(0)

    @classmethod
    def shortfall(cls, tally: Tally) -> str | None:
        """The top answer's backers are not confident enough, together, over all solvers."""
        threshold = tally.threshold or DEFAULT_CONFIDENCE
        n = len(tally.answers)
        backing = math.fsum(
            tally.confidences.get(solver) or 0.0
            for solver, answer in tally.answers.items()
            if answer is not None and answer == tally.vote.answer
        )
        share = round(backing / n, 9) if n else 0.0
        if n and tally.vote.answer is not None and share >= float(threshold):
            return None
        return f"confidence {share:.2f} is below {float(threshold):g} ({tally.held()})"


class Judge(DecisionRule):
    """An agent reads the final answers and reasons and picks one (the caller asks it)."""

    name = "judge"
    is_fallback = True
    consults_judge = True

    @classmethod
    def decide(cls, tally: Tally) -> Decided:
        """The judge's pick."""
        return cls._judged(tally, None)

    @classmethod
    def decide_after(cls, tally: Tally, why: str) -> Decided:
        """The judge's pick, as the fallback."""
        return cls._judged(tally, why)

    @classmethod
    def _judged(cls, tally: Tally, why: str | None) -> Decided:
        """The judge's pick, or the plurality's (with the reason) when it is not taken.

        Args:
            tally: What to decide from, with the judge's pick.
            why: Why a protocol fell back to the judge (``None``: the protocol is it).
        """
        vote = tally.vote
        prefix = f"{why}: " if why else ""
        if len(vote.votes) < 2:
            asked = "no answers" if vote.answer is None else f"one answer ({vote.answer})"
            return tally.decided(
                vote.answer,
                tie_break=vote.tie_break,
                fallback=cls.name if why else None,
                reason=f"{prefix}{asked}: the judge was not asked",
            )
        if tally.judged is not None and tally.judged in vote.votes:
            return tally.decided(
                tally.judged,
                fallback=cls.name if why else None,
                reason=f"{why}: the judge decided" if why else None,
                judge_model=tally.judge_model,
            )
        if tally.judged is None:
            said = " ".join((tally.judge_reason or "").split())
            failed = f"the judge gave no answer ({said})" if said else "the judge gave no answer"
        else:
            failed = f"the judge picked {tally.judged}, which no solver gave"
        decided = Plurality.decide_after(tally, f"{prefix}{failed}")
        return decided.model_copy(update={"judge_model": tally.judge_model})


class Abstain(DecisionRule):
    """No answer: a fallback only (``supermajority::abstain``)."""

    name = "abstain"
    standalone = False
    is_fallback = True

    @classmethod
    def decide_after(cls, tally: Tally, why: str) -> Decided:
        """No answer, and why."""
        return tally.decided(None, fallback=cls.name, reason=f"{why}: abstained")
