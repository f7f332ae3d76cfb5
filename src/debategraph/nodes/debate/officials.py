"""The debate's officials: the moderator, the summarizer and the judge.

The moderator may end the debate after a round (``settled``); the summarizer folds
arguments that left the window into a running summary; the judge gives the typed verdict
at the end. Debater names they write are read as real ones with the one fuzzy matcher of
:mod:`debategraph.nodes.roster`, each normalisation noted on the record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import HumanMessage, SystemMessage

from debategraph.nodes.agent import agent_of, recorded
from debategraph.nodes.debate.prompts import (
    JUDGE_CRITERIA,
    JUDGE_SYSTEM,
    JUDGE_TASK,
    MODERATOR_SYSTEM,
    MODERATOR_TASK,
    SUMMARIZE_TASK,
    SUMMARIZER_SYSTEM,
)
from debategraph.nodes.debate.setup import (
    JUDGE_NODE,
    JUDGE_STAGE,
    MODERATE_STAGE,
    MODERATOR_NODE,
    SUMMARIZER_NODE,
    SUMMARY_STAGE,
    TIE_WORDS,
    DebateSetup,
)
from debategraph.nodes.debate.views import (
    is_argument,
    is_public,
    officials_view,
    summary_view,
    turn_lines,
)
from debategraph.nodes.dual import agent_node
from debategraph.nodes.messages import emit
from debategraph.nodes.rounds import ended
from debategraph.state.base import turn_update
from debategraph.state.debate import TIE, DebateState, ModeratorDecision, Verdict
from debategraph.state.records import Turn
from debategraph.strategies.names import read_name
from debategraph.strategies.termination import RoundOutcome, Settled, first_fired
from debategraph.words import plural

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable
    from langgraph.runtime import Runtime

    from debategraph.models import ModelBinding, Steps
    from debategraph.models.context import Context
    from debategraph.nodes.messages import Outcome

MODERATOR_FALLBACK = "the moderator gave no usable decision; the debate goes on"


def read_leader(value: str, names: Sequence[str], what: str, notes: list[str]) -> str:
    """A debater's name or ``tie`` from what a model wrote (an unknown name is a tie).

    Args:
        value: The name as the model wrote it.
        names: Every debater.
        what: Where it came from, for the notes (``leading``, ``winner``).
        notes: Where normalisations are recorded.

    Returns:
        The debater's name, or :data:`~debategraph.state.debate.TIE`.
    """
    if value.strip().lower() in TIE_WORDS:
        return TIE
    found = read_name(value, names, what, notes)
    if found is None:
        notes.append(f"{what} {value!r} is not a debater: recorded as a tie")
        return TIE
    return found


def unknown_name(official: str, value: str, read: str) -> str | None:
    """Why a name an official wrote became ``tie``: it named nobody in the debate.

    Args:
        official: ``the judge``, ``the moderator``.
        value: The name as the official wrote it.
        read: What :func:`read_leader` made of it.

    Returns:
        E.g. ``the judge named 'Zed', not a debater``, or ``None`` when the name was read
        as a debater or the official itself said ``tie``.
    """
    if read != TIE or value.strip().lower() in TIE_WORDS:
        return None
    return f"{official} named {' '.join(value.split())!r}, not a debater"


def normalise_decision(
    decision: ModeratorDecision | None, fallback: str | None, names: Sequence[str], rnd: int
) -> ModeratorDecision:
    """The moderator's decision with ``leading`` read as a debater or ``tie``.

    Args:
        decision: What the moderator returned (``None`` if it gave nothing usable).
        fallback: Why it gave nothing usable.
        names: Every debater.
        rnd: The round it decided on.

    Returns:
        The decision to record; a fallback goes on with a tie. ``fallback`` says why
        ``leading`` is a tie the moderator did not call: it gave nothing usable, or it
        named no debater.
    """
    if decision is None:
        return ModeratorDecision(
            settled=False, leading=TIE, reason=MODERATOR_FALLBACK, round=rnd, fallback=fallback
        )
    notes: list[str] = []
    leading = read_leader(decision.leading, names, "leading", notes)
    unknown = unknown_name("the moderator", decision.leading, leading)
    return decision.model_copy(
        update={"leading": leading, "round": rnd, "notes": tuple(notes), "fallback": unknown}
    )


def normalise_verdict(
    verdict: Verdict | None, fallback: str | None, names: Sequence[str]
) -> Verdict:
    """The judge's verdict with every debater name read as a real one.

    A misspelt name is read as the closest debater; an unknown winner becomes ``tie`` (a
    fallback: ``fallback`` says the judge named no debater) and scores or strongest
    arguments of unknown debaters are dropped, each with a note.

    Args:
        verdict: What the judge returned (``None`` if it gave nothing usable).
        fallback: Why it gave nothing usable.
        names: Every debater.

    Returns:
        The verdict to record; a fallback is a tie carrying the reason.
    """
    if verdict is None:
        return Verdict(winner=TIE, scores=[], rationale="", strongest=[], fallback=fallback)
    notes: list[str] = []
    winner = read_leader(verdict.winner, names, "winner", notes)
    unknown = unknown_name("the judge", verdict.winner, winner)
    scores = []
    for score in verdict.scores:
        name = read_name(score.debater, names, "score for", notes)
        if name is None:
            notes.append(f"score for unknown debater {score.debater!r} dropped")
        else:
            scores.append(score.model_copy(update={"debater": name}))
    strongest = []
    for item in verdict.strongest:
        name = read_name(item.debater, names, "strongest argument of", notes)
        if name is None:
            notes.append(f"strongest argument of unknown debater {item.debater!r} dropped")
        else:
            strongest.append(item.model_copy(update={"debater": name}))
    return verdict.model_copy(
        update={
            "winner": winner,
            "scores": scores,
            "strongest": strongest,
            "notes": tuple(notes),
            "fallback": unknown,
        }
    )


def make_moderator(setup: DebateSetup, model: ModelBinding | None) -> Runnable[Any, Any]:
    """Node in which the moderator decides whether the debate is settled.

    Runs after every round that does not already end the debate. ``settled`` ends it
    with ``termination_reason="settled"`` (the :class:`Settled` condition).

    Args:
        setup: The debate's settings.
        model: The model to call (unless the official's record in ``setup.officials``
            gives it its own); ``None`` reads it from the run's context.

    Returns:
        The node function.
    """
    system = SystemMessage(MODERATOR_SYSTEM.format(roster=setup.roster))
    agent = agent_of(setup.officials.get(MODERATOR_NODE), model, MODERATOR_NODE)
    conditions = [Settled()]

    def moderate(state: DebateState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        rnd = state["round"]
        task = MODERATOR_TASK.format(
            **officials_view(state, setup), round=rnd, rounds=setup.max_rounds
        )
        result = yield from agent.ask_steps(
            runtime, ModeratorDecision, [system, HumanMessage(task)]
        )
        decision = normalise_decision(result.value, result.reason, setup.names, rnd)
        turn = Turn(
            agent=MODERATOR_NODE,
            content=decision.reason,
            stage=MODERATE_STAGE,
            round=rnd,
            usage=result.usage,
            answer=decision.leading,
            reason=decision.fallback,
        )
        update: dict[str, Any] = {
            **turn_update(*recorded(result, turn), so_far=state.get("transcript")),
            "moderator_decisions": [decision],
        }
        emit("decision", agent=MODERATOR_NODE, **decision.model_dump(mode="json"))
        outcome = RoundOutcome(round=rnd, settled=decision.settled)
        reason = ended(state, first_fired(conditions, outcome))
        if reason is not None:
            update["termination_reason"] = reason
        return update

    return agent_node(moderate, MODERATOR_NODE)


def make_summarizer(setup: DebateSetup, model: ModelBinding | None) -> Runnable[Any, Any]:
    """Node that folds arguments older than the window into the running summary.

    After a round, every public argument but the latest
    :attr:`DebateSetup.keep_after_summary` is folded (one call, the previous summary plus
    the newly folded arguments), so each debater's prompt holds the summary and at most
    ``keep_last`` arguments however long the debate runs. No call while nothing is out
    of the window; an empty reply keeps the old summary and folds nothing.

    Args:
        setup: The debate's settings.
        model: The model to call (unless the official's record in ``setup.officials``
            gives it its own); ``None`` reads it from the run's context.

    Returns:
        The node function.
    """
    system = SystemMessage(SUMMARIZER_SYSTEM)
    agent = agent_of(setup.officials.get(SUMMARIZER_NODE), model, SUMMARIZER_NODE)

    def summarize(state: DebateState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        public = [
            t for t in state.get("transcript", []) if is_argument(t) and is_public(t, setup.names)
        ]
        done = state.get("summarized", 0)
        target = len(public) - setup.keep_after_summary
        if target <= done:
            return {}
        folded = public[done:target]
        task = SUMMARIZE_TASK.format(
            topic=state["topic"],
            summary=summary_view(state.get("summary", "")),
            turns=turn_lines(folded, setup),
            words=setup.summary_words,
        )
        result = yield from agent.say_steps(runtime, [system, HumanMessage(task)])
        turn = Turn(
            agent=SUMMARIZER_NODE,
            content=result.text,
            stage=SUMMARY_STAGE,
            round=state["round"],
            reply_to=tuple(t.id for t in folded),
            recipients=setup.names,
            usage=result.usage,
            reason=result.reason,
        )
        update = turn_update(*recorded(result, turn), so_far=state.get("transcript"))
        if result.text:
            update.update(summary=result.text, summarized=target)
        return update

    return agent_node(summarize, SUMMARIZER_NODE)


def make_judge(setup: DebateSetup, model: ModelBinding | None) -> Runnable[Any, Any]:
    """Node in which the judge gives the typed verdict at the end.

    Args:
        setup: The debate's settings.
        model: The model to call (unless the official's record in ``setup.officials``
            gives it its own); ``None`` reads it from the run's context.

    Returns:
        The node function.
    """
    system = SystemMessage(JUDGE_SYSTEM.format(roster=setup.roster))
    agent = agent_of(setup.officials.get(JUDGE_NODE), model, JUDGE_NODE)

    def judge(state: DebateState, runtime: Runtime[Context]) -> Steps[dict[str, Any]]:
        task = JUDGE_TASK.format(**officials_view(state, setup), criteria=JUDGE_CRITERIA)
        result = yield from agent.ask_steps(runtime, Verdict, [system, HumanMessage(task)])
        verdict = normalise_verdict(result.value, result.reason, setup.names)
        turn = Turn(
            agent=JUDGE_NODE,
            content=verdict.rationale,
            stage=JUDGE_STAGE,
            round=state.get("rounds_completed", state["round"]),
            usage=result.usage,
            answer=verdict.winner,
            reason=verdict.fallback,
        )
        return {
            **turn_update(*recorded(result, turn), so_far=state.get("transcript")),
            "verdict": verdict,
        }

    return agent_node(judge, JUDGE_NODE)


def outcome(state: Mapping[str, Any]) -> Outcome:
    """The debate's outcome message: the judge's verdict, else who led when it ended.

    Args:
        state: The finished run's state.

    Returns:
        ``(speaker, text)``: the judge's winner and rationale; without a judge, the
        moderator's last call (or the debate's) with the rounds done.
    """
    rounds = state.get("rounds_completed") or 0
    reason = state.get("termination_reason") or "rounds_completed"
    verdict: Verdict | None = state.get("verdict")
    if verdict is not None:
        won = "It is a tie" if verdict.winner == TIE else f"{verdict.winner} wins"
        return JUDGE_NODE, f"{won} after {plural(rounds, 'round')}: {verdict.rationale}".strip()
    decisions: Sequence[ModeratorDecision] = state.get("moderator_decisions") or ()
    if decisions:
        last = decisions[-1]
        lead = "no one leads" if last.leading == TIE else f"{last.leading} leads"
        return (
            MODERATOR_NODE,
            f"The debate ended after {plural(rounds, 'round')} ({reason}): "
            f"{lead}. {last.reason}".strip(),
        )
    return (
        "debate",
        f"The debate ended after {plural(rounds, 'round')} ({reason}); no judge was asked.",
    )
