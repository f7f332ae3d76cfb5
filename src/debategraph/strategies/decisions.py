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

Each protocol is a small class (:mod:`debategraph.strategies.protocols`) in one table
here: parsing, the rule text (:func:`protocol_rule`), validation and deciding read it, so
a new protocol is one class passed to :func:`register_protocol`. A decision is a
:class:`~debategraph.state.records.Decided`, a record of no pattern (the solver debate
keeps it as its ``Decision``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from debategraph.strategies.protocols import (
    DEFAULT_THRESHOLD,
    Abstain,
    Confidence,
    Decided,
    DecisionRule,
    Judge,
    Plurality,
    Supermajority,
    Tally,
    Unanimity,
    Weighted,
    fraction_text,
)
from debategraph.strategies.voting import majority_vote

__all__ = [
    "ABSTAIN",
    "CONFIDENCE",
    "DEFAULT_THRESHOLD",
    "FALLBACKS",
    "JUDGE",
    "PLURALITY",
    "PROTOCOL_NAMES",
    "PROTOCOL_RULE",
    "SUPERMAJORITY",
    "UNANIMITY",
    "WEIGHTED",
    "Decided",
    "DecisionProtocol",
    "DecisionRule",
    "agreed",
    "agreement_names",
    "agreement_rule",
    "agreement_text",
    "decide",
    "fallback_names",
    "judge_needed",
    "parse_agreement",
    "parse_protocol",
    "parse_protocols",
    "protocol_names",
    "protocol_rule",
    "register_protocol",
    "unregister_protocol",
]

PLURALITY = Plurality.name
WEIGHTED = Weighted.name
SUPERMAJORITY = Supermajority.name
UNANIMITY = Unanimity.name
CONFIDENCE = Confidence.name
JUDGE = Judge.name
ABSTAIN = Abstain.name

#: The built-in protocols (and fallbacks), in the order they are reported.
BUILTIN_RULES: tuple[type[DecisionRule], ...] = (
    Plurality,
    Weighted,
    Supermajority,
    Unanimity,
    Confidence,
    Judge,
    Abstain,
)
#: The table every protocol is read from: name -> its class (built-in, then registered).
_RULES: dict[str, type[DecisionRule]] = {rule.name: rule for rule in BUILTIN_RULES}


def register_protocol(rule: type[DecisionRule]) -> None:
    """Add a decision protocol (a plugin's, or a test's own).

    Args:
        rule: Its class: a :class:`~debategraph.strategies.protocols.DecisionRule` with
            a lower-case ``name`` that is no other protocol's.

    Raises:
        ValueError: If the name is taken, or not lower case without spaces, ``:``,
            ``,`` and ``@``.
    """
    name = rule.name
    if name in _RULES and _RULES[name] is not rule:
        raise ValueError(f"decision protocol {name!r} is taken by {_RULES[name].__name__}")
    if not name or name != "".join(name.split()).lower() or set(name) & {":", ",", "@"}:
        raise ValueError(
            f"decision protocol name {name!r}: use lower case without spaces, ':', ',' or '@'"
        )
    _RULES[name] = rule


def unregister_protocol(name: str) -> None:
    """Remove a protocol added with :func:`register_protocol` (a built-in one stays).

    Args:
        name: Its name.
    """
    if name not in {rule.name for rule in BUILTIN_RULES}:
        _RULES.pop(name, None)


def protocol_names() -> tuple[str, ...]:
    """The protocols of the table, in the order they are reported.

    Returns:
        Their names (``abstain``, a fallback only, is not one).
    """
    return tuple(name for name, rule in _RULES.items() if rule.standalone)


def fallback_names() -> tuple[str, ...]:
    """What a protocol that is not reached may fall back to.

    Returns:
        The names, in the table's order.
    """
    return tuple(name for name, rule in _RULES.items() if rule.is_fallback)


def _either(names: Iterable[str]) -> str:
    """``a, b or c``."""
    items = list(names)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def protocol_rule() -> str:
    """What the protocols' syntax allows (for help and errors), from the table.

    Returns:
        ``plurality, weighted, supermajority[:THRESHOLD[:FALLBACK]], ... or judge
        (THRESHOLD in (0.5, 1], ...; FALLBACK plurality, weighted, judge or abstain)``.
    """
    rules = [rule for rule in _RULES.values() if rule.standalone]
    notes = [rule.note for rule in rules if rule.note]
    if any(rule.takes_fallback for rule in rules):
        notes.append(f"FALLBACK {_either(fallback_names())}")
    text = _either(rule.syntax() for rule in rules)
    return f"{text} ({'; '.join(notes)})" if notes else text


#: The protocols' names, in the order they are reported (the built-in ones).
PROTOCOL_NAMES = protocol_names()
#: What a supermajority or unanimity falls back to when it is not reached.
FALLBACKS = fallback_names()
#: What the built-in protocols' syntax allows (:func:`protocol_rule` reads the table now).
PROTOCOL_RULE = protocol_rule()


@dataclass(frozen=True)
class DecisionProtocol:
    """A decision protocol, parsed: its name (a class of the table) and its arguments.

    Attributes:
        name: A protocol's name (:func:`protocol_names`).
        threshold: Its threshold, where it takes one (``None`` for the others).
        fallback: What it falls back to, where it takes one (``None`` for the others).

    Built directly, a missing threshold becomes the protocol's default and a missing
    fallback ``plurality`` (so it equals its parsed form); a bad field is a
    ``ValueError`` as in :func:`parse_protocol`.
    """

    name: str
    threshold: Fraction | None = None
    fallback: str | None = None

    def __post_init__(self) -> None:
        """Fill in the defaults (so equal protocols compare equal) and refuse bad fields.

        Raises:
            ValueError: One line naming the bad field and :func:`protocol_rule`.
        """
        rule = self.rule
        if rule.takes_threshold:
            given = rule.default_threshold if self.threshold is None else self.threshold
            if given is None:
                raise _bad(f"{self.name} takes a threshold, got none")
            threshold = Fraction(given)
            problem = rule.check_threshold(threshold, fraction_text(threshold))
            if problem:
                raise _bad(problem)
            object.__setattr__(self, "threshold", threshold)
        elif self.threshold is not None:
            raise _bad(f"{self.name} takes no threshold, got {self.threshold}")
        if rule.takes_fallback:
            fallback = PLURALITY if self.fallback is None else self.fallback
            if fallback not in fallback_names():
                raise _bad(f"unknown fallback {fallback!r}")
            object.__setattr__(self, "fallback", fallback)
        elif self.fallback is not None:
            raise _bad(f"{self.name} takes no fallback, got {self.fallback!r}")

    @property
    def rule(self) -> type[DecisionRule]:
        """The protocol's class in the table.

        Raises:
            ValueError: If no protocol of the table has this name.
        """
        rule = _RULES.get(self.name)
        if rule is None or not rule.standalone:
            raise _bad(f"unknown decision protocol {self.name!r}")
        return rule

    @property
    def spec(self) -> str:
        """The canonical text: ``plurality``, ``supermajority:2/3:plurality``...

        Two texts that mean the same protocol have the same spec (``supermajority`` and
        ``supermajority:0.6667``... are not the same; ``supermajority`` and
        ``supermajority:2/3:plurality`` are).
        """
        parts = [self.name]
        if self.threshold is not None:
            parts.append(fraction_text(self.threshold))
        if self.fallback is not None:
            parts.append(self.fallback)
        return ":".join(parts)

    @property
    def may_judge(self) -> bool:
        """Whether the protocol may consult the judge (it does, or falls back to one that does)."""
        fallback = _RULES.get(self.fallback) if self.fallback is not None else None
        return self.rule.consults_judge or (fallback is not None and fallback.consults_judge)

    def tally(
        self,
        answers: Mapping[str, str | None],
        confidences: Mapping[str, float | None] | None = None,
        **judge: str | None,
    ) -> Tally:
        """What the protocol decides ``answers`` from.

        Args:
            answers: Solver -> its final answer (``None`` abstains), in solver order.
            confidences: Solver -> its stated confidence.
            **judge: ``judged``, ``judge_reason``, ``judge_model`` (as :func:`decide`).

        Returns:
            The tally.
        """
        return Tally(
            self.spec,
            answers,
            majority_vote(answers, confidences),
            confidences or {},
            self.threshold,
            **judge,
        )


def parse_protocol(text: str) -> DecisionProtocol:
    """Read one protocol (``supermajority:0.75:judge``); case and spaces are ignored.

    An empty threshold or fallback is its default (``supermajority::judge``).

    Args:
        text: The protocol's text.

    Returns:
        The protocol.

    Raises:
        ValueError: One line naming the bad value and :func:`protocol_rule`: an unknown
            protocol or fallback, a threshold that is not a number in (0.5, 1], an
            argument given to a protocol that takes none.
    """
    cleaned = "".join(text.split()).lower()
    if not cleaned:
        raise _bad("empty decision protocol")
    name, *args = cleaned.split(":")
    rule = _RULES.get(name)
    if rule is None or not rule.standalone:
        raise _bad(f"unknown decision protocol {name!r}")
    taken = (("threshold", rule.takes_threshold), ("fallback", rule.takes_fallback))
    params = [p for p, on in taken if on]
    if len(args) > len(params):
        takes = " and ".join(f"a {p}" for p in params)
        what = f"takes {takes} at most" if params else "takes no argument"
        raise _bad(f"{name} {what}, got {cleaned!r}")
    given = dict(zip(params, args, strict=False))
    raw = given.get("threshold")
    threshold = _threshold(rule, raw) if raw else None
    return DecisionProtocol(name, threshold, given.get("fallback") or None)


def parse_protocols(text: str) -> tuple[DecisionProtocol, ...]:
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
    protocols: dict[str, DecisionProtocol] = {}
    for item in text.split(","):
        if not item.strip():
            raise _bad(f"empty decision protocol in {text.strip()!r}")
        protocol = parse_protocol(item)
        protocols.setdefault(protocol.spec, protocol)
    return tuple(protocols.values())


def judge_needed(protocol: DecisionProtocol, answers: Mapping[str, str | None]) -> bool:
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
    if len(distinct) < 2 or not protocol.may_judge:
        return False
    rule = protocol.rule
    return rule.consults_judge or rule.shortfall(protocol.tally(answers)) is not None


def agreement_names() -> tuple[str, ...]:
    """The protocols that tell agreement: those that can fall short of deciding.

    A run may stop once one is reached (``solve --stop-when``, the eval's
    ``vote-then-debate``); plurality, weighted and judge always decide, so they never tell.

    Returns:
        Their names, in the table's order.
    """
    return tuple(name for name, rule in _RULES.items() if rule.standalone and rule.takes_fallback)


def agreement_rule() -> str:
    """What an agreement may be (for help and errors), from the table.

    Returns:
        ``unanimity, supermajority[:THRESHOLD] or confidence[:THRESHOLD] (...)``.
    """
    rules = [_RULES[name] for name in agreement_names()]
    texts = [rule.name + ("[:THRESHOLD]" if rule.takes_threshold else "") for rule in rules]
    notes = [rule.note for rule in rules if rule.note]
    return f"{_either(texts)} ({'; '.join(notes)})" if notes else _either(texts)


def agreement_text(protocol: DecisionProtocol) -> str:
    """An agreement as written without its fallback: ``supermajority:2/3``, ``unanimity``."""
    if protocol.threshold is None:
        return protocol.name
    return f"{protocol.name}:{fraction_text(protocol.threshold)}"


def parse_agreement(text: str) -> DecisionProtocol:
    """Read an agreement: a protocol that can fall short (``supermajority:2/3``).

    Args:
        text: Its text; case and spaces are ignored.

    Returns:
        The protocol (a fallback given is kept, and plays no part in agreeing).

    Raises:
        ValueError: One line naming the bad value and :func:`agreement_rule`.
    """
    rule = agreement_rule()
    name = "".join(text.split()).lower().split(":")[0]
    if name not in agreement_names():
        known = name in protocol_names()
        why = "always decides, so it never tells agreement" if known else "is no protocol"
        raise ValueError(f"{text.strip()!r} {why}: use {rule}")
    try:
        return parse_protocol(text)
    except ValueError as exc:
        problem = str(exc).removesuffix(f": use {protocol_rule()}")
        raise ValueError(f"{problem}: use {rule}") from None


def agreed(
    protocol: DecisionProtocol,
    answers: Mapping[str, str | None],
    confidences: Mapping[str, float | None] | None = None,
) -> bool:
    """Whether ``answers`` agree by ``protocol``: it is reached, with no fallback.

    The one notion of agreement: the solver debate's early stop and the eval's
    ``vote-then-debate`` read it.

    Args:
        protocol: An agreement (:func:`parse_agreement`).
        answers: Solver -> its answer (``None`` abstains).
        confidences: Solver -> its stated confidence.

    Returns:
        True when the protocol decides itself.
    """
    return protocol.rule.shortfall(protocol.tally(answers, confidences)) is None


def decide(
    protocol: DecisionProtocol,
    answers: Mapping[str, str | None],
    confidences: Mapping[str, float | None] | None = None,
    *,
    judged: str | None = None,
    judge_reason: str | None = None,
    judge_model: str | None = None,
) -> Decided:
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
    tally = protocol.tally(
        answers, confidences, judged=judged, judge_reason=judge_reason, judge_model=judge_model
    )
    why = protocol.rule.shortfall(tally)
    if why is None or protocol.fallback is None:
        return protocol.rule.decide(tally)
    return _RULES[protocol.fallback].decide_after(tally, why)


def _bad(problem: str) -> ValueError:
    """The one-line error of a bad protocol: the problem, then what is allowed."""
    return ValueError(f"{problem}: use {protocol_rule()}")


def _threshold(rule: type[DecisionRule], raw: str) -> Fraction:
    """A protocol's threshold from its text (a decimal or ``a/b``), as the rule allows.

    Raises:
        ValueError: When it is not a number, or out of range (naming the text).
    """
    try:
        value = Fraction(raw)
    except (ValueError, ZeroDivisionError):
        raise _bad(f"{rule.name} threshold {raw!r} is not a number") from None
    problem = rule.check_threshold(value, raw)
    if problem:
        raise _bad(problem)
    return value
