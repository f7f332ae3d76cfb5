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
answer).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from pydantic import BaseModel, ConfigDict

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
    """

    name: str
    threshold: Fraction | None = None
    fallback: str | None = None

    @property
    def spec(self) -> str:
        """The canonical text: ``plurality``, ``supermajority:2/3:plurality``...

        Two texts that mean the same protocol have the same spec (``supermajority`` and
        ``supermajority:0.6667``... are not the same; ``supermajority`` and
        ``supermajority:2/3:plurality`` are).
        """
        raise NotImplementedError

    @property
    def may_judge(self) -> bool:
        """Whether the protocol may consult the judge (it is ``judge``, or falls back to it)."""
        raise NotImplementedError


class Decision(BaseModel):
    """What a protocol decided from the final answers.

    Attributes:
        protocol: The protocol's spec.
        answer: The decided answer; ``None`` when every solver abstained, or the
            protocol fell back to ``abstain``.
        votes: Answer -> number of solvers that gave it (most first).
        agreement: Solvers that gave ``answer`` divided by the number of solvers.
        abstentions: Solvers with no answer.
        tie_break: How a tie was broken, ``None`` when there was none.
        fallback: The fallback that decided, ``None`` when the protocol itself did.
        reason: One line on how the answer was reached when it is not the plain
            protocol's (a fallback, a judge that gave no answer), else ``None``.
        judge_model: The judge's model (its label, never a key), where a judge decided.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    protocol: str
    answer: str | None
    votes: dict[str, int]
    agreement: float
    abstentions: int
    tie_break: str | None = None
    fallback: str | None = None
    reason: str | None = None
    judge_model: str | None = None


def parse_protocol(text: str) -> Protocol:
    """Read one protocol (``supermajority:0.75:judge``); case and spaces are ignored.

    Args:
        text: The protocol's text.

    Returns:
        The protocol.

    Raises:
        ValueError: One line naming the bad value and :data:`PROTOCOL_RULE`: an unknown
            protocol or fallback, a threshold that is not a number in (0.5, 1], an
            argument given to a protocol that takes none.
    """
    raise NotImplementedError


def parse_protocols(text: str) -> tuple[Protocol, ...]:
    """``--decisions``: comma-separated protocols, in the order given, each once (by spec).

    Args:
        text: E.g. ``plurality,weighted,supermajority:0.75``.

    Returns:
        The protocols.

    Raises:
        ValueError: On a bad protocol (as :func:`parse_protocol`) or an empty list.
    """
    raise NotImplementedError


def judge_needed(protocol: Protocol, answers: Mapping[str, str | None]) -> bool:
    """Whether deciding ``answers`` by ``protocol`` consults the judge.

    ``judge`` consults it when the solvers gave two or more different answers (one
    answer, or none, is decided without a call); a supermajority or unanimity that falls
    back to ``judge`` consults it only when not reached.

    Args:
        protocol: The protocol.
        answers: Solver -> its final answer (``None`` abstains).

    Returns:
        Whether a judge's pick is needed.
    """
    raise NotImplementedError


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
    raise NotImplementedError
