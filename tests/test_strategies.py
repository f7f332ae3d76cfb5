"""Tests for the strategies: topologies, the answer extractor and the majority vote."""

from __future__ import annotations

import pytest

from debategraph.strategies import (
    TOPOLOGY_NAMES,
    Topology,
    custom,
    extract_answer,
    full,
    majority_vote,
    make_topology,
    normalize_number,
    ring,
    solver_names,
    star,
)


def s(*numbers: int) -> tuple[str, ...]:
    return tuple(f"solver_{i}" for i in numbers)


# --------------------------------------------------------------------------
# Topologies
# --------------------------------------------------------------------------


def test_solver_names() -> None:
    assert solver_names(3) == ["solver_1", "solver_2", "solver_3"]


def test_ring_k2_on_six_alternates_sides() -> None:
    topo = ring(6, 2)
    assert topo.name == "ring"
    assert topo.solvers == solver_names(6)
    assert dict(topo.neighbours) == {
        "solver_1": s(2, 6),
        "solver_2": s(3, 1),
        "solver_3": s(4, 2),
        "solver_4": s(5, 3),
        "solver_5": s(6, 4),
        "solver_6": s(1, 5),
    }
    assert topo.edges == 12


def test_ring_k3_on_six_goes_one_step_further() -> None:
    topo = ring(6, 3)
    assert dict(topo.neighbours) == {
        "solver_1": s(2, 6, 3),
        "solver_2": s(3, 1, 4),
        "solver_3": s(4, 2, 5),
        "solver_4": s(5, 3, 6),
        "solver_5": s(6, 4, 1),
        "solver_6": s(1, 5, 2),
    }
    assert topo.edges == 18


def test_ring_k1_hears_only_the_next_solver() -> None:
    assert dict(ring(3, 1).neighbours) == {
        "solver_1": s(2),
        "solver_2": s(3),
        "solver_3": s(1),
    }


def test_ring_with_all_neighbours_lists_each_once() -> None:
    topo = ring(4, 3)
    assert dict(topo.neighbours) == {
        "solver_1": s(2, 4, 3),
        "solver_2": s(3, 1, 4),
        "solver_3": s(4, 2, 1),
        "solver_4": s(1, 3, 2),
    }
    for solver, heard in topo.neighbours.items():
        assert solver not in heard
        assert len(set(heard)) == len(heard)


def test_full() -> None:
    topo = full(4)
    assert topo.name == "full"
    assert dict(topo.neighbours) == {
        "solver_1": s(2, 3, 4),
        "solver_2": s(1, 3, 4),
        "solver_3": s(1, 2, 4),
        "solver_4": s(1, 2, 3),
    }
    assert topo.edges == 12


def test_star_hub_is_solver_1() -> None:
    topo = star(4)
    assert topo.name == "star"
    assert dict(topo.neighbours) == {
        "solver_1": s(2, 3, 4),
        "solver_2": s(1),
        "solver_3": s(1),
        "solver_4": s(1),
    }
    assert topo.edges == 6


def test_custom_mapping() -> None:
    topo = custom({"alice": ["bob"], "bob": ("alice", "carol"), "carol": []})
    assert topo.name == "custom"
    assert topo.solvers == ["alice", "bob", "carol"]
    assert dict(topo.neighbours) == {
        "alice": ("bob",),
        "bob": ("alice", "carol"),
        "carol": (),
    }
    assert topo.edges == 3


def test_make_topology_by_name_mapping_and_passthrough() -> None:
    assert TOPOLOGY_NAMES == ("ring", "full", "star", "single")
    assert make_topology("ring", 6, 3) == ring(6, 3)
    assert make_topology("full", 3) == full(3)
    assert make_topology("star", 5) == star(5)
    mapped = make_topology({"a": ["b"], "b": ["a"]}, n=99, k=42)
    assert mapped == custom({"a": ["b"], "b": ["a"]})
    given = star(3)
    assert make_topology(given, n=10, k=7) is given


def test_topology_is_immutable() -> None:
    topo = full(2)
    with pytest.raises(AttributeError):
        topo.name = "ring"  # type: ignore[misc]


def test_unknown_topology_name() -> None:
    with pytest.raises(ValueError, match=r"unknown topology 'mesh'") as info:
        make_topology("mesh", 4)
    assert "ring, full, star" in str(info.value)


@pytest.mark.parametrize("k", [0, 6, -1, 7])
def test_ring_k_out_of_range(k: int) -> None:
    with pytest.raises(ValueError, match=rf"k={k} is out of range: with 6 solvers use 1\.\.5"):
        ring(6, k)


