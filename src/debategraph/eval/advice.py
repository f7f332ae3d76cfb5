"""The plain answer: one paragraph, from the figures, on which mode to use and at what cost.

:func:`plain_answer` reads a report (:class:`~debategraph.eval.stats.Report`) and says,
in plain text (no markup: the same words open ``results.md`` and a page), which mode to
use on this endpoint and task, its tokens per question, its accuracy's 95% interval and
its paired tests; or, plainly, that the data cannot tell; then the next step.

The candidates are every mode's own row (its plurality decision) and every matched vote
(``vote@K``: the vote run at a debate's budget is a way to spend those tokens too). The
tests weighed are every paired test between two candidates (the modes pairwise, each
debate against its matched vote: :func:`~debategraph.eval.significance.family`), their
p-values corrected together by Holm's method, and the paragraph says over how many. The
rule:

- too few questions (under :data:`MIN_QUESTIONS`): it cannot tell;
- no test significant at 5% after the correction: it cannot tell (the closest test and
  the cheapest candidate are named, for where cost decides);
- else the cheapest candidate that no other beats significantly: where it is also the
  most accurate, it is the clear choice; where a costlier one is more accurate but not
  significantly, the cheaper one is as good as the data can tell. Every other
  significant test is named too (a debate beaten by the vote at its budget, say).

Where the data cannot tell (between any candidates, or between the answer and a more
accurate one), the paragraph ends with the next step: about how many questions would
tell (:func:`~debategraph.eval.significance.questions_to_tell`, an estimate from the
test's discordant questions), the command, and that the threads already finished are
read back, not run again. :func:`results_markdown` is the eval's ``results.md``: the
paragraph, then the tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from debategraph.eval.records import ModeSummary
from debategraph.eval.significance import POWER, Tested, family, questions_to_tell
from debategraph.eval.stats import ALPHA, Report
from debategraph.eval.tables import markdown_table
from debategraph.models.money import money
from debategraph.strategies.decisions import PLURALITY
from debategraph.words import plural

#: Fewer questions than this: the paragraph says the data cannot tell.
MIN_QUESTIONS = 10


def _where(meta: Mapping[str, Any], n: int) -> str:
    """``On MODEL, KIND (N questions)``; with ``--epochs E``, ``(Q questions x E epochs)``.

    ``n`` counts askings: with epochs, each question is asked E times.
    """
    model = meta.get("model")
    kind = meta.get("kind")
    parts = [str(model) if model else "this endpoint"]
    parts.append(f"the {kind} task" if kind else "this task")
    epochs = meta.get("epochs")
    if isinstance(epochs, int) and epochs > 1 and n % epochs == 0:
        return f"On {parts[0]}, {parts[1]} ({n // epochs} questions x {epochs} epochs)"
    return f"On {parts[0]}, {parts[1]} ({n} questions)"


def _figure(s: ModeSummary) -> str:
    """``accuracy 0.82 (95% CI 0.74-0.88) at 1,234 tokens per question``."""
    return (
        f"accuracy {s.accuracy:.2f} (95% CI {s.ci_low:.2f}-{s.ci_high:.2f}) at "
        f"{s.tokens:,.0f} tokens per question"
    )


class _Tests:
    """The tests weighed (:func:`~debategraph.eval.significance.family`), by pair."""

    def __init__(self, tested: Sequence[Tested]) -> None:
        self.tested = list(tested)
        self.by_pair = {frozenset((t.test.a, t.test.b)): t for t in tested}

    def get(self, a: ModeSummary, b: ModeSummary) -> Tested | None:
        """The test of ``a`` against ``b``, either way round."""
        return self.by_pair.get(frozenset((a.mode, b.mode)))

    def beats(self, a: ModeSummary, b: ModeSummary) -> bool:
        """Whether ``a`` is significantly more accurate than ``b``, after the correction."""
        tested = self.get(a, b)
        return tested is not None and tested.significant and _winner(tested) == a.mode

    def p(self, tested: Tested) -> str:
        """``McNemar p = 0.058 after Holm's correction over 8 tests, 0.00725 before``."""
        raw = tested.test.p_value
        if len(self.tested) == 1:
            return f"McNemar p = {raw:.3g}, the only test"
        return (
            f"McNemar p = {tested.adjusted:.3g} after Holm's correction over "
            f"{plural(len(self.tested), 'test')}, {raw:.3g} before"
        )


def _winner(tested: Tested) -> str:
    """The label right on more of the questions only one of the two got right."""
    test = tested.test
    return test.a if test.a_only > test.b_only else test.b


