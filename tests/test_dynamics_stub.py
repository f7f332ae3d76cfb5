"""The debate dynamics of the real solver debate against a stub with known behaviour.

Each solver call goes through the real graph (``build_solver_debate``, full topology) to an
HTTP stub whose replies are drawn with known probabilities (``herd_responder``: right with
probability p; after round 1, with probability c, the previous round's plurality). The
measures of :mod:`debategraph.strategies.dynamics` must land inside the binomial bands that
theory gives for p and c, and plausible wrong measures (a flip rate over the wrong
denominator, conformity over all solvers rather than the movers) must land outside them.

Every draw is seeded by its request, so a run is reproducible. The bands are 3 standard
deviations wide: narrow enough that the wrong measures fall outside by 6 standard
deviations or more. A change of prompt draws anew; each of the 17 bands then holds with
probability about 0.997 (0.95 for all together), so a band missed after such a change
asks first whether the measure changed.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

import pytest

from debategraph import build_solver_debate, recursion_limit
from debategraph.models import ModelSpec
from debategraph.nodes.solver_debate.views import latest_turns
from debategraph.strategies import (
    DecisionProtocol,
    Dynamics,
    decide,
    summarize_dynamics,
    thread_dynamics,
)
from debategraph.strategies.decisions import PLURALITY, WEIGHTED
from tests.eval_data import gold_of, herd_responder
from tests.openai_stub import StubOpenAIServer

SOLVERS = 5
#: Standard deviations of a band: a fixed-seed run stays inside, a wrong measure does not.
Z = 3.0


def question(i: int) -> str:
    return f"Item {i}: what is {gold_of(i) - i} plus {i}?"


def debate(responder: Any, threads: int, rounds: int) -> list[tuple[dict[str, Any], Dynamics]]:
    """Run ``threads`` questions through the real solver debate against the stub.

    Returns:
        Each thread's output (``rounds``, ``transcript`` and ``answer``) and its dynamics,
        measured against the gold with the graph's decided answer as the final one.
    """
    with StubOpenAIServer(responder) as server:
        spec = ModelSpec(
            model="stub", base_url=server.url, timeout_s=10, max_retries=0, temperature=0.7
        )
        graph = build_solver_debate(
            spec, agents=SOLVERS, max_rounds=rounds, topology="full"
        ).compile()
        config: Any = {"recursion_limit": recursion_limit(graph), "max_concurrency": 8}

        async def run_all() -> list[dict[str, Any]]:
            batch = graph.abatch(
                [{"question": question(i)} for i in range(threads)],
                config,
                output_keys=["rounds", "transcript", "answer"],
            )
            return await asyncio.wait_for(batch, 120)

        outputs = asyncio.run(run_all())
        assert server.calls == threads * SOLVERS * rounds
    return [
        (
            out,
            thread_dynamics(
                [record.answers for record in out["rounds"]], str(gold_of(i)), out["answer"]
            ),
        )
        for i, out in enumerate(outputs)
    ]


def binomial(n: int, k: int, p: float) -> float:
    return math.comb(n, k) * p**k * (1 - p) ** (n - k)


def plurality_of_distinct_wrongs(p: float, n: int = SOLVERS) -> float:
    """Exact accuracy of a round's plurality when no two wrong answers coincide.

    Two or more right answers win; a single right answer ties with every wrong one (one
    vote each) and the vote's earliest-solver tie-break picks it with probability 1/n (the
    solvers are exchangeable); none right loses.
    """
    return sum(binomial(n, k, p) for k in range(2, n + 1)) + binomial(n, 1, p) / n


def band(expected: float, n: int) -> tuple[float, float]:
    """``Z`` standard deviations either side of a proportion ``expected`` over ``n`` trials."""
    assert n > 0
    half = Z * math.sqrt(expected * (1 - expected) / n)
    return expected - half, expected + half


def within(observed: float, expected: float, n: int, what: str) -> None:
    """``observed`` is within ``Z`` standard deviations of a proportion ``expected`` over ``n``."""
    low, high = band(expected, n)
    assert low <= observed <= high, (
        f"{what}: {observed:.4f} outside [{low:.4f}, {high:.4f}] (n={n})"
    )


def outside(wrong: float, expected: float, n: int, what: str) -> None:
    """A wrong measure's value falls outside the band :func:`within` checks the right one in."""
    low, high = band(expected, n)
    assert not low <= wrong <= high, f"{what}: {wrong:.4f} inside [{low:.4f}, {high:.4f}] (n={n})"


