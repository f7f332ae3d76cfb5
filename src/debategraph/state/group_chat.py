"""Typed state of the group chat: one shared conversation, a selector and its records."""

from __future__ import annotations

from typing import Annotated, NotRequired

from pydantic import BaseModel, ConfigDict

from debategraph.state.base import MessagesInput, RunOutput, RunState, Schemas
from debategraph.state.reducers import append_only


class SelectionRecord(BaseModel):
    """How one turn's speaker was chosen.

    Attributes:
        turn: The turn (the chat's round counter).
        agent: Who spoke.
        method: ``initial``, ``sequential``, ``llm``, ``rules``, ``named`` (a single-turn
            invocation), ``fallback`` (the selector's answer named no agent) or
            ``guard`` (the inner choice had spoken too many turns in a row).
        answer: What a model answered, if one was asked.
        note: Why a fallback or a guard stepped in.
    """

    model_config = ConfigDict(frozen=True)

    turn: int
    agent: str
    method: str
    answer: str | None = None
    note: str | None = None


class GroupChatInput(MessagesInput):
    """What a caller passes in.

    Attributes:
        task: What the chat is about; recorded as the human's first message (needed
            on the first invocation, kept afterwards).
        message: A human message to add before the chat goes on (later invocations).
        speaker: Run a single turn of this agent, then return (the chat stays open).
        reset: Let a finished chat go on: its termination is cleared and its
            conditions count turns, time and stalls afresh.
        messages: A conversation instead (or one string: a human message): its last
            human message is the ``task`` on the first invocation, the next ``message``
            on a later one.
    """

    task: NotRequired[str]
    message: NotRequired[str | None]
    speaker: NotRequired[str | None]
    reset: NotRequired[bool]


class GroupChatOutput(RunOutput):
    """What the chat returns.

    Besides the base outputs (``termination_reason``: ``max_turns``, ``matched``,
    ``judged``, ``budget``, ``time_limit``, ``stalled``, ``stopped``; ``usage``...):
    the task, whether the chat is complete, what ended it in words, and how every
    speaker was chosen.

    Attributes:
        task: What the chat is about.
        is_complete: Whether the chat has ended (a later invocation may go on with it).
        termination_detail: What ended it, in words.
        selections: How each speaker was chosen, one record per turn.
    """

    task: str
    is_complete: bool
    termination_detail: str
    selections: Annotated[list[SelectionRecord], append_only()]


class GroupChatState(GroupChatOutput, RunState):
    """Full state: outputs, the transcript (the shared conversation) and the counters.

    ``round`` counts turns since the chat began; ``segment_start`` is the turn at which
    the current run of turns began (0, or the turn of the last reset): the termination
    conditions count from there. ``next_speaker`` is the selector's choice for the turn
    in progress; ``message``, ``speaker`` and ``reset`` are the latest invocation's input.
    """

    segment_start: int
    next_speaker: str | None
    message: str | None
    speaker: str | None
    reset: bool


#: Record types of this graph that checkpoints may deserialize.
RECORD_TYPES: tuple[type[BaseModel], ...] = (SelectionRecord,)

#: The state, input and output schemas of the graph.
SCHEMAS = Schemas(
    GroupChatState, GroupChatInput, GroupChatOutput, text="task", later_text="message"
)
