"""Nodes of the debate: open a round, speak, close a round, moderate, summarise, judge.

Every debater argument is a :class:`~debategraph.state.Turn` of stage ``argue`` addressed
to the other debaters; a debater reads the arguments addressed to it and its own (never
a message addressed only to someone else), the human's interjections after the previous
round, and with ``history="window"`` a running summary in place of older arguments.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.graph import END
from langgraph.runtime import Runtime

from debategraph.context import Context
from debategraph.models import ModelBinding, bind_model, structured_call, text_call
from debategraph.nodes.human import APPROVE, INTERJECT
from debategraph.nodes.solver import CLOSE_ROUND_NODE, HUMAN_NODE, OPEN_ROUND_NODE
from debategraph.prompts import (
    DEBATE_HISTORY_VIEW,
    DEBATE_OPENING,
    DEBATE_REPLY,
    DEBATE_ROUND_REVIEW,
    DEBATE_SUMMARY_VIEW,
    DEBATE_TURN_VIEW,
    DEBATE_YOU,
    DEBATER_PERSONA,
    DEBATER_SYSTEM,
    HUMAN_INTERJECTION,
    JUDGE_CRITERIA,
    JUDGE_SYSTEM,
    JUDGE_TASK,
    MODERATOR_SYSTEM,
    MODERATOR_TASK,
    SUMMARIZE_TASK,
    SUMMARIZER_SYSTEM,
)
from debategraph.state import (
    TIE,
    USER,
    Debater,
    DebaterView,
    DebateState,
    DebateTerminationReason,
    HistoryMode,
    ModeratorDecision,
    Turn,
    Usage,
    Verdict,
    WordCount,
)

ARGUE_STAGE = "argue"
MODERATE_STAGE = "moderate"
SUMMARY_STAGE = "summarize"
JUDGE_STAGE = "judge"

#: Node names (also the agent names the moderator, summarizer and judge record turns as).
#: ``open_round``/``close_round``/``human`` are the solver debate's names on purpose: the
#: CLI's thread helpers know a round boundary by them.
MODERATOR_NODE = "moderator"
SUMMARIZER_NODE = "summarizer"
JUDGE_NODE = "judge"

#: Names a debater may not take: the graph's other nodes, the human, and the tie verdict.
RESERVED_NAMES = frozenset(
    {
        OPEN_ROUND_NODE,
        CLOSE_ROUND_NODE,
        HUMAN_NODE,
        MODERATOR_NODE,
        SUMMARIZER_NODE,
        JUDGE_NODE,
        USER,
        TIE,
    }
)

#: How close a misspelt debater name must be to a real one to be read as it (difflib ratio).
FUZZY_CUTOFF = 0.6
#: Words the moderator or judge may use for "nobody".
TIE_WORDS = frozenset({TIE, "draw"})
MODERATOR_FALLBACK = "the moderator gave no usable decision; the debate goes on"


@dataclass(frozen=True)
class DebateSetup:
    """A debate's fixed settings, shared by its nodes (validated by ``build_debate``).

    Attributes:
        debaters: The debaters in speaking order (the first speaker first).
        max_rounds: Round cap.
        words: Soft word limit of each argument.
        history: ``full`` (every relevant argument verbatim) or ``window``.
        keep_last: With ``window``: arguments a debater reads verbatim.
        moderator: Whether a moderator may stop the debate after a round.
        judge: Whether a judge gives a verdict at the end.
        pause_after_round: Whether a human reviews each round.
    """

    debaters: tuple[Debater, ...]
    max_rounds: int
    words: int
    history: HistoryMode
    keep_last: int
    moderator: bool
    judge: bool
    pause_after_round: bool

    @property
    def names(self) -> tuple[str, ...]:
        """Debater names in speaking order."""
        return tuple(d.name for d in self.debaters)

    @property
    def roster(self) -> str:
        """``A (side), B (side)`` for prompts."""
        return ", ".join(d.label for d in self.debaters)

    @property
    def summary_words(self) -> int:
        """Word limit of the running summary: one argument's worth per debater."""
        return self.words * len(self.debaters)

    @property
    def keep_after_summary(self) -> int:
        """Public arguments left out of the summary after a round.

        The next round adds ``n - 1`` arguments before its last speaker talks, so leaving
        ``keep_last - (n - 1)`` keeps every prompt at ``keep_last`` verbatim arguments at
        most; at least one stays, so the first speaker reads the argument it answers.
        """
        return max(1, self.keep_last - (len(self.debaters) - 1))

    def debater(self, name: str) -> Debater | None:
        """The debater called ``name``, if any."""
        return next((d for d in self.debaters if d.name == name), None)

    def others(self, name: str) -> tuple[str, ...]:
        """Every debater but ``name``, in speaking order."""
        return tuple(n for n in self.names if n != name)

    def next_step(self, after: str) -> str:
        """The node that follows ``after`` in a round's tail when the debate goes on.

        The tail is ``close_round -> [moderator] -> [summarizer] -> [human] -> open_round``.

        Args:
            after: ``close_round``, ``moderator`` or ``summarizer``.

        Returns:
            The next node's name.
        """
        tail = [CLOSE_ROUND_NODE]
        if self.moderator:
            tail.append(MODERATOR_NODE)
        if self.history == "window":
            tail.append(SUMMARIZER_NODE)
        if self.pause_after_round:
            tail.append(HUMAN_NODE)
        tail.append(OPEN_ROUND_NODE)
        return tail[tail.index(after) + 1]


