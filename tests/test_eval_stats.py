"""The eval's statistics against values computed independently or published."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debategraph.eval import budget, dynamics
from debategraph.eval.budget import match_budgets, within_budget
from debategraph.eval.dynamics import DecisionResult, mode_dynamics
from debategraph.eval.paired import mcnemar_exact
from debategraph.eval.records import Comparison, Matched, Outcome
from debategraph.eval.stats import (
    Report,
    build_report,
    compare,
    pareto_front,
    summarize,
)
from debategraph.strategies.dynamics import (
    Dynamics,
    DynamicsSummary,
    summarize_dynamics,
)
from debategraph.strategies.intervals import wilson_interval

Z = 1.959963984540054


def wilson_reference(successes: int, n: int) -> tuple[float, float]:
    """Wilson's interval in its other closed form: (2np + z^2 +- z sqrt(z^2 + 4np(1-p))) / ..."""
    p = successes / n
    spread = Z * math.sqrt(Z * Z + 4 * n * p * (1 - p))
    denominator = 2 * (n + Z * Z)
    return ((2 * n * p + Z * Z - spread) / denominator, (2 * n * p + Z * Z + spread) / denominator)


def binomial_tail_log(k: int, total: int) -> float:
    """log P(X <= k) for X ~ Binomial(total, 1/2), summed in log space (no big integers)."""
    terms = [
        math.lgamma(total + 1) - math.lgamma(i + 1) - math.lgamma(total - i + 1)
        for i in range(k + 1)
    ]
    top = max(terms)
    return top + math.log(sum(math.exp(t - top) for t in terms)) - total * math.log(2)


def outcome(mode: str, line: int, correct: bool, **overrides: object) -> Outcome:
    values: dict[str, object] = {
        "mode": mode,
        "line": line,
        "gold": "42",
        "answer": "42" if correct else "7",
        "correct": correct,
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "calls": 1,
        "wall_s": 0.5,
        "thread_id": f"{mode}-{line}",
    }
    values.update(overrides)
    return Outcome(**values)  # type: ignore[arg-type]


# Wilson interval


@pytest.mark.parametrize(
    ("successes", "n", "published"),
    [
        # Newcombe (1998), Stat. Med. 17:857, Table I, method 3 (score, no correction).
        (81, 263, (0.2553, 0.3662)),
        (15, 148, (0.0624, 0.1605)),
        (0, 20, (0.0, 0.1611)),
        (1, 29, (0.0061, 0.1718)),
        (81, 100, (0.7222, 0.8749)),
    ],
)
def test_wilson_published_values(successes: int, n: int, published: tuple[float, float]) -> None:
    assert wilson_interval(successes, n) == pytest.approx(published, abs=5e-5)


@pytest.mark.parametrize(("successes", "n"), [(81, 100), (1, 3), (7, 50), (499, 1000), (3, 7)])
def test_wilson_matches_the_other_closed_form(successes: int, n: int) -> None:
    assert wilson_interval(successes, n) == pytest.approx(wilson_reference(successes, n))


def test_wilson_edges() -> None:
    low, high = wilson_interval(0, 20)
    assert low == 0.0
    assert high == pytest.approx(wilson_reference(0, 20)[1])
    assert 0 < high < 0.2
    low, high = wilson_interval(20, 20)
    assert high == 1.0
    assert low == pytest.approx(1 - wilson_interval(0, 20)[1])
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_wilson_rejects_impossible_counts() -> None:
    for successes, n in [(3, 2), (-1, 5), (0, -1)]:
        with pytest.raises(ValueError):
            wilson_interval(successes, n)


@given(
    st.integers(min_value=1, max_value=5000).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, n))
    )
)
def test_wilson_contains_the_estimate(case: tuple[int, int]) -> None:
    n, successes = case
    low, high = wilson_interval(successes, n)
    assert 0.0 <= low <= successes / n <= high <= 1.0


# McNemar


@pytest.mark.parametrize(
    ("a_only", "b_only", "expected"),
    [
        (1, 9, 2 * (1 + 10) / 2**10),  # 0.021484375
        (2, 8, 2 * (1 + 10 + 45) / 2**10),
        (0, 6, 2 / 2**6),
        (0, 1, 1.0),
        (5, 5, 1.0),  # 2 * P(X <= 5) > 1: clamped
        (0, 0, 1.0),
    ],
)
def test_mcnemar_hand_computed(a_only: int, b_only: int, expected: float) -> None:
    assert mcnemar_exact(a_only, b_only) == pytest.approx(expected, rel=1e-12)
    assert mcnemar_exact(b_only, a_only) == mcnemar_exact(a_only, b_only)


