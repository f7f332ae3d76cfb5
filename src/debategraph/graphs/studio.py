"""Every registered pattern compiled for ``langgraph.json`` / LangGraph Studio.

One module attribute per registry line, named as the pattern, built with the line's
Studio settings. Compiled without a checkpointer (``langgraph dev`` and LangGraph's
server provide their own persistence); the model comes from each run's
:class:`~debategraph.context.Context`. Importing this module compiles the graphs, so
only Studio and the server import it.
"""

from __future__ import annotations

from typing import Any

from debategraph.registry import BUILTIN

GRAPHS: dict[str, Any] = {
    entry.name: entry.build()(**entry.studio).compile(name=entry.name) for entry in BUILTIN
}
globals().update(GRAPHS)
