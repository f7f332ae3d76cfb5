"""debategraph: LangGraph graphs for multi-agent debate and discussion.

The public API is what this module exports: the five graph factories (each returns an
uncompiled ``StateGraph``), the roster records they take, the run context and model
spec, the transcript and usage records, the errors, :func:`as_tool` (a graph as a
LangChain tool) and :func:`recursion_limit` (which compiled graphs already carry).

Everything else is internal, except the extension API for new patterns:
:mod:`debategraph.registry` (the list of patterns), :mod:`debategraph.graphs.skeleton`,
the shared nodes in :mod:`debategraph.nodes`, the strategies in
:mod:`debategraph.strategies` and the shared state in :mod:`debategraph.state`
(see ``docs/architecture.md``).

Names are imported on first use, so ``import debategraph`` (and the CLI's ``--help``)
does not load LangGraph or the model stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from debategraph.registry import factories

if TYPE_CHECKING:  # for type checkers (redundant aliases re-export); at run time: below
    from debategraph.context import Context as Context
    from debategraph.errors import (
        DebategraphError as DebategraphError,
    )
    from debategraph.errors import (
        ModelUnavailableError as ModelUnavailableError,
    )
    from debategraph.errors import (
        UsageError as UsageError,
    )
    from debategraph.graphs.debate import build_debate as build_debate
    from debategraph.graphs.discussion import build_discussion as build_discussion
    from debategraph.graphs.group_chat import build_group_chat as build_group_chat
    from debategraph.graphs.meeting import build_meeting as build_meeting
    from debategraph.graphs.skeleton import recursion_limit as recursion_limit
    from debategraph.graphs.solver_debate import build_solver_debate as build_solver_debate
    from debategraph.graphs.tool import as_tool as as_tool
    from debategraph.models.spec import ModelSpec as ModelSpec
    from debategraph.state.debate import Debater as Debater
    from debategraph.state.discussion import Persona as Persona
    from debategraph.state.meeting import Stage as Stage
    from debategraph.state.records import AgentSpec as AgentSpec
    from debategraph.state.records import Participant as Participant
    from debategraph.state.records import Turn as Turn
    from debategraph.state.records import Usage as Usage

#: Where each name lives besides the factories, which come from the registry's lines.
_HOMES: dict[str, str] = {
    "AgentSpec": "debategraph.state.records",
    "Context": "debategraph.context",
    "DebategraphError": "debategraph.errors",
    "Debater": "debategraph.state.debate",
    "ModelSpec": "debategraph.models.spec",
    "ModelUnavailableError": "debategraph.errors",
    "Participant": "debategraph.state.records",
    "Persona": "debategraph.state.discussion",
    "Stage": "debategraph.state.meeting",
    "Turn": "debategraph.state.records",
    "Usage": "debategraph.state.records",
    "UsageError": "debategraph.errors",
    "as_tool": "debategraph.graphs.tool",
    "recursion_limit": "debategraph.graphs.skeleton",
}

#: The public API: the registry's factories and the names above.
__all__ = sorted([*factories(), *_HOMES])


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name) or factories().get(name)
    if home is not None:
        return getattr(importlib.import_module(home), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES) | set(factories()))
