"""Decision protocols: each protocol, fallback, tie and abstention; the judge; parse errors."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debategraph.nodes.solver_debate.judge import decision_of
from debategraph.state.solver_debate import Decision
from debategraph.strategies import (
    Decided,
    DecisionProtocol,
    decide,
    judge_needed,
    majority_vote,
    parse_protocol,
    parse_protocols,
)
from debategraph.strategies.decisions import (
    ABSTAIN,
    DEFAULT_THRESHOLD,
    JUDGE,
    PLURALITY,
    PROTOCOL_RULE,
    SUPERMAJORITY,
    UNANIMITY,
    WEIGHTED,
)

#: Two for 18, one for 7, one abstains.
SPLIT = {"s1": "18", "s2": "18", "s3": "7", "s4": None}
#: The lone 7 is sure of itself, the two 18s are not.
SURE_OF_7 = {"s1": 0.2, "s2": 0.2, "s3": 0.9, "s4": 0.5}
ALL_18 = {"s1": "18", "s2": "18", "s3": "18"}


def decided(
    text: str,
    answers: Mapping[str, str | None],
    confidences: Mapping[str, float | None] | None = None,
    *,
    judged: str | None = None,
    judge_reason: str | None = None,
    judge_model: str | None = None,
) -> Decided:
    """Decide ``answers`` by the protocol written ``text``."""
    return decide(
        parse_protocol(text),
        answers,
        confidences,
        judged=judged,
        judge_reason=judge_reason,
        judge_model=judge_model,
    )


def error_of(text: str) -> str:
    with pytest.raises(ValueError) as raised:
        parse_protocol(text)
    return str(raised.value)


# --------------------------------------------------------------------------
# Parsing and specs
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("plurality", "plurality"),
        ("Weighted", "weighted"),
        ("supermajority", "supermajority:2/3:plurality"),
        ("supermajority:2/3", "supermajority:2/3:plurality"),
        ("supermajority:0.75", "supermajority:3/4:plurality"),
        ("supermajority:6/8:judge", "supermajority:3/4:judge"),
        (" SuperMajority : 0.8 : Abstain ", "supermajority:4/5:abstain"),
        ("supermajority:1", "supermajority:1/1:plurality"),
        ("supermajority:0.6667", "supermajority:6667/10000:plurality"),
        # An empty threshold or fallback is its default.
        ("supermajority::judge", "supermajority:2/3:judge"),
        ("supermajority:", "supermajority:2/3:plurality"),
        ("supermajority::", "supermajority:2/3:plurality"),
        ("supermajority:0.75:", "supermajority:3/4:plurality"),
        (" supermajority : : abstain", "supermajority:2/3:abstain"),
        ("unanimity", "unanimity:plurality"),
        ("unanimity:", "unanimity:plurality"),
        ("unanimity:weighted", "unanimity:weighted"),
        ("judge", "judge"),
    ],
)
def test_specs_are_canonical_and_parse_back_to_the_same_protocol(text: str, spec: str) -> None:
    protocol = parse_protocol(text)
    assert protocol.spec == spec
    assert parse_protocol(spec) == protocol


def test_a_protocol_built_directly_gets_the_defaults() -> None:
    assert DecisionProtocol(SUPERMAJORITY) == DecisionProtocol(
        SUPERMAJORITY, DEFAULT_THRESHOLD, PLURALITY
    )
    assert DecisionProtocol(SUPERMAJORITY) == parse_protocol("supermajority")
    assert DecisionProtocol(UNANIMITY).spec == "unanimity:plurality"
    assert DecisionProtocol(SUPERMAJORITY, Fraction(3, 4), JUDGE).spec == "supermajority:3/4:judge"


@pytest.mark.parametrize(
    ("text", "may"),
    [
        ("plurality", False),
        ("weighted", False),
        ("supermajority", False),
        ("supermajority:0.75:judge", True),
        ("unanimity:judge", True),
        ("unanimity:abstain", False),
        ("judge", True),
    ],
)
def test_may_judge(text: str, may: bool) -> None:
    assert parse_protocol(text).may_judge is may


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("majority", "unknown decision protocol 'majority'"),
        ("", "empty decision protocol"),
        ("supermajority:0.4", "supermajority threshold 0.4 is not in (0.5, 1]"),
        ("supermajority:0.5", "supermajority threshold 0.5 is not in (0.5, 1]"),
        ("supermajority:1/2", "supermajority threshold 1/2 is not in (0.5, 1]"),
        ("supermajority:1.01", "supermajority threshold 1.01 is not in (0.5, 1]"),
        ("supermajority:-0.8", "supermajority threshold -0.8 is not in (0.5, 1]"),
        ("supermajority:most", "supermajority threshold 'most' is not a number"),
        ("supermajority:1/0", "supermajority threshold '1/0' is not a number"),
        ("supermajority:nan", "supermajority threshold 'nan' is not a number"),
        ("supermajority:.", "supermajority threshold '.' is not a number"),
        (
            "supermajority:::",
            "supermajority takes a threshold and a fallback at most, got 'supermajority:::'",
        ),
        ("plurality:", "plurality takes no argument, got 'plurality:'"),
        ("supermajority:0.75:vote", "unknown fallback 'vote'"),
        ("supermajority:0.75:unanimity", "unknown fallback 'unanimity'"),
        (
            "supermajority:0.75:judge:x",
            "supermajority takes a threshold and a fallback at most, "
            "got 'supermajority:0.75:judge:x'",
        ),
        ("unanimity:0.75", "unknown fallback '0.75'"),
        ("unanimity:judge:x", "unanimity takes a fallback at most, got 'unanimity:judge:x'"),
        ("plurality:2/3", "plurality takes no argument, got 'plurality:2/3'"),
        ("weighted:judge", "weighted takes no argument, got 'weighted:judge'"),
        ("judge:gpt", "judge takes no argument, got 'judge:gpt'"),
    ],
)
def test_a_bad_protocol_is_one_line_naming_it_and_the_rule(text: str, problem: str) -> None:
    assert error_of(text) == f"{problem}: use {PROTOCOL_RULE}"


def test_a_bad_protocol_built_directly_is_refused_alike() -> None:
    with pytest.raises(ValueError) as raised:
        DecisionProtocol(SUPERMAJORITY, Fraction(2, 5))
    assert (
        str(raised.value) == f"supermajority threshold 2/5 is not in (0.5, 1]: use {PROTOCOL_RULE}"
    )
    with pytest.raises(ValueError) as raised:
        DecisionProtocol(PLURALITY, fallback=JUDGE)
    assert str(raised.value) == f"plurality takes no fallback, got 'judge': use {PROTOCOL_RULE}"
    with pytest.raises(ValueError) as raised:
        DecisionProtocol("vote")
    assert str(raised.value) == f"unknown decision protocol 'vote': use {PROTOCOL_RULE}"


def test_parse_protocols_keeps_the_order_and_each_spec_once() -> None:
    protocols = parse_protocols("plurality, supermajority:2/3,weighted,supermajority,PLURALITY")
    assert [p.spec for p in protocols] == ["plurality", "supermajority:2/3:plurality", "weighted"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "no decision protocol given"),
        ("  ", "no decision protocol given"),
        ("plurality,,weighted", "empty decision protocol in 'plurality,,weighted'"),
        ("plurality,", "empty decision protocol in 'plurality,'"),
        ("plurality,vote", "unknown decision protocol 'vote'"),
    ],
)
def test_parse_protocols_refuses_an_empty_list_or_item(text: str, problem: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_protocols(text)
    assert str(raised.value) == f"{problem}: use {PROTOCOL_RULE}"


# --------------------------------------------------------------------------
# Plurality and weighted
# --------------------------------------------------------------------------


def test_plurality_is_the_majority_vote() -> None:
    decision = decided("plurality", SPLIT, confidences=SURE_OF_7)
    assert decision == Decided(
        protocol="plurality", answer="18", votes={"18": 2, "7": 1}, agreement=0.5, abstentions=1
    )


def test_plurality_reports_the_votes_tie_break() -> None:
    answers = {"a": "3", "b": "5", "c": "5", "d": "3"}
    by_confidence = decide(
        DecisionProtocol(PLURALITY), answers, {"a": 0.1, "b": 0.9, "c": 0.1, "d": 0.1}
    )
    vote = majority_vote(answers, {"a": 0.1, "b": 0.9, "c": 0.1, "d": 0.1})
    assert (by_confidence.answer, by_confidence.tie_break) == (vote.answer, vote.tie_break)
    assert by_confidence.answer == "5"
    assert by_confidence.tie_break == "tie between 3, 5 (2 votes each) broken by summed confidence"
    earliest = decide(DecisionProtocol(PLURALITY), answers)
    assert earliest.answer == "3"
    assert earliest.tie_break == "tie between 3, 5 (2 votes each) broken by the earliest solver"


def test_weighted_takes_the_highest_summed_confidence() -> None:
    decision = decided("weighted", SPLIT, confidences=SURE_OF_7)
    assert decision == Decided(
        protocol="weighted", answer="7", votes={"18": 2, "7": 1}, agreement=0.25, abstentions=1
    )


def test_weighted_counts_an_unstated_confidence_as_zero() -> None:
    decision = decided("weighted", SPLIT, confidences={"s1": None, "s2": None, "s3": 0.1})
    assert decision.answer == "7"
    assert decision.tie_break is None


def test_weighted_ties_go_to_the_vote_count_then_the_earliest_solver() -> None:
    answers = {"a": "1", "b": "2", "c": "2", "d": "3"}
    by_count = decide(DecisionProtocol(WEIGHTED), answers, {"a": 0.6, "b": 0.3, "c": 0.3, "d": 0.6})
    assert by_count.answer == "2"  # 0.3 + 0.3 == 0.6, summed exactly
    assert by_count.tie_break == (
        "tie between 1, 2, 3 (summed confidence 0.6 each) broken by vote count"
    )
    earliest = decide(DecisionProtocol(WEIGHTED), {"a": "1", "b": "2"})
    assert earliest.answer == "1"
    assert (
        earliest.tie_break
        == "tie between 1, 2 (summed confidence 0 each) broken by the earliest solver"
    )
    later = decide(DecisionProtocol(WEIGHTED), {"a": "1", "b": "2", "c": "3"}, {"b": 0.5, "c": 0.5})
    assert later.answer == "2"
    assert later.tie_break == (
        "tie between 2, 3 (summed confidence 0.5 each) broken by the earliest solver"
    )


@pytest.mark.parametrize("text", ["plurality", "weighted", "supermajority", "unanimity", "judge"])
def test_every_solver_abstaining_decides_no_answer(text: str) -> None:
    decision = decided(text, {"s1": None, "s2": None})
    assert (decision.answer, decision.votes, decision.agreement, decision.abstentions) == (
        None, {}, 0.0, 2,
    )  # fmt: skip


def test_no_solvers_at_all_decide_no_answer() -> None:
    for protocol in ("plurality", "weighted", "supermajority", "unanimity:abstain", "judge"):
        decision = decided(protocol, {})
        assert (decision.answer, decision.agreement, decision.abstentions) == (None, 0.0, 0)


# --------------------------------------------------------------------------
# Supermajority and unanimity, and their fallbacks
# --------------------------------------------------------------------------


def test_supermajority_reached_takes_the_top_answer() -> None:
    answers = {"s1": "18", "s2": "18", "s3": "7"}
    decision = decided("supermajority", answers)
    assert decision == Decided(
        protocol="supermajority:2/3:plurality",
        answer="18",
        votes={"18": 2, "7": 1},
        agreement=0.6667,
        abstentions=0,
    )


def test_supermajority_compares_exact_fractions() -> None:
    # 2 of 3 is exactly 2/3: reached; 0.6667 is just above it: not reached.
    answers = {"s1": "18", "s2": "18", "s3": "7"}
    assert decided("supermajority:2/3", answers).fallback is None
    below = decided("supermajority:0.6667", answers)
    assert below.fallback == PLURALITY
    assert below.reason == "no 6667/10000 supermajority (2 of 3 for 18): plurality decided"
    assert decided("supermajority:0.666", answers).fallback is None


def test_supermajority_counts_abstentions_among_the_solvers() -> None:
    # 2 of the 3 answers, but 2 of the 4 solvers: not 2/3.
    decision = decided("supermajority", SPLIT, confidences=SURE_OF_7)
    assert decision == Decided(
        protocol="supermajority:2/3:plurality",
        answer="18",
        votes={"18": 2, "7": 1},
        agreement=0.5,
        abstentions=1,
        fallback="plurality",
        reason="no 2/3 supermajority (2 of 4 for 18): plurality decided",
    )


def test_supermajority_falls_back_to_weighted() -> None:
    decision = decided("supermajority:0.75:weighted", SPLIT, confidences=SURE_OF_7)
    assert (decision.answer, decision.fallback, decision.reason, decision.agreement) == (
        "7", WEIGHTED, "no 3/4 supermajority (2 of 4 for 18): weighted decided", 0.25,
    )  # fmt: skip


def test_supermajority_falls_back_to_abstain() -> None:
    decision = decided("supermajority:0.75:abstain", SPLIT)
    assert decision == Decided(
        protocol="supermajority:3/4:abstain",
        answer=None,
        votes={"18": 2, "7": 1},
        agreement=0.0,
        abstentions=1,
        fallback=ABSTAIN,
        reason="no 3/4 supermajority (2 of 4 for 18): abstained",
    )


def test_supermajority_with_nobody_answering_names_that() -> None:
    decision = decided("supermajority", {"s1": None, "s2": None})
    assert decision.reason == "no 2/3 supermajority (no answers): plurality decided"


def test_supermajority_falling_back_to_plurality_keeps_its_tie_break() -> None:
    answers = {"a": "3", "b": "5", "c": "5", "d": "3"}
    decision = decided("supermajority", answers)
    assert decision.answer == "3"
    assert decision.tie_break == "tie between 3, 5 (2 votes each) broken by the earliest solver"
    assert decision.reason == "no 2/3 supermajority (2 of 4 for 3): plurality decided"


def test_unanimity_reached() -> None:
    decision = decided("unanimity", ALL_18)
    assert decision == Decided(
        protocol="unanimity:plurality", answer="18", votes={"18": 3}, agreement=1.0, abstentions=0
    )


def test_an_abstention_breaks_unanimity() -> None:
    decision = decided("unanimity:abstain", {**ALL_18, "s4": None})
    assert (decision.answer, decision.fallback, decision.reason) == (
        None, ABSTAIN, "no unanimity (3 of 4 for 18): abstained",
    )  # fmt: skip


def test_unanimity_falls_back_to_plurality_with_a_reason() -> None:
    decision = decided("unanimity", SPLIT)
    assert (decision.answer, decision.fallback, decision.reason) == (
        "18", PLURALITY, "no unanimity (2 of 4 for 18): plurality decided",
    )  # fmt: skip


# --------------------------------------------------------------------------
# The judge
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "answers", "needed"),
    [
        ("judge", SPLIT, True),
        ("judge", ALL_18, False),
        ("judge", {**ALL_18, "s4": None}, False),
        ("judge", {"s1": None}, False),
        ("plurality", SPLIT, False),
        ("weighted", SPLIT, False),
        ("supermajority:0.75:judge", SPLIT, True),
        ("supermajority:0.5001:judge", {"s1": "18", "s2": "18", "s3": "7"}, False),
        ("unanimity:judge", SPLIT, True),
        ("unanimity:judge", ALL_18, False),
        ("unanimity:judge", {**ALL_18, "s4": None}, False),  # not reached, but one answer
        ("unanimity:plurality", SPLIT, False),
    ],
)
def test_judge_needed(text: str, answers: dict[str, str | None], needed: bool) -> None:
    assert judge_needed(parse_protocol(text), answers) is needed


def test_the_judges_pick_decides() -> None:
    decision = decided("judge", SPLIT, confidences=SURE_OF_7, judged="7", judge_model="big")
    assert decision == Decided(
        protocol="judge",
        answer="7",
        votes={"18": 2, "7": 1},
        agreement=0.25,
        abstentions=1,
        judge_model="big",
    )


def test_a_judges_pick_no_solver_gave_is_not_taken() -> None:
    decision = decided("judge", SPLIT, judged="19", judge_model="big")
    assert decision == Decided(
        protocol="judge",
        answer="18",
        votes={"18": 2, "7": 1},
        agreement=0.5,
        abstentions=1,
        fallback=PLURALITY,
        reason="the judge picked 19, which no solver gave: plurality decided",
        judge_model="big",
    )


def test_a_judge_with_no_pick_leaves_it_to_plurality_saying_why() -> None:
    decision = decided("judge", SPLIT, judge_reason="timed out\nafter 30 s", judge_model="big")
    assert (decision.answer, decision.fallback, decision.judge_model) == ("18", PLURALITY, "big")
    assert decision.reason == "the judge gave no answer (timed out after 30 s): plurality decided"
    bare = decided("judge", SPLIT)
    assert bare.reason == "the judge gave no answer: plurality decided"


def test_the_judge_is_not_asked_about_one_answer() -> None:
    decision = decided("judge", {**ALL_18, "s4": None}, judged="7", judge_model="big")
    assert (decision.answer, decision.fallback, decision.reason, decision.judge_model) == (
        "18", None, "one answer (18): the judge was not asked", None,
    )  # fmt: skip
    assert decided("judge", {"s1": None}).reason == "no answers: the judge was not asked"


def test_supermajority_falling_back_to_the_judge() -> None:
    picked = decided("supermajority:0.75:judge", SPLIT, judged="7", judge_model="big")
    assert (picked.answer, picked.fallback, picked.reason, picked.judge_model) == (
        "7", JUDGE, "no 3/4 supermajority (2 of 4 for 18): the judge decided", "big",
    )  # fmt: skip
    failed = decided("supermajority:0.75:judge", SPLIT, judged="42", judge_model="big")
    assert (failed.answer, failed.fallback, failed.reason) == (
        "18",
        PLURALITY,
        "no 3/4 supermajority (2 of 4 for 18): the judge picked 42, which no solver gave: "
        "plurality decided",
    )
    reached = decided("supermajority:0.75:judge", ALL_18, judged="7", judge_model="big")
    assert (reached.answer, reached.fallback, reached.reason, reached.judge_model) == (
        "18", None, None, None,
    )  # fmt: skip


def test_unanimity_falling_back_to_the_judge_with_one_answer_left_asks_nobody() -> None:
    decision = decided("unanimity:judge", {**ALL_18, "s4": None})
    assert (decision.answer, decision.fallback, decision.reason) == (
        "18", JUDGE, "no unanimity (3 of 4 for 18): one answer (18): the judge was not asked",
    )  # fmt: skip


def test_decisions_are_frozen_and_refuse_unknown_fields() -> None:
    # The solver debate's record of a decision (what its state and checkpoints hold).
    decision = decision_of(decided("plurality", SPLIT))
    with pytest.raises(ValueError, match="frozen"):
        decision.answer = "7"
    with pytest.raises(ValueError, match="extra"):
        Decision.model_validate({**decision.model_dump(), "colour": "red"})
    assert Decision.model_validate_json(decision.model_dump_json()) == decision


# --------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------

ANSWERS = st.dictionaries(
    st.sampled_from([f"s{i}" for i in range(1, 8)]),
    st.one_of(st.none(), st.sampled_from(["1", "2", "3"])),
    max_size=7,
)
CONFIDENCES = st.dictionaries(
    st.sampled_from([f"s{i}" for i in range(1, 8)]),
    st.one_of(st.none(), st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.5, 0.9, 1.0])),
)


@given(ANSWERS, CONFIDENCES, st.sampled_from(["2/3", "3/4", "0.51", "1"]))
def test_properties_of_every_protocol(
    answers: dict[str, str | None], confidences: dict[str, float | None], threshold: str
) -> None:
    vote = majority_vote(answers, confidences)
    given_answers = {a for a in answers.values() if a is not None}
    for text in (
        "plurality", "weighted", f"supermajority:{threshold}", "unanimity", "judge",
        f"supermajority:{threshold}:abstain", "unanimity:weighted",
    ):  # fmt: skip
        decision = decided(text, answers, confidences=confidences)
        # Every decided answer is one a solver gave; the vote table is the plurality's.
        assert decision.answer is None or decision.answer in given_answers
        assert decision.votes == vote.votes
        assert decision.abstentions == vote.abstentions
        count = vote.votes.get(decision.answer, 0) if decision.answer is not None else 0
        assert decision.agreement == (round(count / len(answers), 4) if answers else 0.0)
        # A protocol that fell back says why; one that did not, except for the judge, does not.
        assert (decision.fallback is None) == (decision.reason is None) or text == "judge"
    reached = decided(f"supermajority:{threshold}:abstain", answers)
    if reached.fallback is None:
        assert reached.answer == vote.answer
        assert Fraction(vote.votes[vote.answer or ""], len(answers)) >= Fraction(threshold)
    else:
        assert reached.answer is None
