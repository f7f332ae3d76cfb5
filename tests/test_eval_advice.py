"""The plain answer that opens ``results.md``: its sentences, on hand-built reports.

Every test here is made-up figures (summaries and paired tests), no model run: the
corrected p-values are checked against Holm's method worked by hand.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from debategraph.eval.advice import plain_answer, results_markdown
from debategraph.eval.budget import MatchedResult
from debategraph.eval.escalation import Escalation
from debategraph.eval.paired import mcnemar_exact
from debategraph.eval.progress import threads_line
from debategraph.eval.records import Comparison, ModeSummary
from debategraph.eval.significance import holm, questions_to_tell
from debategraph.eval.stats import Report
from debategraph.eval.tables import markdown_table
from debategraph.strategies.intervals import wilson_interval
from debategraph.views.eval_page import render_report_page

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


def report(
    summaries: list[ModeSummary], comparisons: list[Comparison], matched: tuple[str, ...] = ()
) -> Report:
    """A report of these figures; ``matched``: ``debate=vote@K`` pairs (their tests given)."""
    pairs = tuple(
        MatchedResult(*pair.split("="), 0, "made up", 0, 0.0, 0.0, None, True, 0.0, 0.0, 0, 0, 1.0)
        for pair in matched
    )
    return Report(tuple(summaries), tuple(comparisons), pairs, (), ())


def p_after(p_value: float, m: int, raw: float | None = None) -> str:
    """How the paragraph writes a p-value corrected over ``m`` tests (``raw`` before)."""
    before = p_value if raw is None else raw
    return f"McNemar p = {p_value:.3g} after Holm's correction over {m} tests, {before:.3g} before"


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
        f"more accurate than vote 0.60 (McNemar p = {mcnemar_exact(2, 32):.3g}, the only test)."
    )


def test_with_epochs_the_questions_and_their_askings_are_told_apart() -> None:
    n = 100  # 25 questions x 4 epochs: a row per asking
    built = report(
        [summary("vote", 60, n, 300), summary("debate-full", 90, n, 1200)],
        [test("vote", "debate-full", 2, 32, n)],
    )
    text = plain_answer(built, {**META, "epochs": 4})
    assert text.startswith(
        "On gpt-x @ https://api.example/v1, the gsm8k task (25 questions x 4 epochs), use"
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
    text = plain_answer(built, {**META, "limit": n})
    # Holm over 3: the smallest (single vs debate-full) x3, then single vs vote x2, then x1.
    p_single, p_full = mcnemar_exact(1, 31), mcnemar_exact(1, 33)
    assert 3 * p_full < 2 * p_single < 0.774
    assert text.startswith(
        "On gpt-x @ https://api.example/v1, the gsm8k task (100 questions), use vote: "
        "accuracy 0.80 (95% CI 0.71-0.87) at 300 tokens per question, not significantly "
        f"below debate-full's 0.82 (95% CI 0.73-0.88; {p_after(0.774, 3)}), which costs "
        "4.0x the tokens (1,200 per question). It is significantly more accurate than "
        f"single 0.50 ({p_after(2 * p_single, 3, p_single)}). Also significant: debate-full "
        f"over single (0.82 against 0.50, {p_after(3 * p_full, 3, p_full)})."
    ), text
    # Then the next step: vote and debate-full differ on 12 of the 100 questions.
    total = questions_to_tell(Comparison("vote", "debate-full", n, 5, 7, 0.774), 0.05 / 3)
    assert total is not None and total > 1000
    assert text.endswith(
        f" About {total:,} questions would tell vote from debate-full (an estimate, from the "
        "12 of 100 questions only one of them got right, with 80% power at 5% after Holm's "
        "correction over 3 tests): run the same command with --limit "
        f"{total}; the threads already finished are read back from their checkpoints, not "
        "run again."
    ), text


def test_when_no_test_is_significant_it_says_the_data_cannot_tell() -> None:
    n = 40
    built = report(
        [summary("vote", 28, n, 300), summary("debate-full", 31, n, 1200)],
        [test("vote", "debate-full", 2, 5, n)],
    )
    total = questions_to_tell(Comparison("vote", "debate-full", n, 2, 5, 0.45), 0.05)
    assert plain_answer(built, {**META, "limit": n}) == (
        "On gpt-x @ https://api.example/v1, the gsm8k task (40 questions), the data cannot "
        "tell the modes and matched votes apart: no paired test between them is significant "
        "at 5% (accuracy runs from 0.70 to 0.78 and the 95% intervals overlap; the closest, "
        f"vote against debate-full, has McNemar p = {mcnemar_exact(2, 5):.3g}, the only "
        "test). If they are equal, vote is the cheapest at 300 tokens per question "
        f"(debate-full: 1,200). About {total} questions would tell vote from debate-full (an "
        "estimate, from the 7 of 40 questions only one of them got right, with 80% power at "
        f"5%): run the same command with --limit {total}; the threads already finished are "
        "read back from their checkpoints, not run again."
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


def test_holm_is_the_step_down_correction_worked_by_hand() -> None:
    # Sorted: 0.005 x4 = 0.02, 0.01 x3 = 0.03, 0.03 x2 = 0.06, 0.04 x1 = 0.04 -> 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.00725] + [0.5] * 7)[0] == pytest.approx(0.058)  # the figure
    assert holm([0.9, 0.8]) == [1.0, 1.0] and holm([]) == []
    with pytest.raises(ValueError, match=r"1\.5"):
        holm([0.01, 1.5])


def test_questions_to_tell_is_connors_estimate() -> None:
    # psi = 0.2, d = 0.1: (1.960 * sqrt(0.2) + 0.8416 * sqrt(0.19))**2 / 0.01 = 154.6.
    assert questions_to_tell(Comparison("a", "b", 100, 15, 5, 0.04), 0.05) == 160
    assert questions_to_tell(Comparison("a", "b", 100, 6, 6, 1.0), 0.05) is None
    # Never fewer than one more than the questions already run.
    assert questions_to_tell(Comparison("a", "b", 400, 90, 10, 1e-12), 0.05) == 410


#: The embedded example's shape: four modes and a matched vote for each debate.
N = 100
MODES = [
    summary("single", 14, N, 211),
    summary("vote", 19, N, 638),
    summary("debate-ring", 12, N, 1342),
    summary("debate-full", 22, N, 1523),
    summary("vote@6", 29, N, 1161),
    summary("vote@8", 33, N, 1639),
]
MATCHED = ("debate-ring=vote@6", "debate-full=vote@8")


def eight_tests(ring_vs_vote6: tuple[int, int]) -> list[Comparison]:
    return [
        test("single", "vote", 3, 8, N),
        test("single", "debate-ring", 6, 4, N),
        test("single", "debate-full", 4, 12, N),
        test("vote", "debate-ring", 9, 2, N),
        test("vote", "debate-full", 5, 8, N),
        test("debate-ring", "debate-full", 3, 13, N),
        test("debate-ring", "vote@6", *ring_vs_vote6, N),
        test("debate-full", "vote@8", 4, 15, N),
    ]


def test_the_only_significant_comparison_a_matched_vote_is_named() -> None:
    tests = eight_tests((2, 19))
    built = report(MODES, tests, MATCHED)
    raw = [t.p_value for t in tests]
    # Only debate-ring vs vote@6 survives the correction (its p x8); four more were
    # "significant" uncorrected (below 0.05), none after.
    assert sum(p < 0.05 for p in raw) == 3 and 8 * raw[6] < 0.05
    assert sorted(raw)[1] * 7 > 0.05
    text = plain_answer(built, {**META, "limit": N})
    assert text.startswith(
        "On gpt-x @ https://api.example/v1, the gsm8k task (100 questions), the data cannot "
        "tell which mode to use. Significant: vote@6 over debate-ring at the same token "
        f"budget (0.29 against 0.12, {p_after(8 * raw[6], 8, raw[6])}). The cheapest that no "
        "other beats significantly is single: accuracy 0.14 (95% CI 0.09-0.22) at 211 "
        "tokens per question; but vote@8 scored 0.33 (95% CI 0.25-0.43), which costs 7.8x "
        "the tokens (1,639 per question), and the two were not tested against each other"
    ), text
    assert text.lower().count("significant") == 2  # "Significant:", "beats significantly"
    # The table shows the same correction: significant alone, and after it.
    table = markdown_table(built)
    assert (
        f"| debate-ring vs vote@6 | 100 | 2 | 19 | {raw[6]:.1e} | {8 * raw[6]:.3f} | "
        "significant |" in table
    )
    # Third smallest of 8: 0.0213 x6 = 0.128, but no less than the second's 0.0192 x7.
    assert "| debate-ring vs debate-full | 100 | 3 | 13 | 0.021 | 0.134 | not significant |" in (
        table
    )
    # The next step sizes the closest test the data could not yet tell.
    assert " About 200 questions would tell debate-full from vote@8 (an estimate" in text
    assert text.endswith(
        "run the same command with --limit 200; the threads already "
        "finished are read back from their checkpoints, not run again."
    )


def test_many_weak_p_values_cannot_tell() -> None:
    # Ten tests between five modes, each p < 0.05 alone: none after Holm over ten.
    counts = [(2, 10), (1, 8), (3, 12), (2, 11), (4, 14), (2, 10), (1, 8), (3, 12),
              (2, 11), (4, 14)]  # fmt: skip
    names = ["single", "vote", "debate-ring", "debate-full", "vote-then-debate"]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    tests = [test(a, b, *c, N) for (a, b), c in zip(pairs, counts, strict=True)]
    assert all(t.p_value < 0.05 for t in tests)
    built = report([summary(m, 50 + 5 * i, N, 100 * (i + 1)) for i, m in enumerate(names)], tests)
    text = plain_answer(built, {**META, "limit": N})
    closest = min(tests, key=lambda t: t.p_value)
    smallest = closest.p_value
    assert text.startswith(
        "On gpt-x @ https://api.example/v1, the gsm8k task (100 questions), the data cannot "
        "tell the modes and matched votes apart: no paired test between them is significant "
        "at 5% (accuracy runs from 0.50 to 0.70; the closest, "
        f"{closest.a} against {closest.b}, has {p_after(10 * smallest, 10, smallest)}). If "
        "they are equal, single is the cheapest at 100 tokens per question "
        "(vote-then-debate: 500)."
    ), text
    found = re.search(r"About (\d+) questions would tell .+ --limit (\d+); the threads", text)
    assert found and found[1] == found[2] and int(found[1]) > N, text
    assert "use " not in text


@pytest.mark.parametrize(
    ("meta", "command"),
    [
        ({"kind": "gsm8k", "limit": 40}, "run the same command with --limit {t}"),
        ({"kind": "arithmetic", "limit": None}, "run the same command with --count {t}"),
        ({"kind": "arithmetic", "offset": 5, "limit": 40},
         "run the same command with --count {t5} --limit {t}"),
        ({"kind": "mcq", "limit": None}, "this run used every question of its dataset (40): "
         "run the same command on a dataset of at least {t} questions that begins with these"),
    ],
)  # fmt: skip
def test_the_next_step_names_the_command(meta: dict[str, Any], command: str) -> None:
    built = report(
        [summary("vote", 28, 40, 300), summary("debate-full", 31, 40, 1200)],
        [test("vote", "debate-full", 2, 5, 40)],
    )
    total = questions_to_tell(built.comparisons[0], 0.05)
    assert total is not None
    text = plain_answer(built, meta)
    assert command.format(t=total, t5=total + 5) + "; the threads already finished" in text


def test_the_finished_threads_are_counted_in_words() -> None:
    counts = {"started": 80, "resumed": 0, "finished": 0}  # a first run: all 80 finished
    line = "80 threads finished: 80 started, 0 resumed, 0 read back from checkpoints"
    assert threads_line(counts) == line
    assert threads_line({"started": 0, "resumed": 2, "finished": 78}).startswith(
        "80 threads finished: 0 started, 2 resumed, 78 read back"
    )
    built = report([summary("vote", 3, 5, 300)], [])
    page = render_report_page(built, {"threads": counts}, pngs={})
    assert f"<dt>threads</dt><dd>{line}</dd>" in page and "finished: 0" not in page
