"""What each agent of the debate reads: the views of the transcript and the prompts.

A debater reads the arguments addressed to it and its own (never a message addressed only
to someone else), the human's interjections after the previous round, and with
``history="window"`` a running summary in place of older arguments. The moderator and the
judge read the summary and every argument not yet summarised. The records of an agent's
tool calls (``role="tool"``, before its argument) are shown to no other agent and count
as no argument.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from debategraph.nodes.conversation import may_read as addressed_to
from debategraph.nodes.debate.prompts import (
    DEBATE_HISTORY_VIEW,
    DEBATE_OPENING,
    DEBATE_REPLY,
    DEBATE_SUMMARY_VIEW,
    DEBATE_TURN_VIEW,
    DEBATE_YOU,
    DEBATER_PERSONA,
    DEBATER_SYSTEM,
)
from debategraph.nodes.debate.setup import ARGUE_STAGE, DebateSetup
from debategraph.nodes.rounds import interjection_prompt, interjections
from debategraph.state.debate import DebaterView, DebateState
from debategraph.state.records import Turn


def is_argument(turn: Turn) -> bool:
    """Whether ``turn`` is a debater's argument (not a tool call's record, not an official's).

    Args:
        turn: A transcript record.

    Returns:
        True for a record of stage ``argue`` that is not a tool call.
    """
    return turn.stage == ARGUE_STAGE and turn.role != "tool"


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
    """Arguments not folded into the summary, oldest first (tool-call records left out).

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
        if not is_argument(turn):
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
            t for t in interjections(transcript, after_round=rnd - 1) if addressed_to(t, name)
        ],
    )


def speaker(turn: Turn, setup: DebateSetup, reader: str | None = None) -> str:
    """How a turn's author is named to ``reader``: ``Name (side)``, or ``Name (you)``.

    Args:
        turn: A transcript record.
        setup: The debate's settings.
        reader: The debater reading it (``None``: an official).

    Returns:
        The author's label.
    """
    if turn.agent == reader:
        return DEBATE_YOU.format(name=turn.agent)
    debater = setup.debater(turn.agent)
    return debater.label if debater else turn.agent


def turn_lines(turns: Sequence[Turn], setup: DebateSetup, reader: str | None = None) -> str:
    """Arguments as ``[round n] Speaker: text`` paragraphs, oldest first.

    Args:
        turns: The arguments.
        setup: The debate's settings.
        reader: The debater reading them (``None``: an official).

    Returns:
        The paragraphs (empty arguments left out).
    """
    return "\n\n".join(
        DEBATE_TURN_VIEW.format(round=t.round, speaker=speaker(t, setup, reader), content=t.content)
        for t in turns
        if t.content
    )


def history_view(turns: Sequence[Turn], setup: DebateSetup, reader: str | None = None) -> str:
    """The ``The debate so far`` paragraph of a prompt.

    Args:
        turns: The arguments shown verbatim.
        setup: The debate's settings.
        reader: The debater reading them (``None``: an official).

    Returns:
        The paragraph, or ``""`` when there are none.
    """
    lines = turn_lines(turns, setup, reader)
    return DEBATE_HISTORY_VIEW.format(turns=lines) if lines else ""


def summary_view(text: str) -> str:
    """The ``Summary of the earlier debate`` paragraph, or ``""`` without a summary.

    Args:
        text: The running summary.

    Returns:
        The paragraph.
    """
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
    fields = {
        "topic": view["topic"],
        "summary": summary_view(view["summary"]),
        "history": history_view(view["history"], setup, me.name),
        "human": interjection_prompt(view["interjections"]),
        "words": setup.words,
    }
    latest = view["latest"]
    if latest is None:
        return [system, HumanMessage(DEBATE_OPENING.format(**fields))]
    text = DEBATE_REPLY.format(**fields, opponent=speaker(latest, setup), latest=latest.content)
    return [system, HumanMessage(text)]


def officials_view(state: DebateState, setup: DebateSetup) -> dict[str, str]:
    """The prompt fields of the moderator and the judge: summary and unsummarised arguments.

    Args:
        state: The debate state.
        setup: The debate's settings.

    Returns:
        ``topic``, ``summary``, ``history`` and ``names``.
    """
    turns = unsummarized(state.get("transcript", []), setup.names, state.get("summarized", 0))
    return {
        "topic": state["topic"],
        "summary": summary_view(state.get("summary", "")),
        "history": history_view(turns, setup),
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
