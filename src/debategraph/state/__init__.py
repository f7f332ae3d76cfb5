"""Typed state: the records every pattern shares, and one module per pattern.

The shared records (:mod:`debategraph.state.records`: ``Turn``, ``Usage``,
``Participant``, ``RoundRecord``) and the base state (:mod:`debategraph.state.base`) are
the extension API for new patterns; each pattern's own state and records live in
``debategraph.state.<pattern>``. Checkpoints name each record by its module, so a record
never moves from the module it was first saved from.

The names below are imported on first use: the records load without LangGraph, the base
state (which needs LangGraph's channels) only when asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debategraph.state.base import RunOutput, RunState, charge_update, turn_update
    from debategraph.state.records import (
        USER,
        Participant,
        RoundRecord,
        Turn,
        Usage,
        interjection,
    )

#: Where each name lives.
_HOMES: dict[str, str] = {
    "RunOutput": "base",
    "RunState": "base",
    "charge_update": "base",
    "turn_update": "base",
    "USER": "records",
    "Participant": "records",
    "RoundRecord": "records",
    "Turn": "records",
    "Usage": "records",
    "interjection": "records",
}

__all__ = [
    "USER",
    "Participant",
    "RoundRecord",
    "RunOutput",
    "RunState",
    "Turn",
    "Usage",
    "charge_update",
    "interjection",
    "turn_update",
]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