# -- views of the transcript --------------------------------------------------------------


def addressed_to(turn: Turn, name: str) -> bool:
    """Whether ``name`` may read ``turn``: its own, addressed to it, or to everyone.

    Args:
        turn: A transcript record.
        name: A debater.

    Returns:
        True if the debater may read it.
    """
    return turn.agent == name or not turn.recipients or name in turn.recipients


def is_public(turn: Turn, names: Sequence[str]) -> bool:
    """Whether every debater may read ``turn`` (only such arguments are summarised).

    Args:
        turn: A transcript record.
        names: Every debater.

    Returns:
        True if it is addressed to everyone (or to every debater but its author).
    """
    return not turn.recipients or set(names) <= {turn.agent, *turn.recipients}


def unsummarized(transcript: Sequence[Turn], names: Sequence[str], summarized: int) -> list[Turn]:
    """Arguments not folded into the summary, oldest first.

    The summary folds public arguments in transcript order, so the first ``summarized``
    of them are out; arguments addressed to only some debaters are never summarised (a
    shared summary would show them to the others) and always stay verbatim.

    Args:
        transcript: The transcript.
        names: Every debater.
        summarized: Public arguments folded into the summary so far.

    Returns:
        The arguments still to be shown verbatim.
    """
    out: list[Turn] = []
    seen = 0
    for turn in transcript:
        if turn.stage != ARGUE_STAGE:
            continue
        if is_public(turn, names):
            seen += 1
            if seen <= summarized:
                continue
        out.append(turn)
    return out


def debater_view(state: DebateState, name: str, setup: DebateSetup) -> DebaterView:
    """What one debater reads before it speaks.

    Args:
        state: The debate state.
        name: The debater.
        setup: The debate's settings.

    Returns:
        The view: summary, arguments addressed to it and its own, the latest opposing
        argument, and the human's interjections after the previous round.
    """
    transcript = state.get("transcript", [])
    rnd = state["round"]
    visible = [
        t
        for t in unsummarized(transcript, setup.names, state.get("summarized", 0))
        if t.content and addressed_to(t, name)
    ]
    latest: Turn | None = None
    for index in range(len(visible) - 1, -1, -1):
        if visible[index].agent != name:
            latest = visible.pop(index)
            break
    return DebaterView(
        topic=state["topic"],
        debater=name,
        round=rnd,
        summary=state.get("summary", ""),
        history=visible,
        latest=latest,
        interjections=[
            t
            for t in transcript
            if t.role == "user" and t.round == rnd - 1 and addressed_to(t, name)
        ],
    )


def _speaker(turn: Turn, setup: DebateSetup, reader: str | None) -> str:
    if turn.agent == reader:
        return DEBATE_YOU.format(name=turn.agent)
    debater = setup.debater(turn.agent)
    return debater.label if debater else turn.agent


def _history(turns: Sequence[Turn], setup: DebateSetup, reader: str | None = None) -> str:
    if not turns:
        return ""
    lines = "\n\n".join(
        DEBATE_TURN_VIEW.format(
            round=t.round, speaker=_speaker(t, setup, reader), content=t.content
        )
        for t in turns
    )
    return DEBATE_HISTORY_VIEW.format(turns=lines)


def _summary(text: str) -> str:
    return DEBATE_SUMMARY_VIEW.format(summary=text) if text else ""


