"""The plain answer: one paragraph, from the figures, on which mode to use and at what cost.

:func:`plain_answer` reads a report (:class:`~debategraph.eval.stats.Report`) and says,
in plain text (no markup: the same words open ``results.md`` and a page), which mode to
use on this endpoint and task, its tokens per question, its accuracy's 95% interval and
its paired tests; or, plainly, that the data cannot tell. The rule:

- too few questions (under :data:`MIN_QUESTIONS`): it cannot tell;
- no paired test between the modes is significant at 5%: it cannot tell (the cheapest
  is named, for where cost decides);
- else the cheapest mode that no other beats significantly (more accurate, McNemar
  p < 5%): where it is also the most accurate, it is the clear choice; where a costlier
  mode is more accurate but not significantly, the cheaper one is as good as the data
  can tell.

Only the modes' own rows are candidates (their plurality decision, not the matched
votes, which exist to test a debate against). :func:`results_markdown` is the eval's
``results.md``: the paragraph, then the tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from debategraph.eval.records import Comparison, ModeSummary
from debategraph.eval.stats import ALPHA, Report
from debategraph.eval.tables import markdown_table
from debategraph.models.money import money
from debategraph.strategies.decisions import PLURALITY

#: Fewer questions than this: the paragraph says the data cannot tell.
MIN_QUESTIONS = 10


def _where(meta: Mapping[str, Any], n: int) -> str:
    """``On MODEL, KIND (N questions)``."""
    model = meta.get("model")
    kind = meta.get("kind")
    parts = [str(model) if model else "this endpoint"]
    parts.append(f"the {kind} task" if kind else "this task")
    return f"On {parts[0]}, {parts[1]} ({n} questions)"


def _figure(s: ModeSummary) -> str:
    """``accuracy 0.82 (95% CI 0.74-0.88) at 1,234 tokens per question``."""
    return (
        f"accuracy {s.accuracy:.2f} (95% CI {s.ci_low:.2f}-{s.ci_high:.2f}) at "
        f"{s.tokens:,.0f} tokens per question"
    )


def _p(c: Comparison) -> str:
    """``McNemar p = 0.012``."""
    return f"McNemar p = {c.p_value:.3g}"


class _Tests:
    """The paired tests between the candidates, by pair."""

    def __init__(self, comparisons: Sequence[Comparison]) -> None:
        self.by_pair = {frozenset((c.a, c.b)): c for c in comparisons}

    def get(self, a: ModeSummary, b: ModeSummary) -> Comparison | None:
        """The test of ``a`` against ``b``, either way round."""
        return self.by_pair.get(frozenset((a.mode, b.mode)))

    def beats(self, a: ModeSummary, b: ModeSummary) -> bool:
        """Whether ``a`` is significantly more accurate than ``b``."""
        test = self.get(a, b)
        return test is not None and test.p_value < ALPHA and a.accuracy > b.accuracy


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


def _cannot_tell(
    candidates: Sequence[ModeSummary], cheapest: ModeSummary, best: ModeSummary
) -> str:
    """The clause that says the modes cannot be told apart, and which is cheapest."""
    low = min(s.accuracy for s in candidates)
    if f"{low:.2f}" == f"{best.accuracy:.2f}":
        spread = f"every mode scored {low:.2f}"
    else:
        overlap = cheapest.ci_high >= best.ci_low and best.ci_high >= cheapest.ci_low
        spread = f"accuracy runs from {low:.2f} to {best.accuracy:.2f}"
        spread += " and the 95% intervals overlap" if overlap else ""
    costliest = max(candidates, key=lambda s: s.tokens)
    return (
        "the data cannot tell the modes apart: no paired test between them is significant "
        f"at 5% ({spread}). If they are equal, {cheapest.mode} is the cheapest at "
        f"{cheapest.tokens:,.0f} tokens per question ({costliest.mode}: "
        f"{costliest.tokens:,.0f}); more questions would tell."
    )


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
    votes = {m.vote_mode for m in report.matched}
    candidates = [s for s in report.summaries if s.decision == PLURALITY and s.mode not in votes]
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
    tests = _Tests(report.comparisons)
    cheapest = min(candidates, key=lambda s: (s.tokens, -s.accuracy))
    best = max(candidates, key=lambda s: (s.accuracy, -s.tokens))
    if not any(tests.beats(a, b) for a in candidates for b in candidates):
        return f"{where}, {_cannot_tell(candidates, cheapest, best)}"
    by_cost = sorted(candidates, key=lambda s: (s.tokens, -s.accuracy))
    pick = next(s for s in by_cost if not any(tests.beats(o, s) for o in candidates))
    beaten = [s for s in candidates if tests.beats(pick, s)]
    against = "; ".join(
        f"{s.mode} {s.accuracy:.2f} ({_p(test)})"
        for s in beaten
        if (test := tests.get(pick, s)) is not None
    )
    lead = f"{where}, use {pick.mode}: {_figure(pick)}{_debated(report, pick.mode)}"
    if pick.mode == best.mode:
        if not against:
            return f"{lead}. No mode here is significantly more accurate, and none is cheaper."
        return f"{lead}. It is significantly more accurate than {against}."
    test = tests.get(pick, best)
    told = f", {_p(test)}" if test is not None else ", untested"
    ratio = f"{best.tokens / pick.tokens:.1f}x" if pick.tokens else "more"
    tail = f" It is significantly more accurate than {against}." if against else ""
    return (
        f"{lead}, not significantly below {best.mode}'s {best.accuracy:.2f} (95% CI "
        f"{best.ci_low:.2f}-{best.ci_high:.2f}{told}), which costs {ratio} the tokens "
        f"({best.tokens:,.0f} per question).{tail}"
    )


def results_markdown(report: Report, meta: Mapping[str, Any]) -> str:
    """The eval's ``results.md``: :func:`plain_answer`, a blank line, then the tables."""
    return f"{plain_answer(report, meta)}\n\n{markdown_table(report)}"
