"""One module per pattern: ``build_<pattern>(...)`` returns an uncompiled ``StateGraph``.

Each module also declares its pattern (``PATTERN``) for the CLI; see
:mod:`debategraph.graphs.registry`. The factories are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debategraph.graphs.debate import build_debate
    from debategraph.graphs.discussion import build_discussion
    from debategraph.graphs.meeting import build_meeting
    from debategraph.graphs.solver_debate import build_solver_debate

__all__ = ["build_debate", "build_discussion", "build_meeting", "build_solver_debate"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        module = importlib.import_module(f"{__name__}.{name.removeprefix('build_')}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
