"""Every registered pattern compiled for ``langgraph.json``, LangGraph Studio and Aegra.

One module attribute per registry line, named as the pattern, built with the line's
Studio settings. Compiled without a checkpointer (``langgraph dev``, LangGraph's server
and Aegra provide their own persistence); the model comes from each run's
:class:`~debategraph.models.context.Context`. Importing this module compiles the graphs, so
only Studio and the servers import it.

Each graph is a :class:`~debategraph.graphs.served.ServedGraph`, which makes Aegra run it
as LangGraph's own servers do and lets a server read each run's context through the
operator's model list.
"""

from __future__ import annotations

from debategraph.graphs.served import ServedGraph, served
from debategraph.registry import BUILTIN

GRAPHS: dict[str, ServedGraph] = {
    entry.name: served(entry.build()(**entry.studio).compile(name=entry.name)) for entry in BUILTIN
}
globals().update(GRAPHS)