def test_mcnemar_one_nine_published() -> None:
    assert mcnemar_exact(1, 9) == pytest.approx(0.021484375)


def test_mcnemar_large_counts() -> None:
    tiny = mcnemar_exact(50, 400)
    assert math.isfinite(tiny)
    assert 0 < tiny < 1e-60
    assert math.log(tiny) == pytest.approx(math.log(2) + binomial_tail_log(50, 450), rel=1e-9)
    moderate = mcnemar_exact(400, 450)
    assert moderate == pytest.approx(2 * math.exp(binomial_tail_log(400, 850)), rel=1e-9)
    assert 0.05 < moderate < 0.2
    assert mcnemar_exact(0, 5000) == 0.0  # underflows to zero, no OverflowError


def test_mcnemar_rejects_negative_counts() -> None:
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


# summarize / compare

OUTCOMES = [
    outcome("single", 1, True, prompt_tokens=100, completion_tokens=20, calls=1, wall_s=1.0),
    outcome("single", 2, False, answer=None, prompt_tokens=120, calls=1, wall_s=2.0),
    outcome("single", 3, True, prompt_tokens=80, calls=1, wall_s=3.0),
    outcome("single", 4, False, prompt_tokens=100, calls=1, wall_s=2.0),
    outcome("debate-ring", 1, True, prompt_tokens=900, calls=9),
    outcome("debate-ring", 2, True, prompt_tokens=1100, calls=9),
    outcome("debate-ring", 3, False, prompt_tokens=1000, calls=9),
    outcome("vote", 1, True),  # only mode "vote" of line 5 is unpaired with single
    outcome("vote", 5, True),
    outcome("other", 1, True),  # not asked for: ignored
]


def test_summarize() -> None:
    summaries = summarize(OUTCOMES, ["single", "vote", "debate-full", "debate-ring"])
    assert [s.mode for s in summaries] == ["single", "vote", "debate-ring"]  # no debate-full
    single, vote, ring = summaries
    assert (single.n, single.correct, single.accuracy) == (4, 2, 0.5)
    assert (single.ci_low, single.ci_high) == wilson_interval(2, 4)
    assert single.abstention_rate == 0.25
    assert single.prompt_tokens == 100.0
    assert single.completion_tokens == pytest.approx((20 + 10 + 10 + 10) / 4)
    assert single.tokens == pytest.approx(100.0 + 12.5)
    assert single.calls == 1.0
    assert single.wall_s == 2.0
    assert single.decision == "plurality"
    assert (vote.n, vote.accuracy, vote.abstention_rate) == (2, 1.0, 0.0)
    assert (ring.n, ring.correct, ring.prompt_tokens, ring.calls) == (3, 2, 1000.0, 9.0)
    assert ring.tokens == 1010.0


# Labels: a mode under other decision protocols

PROTOCOLS = [
    outcome("debate-full", 1, True),
    outcome("debate-full", 1, False, decision="judge", prompt_tokens=150),
    outcome("debate-full", 2, False),
    outcome("debate-full", 2, True, decision="judge", prompt_tokens=170),
    outcome("debate-full", 1, True, decision="weighted"),
    outcome("single", 1, False),
    outcome("single", 2, False),
]


def test_a_mode_brings_its_protocol_rows_in_the_order_they_appear() -> None:
    summaries = summarize(PROTOCOLS, ["single", "debate-full"])
    assert [(s.mode, s.decision, s.n) for s in summaries] == [
        ("single", "plurality", 2),
        ("debate-full", "plurality", 2),
        ("debate-full/judge", "judge", 2),
        ("debate-full/weighted", "weighted", 1),
    ]
    assert summaries[2].prompt_tokens == 160.0
    assert summaries[2].tokens == 170.0
    # A protocol row named itself goes where it is named; a label twice counts once.
    named = summarize(PROTOCOLS, ["debate-full/weighted", "debate-full", "single", "single"])
    assert [s.mode for s in named] == [
        "debate-full/weighted",
        "debate-full",
        "debate-full/judge",
        "single",
    ]
    assert [s.mode for s in summarize(PROTOCOLS, ["debate-full/judge"])] == ["debate-full/judge"]


