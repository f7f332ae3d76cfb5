"""Debate dynamics: how the solvers' answers move from round to round.

Measured from a finished thread's per-round answers (the solver debate's ``rounds``),
against a gold answer where one is known (the eval); without it, the measures that need
no gold (changes, conformity) are still there (``show``).

Definitions (per round ``r >= 2``, against round ``r - 1``):

- a *flip to wrong*: a solver right in round ``r - 1`` and wrong (or abstaining) in
  round ``r``; a *flip to right*: wrong (or abstaining) in ``r - 1``, right in ``r``;
- *conformity*: of the solvers whose answer in ``r - 1`` was not that round's plurality
  answer (the movers), the share whose answer in ``r`` is that plurality answer;
- a round's *decision*: the plurality of that round's answers;
- the *oracle*: some solver gave the gold answer in some round; the *loss*: the oracle
  holds but the final decision is wrong;
- a *flip* (:func:`flips`): an agent's answer differing from its answer the round
  before, gold or not (who changed their mind, and when).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

from debategraph.strategies.intervals import wilson_interval
from debategraph.strategies.voting import majority_vote


class _Default(Enum):
    """The type of :data:`LAST` (an enum, so a type checker narrows ``final is LAST``)."""

    LAST = "last"


#: ``thread_dynamics``'s default ``final``: the last round's plurality. Distinct from
#: ``None``, which is a decided answer (a protocol that abstained).
LAST: Final = _Default.LAST


class RoundDynamics(BaseModel):
    """One round of one thread.

    Attributes:
        round: The round (1-based).
        agents: Solvers in the round.
        answered: Solvers that gave an answer.
        correct: Solvers whose answer is the gold (``None`` without gold).
        plurality: The round's plurality answer (``None`` if all abstained).
        decision_correct: Whether ``plurality`` is the gold (``None`` without gold).
        changed: Solvers whose answer differs from their previous round's (0 in round 1).
        flips_to_wrong: Right in the previous round, not right now (0 in round 1;
            ``None`` without gold).
        flips_to_right: Not right in the previous round, right now (likewise).
        was_right: Solvers right in the previous round (the flips-to-wrong
            denominator; 0 in round 1; ``None`` without gold).
        was_wrong: Solvers not right in the previous round (likewise).
        movers: Solvers whose previous answer was not the previous round's plurality
            (0 in round 1, or when every solver abstained then).
        conformed: Movers whose answer now is the previous round's plurality.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    round: int
    agents: int
    answered: int
    correct: int | None
    plurality: str | None
    decision_correct: bool | None
    changed: int
    flips_to_wrong: int | None
    flips_to_right: int | None
    was_right: int | None
    was_wrong: int | None
    movers: int
    conformed: int


