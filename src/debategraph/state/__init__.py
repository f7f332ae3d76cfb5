"""Typed state schemas and the records they hold.

The names below are imported on first use: the records load without LangGraph, and the
state schemas (which need LangGraph's channels) only when asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debategraph.state.base import (
        TERMINATION_REASONS,
        RunOutput,
        RunState,
        TerminationReason,
        add_usage,
        add_usage_by_agent,
        charge_update,
        termination_word,
        turn_update,
    )
    from debategraph.state.debate import (
        DEBATE_RECORD_TYPES,
        TIE,
        DebateInput,
        DebateOutput,
        Debater,
        DebaterView,
        DebateState,
        HistoryMode,
        ModeratorDecision,
        Score,
        StrongestArgument,
        Verdict,
        WordCount,
    )
    from debategraph.state.discussion import (
        DISCUSSION_RECORD_TYPES,
        Analysis,
        ConsensusPoint,
        ConsensusReport,
        ConvergenceRecord,
        ConvergenceVote,
        DiscussionInput,
        DiscussionOutput,
        DiscussionState,
        DivergentView,
        Inquiry,
        Insight,
        Persona,
        Position,
        Question,
        QuestionType,
        Response,
        ResponseSet,
        SectionChoice,
        Stance,
        merge_insights,
    )
    from debategraph.state.group_chat import (
        GROUP_CHAT_RECORD_TYPES,
        GroupChatInput,
        GroupChatOutput,
        GroupChatState,
        SelectionRecord,
    )
    from debategraph.state.meeting import (
        MEETING_RECORD_TYPES,
        FinalDecision,
        MeetingInput,
        MeetingOutput,
        MeetingState,
        RoundDecision,
        Stage,
        StageAction,
    )
    from debategraph.state.records import (
        INTERJECT_STAGE,
        USER,
        Participant,
        Role,
        RoundRecord,
        Turn,
        Usage,
        interjection,
    )
    from debategraph.state.solver_debate import (
        SolverDebateInput,
        SolverDebateOutput,
        SolverDebateState,
        SolverView,
    )

#: Where each name lives.
_HOMES: dict[str, str] = {
    "RunOutput": "base",
    "RunState": "base",
    "TERMINATION_REASONS": "base",
    "TerminationReason": "base",
    "add_usage": "base",
    "add_usage_by_agent": "base",
    "termination_word": "base",
    "turn_update": "base",
    "charge_update": "base",
    "Analysis": "discussion",
    "ConsensusPoint": "discussion",
    "ConsensusReport": "discussion",
    "ConvergenceRecord": "discussion",
    "ConvergenceVote": "discussion",
    "DEBATE_RECORD_TYPES": "debate",
    "DISCUSSION_RECORD_TYPES": "discussion",
    "DebateInput": "debate",
    "DebateOutput": "debate",
    "DebateState": "debate",
    "Debater": "debate",
    "DebaterView": "debate",
    "FinalDecision": "meeting",
    "GROUP_CHAT_RECORD_TYPES": "group_chat",
    "GroupChatInput": "group_chat",
    "GroupChatOutput": "group_chat",
    "GroupChatState": "group_chat",
    "SelectionRecord": "group_chat",
    "MEETING_RECORD_TYPES": "meeting",
    "MeetingInput": "meeting",
    "MeetingOutput": "meeting",
    "MeetingState": "meeting",
    "RoundDecision": "meeting",
    "Stage": "meeting",
    "StageAction": "meeting",
    "DiscussionInput": "discussion",
    "DiscussionOutput": "discussion",
    "DiscussionState": "discussion",
    "DivergentView": "discussion",
    "HistoryMode": "debate",
    "INTERJECT_STAGE": "records",
    "Inquiry": "discussion",
    "Insight": "discussion",
    "ModeratorDecision": "debate",
    "Persona": "discussion",
    "Position": "discussion",
    "Question": "discussion",
    "QuestionType": "discussion",
    "Response": "discussion",
    "ResponseSet": "discussion",
    "Role": "records",
    "RoundRecord": "records",
    "Participant": "records",
    "Score": "debate",
    "SectionChoice": "discussion",
    "SolverDebateInput": "solver_debate",
    "SolverDebateOutput": "solver_debate",
    "SolverDebateState": "solver_debate",
    "SolverView": "solver_debate",
    "Stance": "discussion",
    "StrongestArgument": "debate",
    "TIE": "debate",
    "Turn": "records",
    "USER": "records",
    "Usage": "records",
    "Verdict": "debate",
    "WordCount": "debate",
    "interjection": "records",
    "merge_insights": "discussion",
}

__all__ = [
    "DEBATE_RECORD_TYPES",
    "DISCUSSION_RECORD_TYPES",
    "GROUP_CHAT_RECORD_TYPES",
    "INTERJECT_STAGE",
    "MEETING_RECORD_TYPES",
    "RECORD_TYPES",
    "TERMINATION_REASONS",
    "TIE",
    "USER",
    "Analysis",
    "ConsensusPoint",
    "ConsensusReport",
    "ConvergenceRecord",
    "ConvergenceVote",
    "DebateInput",
    "DebateOutput",
    "DebateState",
    "Debater",
    "DebaterView",
    "DiscussionInput",
    "DiscussionOutput",
    "DiscussionState",
    "DivergentView",
    "FinalDecision",
    "GroupChatInput",
    "GroupChatOutput",
    "GroupChatState",
    "HistoryMode",
    "Inquiry",
    "Insight",
    "MeetingInput",
    "MeetingOutput",
    "MeetingState",
    "ModeratorDecision",
    "Participant",
    "Persona",
    "Position",
    "Question",
    "QuestionType",
    "Response",
    "ResponseSet",
    "Role",
    "RoundDecision",
    "RoundRecord",
    "RunOutput",
    "RunState",
    "Score",
    "SectionChoice",
    "SelectionRecord",
    "SolverDebateInput",
    "SolverDebateOutput",
    "SolverDebateState",
    "SolverView",
    "Stage",
    "StageAction",
    "Stance",
    "StrongestArgument",
    "TerminationReason",
    "Turn",
    "Usage",
    "Verdict",
    "WordCount",
    "add_usage",
    "add_usage_by_agent",
    "charge_update",
    "interjection",
    "merge_insights",
    "record_types",
    "termination_word",
    "turn_update",
]


def record_types() -> tuple[Any, ...]:
    """Every record type kept in some graph's state: the msgpack allowlist of our savers.

    A type missing here comes back from a checkpoint as a plain dict.

    Returns:
        The pydantic record types.
    """
    from debategraph.state.debate import DEBATE_RECORD_TYPES
    from debategraph.state.discussion import DISCUSSION_RECORD_TYPES
    from debategraph.state.group_chat import GROUP_CHAT_RECORD_TYPES
    from debategraph.state.meeting import MEETING_RECORD_TYPES
    from debategraph.state.records import RECORD_TYPES as COMMON

    return (
        *COMMON,
        *DEBATE_RECORD_TYPES,
        *DISCUSSION_RECORD_TYPES,
        *GROUP_CHAT_RECORD_TYPES,
        *MEETING_RECORD_TYPES,
    )


def __getattr__(name: str) -> Any:
    if name == "RECORD_TYPES":
        return record_types()
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
