"""What every pattern's factory starts from, and the one recursion limit.

A factory checks its settings (``nodes/<p>/setup.py``), then asks :func:`skeleton` for an
empty graph with the package's context schema, its own input and output schemas, the
model bound once, the time limit checked, and the round cap recorded; then it adds its
nodes. :func:`recursion_limit` reads that cap back from the graph, compiled or not, so a
caller never needs to know how a pattern counts its steps.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar, cast

from langgraph.graph import StateGraph

from debategraph import registry
from debategraph.compat import StateLike
from debategraph.context import Context
from debategraph.nodes.agent import bind
from debategraph.nodes.rounds import check_time_limit
from debategraph.state.base import Schemas

if TYPE_CHECKING:  # the model stack loads when a graph first calls a model, not here
    from langchain_core.language_models import BaseChatModel

    from debategraph.models import ModelBinding, ModelSpec
#: What a factory's ``model`` may be: a LangChain chat model, a binding, a spec, or
#: ``None`` (each run's :class:`~debategraph.context.Context` names the model).
ModelLike: TypeAlias = "BaseChatModel | ModelBinding | ModelSpec | None"

F = TypeVar("F", bound=Callable[..., Any])
InputT = TypeVar("InputT", bound=StateLike)
OutputT = TypeVar("OutputT", bound=StateLike)

#: Supersteps allowed besides the rounds: a graph's opening and closing steps, and slack.
SLACK_STEPS = 5


class PatternGraph(StateGraph[Any, Context, InputT, OutputT]):
    """An uncompiled pattern graph: a ``StateGraph`` that knows its round cap.

    Attributes:
        round_cap: The most rounds (turns, iterations, stage rounds) one invocation runs.
    """

    round_cap: int = 1


class Setup(Protocol):
    """What the skeleton reads of a pattern's checked settings (``nodes/<p>/setup.py``)."""

    @property
    def round_cap(self) -> int:
        """The most rounds (turns, iterations, stage rounds) one invocation runs."""

    @property
    def time_limit_s(self) -> float | None:
        """Seconds a run may take (``None``: no limit)."""


def skeleton(
    model: ModelLike,
    schemas: Schemas[InputT, OutputT],
    state_schema: type[Any] | None,
    setup: Setup,
) -> tuple[PatternGraph[InputT, OutputT], ModelBinding | None]:
    """An empty pattern graph and the model its agents call.

    Args:
        model: The factory's ``model`` argument (``None``: each run's context names it).
        schemas: The pattern's schemas (its state module's ``SCHEMAS``).
        state_schema: The factory's ``state_schema`` argument: an extension of the
            pattern's state, or ``None`` for the pattern's own.
        setup: The pattern's checked settings: their round cap is recorded for
            :func:`recursion_limit`, their time limit checked.

    Returns:
        ``(graph, binding)``: add the pattern's nodes to the graph.

    Raises:
        ValueError: If the time limit is not a positive number of seconds.
    """
    check_time_limit(setup.time_limit_s)
    graph: PatternGraph[InputT, OutputT] = PatternGraph(
        state_schema or schemas.state,
        context_schema=Context,
        input_schema=schemas.input,
        output_schema=schemas.output,
    )
    graph.round_cap = setup.round_cap
    return graph, bind(model)


def settings_of(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A factory's settings: its arguments but the model and the state schema.

    A factory calls its pattern's setup with ``**settings_of(locals())`` as its first
    statement, so the setup (which checks them) takes exactly the factory's settings and
    none is forwarded by hand.

    Args:
        arguments: The factory's ``locals()`` before anything else is bound.

    Returns:
        The settings, by name.
    """
    return {k: v for k, v in arguments.items() if k not in ("model", "state_schema")}


def recursion_limit(graph: Any) -> int:
    """The recursion limit a graph built by one of the package's factories needs.

    A round takes at most one step per node of the graph (parallel nodes share a step),
    so the limit is the node count for as many rounds as its settings allow, plus a few
    steps for the opening and the ending: a deliberate
    backstop instead of LangGraph's effectively unbounded default. The loop itself ends
    on its own round cap.

    Example:
        >>> from debategraph import build_debate, recursion_limit
        >>> graph = build_debate(max_rounds=2).compile(name="debate")
        >>> recursion_limit(graph) < recursion_limit(build_debate(max_rounds=3))
        True

    Args:
        graph: The factory's graph, compiled or not.

    Returns:
        Supersteps to allow (``config["recursion_limit"]``).

    Raises:
        ValueError: If ``graph`` was not built by a debategraph factory.
    """
    builder = getattr(graph, "builder", graph)
    if not isinstance(builder, PatternGraph):
        raise ValueError(
            f"recursion_limit takes a graph built by a debategraph factory, got "
            f"{type(graph).__name__}"
        )
    return len(builder.nodes) * builder.round_cap + SLACK_STEPS


def renamed_settings(pattern: str) -> Callable[[F], F]:
    """Let a factory take the old spellings of its settings, with a ``DeprecationWarning``.

    The old and new names are the pattern's registry line's
    :attr:`~debategraph.registry.Entry.renamed` (which also renames a saved thread's
    settings when it is read back).

    Args:
        pattern: The pattern's registry name.

    Returns:
        A decorator for the factory.
    """

    def decorate(factory: F) -> F:
        @functools.wraps(factory)
        def build(*args: Any, **settings: Any) -> Any:
            for old, new in registry.renamed(pattern).items():
                if old not in settings:
                    continue
                if new in settings:
                    raise ValueError(f"{old} is the old name of {new}: give only {new}")
                warnings.warn(
                    f"{factory.__name__}({old}=...) is deprecated: use {new}=...",
                    DeprecationWarning,
                    stacklevel=2,
                )
                settings[new] = settings.pop(old)
            return factory(*args, **settings)

        return cast(F, build)

    return decorate