class Dynamics(BaseModel):
    """A thread's dynamics.

    Attributes:
        rounds: Each round's measures, in order.
        oracle: Some solver gave the gold in some round (``None`` without gold).
        final: The thread's decided answer (by whatever protocol decided it); ``None``
            when it decided none (every solver abstained, or a protocol such as
            ``unanimity:abstain`` abstained), which is never right.
        final_correct: Whether ``final`` is the gold (``None`` without gold).
        loss: ``oracle`` holds and ``final_correct`` does not (``None`` without gold).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    rounds: tuple[RoundDynamics, ...]
    oracle: bool | None
    final: str | None
    final_correct: bool | None
    loss: bool | None


def thread_dynamics(
    rounds: Sequence[Mapping[str, str | None]],
    gold: str | None = None,
    final: str | Literal[_Default.LAST] | None = LAST,
) -> Dynamics:
    """Measure one thread.

    Args:
        rounds: Each round's answers by solver (``RoundRecord.answers``), in order.
        gold: The gold answer (``None``: unknown; the gold measures are ``None``).
        final: The decided answer, as the decision protocol gave it (``None``: it
            abstained, so ``final_correct`` is false with gold); by default
            (:data:`LAST`) the last round's plurality (``None`` without rounds).

    Returns:
        The dynamics.
    """
    measured = tuple(
        _round(number, answers, rounds[number - 2] if number > 1 else None, gold)
        for number, answers in enumerate(rounds, start=1)
    )
    if final is LAST:
        final = measured[-1].plurality if measured else None
    if gold is None:
        return Dynamics(rounds=measured, oracle=None, final=final, final_correct=None, loss=None)
    oracle = any(answer == gold for answers in rounds for answer in answers.values())
    final_correct = final == gold
    return Dynamics(
        rounds=measured,
        oracle=oracle,
        final=final,
        final_correct=final_correct,
        loss=oracle and not final_correct,
    )


def _round(
    number: int,
    answers: Mapping[str, str | None],
    before: Mapping[str, str | None] | None,
    gold: str | None,
) -> RoundDynamics:
    """Measure one round against the one before it (``None`` in round 1).

    The round's solvers are the ones counted; one that was not in the round before had
    no answer there.
    """
    plurality = majority_vote(answers).answer
    right = None if gold is None else {s for s, a in answers.items() if a == gold}
    changed = movers = conformed = 0
    flips_to_wrong: int | None = None if gold is None else 0
    flips_to_right, was_right, was_wrong = flips_to_wrong, flips_to_wrong, flips_to_wrong
    if before is not None:
        was = {solver: before.get(solver) for solver in answers}
        changed = sum(answers[s] != was[s] for s in answers)
        earlier = majority_vote(before).answer
        if earlier is not None:
            moving = [s for s in answers if was[s] != earlier]
            movers = len(moving)
            conformed = sum(answers[s] == earlier for s in moving)
        if right is not None:
            right_before = {s for s in answers if was[s] == gold}
            was_right, was_wrong = len(right_before), len(answers) - len(right_before)
            flips_to_wrong, flips_to_right = len(right_before - right), len(right - right_before)
    return RoundDynamics(
        round=number,
        agents=len(answers),
        answered=sum(a is not None for a in answers.values()),
        correct=None if right is None else len(right),
        plurality=plurality,
        decision_correct=None if gold is None else plurality == gold,
        changed=changed,
        flips_to_wrong=flips_to_wrong,
        flips_to_right=flips_to_right,
        was_right=was_right,
        was_wrong=was_wrong,
        movers=movers,
        conformed=conformed,
    )


@dataclass(frozen=True)
class Flip:
    """An agent changing its answer from one round to the next.

    Attributes:
        agent: Who.
        round: The round of the new answer.
        before: Its answer the round before (``None``: none).
        after: Its answer in ``round`` (``None``: none).
    """

    agent: str
    round: int
    before: str | None
    after: str | None


def flips(rounds: Mapping[int, Mapping[str, str | None]]) -> list[Flip]:
    """Every change of an agent's answer between the rounds it answered in.

    Args:
        rounds: Round -> agent -> answer (``None``: it abstained).

    Returns:
        The flips, by round then agent order.
    """
    last: dict[str, str | None] = {}
    out: list[Flip] = []
    for rnd in sorted(rounds):
        for agent, answer in rounds[rnd].items():
            if agent in last and last[agent] != answer:
                out.append(Flip(agent, rnd, last[agent], answer))
            last[agent] = answer
    return out


class RoundSummary(BaseModel):
    """One round over many threads (a mode of the eval).

    Attributes:
        round: The round.
        threads: Threads that had this round.
        agent_accuracy: Correct answers / solver answers (abstentions count wrong).
        agent_ci: Its 95% Wilson interval.
        decision_accuracy: Threads whose round plurality was right / threads.
        decision_ci: Its 95% Wilson interval.
        flip_to_wrong: Flips to wrong / solvers right the round before (``None`` in
            round 1 or with no such solver).
        flip_to_right: Flips to right / solvers wrong the round before (likewise).
        conformity: Conformed / movers (``None`` in round 1 or with no movers).
        flips_to_wrong: The count behind ``flip_to_wrong``.
        flips_to_right: The count behind ``flip_to_right``.
        movers: The count of movers.
        conformed: The count of those that conformed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    round: int
    threads: int
    agent_accuracy: float
    agent_ci: tuple[float, float]
    decision_accuracy: float
    decision_ci: tuple[float, float]
    flip_to_wrong: float | None
    flip_to_right: float | None
    conformity: float | None
    flips_to_wrong: int
    flips_to_right: int
    movers: int
    conformed: int