def test_compare_chooses_the_pairs_that_matter() -> None:
    rows = [
        outcome(mode, line, True) for mode in ("single", "vote", "debate-full") for line in (1, 2)
    ]
    rows += [outcome("debate-full", line, line == 1, decision="judge") for line in (1, 2)]
    rows += [outcome("vote@9", line, False) for line in (1, 2)]
    rows += [outcome("vote@9", line, True, decision="weighted") for line in (1, 2)]
    matched = [
        Matched("debate-full", "vote@9", 9, "k = 9"),
        Matched("debate-ring", "vote@5", 5, ""),
    ]
    pairs = [
        (c.a, c.b, c.a_only, c.b_only)
        for c in compare(rows, ["single", "vote", "debate-full", "vote@9"], matched)
    ]
    assert pairs == [
        # every pair of plain modes, the matched vote left out
        ("single", "vote", 0, 0),
        ("single", "debate-full", 0, 0),
        ("vote", "debate-full", 0, 0),
        # each protocol row against its own mode
        ("debate-full", "debate-full/judge", 1, 0),
        ("vote@9", "vote@9/weighted", 0, 2),
        # each debate mode against its matched vote (debate-ring has no rows)
        ("debate-full", "vote@9", 2, 0),
    ]
    # Without the Matched records vote@9 is a plain mode like any other.
    plain = [(c.a, c.b) for c in compare(rows, ["single", "vote@9"])]
    assert plain == [("single", "vote@9"), ("vote@9", "vote@9/weighted")]


def test_compare_pairs_on_lines() -> None:
    comparisons = compare(OUTCOMES, ["single", "vote", "debate-ring"])
    assert comparisons == [
        Comparison("single", "vote", n=1, a_only=0, b_only=0, p_value=1.0),
        # lines 1-3: single right on 1 and 3, ring right on 1 and 2
        Comparison("single", "debate-ring", n=3, a_only=1, b_only=1, p_value=1.0),
        Comparison("vote", "debate-ring", n=1, a_only=0, b_only=0, p_value=1.0),
    ]


def test_compare_counts_discordant_pairs() -> None:
    rows = [outcome("a", line, line <= 9) for line in range(1, 21)]
    rows += [outcome("b", line, line == 1 or line > 10) for line in range(1, 21)]
    (only,) = compare(rows, ["a", "b"])
    assert (only.n, only.a_only, only.b_only) == (20, 8, 10)
    assert only.p_value == pytest.approx(mcnemar_exact(8, 10))
    assert compare(rows, ["b", "a"])[0].a_only == 10


def test_duplicate_outcome_is_an_error() -> None:
    rows = [outcome("single", 1, True), outcome("single", 1, False)]
    with pytest.raises(ValueError, match=r"^two outcomes for 'single', line 1$"):
        summarize(rows, ["single"])
    with pytest.raises(ValueError, match="line 1"):
        compare(rows, ["single"])
    judged = [outcome("vote", 2, True, decision="judge")] * 2
    with pytest.raises(ValueError, match=r"^two outcomes for 'vote/judge', line 2$"):
        build_report(judged, ["vote"])


def test_empty() -> None:
    assert summarize([], ["single", "vote"]) == []
    assert compare([], ["single", "vote"]) == []
    report = build_report([], ["single"], [Matched("debate-full", "vote@9", 9, "")])
    assert report == Report((), (), (), (), ())


# Matched budgets


def budget_rows(vote_tokens: int) -> list[Outcome]:
    """debate-full: 1000 tokens a question, right on 1-6; vote@9: right on 1-3 and 7-10."""
    rows = [
        outcome("debate-full", line, line <= 6, prompt_tokens=900, completion_tokens=100)
        for line in range(1, 11)
    ]
    rows += [
        outcome(
            "vote@9",
            line,
            line <= 3 or line >= 7,
            prompt_tokens=vote_tokens - 50,
            completion_tokens=50,
        )
        for line in range(1, 11)
    ]
    rows.append(outcome("vote@9", 11, True, prompt_tokens=10**6))  # unpaired: not counted
    rows.append(outcome("debate-full", 1, False, decision="judge"))  # a protocol row: ignored
    return rows


MATCH = Matched("debate-full", "vote@9", 9, "k = 9: 1000 tokens / 111 per answer")


