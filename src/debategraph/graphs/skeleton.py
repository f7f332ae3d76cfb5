"""What every pattern's factory starts from, and the one recursion limit.

A factory checks its settings (``nodes/<p>/setup.py``), then asks :func:`skeleton` for a
graph with the package's context schema, its own input and output schemas, the model
bound once, the time limit checked, the round cap recorded, and the two nodes every
pattern shares at its ends: :data:`~debategraph.nodes.messages.INPUT_NODE`, which a run
given ``messages`` passes first (read into the pattern's field), and
:data:`~debategraph.nodes.messages.RESPOND_NODE` before ``END`` (the run's content as
``messages``); then it adds its nodes between them, naming its first with
:meth:`PatternGraph.start_at`. Compiled, the graph carries the
recursion limit its round cap needs (:func:`recursion_limit`), so no caller passes one.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar, cast

from langgraph.constants import TAG_HIDDEN
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from debategraph import registry
from debategraph.compat import StateLike, allow_msgpack_types
from debategraph.models.context import Context
from debategraph.models.tracing import pattern_tag
from debategraph.nodes.agent import bind
from debategraph.nodes.dual import loop_node
from debategraph.nodes.handback import hand_back_of
from debategraph.nodes.messages import (
    INPUT_NODE,
    RESPOND_NODE,
    MessagesIn,
    Outcome,
    has_messages,
    make_respond,
    make_take_input,
)
from debategraph.nodes.rounds import check_time_limit
from debategraph.state.base import Schemas

if TYPE_CHECKING:  # the model stack loads when a graph first calls a model, not here
    from langchain_core.language_models import BaseChatModel

    from debategraph.models import ModelBinding, ModelSpec
#: What a factory's ``model`` may be: a LangChain chat model, a binding, a spec, or
#: ``None`` (each run's :class:`~debategraph.models.context.Context` names the model).
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
        pattern: The pattern's name (its registry name).
        pattern_schemas: The pattern's schemas (its state module's ``SCHEMAS``).
        outcome: The pattern's outcome (:data:`~debategraph.nodes.messages.Outcome`),
            which the compiled graph's respond node states under the graph's name.
    """

    round_cap: int = 1
    pattern: str = ""
    pattern_schemas: Schemas[Any, Any] | None = None
    outcome: Callable[[Mapping[str, Any]], Outcome] | None = None

    def start_at(self, node: str) -> None:
        """Start the pattern at ``node``: a run given ``messages`` reads them first.

        ``START`` leads to ``node``, or, when the run's input holds ``messages``, to
        :data:`~debategraph.nodes.messages.INPUT_NODE` and then ``node``: a run given
        its own fields takes no step (and no checkpoint) more than before.

        Args:
            node: The pattern's first node.
        """

        def first_step(state: MessagesIn) -> str:
            return INPUT_NODE if has_messages(state) else node

        self.add_edge(INPUT_NODE, node)
        self.add_conditional_edges(START, loop_node(first_step), [INPUT_NODE, node])

    def compile(
        self, *args: Any, hand_back: str | None = None, **kwargs: Any
    ) -> CompiledStateGraph[Any, Context, InputT, OutputT]:
        """Compile as ``StateGraph.compile`` does, carrying the recursion limit the graph needs.

        The compiled graph's own config holds :func:`recursion_limit`, so ``invoke`` and
        ``stream`` run to the pattern's own caps with no ``recursion_limit`` in the
        caller's config, as a subgraph of a parent too (LangGraph's default limit gives
        way to it; a limit the caller sets still wins). Its name is the one given, else
        the pattern's; the run's outcome message is named after it. Its
        :data:`~debategraph.nodes.messages.RESPOND_NODE` is hidden from streams: the
        messages it writes were streamed as the agents spoke. Its runs carry the tag
        :func:`~debategraph.models.tracing.pattern_tag`, which names a run's span in
        traces. The compiled graph shows callers described schemas
        (:class:`~debategraph.graphs.schemas.PatternCompiled`). Every record a thread of
        a known pattern keeps (:func:`debategraph.registry.record_types`) is then one
        LangGraph's serializers revive on any checkpointer, a user's ``InMemorySaver()``,
        ``SqliteSaver`` or ``PostgresSaver`` too, without a warning,
        ``LANGGRAPH_STRICT_MSGPACK=true`` included
        (:func:`debategraph.compat.allow_msgpack_types`).

        Args:
            *args: As for ``StateGraph.compile``.
            hand_back: A ``langgraph-swarm`` agent to hand the conversation back to at
                the end of each run inside a parent graph
                (:mod:`debategraph.nodes.handback`); ``None``: the graph keeps it, as
                any swarm agent that hands off to no one.
            **kwargs: As for ``StateGraph.compile``.

        Returns:
            The compiled graph.

        Raises:
            ValueError: If ``hand_back`` is no agent's name, or ``langgraph-swarm`` is
                not installed.
        """
        from debategraph.graphs.schemas import PatternCompiled

        # The records threads keep revive on any saver, without a warning, strict or not.
        allow_msgpack_types(registry.record_types())
        back = hand_back_of(hand_back)
        kwargs["name"] = kwargs.get("name") or self.pattern or None
        compiled = PatternCompiled.of(super().compile(*args, **kwargs))
        # The respond node re-states the transcript as messages: hidden, so that
        # stream_mode="messages" does not send every turn again after its tokens.
        # It names the outcome after the graph, and hands back where it is told to.
        respond = compiled.nodes[RESPOND_NODE]
        said = make_respond(self.outcome, self.pattern or "graph", compiled.name, back)
        compiled.nodes[RESPOND_NODE] = respond.copy(
            {"bound": loop_node(said), "tags": [*(respond.tags or ()), TAG_HIDDEN]}
        )
        # The pattern's tag names the run's span in traces (debategraph.models.tracing).
        tags = [pattern_tag(self.pattern)] if self.pattern else []
        return compiled.with_config(recursion_limit=recursion_limit(self), tags=tags)


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
    outcome: Callable[[Mapping[str, Any]], Outcome] | None = None,
    pattern: str = "",
) -> tuple[PatternGraph[InputT, OutputT], ModelBinding | None]:
    """A pattern graph with its two end nodes, and the model its agents call.

    The graph has :data:`~debategraph.nodes.messages.INPUT_NODE` (which a run given
    ``messages`` passes first) and ``respond -> END``: the factory names its first node
    with :meth:`PatternGraph.start_at` (not an edge from ``START``) and ends its nodes at
    :data:`~debategraph.nodes.messages.RESPOND_NODE` (not ``END``).

    Args:
        model: The factory's ``model`` argument (``None``: each run's context names it).
        schemas: The pattern's schemas (its state module's ``SCHEMAS``).
        state_schema: The factory's ``state_schema`` argument: an extension of the
            pattern's state, or ``None`` for the pattern's own.
        setup: The pattern's checked settings: their round cap is recorded for
            :func:`recursion_limit`, their time limit checked.
        outcome: The pattern's outcome: the message that ends its ``messages``
            (:data:`~debategraph.nodes.messages.Outcome`; ``None``: the transcript's last
            agent turn is the outcome, as a chat's last word).
        pattern: The pattern's name (its registry name).

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
    graph.pattern = pattern
    graph.pattern_schemas = schemas
    graph.add_node(INPUT_NODE, loop_node(make_take_input(schemas, pattern or "graph")))
    graph.outcome = outcome
    graph.add_node(RESPOND_NODE, loop_node(make_respond(outcome, pattern or "graph")))
    graph.add_edge(RESPOND_NODE, END)
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
    steps for the opening and the ending (the shared ``take_input`` and ``respond`` run
    once an invocation): a deliberate backstop instead of LangGraph's
    effectively unbounded default. The loop itself ends on its own round cap. A compiled
    pattern graph carries this limit in its config (:meth:`PatternGraph.compile`): no
    caller needs to pass it.

    Example:
        >>> from debategraph import build_debate, recursion_limit
        >>> graph = build_debate(max_rounds=2).compile(name="debate")
        >>> graph.config["recursion_limit"] == recursion_limit(graph)
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
    ends = len({INPUT_NODE, RESPOND_NODE} & set(builder.nodes))  # once per invocation
    return (len(builder.nodes) - ends) * builder.round_cap + SLACK_STEPS + ends


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