def debater_prompt(view: DebaterView, setup: DebateSetup) -> list[BaseMessage]:
    """The messages a debater sees.

    With no opposing argument addressed to it yet (the first speaker of round 1) it is
    asked to make its case; otherwise to respond to the latest opposing argument.

    Args:
        view: The debater's view.
        setup: The debate's settings.

    Returns:
        The prompt.

    Raises:
        ValueError: If the view is of someone who is not a debater.
    """
    me = setup.debater(view["debater"])
    if me is None:
        raise ValueError(f"unknown debater {view['debater']!r}")
    persona = DEBATER_PERSONA.format(persona=me.persona) if me.persona else ""
    system = SystemMessage(
        DEBATER_SYSTEM.format(name=me.name, side=me.side, persona=persona, roster=setup.roster)
    )
    notes = "\n".join(f"- {t.content}" for t in view["interjections"])
    fields = {
        "topic": view["topic"],
        "summary": _summary(view["summary"]),
        "history": _history(view["history"], setup, me.name),
        "human": HUMAN_INTERJECTION.format(notes=notes) if notes else "",
        "words": setup.words,
    }
    latest = view["latest"]
    if latest is None:
        return [system, HumanMessage(DEBATE_OPENING.format(**fields))]
    text = DEBATE_REPLY.format(
        **fields, opponent=_speaker(latest, setup, None), latest=latest.content
    )
    return [system, HumanMessage(text)]


def _officials_view(state: DebateState, setup: DebateSetup) -> dict[str, str]:
    """Summary and unsummarised arguments, as the moderator and the judge read them."""
    turns = [
        t
        for t in unsummarized(state.get("transcript", []), setup.names, state.get("summarized", 0))
        if t.content
    ]
    return {
        "topic": state["topic"],
        "summary": _summary(state.get("summary", "")),
        "history": _history(turns, setup),
        "names": ", ".join(setup.names),
    }


def word_count(text: str) -> int:
    """Whitespace-separated words in ``text``.

    Args:
        text: An argument.

    Returns:
        Its number of words.
    """
    return len(text.split())


def _usage_update(state: DebateState, agent: str, usage: Usage) -> dict[str, Any]:
    by_agent = {k: Usage.coerce(v) for k, v in (state.get("usage_by_agent") or {}).items()}
    by_agent[agent] = by_agent.get(agent, Usage()) + usage
    return {"usage": Usage.coerce(state.get("usage")) + usage, "usage_by_agent": by_agent}


# -- the round loop --------------------------------------------------------------------------


def open_round(state: DebateState) -> dict[str, Any]:
    """Start the next round (the first one also sets the outputs' starting values).

    Args:
        state: The debate state.

    Returns:
        The new round number.

    Raises:
        ValueError: If the topic is empty.
    """
    if not state.get("topic", "").strip():
        raise ValueError("topic is empty: pass a non-empty 'topic'")
    rnd = state.get("round", 0) + 1
    update: dict[str, Any] = {"round": rnd}
    if rnd == 1:
        update.update(
            verdict=None,
            rounds_completed=0,
            summary="",
            summarized=0,
            usage=Usage(),
            usage_by_agent={},
        )
    return update


def make_debater(
    name: str, setup: DebateSetup, model: ModelBinding | None
) -> Callable[..., dict[str, Any]]:
    """Node in which one debater speaks (its own step: turns are sequential).

    The reply comes from :func:`~debategraph.models.text_call`, so its tokens stream with
    ``stream_mode="messages"``. Its length is recorded as a :class:`WordCount`.

    Args:
        name: The debater (also the node's name).
        setup: The debate's settings.
        model: The model to call; ``None`` reads it from the run's context (Studio).

    Returns:
        The node function.
    """
    recipients = setup.others(name)

    def speak(state: DebateState, *, runtime: Runtime[Context]) -> dict[str, Any]:
        view = debater_view(state, name, setup)
        llm = model or bind_model(runtime.context)
        result = text_call(llm, debater_prompt(view, setup))
        latest = view["latest"]
        turn = Turn(
            agent=name,
            content=result.text,
            stage=ARGUE_STAGE,
            round=view["round"],
            reply_to=(latest.id,) if latest else (),
            recipients=recipients,
            usage=result.usage,
            reason=result.reason,
        )
        count = WordCount(
            turn_id=turn.id,
            debater=name,
            round=turn.round,
            words=word_count(result.text),
            limit=setup.words,
        )
        return {
            "transcript": [turn],
            "word_counts": [count],
            **_usage_update(state, name, result.usage),
        }

    return speak


