"""Decision protocols: how a solver debate's final answers become one answer.

Each protocol is a pure function of the solvers' final answers (and confidences), except
``judge``, whose pick is an agent's call made by the caller (the solver debate's
``aggregate`` node, or the eval on a finished thread) and passed in as ``judged``. So
the eval applies every protocol to the same finished threads, and only the judge calls
a model.

Protocols, as written in ``solve --decision`` and ``eval --decisions``:

- ``plurality``: the most common answer (ties broken by summed confidence, then the
  earliest solver, and reported), as :func:`~debategraph.strategies.voting.majority_vote`;
- ``weighted``: the answer with the highest summed confidence;
- ``supermajority[:THRESHOLD[:FALLBACK]]``: the top answer if its share of the solvers is
  at least THRESHOLD (a decimal or ``a/b`` in (0.5, 1]; default ``2/3``), else FALLBACK;
- ``unanimity[:FALLBACK]``: the answer every solver gave, else FALLBACK;
- ``judge``: an agent reads the final answers and reasons and picks one.

A FALLBACK is ``plurality`` (the default), ``weighted``, ``judge`` or ``abstain`` (no
answer). An empty THRESHOLD or FALLBACK is its default: ``supermajority::judge`` is
``supermajority:2/3:judge``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from debategraph.state.solver_debate import Decision
from debategraph.strategies.voting import Vote, majority_vote

# ``Decision`` (what a protocol decided) is the solver debate state's record, defined in the
# state layer because checkpoints store it; it is made here and re-exported from here.
__all__ = [
    "ABSTAIN",
    "DEFAULT_THRESHOLD",
    "FALLBACKS",
    "JUDGE",
    "PLURALITY",
    "PROTOCOL_NAMES",
    "PROTOCOL_RULE",
    "SUPERMAJORITY",
    "UNANIMITY",
    "WEIGHTED",
    "Decision",
    "Protocol",
    "decide",
    "judge_needed",
    "parse_protocol",
    "parse_protocols",
]

PLURALITY = "plurality"
WEIGHTED = "weighted"
SUPERMAJORITY = "supermajority"
UNANIMITY = "unanimity"
JUDGE = "judge"
ABSTAIN = "abstain"
#: The protocols, in the order they are reported.
PROTOCOL_NAMES = (PLURALITY, WEIGHTED, SUPERMAJORITY, UNANIMITY, JUDGE)
#: What a supermajority or unanimity falls back to when it is not reached.
FALLBACKS = (PLURALITY, WEIGHTED, JUDGE, ABSTAIN)
#: The supermajority's threshold when none is given.
DEFAULT_THRESHOLD = Fraction(2, 3)
#: What the protocols' syntax allows (for errors).
PROTOCOL_RULE = (
    "plurality, weighted, supermajority[:THRESHOLD[:FALLBACK]], unanimity[:FALLBACK] or "
    "judge (THRESHOLD in (0.5, 1], e.g. 0.75 or 2/3; FALLBACK plurality, weighted, judge "
    "or abstain)"
)


@dataclass(frozen=True)
class Protocol:
    """A decision protocol, parsed.

    Attributes:
        name: One of :data:`PROTOCOL_NAMES`.
        threshold: The supermajority's threshold (``None`` for the other protocols).
        fallback: What a supermajority or unanimity falls back to (``None`` for the others).

    Built directly, a supermajority's missing threshold becomes :data:`DEFAULT_THRESHOLD`
    and a missing fallback ``plurality`` (so it equals its parsed form); a bad field is a
    ``ValueError`` as in :func:`parse_protocol`.
    """

    name: str
    threshold: Fraction | None = None
    fallback: str | None = None

    def __post_init__(self) -> None:
        """Fill in the defaults (so equal protocols compare equal) and refuse bad fields.

        Raises:
            ValueError: One line naming the bad field and :data:`PROTOCOL_RULE`.
        """
        if self.name not in PROTOCOL_NAMES:
            raise _bad(f"unknown decision protocol {self.name!r}")
        if self.name == SUPERMAJORITY:
            threshold = DEFAULT_THRESHOLD if self.threshold is None else Fraction(self.threshold)
            if not Fraction(1, 2) < threshold <= 1:
                raise _bad(f"supermajority threshold {_fraction(threshold)} is not in (0.5, 1]")
            object.__setattr__(self, "threshold", threshold)
        elif self.threshold is not None:
            raise _bad(f"{self.name} takes no threshold, got {self.threshold}")
        if self.name in (SUPERMAJORITY, UNANIMITY):
            fallback = PLURALITY if self.fallback is None else self.fallback
            if fallback not in FALLBACKS:
                raise _bad(f"unknown fallback {fallback!r}")
            object.__setattr__(self, "fallback", fallback)
        elif self.fallback is not None:
            raise _bad(f"{self.name} takes no fallback, got {self.fallback!r}")

    @property
    def spec(self) -> str:
        """The canonical text: ``plurality``, ``supermajority:2/3:plurality``...

        Two texts that mean the same protocol have the same spec (``supermajority`` and
        ``supermajority:0.6667``... are not the same; ``supermajority`` and
        ``supermajority:2/3:plurality`` are).
        """
        if self.name == SUPERMAJORITY and self.threshold is not None:
            return f"{self.name}:{_fraction(self.threshold)}:{self.fallback}"
        if self.name == UNANIMITY:
            return f"{self.name}:{self.fallback}"
        return self.name

    @property
    def may_judge(self) -> bool:
        """Whether the protocol may consult the judge (it is ``judge``, or falls back to it)."""
        return self.name == JUDGE or self.fallback == JUDGE


def parse_protocol(text: str) -> Protocol:
    """Read one protocol (``supermajority:0.75:judge``); case and spaces are ignored.

    An empty threshold or fallback is its default (``supermajority::judge``).

    Args:
        text: The protocol's text.

    Returns:
        The protocol.

    Raises:
        ValueError: One line naming the bad value and :data:`PROTOCOL_RULE`: an unknown
            protocol or fallback, a threshold that is not a number in (0.5, 1], an
            argument given to a protocol that takes none.
    """
    cleaned = "".join(text.split()).lower()
    if not cleaned:
        raise _bad("empty decision protocol")
    name, *args = cleaned.split(":")
    if name not in PROTOCOL_NAMES:
        raise _bad(f"unknown decision protocol {name!r}")
    threshold: Fraction | None = None
    fallback: str | None = None
    if name == SUPERMAJORITY:
        if len(args) > 2:
            raise _bad(f"supermajority takes a threshold and a fallback at most, got {cleaned!r}")
        threshold = _threshold(args[0]) if args and args[0] else None
        fallback = args[1] if len(args) > 1 and args[1] else None
    elif name == UNANIMITY:
        if len(args) > 1:
            raise _bad(f"unanimity takes a fallback at most, got {cleaned!r}")
        fallback = args[0] if args and args[0] else None
    elif args:
        raise _bad(f"{name} takes no argument, got {cleaned!r}")
    return Protocol(name, threshold, fallback)


def parse_protocols(text: str) -> tuple[Protocol, ...]:
    """``--decisions``: comma-separated protocols, in the order given, each once (by spec).

    Args:
        text: E.g. ``plurality,weighted,supermajority:0.75``.

    Returns:
        The protocols.

    Raises:
        ValueError: On a bad protocol (as :func:`parse_protocol`) or an empty list.
    """
    if not text.strip():
        raise _bad("no decision protocol given")
    protocols: dict[str, Protocol] = {}
    for item in text.split(","):
        if not item.strip():
            raise _bad(f"empty decision protocol in {text.strip()!r}")
        protocol = parse_protocol(item)
        protocols.setdefault(protocol.spec, protocol)
    return tuple(protocols.values())


def judge_needed(protocol: Protocol, answers: Mapping[str, str | None]) -> bool:
    """Whether deciding ``answers`` by ``protocol`` consults the judge.

    ``judge`` consults it when the solvers gave two or more different answers (one
    answer, or none, is decided without a call); a supermajority or unanimity that falls
    back to ``judge`` consults it only when not reached (and, likewise, only when two or
    more different answers remain to choose from).

    Args:
        protocol: The protocol.
        answers: Solver -> its final answer (``None`` abstains).

    Returns:
        Whether a judge's pick is needed.
    """
    distinct = {a for a in answers.values() if a is not None}
    if len(distinct) < 2:
        return False
    if protocol.name == JUDGE:
        return True
    return (
        protocol.fallback == JUDGE
        and _shortfall(protocol, majority_vote(answers), answers) is not None
    )


def decide(
    protocol: Protocol,
    answers: Mapping[str, str | None],
    confidences: Mapping[str, float | None] | None = None,
    *,
    judged: str | None = None,
    judge_reason: str | None = None,
    judge_model: str | None = None,
) -> Decision:
    """Decide the final answer of ``answers`` by ``protocol``.

    Args:
        protocol: The protocol.
        answers: Solver -> its final answer (``None`` abstains), in solver order.
        confidences: Solver -> its stated confidence (0-1; ``None``: not stated, counts
            as 0 in ``weighted``).
        judged: The judge's pick, where :func:`judge_needed` said a judge is needed; an
            answer no solver gave, or ``None``, is not taken: plurality decides, and
            ``reason`` says why (with ``judge_reason``).
        judge_reason: Why the judge gave no pick (its call's reason), for ``reason``.
        judge_model: The judge's model label, recorded.

    Returns:
        The decision.
    """
    vote = majority_vote(answers, confidences)
    n = len(answers)
    spec = protocol.spec
    if protocol.name == PLURALITY:
        return _from_vote(spec, vote, n)
    if protocol.name == WEIGHTED:
        return _weighted(spec, vote, answers, confidences or {})
    judge = _Judge(judged, judge_reason, judge_model)
    if protocol.name == JUDGE:
        return _judged(spec, vote, n, judge, why=None)
    why = _shortfall(protocol, vote, answers)
    if why is None:
        return _from_vote(spec, vote, n)
    if protocol.fallback == WEIGHTED:
        decision = _weighted(spec, vote, answers, confidences or {})
        return decision.model_copy(
            update={"fallback": WEIGHTED, "reason": f"{why}: weighted decided"}
        )
    if protocol.fallback == ABSTAIN:
        return Decision(
            protocol=spec,
            answer=None,
            votes=vote.votes,
            agreement=0.0,
            abstentions=vote.abstentions,
            fallback=ABSTAIN,
            reason=f"{why}: abstained",
        )
    if protocol.fallback == JUDGE:
        return _judged(spec, vote, n, judge, why=why)
    return _from_vote(spec, vote, n, fallback=PLURALITY, reason=f"{why}: plurality decided")


@dataclass(frozen=True)
class _Judge:
    """What the caller passed of the judge's pick."""

    judged: str | None
    reason: str | None
    model: str | None


def _bad(problem: str) -> ValueError:
    """The one-line error of a bad protocol: the problem, then what is allowed."""
    return ValueError(f"{problem}: use {PROTOCOL_RULE}")


def _fraction(value: Fraction) -> str:
    """A threshold as the reduced fraction ``a/b`` (``1/1`` for 1)."""
    return f"{value.numerator}/{value.denominator}"


def _threshold(raw: str) -> Fraction:
    """A supermajority's threshold from its text (a decimal or ``a/b``), in (0.5, 1].

    Raises:
        ValueError: When it is not a number, or out of range (naming the text).
    """
    try:
        value = Fraction(raw)
    except (ValueError, ZeroDivisionError):
        raise _bad(f"supermajority threshold {raw!r} is not a number") from None
    if not Fraction(1, 2) < value <= 1:
        raise _bad(f"supermajority threshold {raw} is not in (0.5, 1]")
    return value


def _agreement(vote: Vote, answer: str | None, n: int) -> float:
    """Solvers that gave ``answer`` / solvers, rounded as the vote rounds it."""
    if answer is None or n == 0:
        return 0.0
    return round(vote.votes[answer] / n, 4)


def _from_vote(
    spec: str, vote: Vote, n: int, *, fallback: str | None = None, reason: str | None = None
) -> Decision:
    """The plurality's decision (the vote's answer and tie-break) under ``spec``."""
    return Decision(
        protocol=spec,
        answer=vote.answer,
        votes=vote.votes,
        agreement=_agreement(vote, vote.answer, n),
        abstentions=vote.abstentions,
        tie_break=vote.tie_break,
        fallback=fallback,
        reason=reason,
    )


def _shortfall(protocol: Protocol, vote: Vote, answers: Mapping[str, str | None]) -> str | None:
    """Why a supermajority or unanimity was not reached (one line), ``None`` if it was."""
    n = len(answers)
    top = vote.votes[vote.answer] if vote.answer is not None else 0
    held = f"{top} of {n} for {vote.answer}" if vote.answer is not None else "no answers"
    if protocol.name == SUPERMAJORITY and protocol.threshold is not None:
        if n and Fraction(top, n) >= protocol.threshold:
            return None
        return f"no {_fraction(protocol.threshold)} supermajority ({held})"
    if n and top == n:
        return None
    return f"no unanimity ({held})"


def _weighted(
    spec: str,
    vote: Vote,
    answers: Mapping[str, str | None],
    confidences: Mapping[str, float | None],
) -> Decision:
    """The answer with the highest summed confidence; ties by votes, then earliest solver."""
    n = len(answers)
    stated: dict[str, list[float]] = {}
    for solver, answer in answers.items():
        if answer is not None:
            stated.setdefault(answer, []).append(confidences.get(solver) or 0.0)
    # Summed exactly, then rounded: 0.1 + 0.2 and 0.3 are the same weight.
    weight = {answer: round(math.fsum(values), 9) for answer, values in stated.items()}
    tie_break: str | None = None
    winner: str | None = None
    if weight:
        best = max(weight.values())
        tied = [a for a in weight if weight[a] == best]  # in the order solvers gave them
        winner = tied[0]
        if len(tied) > 1:
            most = max(vote.votes[a] for a in tied)
            leaders = [a for a in tied if vote.votes[a] == most]
            winner = leaders[0]
            how = "vote count" if len(leaders) == 1 else "the earliest solver"
            tie_break = (
                f"tie between {', '.join(tied)} (summed confidence {best:g} each) broken by {how}"
            )
    return Decision(
        protocol=spec,
        answer=winner,
        votes=vote.votes,
        agreement=_agreement(vote, winner, n),
        abstentions=vote.abstentions,
        tie_break=tie_break,
    )


def _judged(spec: str, vote: Vote, n: int, judge: _Judge, why: str | None) -> Decision:
    """The judge's decision, or the plurality's (with the reason) when its pick is not taken.

    Args:
        spec: The protocol's spec.
        vote: The plurality vote of the answers.
        n: Solvers.
        judge: The judge's pick, reason and model.
        why: Why a supermajority or unanimity fell back to the judge (``None``: the
            protocol is ``judge``).
    """
    prefix = f"{why}: " if why else ""
    fallback = JUDGE if why else None
    if len(vote.votes) < 2:
        asked = "no answers" if vote.answer is None else f"one answer ({vote.answer})"
        return _from_vote(
            spec, vote, n, fallback=fallback, reason=f"{prefix}{asked}: the judge was not asked"
        )
    if judge.judged is not None and judge.judged in vote.votes:
        return Decision(
            protocol=spec,
            answer=judge.judged,
            votes=vote.votes,
            agreement=_agreement(vote, judge.judged, n),
            abstentions=vote.abstentions,
            fallback=fallback,
            reason=f"{why}: the judge decided" if why else None,
            judge_model=judge.model,
        )
    if judge.judged is None:
        said = " ".join((judge.reason or "").split())
        failed = f"the judge gave no answer ({said})" if said else "the judge gave no answer"
    else:
        failed = f"the judge picked {judge.judged}, which no solver gave"
    decision = _from_vote(
        spec, vote, n, fallback=PLURALITY, reason=f"{prefix}{failed}: plurality decided"
    )
    return decision.model_copy(update={"judge_model": judge.model})
