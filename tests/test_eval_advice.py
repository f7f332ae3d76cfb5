"""The plain answer that opens ``results.md``: its sentences, on hand-built reports."""

from __future__ import annotations

from debategraph.eval.advice import plain_answer, results_markdown
from debategraph.eval.escalation import Escalation
from debategraph.eval.paired import mcnemar_exact
from debategraph.eval.records import Comparison, ModeSummary
from debategraph.eval.stats import Report
from debategraph.eval.tables import markdown_table
from debategraph.strategies.intervals import wilson_interval

META = {"model": "gpt-x @ https://api.example/v1", "kind": "gsm8k"}


def summary(mode: str, correct: int, n: int, tokens: float) -> ModeSummary:
    low, high = wilson_interval(correct, n)
    return ModeSummary(
        mode=mode, n=n, correct=correct, accuracy=correct / n, ci_low=low, ci_high=high,
        abstention_rate=0.0, prompt_tokens=tokens * 0.9, completion_tokens=tokens * 0.1,
        calls=1.0, wall_s=0.1, decision="plurality", tokens=tokens,
    )  # fmt: skip


def test(a: str, b: str, a_only: int, b_only: int, n: int) -> Comparison:
    return Comparison(a, b, n, a_only, b_only, mcnemar_exact(a_only, b_only))


test.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


def report(summaries: list[ModeSummary], comparisons: list[Comparison]) -> Report:
    return Report(tuple(summaries), tuple(comparisons), (), (), ())


def test_a_clear_winner_is_named_with_its_cost_interval_and_tests() -> None:
    n = 100
    built = report(
        [summary("vote", 60, n, 300), summary("debate-full", 90, n, 1200)],
        [test("vote", "debate-full", 2, 32, n)],
    )
    text = plain_answer(built, META)
    assert text == (
        "On gpt-x @ https://api.example/v1, the gsm8k task (100 questions), use debate-full: "
        "accuracy 0.90 (95% CI 0.83-0.94) at 1,200 tokens per question. It is significantly "
        f"more accurate than vote 0.60 (McNemar p = {mcnemar_exact(2, 32):.3g})."
    )


def test_a_cheaper_mode_not_significantly_worse_is_the_answer() -> None:
    n = 100
    built = report(
        [
            summary("single", 50, n, 100),
            summary("vote", 80, n, 300),
            summary("debate-full", 82, n, 1200),
        ],
        [
            test("single", "vote", 1, 31, n),
            test("single", "debate-full", 1, 33, n),
            test("vote", "debate-full", 5, 7, n),
        ],
    )
    text = plain_answer(built, META)
    assert text.startswith(
        "On gpt-x @ https://api.example/v1, the gsm8k task (100 questions), use vote: "
        "accuracy 0.80 (95% CI 0.71-0.87) at 300 tokens per question, not significantly "
        "below debate-full's 0.82 (95% CI 0.73-0.88, McNemar p = 0.774), which costs 4.0x "
        "the tokens (1,200 per question)."
    ), text
    assert text.endswith(
        f"It is significantly more accurate than single 0.50 (McNemar p = "
        f"{mcnemar_exact(1, 31):.3g})."
    )


def test_when_no_test_is_significant_it_says_the_data_cannot_tell() -> None:
    n = 40
    built = report(
        [summary("vote", 28, n, 300), summary("debate-full", 31, n, 1200)],
        [test("vote", "debate-full", 2, 5, n)],
    )
    assert plain_answer(built, META) == (
        "On gpt-x @ https://api.example/v1, the gsm8k task (40 questions), the data cannot "
        "tell the modes apart: no paired test between them is significant at 5% (accuracy "
        "runs from 0.70 to 0.78 and the 95% intervals overlap). If they are equal, vote is "
        "the cheapest at 300 tokens per question (debate-full: 1,200); more questions would "
        "tell."
    )


def test_too_few_questions_cannot_tell() -> None:
    built = report([summary("vote", 3, 5, 300), summary("debate-full", 5, 5, 900)], [])
    text = plain_answer(built, {})
    assert text == (
        "On this endpoint, this task (5 questions), the data cannot tell which mode to use: "
        "5 questions are too few for a paired test (at least 10); run more questions."
    )


def test_vote_then_debate_says_how_much_it_debated() -> None:
    n = 100
    built = report(
        [summary("vote", 60, n, 300), summary("vote-then-debate", 85, n, 500)],
        [test("vote", "vote-then-debate", 1, 26, n)],
    )
    escalation = Escalation(
        "vote-then-debate", "unanimity", n, 30, 0.3, 500.0, "debate-full", "measured", "b",
        1200.0, 700.0, 0.5833, n, (),
    )  # fmt: skip
    built = Report(built.summaries, built.comparisons, (), (), (), (escalation,))
    text = plain_answer(built, META)
    assert "use vote-then-debate: accuracy 0.85" in text
    assert "(it debated 30 of 100 questions, 58% fewer tokens than debating every question)" in (
        text
    )


def test_results_markdown_is_the_paragraph_then_the_tables() -> None:
    built = report([summary("vote", 3, 5, 300)], [])
    text = results_markdown(built, META)
    paragraph, tables = text.split("\n\n", 1)
    assert paragraph == plain_answer(built, META)
    assert tables == markdown_table(built)
