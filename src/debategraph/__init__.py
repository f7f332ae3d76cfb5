"""debategraph: LangGraph graphs for multi-agent debate and discussion.

The public API is what this module exports: the five graph factories (each returns an
uncompiled ``StateGraph``), the roster records they take, the run context and model
spec, the transcript and usage records, the errors, :func:`as_tool` (a graph as a
LangChain tool), :func:`recursion_limit` (which compiled graphs already carry),
:func:`open_checkpointer` (a SQLite file or Postgres URL as a checkpointer, as the CLI
opens it), ``termination`` (the group chat's termination conditions: ``regex``,
``max_turns``..., combined with ``|`` and ``&``) and :func:`render_report_markdown` (a
discussion's report as Markdown).

Everything else is internal, except the extension API for new patterns:
:mod:`debategraph.registry` (the list of patterns), :mod:`debategraph.graphs.skeleton`,
the shared nodes in :mod:`debategraph.nodes`, the strategies in
:mod:`debategraph.strategies` and the shared state in :mod:`debategraph.state`
(see ``docs/architecture.md``).

Each public name is written once, as an import of the ``TYPE_CHECKING`` block below: type
checkers read those imports (``X as X`` re-exports it), and at run time the block does
not run; this module reads its own source's block with :mod:`ast` instead
(:func:`_homes`), which gives ``__all__`` and where :func:`__getattr__` imports each name
from on first use. So ``import debategraph`` (and the CLI's ``--help``) does not load
LangGraph or the model stack, and there is no second list to keep in step. A pattern's
factory is also exported from its registry line (:func:`debategraph.registry.factories`),
so a line added to ``registry.BUILTIN`` exports its factory; the block names the built-in
ones for type checkers (a test checks it names every one).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debategraph.registry import factories

if TYPE_CHECKING:  # the public API, once (at run time: read by _homes, imported on first use)
    from debategraph.checkpoints import open_checkpointer as open_checkpointer
    from debategraph.errors import DebategraphError as DebategraphError
    from debategraph.errors import ModelUnavailableError as ModelUnavailableError
    from debategraph.errors import ResumeRefused as ResumeRefused
    from debategraph.errors import UsageError as UsageError
    from debategraph.graphs.debate import build_debate as build_debate
    from debategraph.graphs.discussion import build_discussion as build_discussion
    from debategraph.graphs.group_chat import build_group_chat as build_group_chat
    from debategraph.graphs.meeting import build_meeting as build_meeting
    from debategraph.graphs.skeleton import recursion_limit as recursion_limit
    from debategraph.graphs.solver_debate import build_solver_debate as build_solver_debate
    from debategraph.graphs.tool import as_tool as as_tool
    from debategraph.models.context import Context as Context
    from debategraph.models.spec import ModelSpec as ModelSpec
    from debategraph.models.tracing import enable_tracing as enable_tracing
    from debategraph.nodes.discussion.markdown import (
        render_report_markdown as render_report_markdown,
    )
    from debategraph.state.debate import Debater as Debater
    from debategraph.state.discussion import Persona as Persona
    from debategraph.state.meeting import Stage as Stage
    from debategraph.state.records import AgentSpec as AgentSpec
    from debategraph.state.records import Participant as Participant
    from debategraph.state.records import Turn as Turn
    from debategraph.state.records import Usage as Usage
    from debategraph.strategies import termination as termination


def _homes() -> dict[str, str]:
    """Each public name and the module it lives in: the ``TYPE_CHECKING`` block's imports.

    Returns:
        ``{"build_debate": "debategraph.graphs.debate", ...}``.
    """
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
        if node.test.id == "TYPE_CHECKING"
    )
    return {
        alias.asname or alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


#: Where each public name lives (the registry's factories are looked up as they are now).
_HOMES = _homes()

#: The public API.
__all__ = sorted({*_HOMES, *factories()})


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name) or factories().get(name)
    if home is not None:
        return getattr(importlib.import_module(home), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES) | set(factories()))
