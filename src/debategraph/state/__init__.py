"""Typed state schemas and the records they hold."""

from debategraph.state.records import RECORD_TYPES, Role, RoundRecord, Turn, Usage
from debategraph.state.reducers import append_only, extend
from debategraph.state.solver_debate import (
    SolverDebateInput,
    SolverDebateOutput,
    SolverDebateState,
    SolverView,
    TerminationReason,
)

__all__ = [
    "RECORD_TYPES",
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
]
