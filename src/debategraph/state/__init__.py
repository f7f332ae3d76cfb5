"""Typed state schemas and the records they hold."""

from debategraph.state.debate import (
    DEBATE_RECORD_TYPES,
    TIE,
    DebateInput,
    DebateOutput,
    Debater,
    DebaterView,
    DebateState,
    DebateTerminationReason,
    HistoryMode,
    ModeratorDecision,
    Score,
    StrongestArgument,
    Verdict,
    WordCount,
)
from debategraph.state.records import (
    INTERJECT_STAGE,
    USER,
    Role,
    RoundRecord,
    Turn,
    Usage,
    interjection,
)
from debategraph.state.records import RECORD_TYPES as _COMMON_RECORD_TYPES
from debategraph.state.reducers import append_only, extend, extend_turns, transcript_channel
from debategraph.state.solver_debate import (
    SolverDebateInput,
    SolverDebateOutput,
    SolverDebateState,
    SolverView,
    TerminationReason,
)

#: Every record type kept in some graph's state: the msgpack allowlist of our checkpoint
#: savers (a type missing here comes back from a checkpoint as a plain dict).
RECORD_TYPES = (*_COMMON_RECORD_TYPES, *DEBATE_RECORD_TYPES)

__all__ = [
    "DEBATE_RECORD_TYPES",
    "INTERJECT_STAGE",
    "RECORD_TYPES",
    "TIE",
    "USER",
    "DebateInput",
    "DebateOutput",
    "DebateState",
    "DebateTerminationReason",
    "Debater",
    "DebaterView",
    "HistoryMode",
    "ModeratorDecision",
    "Role",
    "RoundRecord",
    "Score",
    "SolverDebateInput",
    "SolverDebateOutput",
    "SolverDebateState",
    "SolverView",
    "StrongestArgument",
    "TerminationReason",
    "Turn",
    "Usage",
    "Verdict",
    "WordCount",
    "append_only",
    "extend",
    "extend_turns",
    "interjection",
    "transcript_channel",
]
