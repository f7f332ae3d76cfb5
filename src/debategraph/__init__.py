"""debategraph: LangGraph graphs for multi-agent debate and discussion.

Names are imported on first use, so ``import debategraph`` (and the CLI's ``--help``)
does not load LangGraph or the model stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debategraph.context import Context
    from debategraph.errors import DebategraphError, ModelUnavailableError, UsageError
    from debategraph.graphs.debate import build_debate
    from debategraph.graphs.discussion import build_discussion
    from debategraph.graphs.solver_debate import build_solver_debate
    from debategraph.models import ModelBinding, ModelSpec, get_chat_model, structured_call
    from debategraph.state import RoundRecord, Turn, Usage
    from debategraph.strategies import Topology, extract_answer, majority_vote

_HOMES = {
    "Context": "debategraph.context",
    "DebategraphError": "debategraph.errors",
    "ModelUnavailableError": "debategraph.errors",
    "UsageError": "debategraph.errors",
    "build_debate": "debategraph.graphs.debate",
    "build_discussion": "debategraph.graphs.discussion",
    "build_solver_debate": "debategraph.graphs.solver_debate",
    "ModelBinding": "debategraph.models",
    "ModelSpec": "debategraph.models",
    "get_chat_model": "debategraph.models",
    "structured_call": "debategraph.models",
    "RoundRecord": "debategraph.state",
    "Turn": "debategraph.state",
    "Usage": "debategraph.state",
    "Topology": "debategraph.strategies",
    "extract_answer": "debategraph.strategies",
    "majority_vote": "debategraph.strategies",
}

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
    "build_debate",
    "build_discussion",
    "build_solver_debate",
    "extract_answer",
    "get_chat_model",
    "majority_vote",
    "structured_call",
]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