def _debated(report: Report, mode: str) -> str:
    """`` (it debated 3 of 10 questions, saving 45% of the tokens)`` for vote-then-debate."""
    for e in report.escalation:
        if e.mode == mode:
            saved = (
                f", {e.saved_share:.0%} fewer tokens than debating every question"
                if (e.saved_share is not None)
                else ""
            )
            return f" (it debated {e.debated} of {e.n} questions{saved})"
    return ""


def _cannot_tell(candidates: Sequence[ModeSummary], tests: _Tests) -> str:
    """The clause that says the candidates cannot be told apart, and which is cheapest."""
    cheapest = min(candidates, key=lambda s: (s.tokens, -s.accuracy))
    best = max(candidates, key=lambda s: (s.accuracy, -s.tokens))
    low = min(s.accuracy for s in candidates)
    if f"{low:.2f}" == f"{best.accuracy:.2f}":
        spread = f"every mode scored {low:.2f}"
    else:
        overlap = cheapest.ci_high >= best.ci_low and best.ci_high >= cheapest.ci_low
        spread = f"accuracy runs from {low:.2f} to {best.accuracy:.2f}"
        spread += " and the 95% intervals overlap" if overlap else ""
    costliest = max(candidates, key=lambda s: s.tokens)
    if tests.tested:
        closest = min(tests.tested, key=lambda t: t.test.p_value)
        none = (
            f"no paired test between them is significant at 5% ({spread}; the closest, "
            f"{closest.test.a} against {closest.test.b}, has {tests.p(closest)})"
        )
    else:
        none = f"no paired test between them was run ({spread})"
    return (
        f"the data cannot tell the modes and matched votes apart: {none}. If they are "
        f"equal, {cheapest.mode} is the cheapest at {cheapest.tokens:,.0f} tokens per "
        f"question ({costliest.mode}: {costliest.tokens:,.0f})."
    )


def _command(meta: Mapping[str, Any], total: int, n: int) -> str:
    """How to run ``total`` questions: the same command with a larger window."""
    offset = int(meta.get("offset") or 0)
    limit = meta.get("limit")
    if meta.get("kind") == "arithmetic":
        window = f" --limit {total}" if limit is not None else ""
        return f"run the same command with --count {offset + total}{window}"
    if limit is None:
        return (
            f"this run used every question of its dataset ({n}): run the same command on a "
            f"dataset of at least {offset + total} questions that begins with these"
        )
    return f"run the same command with --limit {total}"


def _next_step(tested: Tested, tests: _Tests, meta: Mapping[str, Any]) -> str:
    """`` About 340 questions would tell A from B (an estimate...): run ...; ...``."""
    test = tested.test
    m = len(tests.tested)
    total = questions_to_tell(test, ALPHA / m)
    if total is None:
        return (
            f" More questions are not expected to tell {test.a} from {test.b}: on the "
            f"{test.n} questions both answered, each was right as often as the other."
        )
    level = f"5% after Holm's correction over {plural(m, 'test')}" if m > 1 else "5%"
    return (
        f" About {total:,} questions would tell {test.a} from {test.b} (an estimate, from "
        f"the {test.a_only + test.b_only} of {test.n} questions only one of them got "
        f"right, with {POWER:.0%} power at {level}): "
        f"{_command(meta, total, test.n)}; the threads already finished are read back "
        "from their checkpoints, not run again."
    )


def _also(tests: _Tests, pick: ModeSummary | None, accuracy: Mapping[str, float]) -> str:
    """The sentence naming the other significant tests (``Also significant: A over B``).

    The significant tests that do not involve ``pick`` (all of them where it is ``None``:
    then the sentence opens ``Significant:``).
    """
    skip = () if pick is None else (pick.mode,)
    others = [t for t in tests.tested if t.significant and not {t.test.a, t.test.b} & set(skip)]
    if not others:
        return ""
    clauses = []
    for tested in others:
        winner = _winner(tested)
        loser = tested.test.b if winner == tested.test.a else tested.test.a
        budget = " at the same token budget" if tested.matched else ""
        clauses.append(
            f"{winner} over {loser}{budget} ({accuracy[winner]:.2f} against "
            f"{accuracy[loser]:.2f}, {tests.p(tested)})"
        )
    return f" {'Also significant' if pick else 'Significant'}: {'; '.join(clauses)}."