def conformity_split(threads: Sequence[Dynamics]) -> dict[bool, tuple[int, int]]:
    """(conformed, movers) over rounds >= 2, split by whether the previous plurality was right."""
    split = {True: (0, 0), False: (0, 0)}
    for dynamics in threads:
        for before, now in zip(dynamics.rounds, dynamics.rounds[1:], strict=False):
            right = bool(before.decision_correct)
            conformed, movers = split[right]
            split[right] = (conformed + now.conformed, movers + now.movers)
    return split


def check_oracle(threads: Sequence[Dynamics]) -> None:
    """The oracle is never below the final decision; the loss is the oracle without it."""
    for dynamics in threads:
        assert dynamics.oracle or not dynamics.final_correct
        assert dynamics.loss == (dynamics.oracle and not dynamics.final_correct)
    summary = summarize_dynamics(threads)
    assert summary.oracle >= summary.final_accuracy
    assert math.isclose(summary.loss, summary.oracle - summary.final_accuracy)


@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_independent_answers_land_in_the_bands_of_p() -> None:
    """Each call is right with probability p = 0.3, whatever it read; wrong answers distinct.

    Every round alike: a solver's accuracy is p; the plurality's is
    :func:`plurality_of_distinct_wrongs` (0.544 at p = 0.3); a solver right before is
    wrong now with probability 1 - p, one wrong before is right now with probability p.
    A mover (off the previous plurality) lands on it only by answering right, so movers
    conform with probability p after a right plurality and never after a wrong one.
    (p is away from 1/2, so a flip rate over the other denominator, about p for flips to
    wrong and 1 - p for flips to right, is far from the right one.)
    """
    p, threads, rounds = 0.3, 40, 3
    measured = [dynamics for _, dynamics in debate(herd_responder(p), threads, rounds)]
    summary = summarize_dynamics(measured)
    assert [r.threads for r in summary.rounds] == [threads] * rounds
    decision = plurality_of_distinct_wrongs(p)
    for r in summary.rounds:
        within(r.agent_accuracy, p, threads * SOLVERS, f"round {r.round} agent accuracy")
        within(r.decision_accuracy, decision, threads, f"round {r.round} decision accuracy")
    later = summary.rounds[1:]
    was_right = sum(r.was_right or 0 for t in measured for r in t.rounds[1:])
    was_wrong = sum(r.was_wrong or 0 for t in measured for r in t.rounds[1:])
    assert was_right + was_wrong == threads * SOLVERS * (rounds - 1)
    to_wrong, to_right = sum(r.flips_to_wrong for r in later), sum(r.flips_to_right for r in later)
    within(to_wrong / was_right, 1 - p, was_right, "flip to wrong")
    within(to_right / was_wrong, p, was_wrong, "flip to right")
    # The bands tell the right denominators from the wrong ones.
    outside(to_wrong / was_wrong, 1 - p, was_right, "flips to wrong / solvers wrong before")
    outside(to_wrong / (was_right + was_wrong), 1 - p, was_right, "flips to wrong / solvers")
    outside(to_right / was_right, p, was_wrong, "flips to right / solvers right before")
    # Pooled over the rounds (independent here), the bands are narrower.
    correct = sum(r.correct or 0 for t in measured for r in t.rounds)
    within(correct / (threads * SOLVERS * rounds), p, threads * SOLVERS * rounds, "accuracy")
    decided = sum(bool(r.decision_correct) for t in measured for r in t.rounds)
    within(decided / (threads * rounds), decision, threads * rounds, "decision accuracy")
    split = conformity_split(measured)
    assert split[False][0] == 0  # no one conforms to a wrong plurality by chance
    conformed, movers = split[True]
    within(conformed / movers, p, movers, "conformity after a right plurality")
    check_oracle(measured)


