"""debategraph: LangGraph graphs for multi-agent debate and discussion."""

from debategraph.context import Context
from debategraph.errors import DebategraphError, ModelUnavailableError, UsageError
from debategraph.graphs.solver_debate import build_solver_debate
from debategraph.models import ModelBinding, ModelSpec, get_chat_model, structured_call
from debategraph.state import RoundRecord, Turn, Usage
from debategraph.strategies import Topology, extract_answer, majority_vote

__all__ = [
    "Context",
    "DebategraphError",
    "ModelBinding",
    "ModelSpec",
    "ModelUnavailableError",
    "RoundRecord",
    "Topology",
    "Turn",
    "Usage",
    "UsageError",
    "build_solver_debate",
    "extract_answer",
    "get_chat_model",
    "majority_vote",
    "structured_call",
]