def plain_answer(report: Report, meta: Mapping[str, Any]) -> str:
    """One paragraph: which mode to use here, at what cost, with its interval and test.

    Questions whose calls kept failing (errored) are left out of every figure: the
    paragraph ends saying how many, per mode, and that the same command retries them.

    Args:
        report: The eval's report.
        meta: ``results.json``'s meta (``model`` and ``kind`` name the endpoint and task).

    Returns:
        The paragraph (plain text, one line), or one saying the data cannot tell.
    """
    answer = _answer(report, meta) + _costs(report)
    errored = [s for s in report.summaries if s.errored and s.decision == PLURALITY]
    if not errored:
        return answer
    counts = ", ".join(f"{s.mode} {s.errored}" for s in errored)
    return (
        f"{answer} Errored questions (their calls kept failing) are left out of these "
        f"figures: {counts}; the same command again retries them."
    )


def _costs(report: Report) -> str:
    """`` At the prices given, a question cost: single $0.0004, vote $0.002.`` or ``""``."""
    priced = [s for s in report.summaries if s.decision == PLURALITY and s.cost is not None]
    if not priced:
        return ""
    each = ", ".join(f"{s.mode} {money(s.cost or 0.0)}" for s in priced)
    return f" At the prices given, a question cost: {each}."


def _answer(report: Report, meta: Mapping[str, Any]) -> str:
    """:func:`plain_answer` before its note on errored questions."""
    candidates = [s for s in report.summaries if s.decision == PLURALITY]
    if not candidates:
        return "No mode answered any question, so the data cannot tell which mode to use."
    n = min(s.n for s in candidates)
    where = _where(meta, n)
    if n < MIN_QUESTIONS:
        return (
            f"{where}, the data cannot tell which mode to use: {n} questions are too few "
            f"for a paired test (at least {MIN_QUESTIONS}); run more questions."
        )
    if len(candidates) == 1:
        (only,) = candidates
        return (
            f"{where}, only {only.mode} ran ({_figure(only)}): run another mode beside it "
            "to tell which to use."
        )
    tests = _Tests(family(report))
    if not any(t.significant for t in tests.tested):
        closest = min(tests.tested, key=lambda t: t.test.p_value, default=None)
        step = _next_step(closest, tests, meta) if closest is not None else ""
        return f"{where}, {_cannot_tell(candidates, tests)}{step}"
    best = max(candidates, key=lambda s: (s.accuracy, -s.tokens))
    by_cost = sorted(candidates, key=lambda s: (s.tokens, -s.accuracy))
    pick = next(s for s in by_cost if not any(tests.beats(o, s) for o in candidates))
    against = "; ".join(
        f"{s.mode} {s.accuracy:.2f} ({tests.p(tested)})"
        for s in candidates
        if tests.beats(pick, s) and (tested := tests.get(pick, s)) is not None
    )
    also = _also(tests, pick, {s.mode: s.accuracy for s in candidates})
    lead = f"{where}, use {pick.mode}: {_figure(pick)}{_debated(report, pick.mode)}"
    if pick.mode == best.mode:
        if not against:
            return f"{lead}. No mode here is significantly more accurate.{also}"
        return f"{lead}. It is significantly more accurate than {against}.{also}"
    tested = tests.get(pick, best)
    ratio = f"{best.tokens / pick.tokens:.1f}x" if pick.tokens else "more"
    tail = f" It is significantly more accurate than {against}." if against else ""
    costs = f"which costs {ratio} the tokens ({best.tokens:,.0f} per question)"
    interval = f"{best.accuracy:.2f} (95% CI {best.ci_low:.2f}-{best.ci_high:.2f}"
    if tested is None:
        found = _also(tests, None, {s.mode: s.accuracy for s in candidates})
        weak = [t for t in tests.tested if not t.significant]
        step = _next_step(min(weak, key=lambda t: t.test.p_value), tests, meta) if weak else ""
        return (
            f"{where}, the data cannot tell which mode to use.{found} The cheapest that no "
            f"other beats significantly is {pick.mode}: {_figure(pick)}; but {best.mode} "
            f"scored {interval}), {costs}, and the two were not tested against each other "
            f"(the eval tests a matched vote against its debate only).{step}"
        )
    return (
        f"{lead}, not significantly below {best.mode}'s {interval}; {tests.p(tested)}), "
        f"{costs}.{tail}{also}{_next_step(tested, tests, meta)}"
    )


def results_markdown(report: Report, meta: Mapping[str, Any]) -> str:
    """The eval's ``results.md``: :func:`plain_answer`, a blank line, then the tables."""
    return f"{plain_answer(report, meta)}\n\n{markdown_table(report)}"