@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_conformity_lands_in_the_band_of_c() -> None:
    """After round 1 each call copies the previous round's plurality with probability c = 0.6.

    Otherwise it answers right with probability p = 0.2, else a wrong number no other
    answer has. A mover whose previous plurality P was wrong lands on P only by copying
    it (a fresh answer is the gold, or a new wrong number: P with probability < 1e-9), so
    the expected conformity among such movers is exactly c. After a right plurality a
    mover also lands on it by answering right: c + (1 - c) p = 0.68. Round 1 is
    independent: its accuracies are p and :func:`plurality_of_distinct_wrongs`. (A low p
    makes most round-1 pluralities wrong: most movers are the ones c is measured on.)

    Counted over every solver instead of the movers, the conformed are fewer than c: in
    round 2 most solvers are movers (a wrong plurality has one vote, mostly), but in round
    3 the herd formed in round 2 holds most solvers, who are not movers. (The share of
    every solver that answers P is c too: here a solver on P copies as one off it does, so
    that measure is the one wrong measure of conformity these bands cannot tell apart.)
    """
    p, c, threads, rounds = 0.2, 0.6, 40, 3
    measured = [dynamics for _, dynamics in debate(herd_responder(p, c), threads, rounds)]
    first = summarize_dynamics(measured).rounds[0]
    within(first.agent_accuracy, p, threads * SOLVERS, "round 1 agent accuracy")
    within(first.decision_accuracy, plurality_of_distinct_wrongs(p), threads, "round 1 decision")
    split = conformity_split(measured)
    conformed, movers = split[False]
    within(conformed / movers, c, movers, "conformity after a wrong plurality")
    solvers = sum(
        now.agents
        for dynamics in measured
        for before, now in zip(dynamics.rounds, dynamics.rounds[1:], strict=False)
        if not before.decision_correct
    )
    outside(conformed / solvers, c, movers, "conformed / every solver after a wrong plurality")
    conformed, movers = split[True]
    within(conformed / movers, c + (1 - c) * p, movers, "conformity after a right plurality")
    check_oracle(measured)


def test_confidence_that_tracks_correctness_makes_weighted_beat_plurality() -> None:
    """One round, p = 0.35, and one common wrong answer; confidence 0.9 if right, else 0.2.

    With k right answers of 5, plurality is right when k >= 3 (0.235 at p = 0.35);
    weighted when 0.9 k > 0.2 (5 - k), i.e. k >= 1 (1 - 0.65^5 = 0.884). Both are decided
    from each thread's final answers and the confidences of its latest solve turns.
    """
    p, threads = 0.35, 40
    outcomes = debate(herd_responder(p, wrong=1, sure=0.9, unsure=0.2), threads, 1)
    right = {PLURALITY: 0, WEIGHTED: 0}
    for i, (out, _) in enumerate(outcomes):
        finals = latest_turns(out["transcript"])
        answers = {solver: turn.answer for solver, turn in finals.items()}
        confidences = {solver: turn.confidence for solver, turn in finals.items()}
        assert answers == out["rounds"][-1].answers
        plurality = decide(DecisionProtocol(PLURALITY), answers, confidences)
        assert plurality.answer == out["answer"]  # the graph decides by plurality by default
        right[PLURALITY] += plurality.answer == str(gold_of(i))
        right[WEIGHTED] += decide(DecisionProtocol(WEIGHTED), answers, confidences).answer == str(
            gold_of(i)
        )
    expected_plurality = sum(binomial(SOLVERS, k, p) for k in range(3, SOLVERS + 1))
    expected_weighted = 1 - (1 - p) ** SOLVERS
    within(right[PLURALITY] / threads, expected_plurality, threads, "plurality accuracy")
    within(right[WEIGHTED] / threads, expected_weighted, threads, "weighted accuracy")
    # The margin is about 0.65 threads, with a standard deviation under 0.08 threads.
    assert right[WEIGHTED] - right[PLURALITY] >= 0.3 * threads
    check_oracle([dynamics for _, dynamics in outcomes])
