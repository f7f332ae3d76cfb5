"""Typed state schemas and the records they hold."""

from debategraph.state.records import (
    INTERJECT_STAGE,
    RECORD_TYPES,
    USER,
    Role,
    RoundRecord,
    Turn,
    Usage,
    interjection,
)
from debategraph.state.reducers import append_only, extend, extend_turns, transcript_channel
from debategraph.state.solver_debate import (
    SolverDebateInput,
    SolverDebateOutput,
    SolverDebateState,
    SolverView,
    TerminationReason,
)

__all__ = [
    "INTERJECT_STAGE",
    "RECORD_TYPES",
    "USER",
    "Role",
    "RoundRecord",
    "SolverDebateInput",
    "SolverDebateOutput",
    "SolverDebateState",
    "SolverView",
    "TerminationReason",
    "Turn",
    "Usage",
    "append_only",
    "extend",
    "extend_turns",
    "interjection",
    "transcript_channel",
]