def make_close_round(setup: DebateSetup) -> Callable[..., dict[str, Any]]:
    """Node that records the finished round and whether the debate ends.

    The debate ends with ``rounds_completed`` at the round cap, and with ``error`` after a
    round in which every argument came back empty (the model is not answering; going on
    would only spend calls).

    Args:
        setup: The debate's settings.

    Returns:
        The node function.
    """

    def close_round(state: DebateState) -> dict[str, Any]:
        rnd = state["round"]
        this_round = [
            t
            for t in state.get("transcript", [])
            if t.stage == ARGUE_STAGE and t.round == rnd and t.agent in setup.names
        ]
        reason: DebateTerminationReason | None = None
        if this_round and not any(t.content for t in this_round):
            reason = "error"
        elif rnd >= setup.max_rounds:
            reason = "rounds_completed"
        update: dict[str, Any] = {"rounds_completed": rnd}
        if reason is not None:
            update["termination_reason"] = reason
        return update

    return close_round


def make_router(setup: DebateSetup, after: str) -> Callable[[DebateState], str]:
    """Edge after ``after``: to the judge (or the end) once the debate ends, else on.

    Args:
        setup: The debate's settings.
        after: ``close_round`` or ``moderator``.

    Returns:
        The routing function.
    """
    going_on = setup.next_step(after)
    ending = JUDGE_NODE if setup.judge else END

    def route(state: DebateState) -> str:
        return ending if state.get("termination_reason") else going_on

    return route


def routes(setup: DebateSetup, after: str) -> list[str]:
    """The nodes :func:`make_router` may pick (for the drawn graph).

    Args:
        setup: The debate's settings.
        after: ``close_round`` or ``moderator``.

    Returns:
        The possible next nodes.
    """
    return [setup.next_step(after), JUDGE_NODE if setup.judge else END]


# -- moderator, summarizer, judge -------------------------------------------------------------


def match_debater(value: str, names: Sequence[str]) -> str | None:
    """The debater a model meant by ``value``: exact, case-insensitive, then closest.

    Args:
        value: A name as the model wrote it.
        names: Every debater.

    Returns:
        The debater's name, or ``None`` if none is close enough.
    """
    key = value.strip().lower()
    lowered = {n.lower(): n for n in names}
    if key in lowered:
        return lowered[key]
    close = difflib.get_close_matches(key, list(lowered), n=1, cutoff=FUZZY_CUTOFF)
    return lowered[close[0]] if close else None


def _read_name(value: str, names: Sequence[str], what: str, notes: list[str]) -> str | None:
    found = match_debater(value, names)
    if found is None:
        return None
    if found != value:
        notes.append(f"{what} {value!r} read as {found!r}")
    return found


def _read_leader(value: str, names: Sequence[str], what: str, notes: list[str]) -> str:
    if value.strip().lower() in TIE_WORDS:
        return TIE
    found = _read_name(value, names, what, notes)
    if found is None:
        notes.append(f"{what} {value!r} is not a debater: recorded as a tie")
        return TIE
    return found


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
        The decision to record; a fallback goes on with a tie.
    """
    if decision is None:
        return ModeratorDecision(
            settled=False, leading=TIE, reason=MODERATOR_FALLBACK, round=rnd, fallback=fallback
        )
    notes: list[str] = []
    leading = _read_leader(decision.leading, names, "leading", notes)
    return decision.model_copy(
        update={"leading": leading, "round": rnd, "notes": tuple(notes), "fallback": None}
    )


def normalise_verdict(
    verdict: Verdict | None, fallback: str | None, names: Sequence[str]
) -> Verdict:
    """The judge's verdict with every debater name read as a real one.

    A misspelt name is read as the closest debater; an unknown winner becomes ``tie`` and
    scores or strongest arguments of unknown debaters are dropped, each with a note.

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
    winner = _read_leader(verdict.winner, names, "winner", notes)
    scores = []
    for score in verdict.scores:
        name = _read_name(score.debater, names, "score for", notes)
        if name is None:
            notes.append(f"score for unknown debater {score.debater!r} dropped")
        else:
            scores.append(score.model_copy(update={"debater": name}))
    strongest = []
    for item in verdict.strongest:
        name = _read_name(item.debater, names, "strongest argument of", notes)
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
            "fallback": None,
        }
    )


def make_moderator(setup: DebateSetup, model: ModelBinding | None) -> Callable[..., dict[str, Any]]:
    """Node in which the moderator decides whether the debate is settled.

    Runs after every round that does not already end the debate. ``settled`` ends it
    with ``termination_reason="settled"``.

    Args:
        setup: The debate's settings.
        model: The model to call; ``None`` reads it from the run's context.

    Returns:
        The node function.
    """
    system = SystemMessage(MODERATOR_SYSTEM.format(roster=setup.roster))

    def moderate(state: DebateState, *, runtime: Runtime[Context]) -> dict[str, Any]:
        rnd = state["round"]
        task = MODERATOR_TASK.format(
            **_officials_view(state, setup), round=rnd, rounds=setup.max_rounds
        )
        llm = model or bind_model(runtime.context)
        result = structured_call(llm, ModeratorDecision, [system, HumanMessage(task)])
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
            "moderator_decisions": [decision],
            "transcript": [turn],
            **_usage_update(state, MODERATOR_NODE, result.usage),
        }
        if decision.settled:
            update["termination_reason"] = "settled"
        return update

    return moderate


