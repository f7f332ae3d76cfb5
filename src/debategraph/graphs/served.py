"""The compiled pattern graph a server runs: :class:`ServedGraph`.

Kept apart from :mod:`~debategraph.graphs.studio` (which compiles every pattern when it is
imported, and which a server loads from its file path, as a module of its own) so that
a server sets :attr:`ServedGraph.context_policy` on the one class every served graph is.

A :class:`ServedGraph` is the compiled graph, with two readings that make
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
- Where a server sets :attr:`ServedGraph.context_policy` (``debategraph serve`` does:
  the operator's model list, :mod:`debategraph.serve.models`), a run's context goes
  through it before the graph starts: model names become the operator's specs, and a
  context choosing an endpoint or a key is refused. LangGraph Studio sets none.
- Where a server sets :attr:`ServedGraph.config_policy` (``debategraph serve`` does: the
  signed-in user's token budget, :mod:`debategraph.serve.limits`), a run's config goes
  through it before the graph starts.
- It reads a history's ``before`` given as a checkpoint id. Aegra's
  ``/threads/{id}/history`` takes ``before`` as a checkpoint id and hands the string to
  ``aget_state_history``, which needs a config: every such request ended in a 500. The
  id is read as the config ``{"configurable": {"checkpoint_id": before}}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from langgraph.graph.state import CompiledStateGraph

from debategraph.graphs.schemas import PatternCompiled

#: The run options a server may leave in the config instead of passing them on.
_BREAKPOINTS = ("interrupt_before", "interrupt_after")


class ServedGraph(PatternCompiled):
    """A compiled pattern graph read as a server runs it (see the module's docstring).

    Its schemas are :class:`~debategraph.graphs.schemas.PatternCompiled`'s.

    Attributes:
        context_policy: What a server does to a run's context before the graph starts
            (``None``: nothing); it returns the context to run with, or raises.
        config_policy: What a server does to a run's config before the graph starts
            (``None``: nothing); it returns the config to run with.
    """

    context_policy: ClassVar[Callable[[Any], Any] | None] = None
    config_policy: ClassVar[Callable[[Any], Any] | None] = None

    @staticmethod
    def _input(value: Any) -> Any:
        return None if isinstance(value, dict) and not value else value

    def _run_kwargs(self, config: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        policy = ServedGraph.context_policy
        if policy is not None:
            kwargs["context"] = policy(kwargs.get("context"))
        if isinstance(config, dict):
            for key in _BREAKPOINTS:
                if kwargs.get(key) is None and config.get(key) is not None:
                    kwargs[key] = config[key]
        return kwargs

    @staticmethod
    def _config(config: Any) -> Any:
        policy = ServedGraph.config_policy
        return config if policy is None else policy(config)

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """:meth:`CompiledStateGraph.stream`, read as the module docstring says."""
        kwargs = self._run_kwargs(config, kwargs)
        return super().stream(self._input(input), self._config(config), **kwargs)

    def astream(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """:meth:`CompiledStateGraph.astream`, read as the module docstring says."""
        kwargs = self._run_kwargs(config, kwargs)
        return super().astream(self._input(input), self._config(config), **kwargs)

    def get_state_history(self, config: Any, *, before: Any = None, **kwargs: Any) -> Any:
        """:meth:`CompiledStateGraph.get_state_history`; ``before`` may be a checkpoint id."""
        return super().get_state_history(config, before=_before(before), **kwargs)

    def aget_state_history(self, config: Any, *, before: Any = None, **kwargs: Any) -> Any:
        """:meth:`CompiledStateGraph.aget_state_history`; ``before`` may be a checkpoint id."""
        return super().aget_state_history(config, before=_before(before), **kwargs)


def _before(value: Any) -> Any:
    """A history's ``before`` as the config LangGraph reads: a checkpoint id becomes one."""
    return {"configurable": {"checkpoint_id": value}} if isinstance(value, str) else value


def served(graph: CompiledStateGraph[Any, Any, Any, Any]) -> ServedGraph:
    """The same compiled graph as a :class:`ServedGraph` (what ``graph.copy()`` builds).

    Args:
        graph: A compiled graph.

    Returns:
        The served graph.
    """
    return ServedGraph(**{k: v for k, v in graph.__dict__.items() if k != "__orig_class__"})
