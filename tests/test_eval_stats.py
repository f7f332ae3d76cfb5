"""The eval's statistics against values computed independently or published."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debategraph.eval.records import Comparison, Outcome
from debategraph.eval.stats import compare, mcnemar_exact, summarize, wilson_interval

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
    assert single.calls == 1.0
    assert single.wall_s == 2.0
    assert (vote.n, vote.accuracy, vote.abstention_rate) == (2, 1.0, 0.0)
    assert (ring.n, ring.correct, ring.prompt_tokens, ring.calls) == (3, 2, 1000.0, 9.0)


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
    with pytest.raises(ValueError, match="line 1"):
        summarize(rows, ["single"])
    with pytest.raises(ValueError, match="line 1"):
        compare(rows, ["single"])


def test_empty() -> None:
    assert summarize([], ["single", "vote"]) == []
    assert compare([], ["single", "vote"]) == []