def make_summarizer(
    setup: DebateSetup, model: ModelBinding | None
) -> Callable[..., dict[str, Any]]:
    """Node that folds arguments older than the window into the running summary.

    After a round, every public argument but the latest
    :attr:`DebateSetup.keep_after_summary` is folded (one call, the previous summary plus
    the newly folded arguments), so each debater's prompt holds the summary and at most
    ``keep_last`` arguments however long the debate runs. No call while nothing is out
    of the window; an empty reply keeps the old summary and folds nothing.

    Args:
        setup: The debate's settings.
        model: The model to call; ``None`` reads it from the run's context.

    Returns:
        The node function.
    """
    system = SystemMessage(SUMMARIZER_SYSTEM)

    def summarize(state: DebateState, *, runtime: Runtime[Context]) -> dict[str, Any]:
        public = [
            t
            for t in state.get("transcript", [])
            if t.stage == ARGUE_STAGE and is_public(t, setup.names)
        ]
        done = state.get("summarized", 0)
        target = len(public) - setup.keep_after_summary
        if target <= done:
            return {}
        folded = public[done:target]
        task = SUMMARIZE_TASK.format(
            topic=state["topic"],
            summary=_summary(state.get("summary", "")),
            turns="\n\n".join(
                DEBATE_TURN_VIEW.format(
                    round=t.round, speaker=_speaker(t, setup, None), content=t.content
                )
                for t in folded
                if t.content
            ),
            words=setup.summary_words,
        )
        llm = model or bind_model(runtime.context)
        result = text_call(llm, [system, HumanMessage(task)])
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
        update: dict[str, Any] = {
            "transcript": [turn],
            **_usage_update(state, SUMMARIZER_NODE, result.usage),
        }
        if result.text:
            update.update(summary=result.text, summarized=target)
        return update

    return summarize


def make_judge(setup: DebateSetup, model: ModelBinding | None) -> Callable[..., dict[str, Any]]:
    """Node in which the judge gives the typed verdict at the end.

    Args:
        setup: The debate's settings.
        model: The model to call; ``None`` reads it from the run's context.

    Returns:
        The node function.
    """
    system = SystemMessage(JUDGE_SYSTEM.format(roster=setup.roster))

    def judge(state: DebateState, *, runtime: Runtime[Context]) -> dict[str, Any]:
        task = JUDGE_TASK.format(**_officials_view(state, setup), criteria=JUDGE_CRITERIA)
        llm = model or bind_model(runtime.context)
        result = structured_call(llm, Verdict, [system, HumanMessage(task)])
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
            "verdict": verdict,
            "transcript": [turn],
            **_usage_update(state, JUDGE_NODE, result.usage),
        }

    return judge


# -- the human at a round boundary ----------------------------------------------------------


def review_payload(state: Mapping[str, Any], setup: DebateSetup) -> dict[str, Any]:
    """The JSON payload a round-boundary interrupt shows a human.

    Args:
        state: The debate state.
        setup: The debate's settings.

    Returns:
        Round, each debater's argument and word count, the moderator's call on the round,
        the summary, tokens used and what is expected back.
    """
    rnd: int = state["round"]
    transcript: Sequence[Turn] = state.get("transcript", [])
    this_round = [t for t in transcript if t.round == rnd and t.role == "agent"]
    arguments = {t.agent: t.content for t in this_round if t.stage == ARGUE_STAGE}
    decisions = [d for d in state.get("moderator_decisions", []) if d.round == rnd]
    return {
        "kind": "round_review",
        "round": rnd,
        "rounds": setup.max_rounds,
        "arguments": arguments,
        "word_counts": {name: word_count(text) for name, text in arguments.items()},
        "moderator": decisions[-1].model_dump(mode="json") if decisions else None,
        "summary": state.get("summary", ""),
        "tokens_this_round": Usage.total(t.usage for t in this_round).total_tokens,
        "message": DEBATE_ROUND_REVIEW.format(round=rnd, rounds=setup.max_rounds),
        "expects": {APPROVE: True, INTERJECT: "text shown to every debater next round"},
    }
