"""Every registered pattern compiled for ``langgraph.json``, LangGraph Studio and Aegra.

One module attribute per registry line, named as the pattern, built with the line's
Studio settings. Compiled without a checkpointer (``langgraph dev``, LangGraph's server
and Aegra provide their own persistence); the model comes from each run's
:class:`~debategraph.context.Context`. Importing this module compiles the graphs, so
only Studio and the servers import it.

Each graph is a :class:`ServedGraph`: the compiled graph, with two readings that make
Aegra (``aegra-api`` 0.6.0) run it as LangGraph's own servers do:

- It takes a run's ``interrupt_before`` / ``interrupt_after`` from the run's config too.
  Aegra accepts them on a run but leaves them in the config it runs the graph with
  instead of passing them on, so a pause at a round boundary would be lost. Arguments
  (what LangGraph's servers pass) come first.
- It reads an empty input (``{}``) as no input: go on from the thread's last checkpoint.
  Aegra turns a run without input into ``{}``, which LangGraph refuses ("no input"),
  so a thread paused at a breakpoint, or left by a server that died, could not go on.
  An empty input starts nothing on any pattern (each needs its text), so no run loses
  a meaning.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph.state import CompiledStateGraph

from debategraph.registry import BUILTIN

#: The run options a server may leave in the config instead of passing them on.
_BREAKPOINTS = ("interrupt_before", "interrupt_after")


class ServedGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """A compiled pattern graph that reads breakpoints from the config, and ``{}`` as none."""

    @staticmethod
    def _input(value: Any) -> Any:
        return None if isinstance(value, dict) and not value else value

    def _breakpoints(self, config: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        if isinstance(config, dict):
            for key in _BREAKPOINTS:
                if kwargs.get(key) is None and config.get(key) is not None:
                    kwargs[key] = config[key]
        return kwargs

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """:meth:`CompiledStateGraph.stream`, read as the module docstring says."""
        return super().stream(self._input(input), config, **self._breakpoints(config, kwargs))

    def astream(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """:meth:`CompiledStateGraph.astream`, read as the module docstring says."""
        return super().astream(self._input(input), config, **self._breakpoints(config, kwargs))


def served(graph: CompiledStateGraph[Any, Any, Any, Any]) -> ServedGraph:
    """The same compiled graph as a :class:`ServedGraph` (what ``graph.copy()`` builds).

    Args:
        graph: A compiled graph.

    Returns:
        The served graph.
    """
    return ServedGraph(**{k: v for k, v in graph.__dict__.items() if k != "__orig_class__"})


GRAPHS: dict[str, ServedGraph] = {
    entry.name: served(entry.build()(**entry.studio).compile(name=entry.name)) for entry in BUILTIN
}
globals().update(GRAPHS)