@pytest.mark.parametrize("factory", [ring, full, star])
@pytest.mark.parametrize("n", [1, 0])
def test_too_few_agents(factory: object, n: int) -> None:
    with pytest.raises(ValueError, match=rf"agents must be at least 2, got {n}"):
        factory(n)  # type: ignore[operator]


def test_custom_needs_two_solvers() -> None:
    with pytest.raises(ValueError, match="at least 2 solvers, got 1"):
        custom({"solo": []})


def test_custom_self_loop() -> None:
    with pytest.raises(ValueError, match="topology: a lists itself as a neighbour"):
        custom({"a": ["a", "b"], "b": ["a"]})


def test_custom_unknown_solver() -> None:
    with pytest.raises(ValueError, match=r"b hears unknown solver\(s\) zed; known: a, b"):
        custom({"a": ["b"], "b": ["zed"]})


def test_custom_disconnected() -> None:
    with pytest.raises(ValueError, match="disconnected: c, d cannot hear or be heard by a"):
        custom({"a": ["b"], "b": ["a"], "c": ["d"], "d": ["c"]})


def test_custom_connected_through_one_way_links() -> None:
    # Links count in both directions for connectivity: c hears nobody but is heard.
    topo = custom({"a": ["b"], "b": ["c"], "c": []})
    assert topo.solvers == ["a", "b", "c"]


def test_topology_constructor_validates_too() -> None:
    with pytest.raises(ValueError, match="lists itself"):
        Topology("custom", {"x": ("x",), "y": ("x",)})


# --------------------------------------------------------------------------
# Answer extraction
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("18", "18"),
        ("18.0", "18"),
        ("18.000", "18"),
        ("3.25", "3.25"),
        ("3.250", "3.25"),
        ("-7", "-7"),
        ("\u22127", "-7"),
        ("$1,234.50", "1234.5"),
        ("$ 1,000", "1000"),
        (".5", "0.5"),
        ("-0", "0"),
        ("1e3", "1000"),
    ],
)
def test_normalize_number(raw: str, expected: str) -> None:
    assert normalize_number(raw) == expected


@pytest.mark.parametrize("raw", ["", "abc", "inf", "NaN", "1..2"])
def test_normalize_number_rejects(raw: str) -> None:
    assert normalize_number(raw) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("So 3 * 6 = 18.\n#### 18", "18"),
        ("The total is {{18}}.", "18"),
        ("Hence \\boxed{18}", "18"),
        ("Answer: 18", "18"),
        ("The answer is 18.", "18"),
        ("The answer is $1,234.50", "1234.5"),
        ("#### -7", "-7"),
        ("Answer: \u22127", "-7"),
        ("\\boxed{3.25}", "3.25"),
        ("{{18.0}}", "18"),
        ("final answer = 42", "42"),
    ],
)
def test_extract_marked_answer(text: str, expected: str) -> None:
    assert extract_answer(text) == expected


def test_last_marked_answer_wins() -> None:
    assert extract_answer("First guess #### 3, corrected: #### 5") == "5"
    assert extract_answer("\\boxed{3} ... no, \\boxed{5}") == "5"
    assert extract_answer("Answer: 3. Re-checking... Answer: 5") == "5"


def test_marked_answer_beats_later_unmarked_numbers() -> None:
    assert extract_answer("#### 18 (checked with 2 methods, took 30 s)", loose=True) == "18"


@pytest.mark.parametrize("text", [None, "", "I do not know.", "Answer: unknown"])
@pytest.mark.parametrize("loose", [False, True])
def test_no_answer(text: str | None, loose: bool) -> None:
    assert extract_answer(text, loose=loose) is None


def test_strict_mode_ignores_unmarked_numbers() -> None:
    assert extract_answer("I think 12, maybe 14") is None
    assert extract_answer("18") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("18", "18"),
        ("I think 12, maybe 14", "14"),
        ("-7", "-7"),
        ("3.25", "3.25"),
        ("$1,234.50", "1234.5"),
        ("about 18.0 apples", "18"),
    ],
)
def test_loose_mode_takes_the_last_number(text: str, expected: str) -> None:
    assert extract_answer(text, loose=True) == expected