def test_matched_budget() -> None:
    (result,) = match_budgets(budget_rows(1100), [MATCH])
    assert (result.mode, result.vote_mode, result.k, result.how) == (
        "debate-full",
        "vote@9",
        9,
        MATCH.how,
    )
    assert (result.n, result.tokens, result.vote_tokens) == (10, 1000.0, 1100.0)
    assert result.ratio == pytest.approx(1.1)
    assert result.within  # exactly 10% more
    assert (result.accuracy, result.vote_accuracy) == (0.6, 0.7)
    assert (result.a_only, result.b_only) == (3, 4)
    assert result.p_value == mcnemar_exact(3, 4) == 1.0


@pytest.mark.parametrize(
    ("vote_tokens", "within"), [(900, True), (899, False), (1101, False), (1000, True)]
)
def test_matched_budget_within_ten_percent(vote_tokens: int, within: bool) -> None:
    (result,) = match_budgets(budget_rows(vote_tokens), [MATCH])
    assert result.within is within
    assert result.ratio == pytest.approx(vote_tokens / 1000)


@pytest.mark.parametrize(
    ("spent", "vote_spent", "within"),
    [
        (10, 9, True),
        (10, 11, True),
        (10, 8, False),
        (70, 77, True),
        (70, 63, True),
        (71, 79, False),
    ],
)
def test_matched_budget_exactly_ten_percent_over_three_questions(
    spent: int, vote_spent: int, within: bool
) -> None:
    # Three questions: the means (10/3 against 9/3) are inexact floats; the totals are not.
    tokens = [spent - 2 * (spent // 3), spent // 3, spent // 3]
    votes = [vote_spent - 2 * (vote_spent // 3), vote_spent // 3, vote_spent // 3]
    rows = [
        outcome(mode, line, True, prompt_tokens=count, completion_tokens=0)
        for mode, counts in (("debate-full", tokens), ("vote@9", votes))
        for line, count in enumerate(counts, start=1)
    ]
    (result,) = match_budgets(rows, [MATCH])
    assert result.within is within
    assert within is (abs(vote_spent - spent) <= Fraction(1, 10) * spent)
    assert within_budget(spent, vote_spent) is within  # the runner's rule, on the totals


def test_matched_budget_edges() -> None:
    free = [outcome("debate-full", 1, True, prompt_tokens=0, completion_tokens=0)]
    free += [outcome("vote@9", 1, True, prompt_tokens=0, completion_tokens=0)]
    (result,) = match_budgets(free, [MATCH])
    assert (result.ratio, result.within) == (None, True)
    unpaired = [outcome("debate-full", 1, True), outcome("vote@9", 2, True)]
    assert match_budgets(unpaired, [MATCH]) == []
    assert match_budgets(free[:1], [MATCH]) == []


# Pareto front


def point(label: str, tokens: int, right: int, n: int = 10) -> list[Outcome]:
    return [
        outcome(label, line, line <= right, prompt_tokens=tokens, completion_tokens=0)
        for line in range(1, n + 1)
    ]


def test_pareto_front() -> None:
    rows = point("single", 100, 3)
    rows += point("vote", 300, 5)
    rows += point("cheap-bad", 100, 2)  # same tokens as single, lower accuracy: dominated
    rows += point("debate", 900, 5)  # as accurate as vote, dearer: dominated
    rows += point("debate-full", 1000, 8)
    rows += point("twin", 1000, 8)  # the same point as debate-full: neither dominates
    rows += point("dear", 2000, 7)
    labels = ["single", "vote", "cheap-bad", "debate", "debate-full", "twin", "dear"]
    summaries = summarize(rows, labels)
    assert pareto_front(summaries) == ["single", "vote", "debate-full", "twin"]
    assert build_report(rows, labels).pareto == ("single", "vote", "debate-full", "twin")
    assert pareto_front(summaries[:1]) == ["single"]
    assert pareto_front([]) == []


# Debate dynamics

GOLD = "42"
# Three solvers, two rounds, four questions (gold 42):
# 1: 42,7,7 -> 7,7,7   solver 1 flips to wrong and conforms; decision wrong, a loss
# 2: 42,42,5 -> all 42 solver 3 flips to right and conforms; decision right
# 3: 5,5,6 -> 5,5,42   solver 3 flips to right, does not conform; decision wrong, a loss
# 4: all 42 twice      nothing moves
ROUNDS = {
    1: [{"s1": "42", "s2": "7", "s3": "7"}, {"s1": "7", "s2": "7", "s3": "7"}],
    2: [{"s1": "42", "s2": "42", "s3": "5"}, {"s1": "42", "s2": "42", "s3": "42"}],
    3: [{"s1": "5", "s2": "5", "s3": "6"}, {"s1": "5", "s2": "5", "s3": "42"}],
    4: [{"s1": "42", "s2": "42", "s3": "42"}] * 2,
}
FINAL = {1: "7", 2: "42", 3: "5", 4: "42"}
JUDGED = {1: "42", 2: "42", 3: "5", 4: "42"}


def dynamics_rows() -> list[Outcome]:
    rows = []
    for line, rounds in ROUNDS.items():
        text = json.dumps(rounds)
        for decision, answers in (("plurality", FINAL), ("judge", JUDGED)):
            answer = answers[line]
            rows.append(
                outcome(
                    "debate-full",
                    line,
                    answer == GOLD,
                    answer=answer,
                    gold=GOLD,
                    rounds=text,
                    decision=decision,
                )
            )
        single = json.dumps(rounds[:1])  # one round: no dynamics
        rows.append(outcome("single", line, True, gold=GOLD, rounds=single))
    rows.append(outcome("debate-ring", 1, True, gold=GOLD))  # rounds never recorded
    return rows


def test_mode_dynamics() -> None:
    (entry,) = mode_dynamics(dynamics_rows(), ["single", "debate-ring", "debate-full"])
    assert entry.mode == "debate-full"
    summary = entry.summary
    assert summary.threads == 4
    first, second = summary.rounds
    assert (first.round, first.threads) == (1, 4)
    assert first.agent_accuracy == 6 / 12
    assert first.decision_accuracy == 2 / 4
    assert (first.flip_to_wrong, first.flip_to_right, first.conformity) == (None, None, None)
    assert second.agent_accuracy == 7 / 12
    assert second.agent_ci == wilson_interval(7, 12)
    assert second.decision_accuracy == 2 / 4
    assert (second.flips_to_wrong, second.flip_to_wrong) == (1, 1 / 6)  # of 6 right before
    assert (second.flips_to_right, second.flip_to_right) == (2, 2 / 6)  # of 6 wrong before
    assert (second.movers, second.conformed, second.conformity) == (3, 2, 2 / 3)
    assert (summary.oracle, summary.final_accuracy, summary.loss) == (1.0, 0.5, 0.5)
    assert entry.decisions == (
        DecisionResult(
            label="debate-full",
            decision="plurality",
            threads=4,
            oracle=1.0,
            oracle_ci=wilson_interval(4, 4),
            final_accuracy=0.5,
            final_ci=wilson_interval(2, 4),
            loss=0.5,
            loss_ci=wilson_interval(2, 4),
        ),
        DecisionResult(
            label="debate-full/judge",
            decision="judge",
            threads=4,
            oracle=1.0,
            oracle_ci=wilson_interval(4, 4),
            final_accuracy=0.75,
            final_ci=wilson_interval(3, 4),
            loss=0.25,
            loss_ci=wilson_interval(1, 4),
        ),
    )


def test_an_abstaining_protocol_row_is_never_right() -> None:
    # Questions 2 and 4: every round's plurality is 42, but unanimity:abstain abstained.
    rows = [r for r in dynamics_rows() if r.mode == "debate-full" and r.decision == "plurality"]
    rows += [
        outcome(
            "debate-full",
            line,
            False,
            answer=None,
            gold=GOLD,
            rounds=json.dumps(ROUNDS[line]),
            decision="unanimity:abstain",
        )
        for line in (2, 4)
    ]
    (entry,) = mode_dynamics(rows, ["debate-full"])
    assert entry.decisions[1] == DecisionResult(
        label="debate-full/unanimity:abstain",
        decision="unanimity:abstain",
        threads=2,
        oracle=1.0,
        oracle_ci=wilson_interval(2, 2),
        final_accuracy=0.0,
        final_ci=wilson_interval(0, 2),
        loss=1.0,
        loss_ci=wilson_interval(2, 2),
    )


def test_decision_results_are_the_figures_worked_out_by_hand() -> None:
    # Worked out from ROUNDS, FINAL and JUDGED above, not by the code under test:
    # oracle: some solver is right in some round on all 4 questions (1: s1 in round 1;
    # 2: s1, s2; 3: s3 in round 2; 4: all) -> 4/4.
    # plurality finals 7, 42, 5, 42: right on 2 and 4 -> 2/4; lost (oracle right, final
    # wrong) on 1 and 3 -> 2/4.
    # judge finals 42, 42, 5, 42: right on 1, 2 and 4 -> 3/4; lost on 3 only -> 1/4.
    (entry,) = mode_dynamics(dynamics_rows(), ["debate-full"])
    plain, judged = entry.decisions
    figures = {
        "plurality": (plain, 4, 2, 2),
        "judge": (judged, 4, 3, 1),
    }
    for decision, (result, oracle, right, lost) in figures.items():
        assert result.threads == 4, decision
        assert (result.oracle, result.final_accuracy, result.loss) == (
            oracle / 4,
            right / 4,
            lost / 4,
        ), decision
        for got, count in (
            (result.oracle_ci, oracle),
            (result.final_ci, right),
            (result.loss_ci, lost),
        ):
            assert got == pytest.approx(wilson_reference(count, 4)), decision
    summary = entry.summary  # the mode's own summary is its plurality rows'
    assert (summary.oracle, summary.final_accuracy, summary.loss) == (1.0, 0.5, 0.5)


def test_the_figures_come_from_the_one_computation_of_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Decision results are summarize_dynamics' figures; the budget rule is the runner's.
    summarised: list[int] = []
    budgets: list[tuple[float, float]] = []

    def summarise(threads: list[Dynamics]) -> DynamicsSummary:
        summarised.append(len(threads))
        return summarize_dynamics(threads)

    def within(spent: float, vote_spent: float) -> bool:
        budgets.append((spent, vote_spent))
        return within_budget(spent, vote_spent)

    monkeypatch.setattr(dynamics, "summarize_dynamics", summarise)
    monkeypatch.setattr(budget, "within_budget", within)
    (entry,) = mode_dynamics(dynamics_rows(), ["debate-full"])
    assert summarised == [4, 4]  # the mode's plurality rows, then its judge rows
    assert [d.label for d in entry.decisions] == ["debate-full", "debate-full/judge"]
    (result,) = match_budgets(budget_rows(1100), [MATCH])
    assert budgets == [(10_000, 11_000)] and result.within


@given(st.lists(st.booleans(), min_size=1, max_size=60))
def test_the_final_interval_is_the_count_of_right_finals(rights: list[bool]) -> None:
    rows = [
        outcome(
            "debate-full",
            line,
            right,
            answer=GOLD if right else "7",
            gold=GOLD,
            rounds=json.dumps(ROUNDS[4]),
        )
        for line, right in enumerate(rights, start=1)
    ]
    (entry,) = mode_dynamics(rows, ["debate-full"])
    (result,) = entry.decisions
    assert result.final_ci == wilson_interval(sum(rights), len(rights))


def test_mode_dynamics_needs_two_rounds() -> None:
    one_round = [r for r in dynamics_rows() if r.mode != "debate-full"]
    assert mode_dynamics(one_round, ["single", "debate-ring"]) == []


def test_bad_rounds_is_one_line() -> None:
    rows = [outcome("debate-full", 3, True, rounds='{"s1": "42"}', decision="judge")]
    two_rounds = json.dumps(ROUNDS[2])
    message = r"^'debate-full/judge', line 3: rounds must be a JSON list of \{solver: answer\}"
    with pytest.raises(ValueError, match=message):
        mode_dynamics([outcome("debate-full", 3, True, rounds=two_rounds), *rows], ["debate-full"])
    with pytest.raises(ValueError, match="line 5: rounds must be"):
        mode_dynamics([outcome("vote", 5, True, rounds="not json")], ["vote"])


def test_build_report() -> None:
    rows = dynamics_rows()
    rows += [
        outcome("vote@9", line, True, gold=GOLD, rounds=json.dumps(ROUNDS[line][:1]))
        for line in ROUNDS
    ]
    report = build_report(rows, ["single", "debate-full", "vote@9"], [MATCH])
    assert [s.mode for s in report.summaries] == [
        "single",
        "debate-full",
        "debate-full/judge",
        "vote@9",
    ]
    assert [(c.a, c.b) for c in report.comparisons] == [
        ("single", "debate-full"),
        ("debate-full", "debate-full/judge"),
        ("debate-full", "vote@9"),
    ]
    assert [(m.vote_mode, m.n, m.a_only, m.b_only) for m in report.matched] == [("vote@9", 4, 0, 2)]
    assert [d.mode for d in report.dynamics] == ["debate-full"]
    # All at 110 tokens a question; single and vote@9 right on every line, tied on the front.
    assert report.pareto == ("single", "vote@9")