class DynamicsSummary(BaseModel):
    """Many threads' dynamics (with gold): per round, then the oracle and the loss.

    Attributes:
        threads: Threads summarised.
        rounds: Per-round summaries, round 1 first.
        oracle: Share of threads where the oracle holds.
        oracle_ci: Its 95% Wilson interval.
        final_accuracy: Share whose final decision is right.
        loss: Share where the oracle holds and the final decision is wrong.
        loss_ci: Its 95% Wilson interval.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    threads: int
    rounds: tuple[RoundSummary, ...]
    oracle: float
    oracle_ci: tuple[float, float]
    final_accuracy: float
    loss: float
    loss_ci: tuple[float, float]


def summarize_dynamics(threads: Sequence[Dynamics]) -> DynamicsSummary:
    """Summarise threads measured with gold (a mode's questions).

    Args:
        threads: Each thread's dynamics (all with gold).

    Returns:
        The summary.

    Raises:
        ValueError: If ``threads`` is empty or one was measured without gold.
    """
    if not threads:
        raise ValueError("summarize_dynamics: no threads to summarise")
    for index, thread in enumerate(threads, start=1):
        if thread.oracle is None:
            raise ValueError(f"summarize_dynamics: thread {index} was measured without gold")
    deepest = max(len(thread.rounds) for thread in threads)
    rounds = tuple(
        _summary(number, [t.rounds[number - 1] for t in threads if len(t.rounds) >= number])
        for number in range(1, deepest + 1)
    )
    n = len(threads)
    oracle = sum(bool(t.oracle) for t in threads)
    loss = sum(bool(t.loss) for t in threads)
    return DynamicsSummary(
        threads=n,
        rounds=rounds,
        oracle=oracle / n,
        oracle_ci=wilson_interval(oracle, n),
        final_accuracy=sum(bool(t.final_correct) for t in threads) / n,
        loss=loss / n,
        loss_ci=wilson_interval(loss, n),
    )


def _summary(number: int, rounds: Sequence[RoundDynamics]) -> RoundSummary:
    """One round over the threads that had it (all measured with gold)."""
    agents = sum(r.agents for r in rounds)
    correct = sum(r.correct or 0 for r in rounds)
    decided = sum(bool(r.decision_correct) for r in rounds)
    to_wrong = sum(r.flips_to_wrong or 0 for r in rounds)
    to_right = sum(r.flips_to_right or 0 for r in rounds)
    was_right = sum(r.was_right or 0 for r in rounds)
    was_wrong = sum(r.was_wrong or 0 for r in rounds)
    movers = sum(r.movers for r in rounds)
    conformed = sum(r.conformed for r in rounds)
    return RoundSummary(
        round=number,
        threads=len(rounds),
        agent_accuracy=correct / agents if agents else 0.0,
        agent_ci=wilson_interval(correct, agents),
        decision_accuracy=decided / len(rounds),
        decision_ci=wilson_interval(decided, len(rounds)),
        flip_to_wrong=to_wrong / was_right if was_right else None,
        flip_to_right=to_right / was_wrong if was_wrong else None,
        conformity=conformed / movers if movers else None,
        flips_to_wrong=to_wrong,
        flips_to_right=to_right,
        movers=movers,
        conformed=conformed,
    )