@pytest.mark.parametrize(
    ("text", "loose", "expected"),
    [
        ("\\boxed{\\frac{1}{2}}", False, "0.5"),
        ("The answer is 1/2.", False, "0.5"),
        ("#### -\\dfrac{3}{4}", False, "-0.75"),
        ("Answer: 48/2", False, "24"),
        ("\\frac{1}{2}", True, "0.5"),  # not its last digit, 2
        ("so it is 2/6", True, "1/3"),  # no decimal ends: the reduced fraction
        ("So 10/2 = 5", True, "5"),
        ("Answer: 5/0", False, None),
    ],
)
def test_a_fraction_is_read_as_its_value(text: str, loose: bool, expected: str | None) -> None:
    """MATH's answers are often fractions: read whole, never as their last number."""
    assert extract_answer(text, loose=loose) == expected


# --------------------------------------------------------------------------
# Majority vote
# --------------------------------------------------------------------------


def test_vote_clear_winner() -> None:
    vote = majority_vote({"s1": "18", "s2": "20", "s3": "18"})
    assert vote.answer == "18"
    assert vote.votes == {"18": 2, "20": 1}
    assert list(vote.votes) == ["18", "20"]
    assert vote.agreement == pytest.approx(0.6667)
    assert vote.abstentions == 0
    assert vote.tie_break is None


def test_vote_table_sorted_by_count_then_first_appearance() -> None:
    vote = majority_vote({"a": "1", "b": "2", "c": "3", "d": "3", "e": "2", "f": "3"})
    assert list(vote.votes.items()) == [("3", 3), ("2", 2), ("1", 1)]
    assert vote.answer == "3"
    assert vote.agreement == 0.5


def test_abstentions_count_in_the_denominator_but_never_vote() -> None:
    vote = majority_vote({"s1": "18", "s2": None, "s3": "18", "s4": None})
    assert vote.answer == "18"
    assert vote.votes == {"18": 2}
    assert None not in vote.votes
    assert vote.abstentions == 2
    assert vote.agreement == 0.5


def test_abstentions_cannot_win_even_when_most() -> None:
    vote = majority_vote({"s1": None, "s2": None, "s3": "7"})
    assert vote.answer == "7"
    assert vote.votes == {"7": 1}
    assert vote.agreement == pytest.approx(0.3333)


def test_all_abstain() -> None:
    vote = majority_vote({"s1": None, "s2": None, "s3": None}, {"s1": 1.0})
    assert vote.answer is None
    assert vote.votes == {}
    assert vote.agreement == 0.0
    assert vote.abstentions == 3
    assert vote.tie_break is None


def test_empty_vote() -> None:
    vote = majority_vote({})
    assert vote.answer is None
    assert vote.agreement == 0.0


def test_tie_broken_by_confidence() -> None:
    vote = majority_vote({"s1": "3", "s2": "5"}, {"s1": 0.4, "s2": 0.9})
    assert vote.answer == "5"
    assert vote.agreement == 0.5
    assert vote.tie_break is not None
    assert "summed confidence" in vote.tie_break
    assert "3" in vote.tie_break and "5" in vote.tie_break
    assert "1 vote each" in vote.tie_break


def test_tie_broken_by_summed_not_maximum_confidence() -> None:
    vote = majority_vote(
        {"s1": "3", "s2": "5", "s3": "3", "s4": "5"},
        {"s1": 0.3, "s2": 0.5, "s3": 0.3, "s4": 0.05},
    )
    assert vote.answer == "3"  # 0.6 vs 0.55, although s2's 0.5 is the highest single value
    assert vote.tie_break is not None and "summed confidence" in vote.tie_break


def test_tie_missing_confidence_counts_as_zero() -> None:
    vote = majority_vote({"s1": "3", "s2": "5"}, {"s1": None, "s2": 0.1})
    assert vote.answer == "5"


@pytest.mark.parametrize("confidences", [None, {"s1": 0.7, "s2": 0.7, "s3": 0.7}])
def test_tie_with_equal_confidence_goes_to_earliest_solver(
    confidences: dict[str, float | None] | None,
) -> None:
    answers: dict[str, str | None] = {"s1": None, "s2": "4", "s3": "7"}
    vote = majority_vote(answers, confidences)
    assert vote.answer == "4"
    assert vote.tie_break is not None and "earliest solver" in vote.tie_break
    # Deterministic: the same input always gives the same result.
    assert all(majority_vote(answers, confidences) == vote for _ in range(5))
    # ... and the order of the mapping is what decides.
    swapped = majority_vote({"s3": "7", "s2": "4", "s1": None}, confidences)
    assert swapped.answer == "7"
