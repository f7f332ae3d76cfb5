"""Debate dynamics on small hand-made rounds: flips, conformity, oracle, loss, summaries."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debategraph.strategies import Dynamics, summarize_dynamics, thread_dynamics
from debategraph.strategies.dynamics import LAST, RoundDynamics
from debategraph.strategies.intervals import wilson_interval

#: Four solvers over three rounds, gold 18. Round 1: two right; plurality 7 (a tie 7/18
#: broken by the earliest solver, a). Round 2: a flips to right, b (right) stays, c stays
#: wrong, d (right) flips to wrong (abstains). Round 3: all but d on 18.
ROUNDS: list[dict[str, str | None]] = [
    {"a": "7", "b": "18", "c": "7", "d": "18"},
    {"a": "18", "b": "18", "c": "7", "d": None},
    {"a": "18", "b": "18", "c": "18", "d": "5"},
]


def test_a_thread_measured_with_gold() -> None:
    dynamics = thread_dynamics(ROUNDS, gold="18")
    first, second, third = dynamics.rounds
    assert first == RoundDynamics(
        round=1, agents=4, answered=4, correct=2, plurality="7", decision_correct=False,
        changed=0, flips_to_wrong=0, flips_to_right=0, was_right=0, was_wrong=0,
        movers=0, conformed=0,
    )  # fmt: skip
    # Round 1's plurality was 7: b and d (on 18) are the movers; neither moved to 7.
    assert second == RoundDynamics(
        round=2, agents=4, answered=3, correct=2, plurality="18", decision_correct=True,
        changed=2, flips_to_wrong=1, flips_to_right=1, was_right=2, was_wrong=2,
        movers=2, conformed=0,
    )  # fmt: skip
    # Round 2's plurality was 18: c (on 7) and d (abstained) are the movers; c conformed.
    assert third == RoundDynamics(
        round=3, agents=4, answered=4, correct=3, plurality="18", decision_correct=True,
        changed=2, flips_to_wrong=0, flips_to_right=1, was_right=2, was_wrong=2,
        movers=2, conformed=1,
    )  # fmt: skip
    assert (dynamics.oracle, dynamics.final, dynamics.final_correct, dynamics.loss) == (
        True, "18", True, False,
    )  # fmt: skip


def test_without_gold_the_gold_measures_are_none() -> None:
    dynamics = thread_dynamics(ROUNDS)
    for measured in dynamics.rounds:
        assert (measured.correct, measured.decision_correct) == (None, None)
        assert (measured.flips_to_wrong, measured.flips_to_right) == (None, None)
        assert (measured.was_right, measured.was_wrong) == (None, None)
    assert [(r.changed, r.movers, r.conformed) for r in dynamics.rounds] == [
        (0, 0, 0), (2, 2, 0), (2, 2, 1),
    ]  # fmt: skip
    assert (dynamics.oracle, dynamics.final, dynamics.final_correct, dynamics.loss) == (
        None, "18", None, None,
    )  # fmt: skip


def test_the_loss_is_a_right_answer_held_once_and_decided_away() -> None:
    # b had the gold in round 1; everyone conformed to the wrong plurality.
    rounds: list[dict[str, str | None]] = [
        {"a": "7", "b": "18", "c": "7"},
        {"a": "7", "b": "7", "c": "7"},
    ]
    dynamics = thread_dynamics(rounds, gold="18")
    assert (dynamics.oracle, dynamics.final, dynamics.final_correct, dynamics.loss) == (
        True, "7", False, True,
    )  # fmt: skip
    second = dynamics.rounds[1]
    assert (second.flips_to_wrong, second.was_right, second.movers, second.conformed) == (
        1,
        1,
        1,
        1,
    )


def test_the_decided_answer_overrides_the_last_plurality() -> None:
    rounds: list[dict[str, str | None]] = [{"a": "7", "b": "7", "c": "18"}]
    judged = thread_dynamics(rounds, gold="18", final="18")
    assert (judged.final, judged.final_correct, judged.loss, judged.oracle) == (
        "18", True, False, True,
    )  # fmt: skip
    assert judged.rounds[0].decision_correct is False  # the round's plurality stays measured


def test_an_explicit_none_final_is_an_abstention_not_the_default() -> None:
    # The rounds' plurality is right, but the protocol (unanimity:abstain) decided nothing.
    rounds: list[dict[str, str | None]] = [{"a": "18", "b": "18", "c": "7"}] * 2
    abstained = thread_dynamics(rounds, gold="18", final=None)
    assert (abstained.final, abstained.final_correct, abstained.oracle, abstained.loss) == (
        None, False, True, True,
    )  # fmt: skip
    assert thread_dynamics(rounds, final=None).final is None  # without gold too
    assert thread_dynamics(rounds, gold="18").final == "18"  # omitted: the last plurality
    assert thread_dynamics(rounds, gold="18", final=LAST) == thread_dynamics(rounds, gold="18")


def test_no_oracle_no_loss() -> None:
    dynamics = thread_dynamics([{"a": "1", "b": "2"}, {"a": "2", "b": "2"}], gold="3")
    assert (dynamics.oracle, dynamics.final_correct, dynamics.loss) == (False, False, False)


def test_a_round_where_everyone_abstained_has_no_plurality_and_no_movers_after() -> None:
    rounds: list[dict[str, str | None]] = [{"a": None, "b": None}, {"a": "3", "b": "3"}]
    first, second = thread_dynamics(rounds, gold="3").rounds
    assert (first.answered, first.plurality, first.decision_correct) == (0, None, False)
    assert (second.movers, second.conformed, second.changed, second.flips_to_right) == (0, 0, 2, 2)


def test_a_solver_new_in_a_round_had_no_answer_before() -> None:
    rounds: list[dict[str, str | None]] = [{"a": "3", "b": "3"}, {"a": "3", "b": "3", "c": "3"}]
    second = thread_dynamics(rounds, gold="3").rounds[1]
    assert (second.agents, second.changed, second.was_right, second.was_wrong) == (3, 1, 2, 1)
    assert (second.flips_to_right, second.movers, second.conformed) == (1, 1, 1)


def test_no_rounds() -> None:
    assert thread_dynamics([], gold="3") == Dynamics(
        rounds=(), oracle=False, final=None, final_correct=False, loss=False
    )
    assert thread_dynamics([], gold="3", final="3").final_correct is True


# --------------------------------------------------------------------------
# Summaries
# --------------------------------------------------------------------------


def test_summary_over_threads_of_different_lengths() -> None:
    long = thread_dynamics(ROUNDS, gold="18")
    short = thread_dynamics([{"a": "7", "b": "7"}, {"a": "7", "b": "18"}], gold="18")
    lost = thread_dynamics([{"a": "7", "b": "18", "c": "7"}], gold="18")
    summary = summarize_dynamics([long, short, lost])
    assert summary.threads == 3
    first, second, third = summary.rounds
    assert (first.round, first.threads) == (1, 3)
    # Round 1: 2 + 0 + 1 right of 4 + 2 + 3 answers; every plurality is 7.
    assert (first.agent_accuracy, first.agent_ci) == (3 / 9, wilson_interval(3, 9))
    assert (first.decision_accuracy, first.decision_ci) == (0.0, wilson_interval(0, 3))
    assert (first.flip_to_wrong, first.flip_to_right, first.conformity) == (None, None, None)
    assert (first.flips_to_wrong, first.flips_to_right, first.movers, first.conformed) == (
        0, 0, 0, 0,
    )  # fmt: skip
    # Round 2, of `long` and `short`: 2 + 1 right of 4 + 2; pluralities 18 and 7 (a tie,
    # earliest solver).
    assert (second.threads, second.agent_accuracy, second.agent_ci) == (
        2, 3 / 6, wilson_interval(3, 6),
    )  # fmt: skip
    assert second.decision_accuracy == 0.5
    # Flips: long 1 to wrong of 2 right, 1 to right of 2 wrong; short 0 of 0, 1 of 2.
    assert (second.flips_to_wrong, second.flip_to_wrong) == (1, 1 / 2)
    assert (second.flips_to_right, second.flip_to_right) == (2, 2 / 4)
    # Movers: long 2 (none conformed); short 0 (both were on the plurality 7).
    assert (second.movers, second.conformed, second.conformity) == (2, 0, 0.0)
    assert (third.threads, third.agent_accuracy, third.decision_accuracy) == (1, 3 / 4, 1.0)
    assert (third.movers, third.conformed, third.conformity) == (2, 1, 0.5)
    # The oracle holds in long, short and lost; the final is right only in long.
    assert (summary.oracle, summary.oracle_ci) == (1.0, wilson_interval(3, 3))
    assert summary.final_accuracy == 1 / 3
    assert (summary.loss, summary.loss_ci) == (2 / 3, wilson_interval(2, 3))


def test_a_round_with_nobody_right_before_has_no_flip_to_wrong_rate() -> None:
    summary = summarize_dynamics([thread_dynamics([{"a": "1"}, {"a": "2"}], gold="2")])
    second = summary.rounds[1]
    assert (second.flip_to_wrong, second.flip_to_right) == (None, 1.0)
    assert (second.movers, second.conformity) == (0, None)


def test_summaries_refuse_no_threads_or_a_thread_without_gold() -> None:
    with pytest.raises(ValueError) as raised:
        summarize_dynamics([])
    assert str(raised.value) == "summarize_dynamics: no threads to summarise"
    with pytest.raises(ValueError) as raised:
        summarize_dynamics([thread_dynamics(ROUNDS, gold="18"), thread_dynamics(ROUNDS)])
    assert str(raised.value) == "summarize_dynamics: thread 2 was measured without gold"


# --------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------

ROUND = st.fixed_dictionaries(
    {s: st.one_of(st.none(), st.sampled_from(["1", "2", "3"])) for s in ("a", "b", "c")}
)


@given(st.lists(ROUND, max_size=4), st.sampled_from(["1", "2", "3"]))
def test_properties(rounds: list[dict[str, str | None]], gold: str) -> None:
    dynamics = thread_dynamics(rounds, gold=gold)
    assert dynamics.oracle is not None
    # The oracle is never below the decision; the loss is the oracle minus the decision.
    assert dynamics.oracle or not dynamics.final_correct
    assert dynamics.loss == (dynamics.oracle and not dynamics.final_correct)
    for before, now in zip(dynamics.rounds, dynamics.rounds[1:], strict=False):
        assert now.was_right == before.correct
        assert now.was_right is not None and now.was_wrong is not None
        assert now.was_right + now.was_wrong == now.agents
        # Right now = right before - flips to wrong + flips to right.
        assert now.correct == now.was_right - (now.flips_to_wrong or 0) + (now.flips_to_right or 0)
        assert 0 <= now.conformed <= now.movers <= now.agents
        assert now.changed >= (now.flips_to_wrong or 0) + (now.flips_to_right or 0)
    without = thread_dynamics(rounds)
    assert [(r.changed, r.movers, r.conformed, r.plurality) for r in without.rounds] == [
        (r.changed, r.movers, r.conformed, r.plurality) for r in dynamics.rounds
    ]
