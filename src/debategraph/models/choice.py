"""Which model an agent calls: its own, the graph's or the run's, with which key.

The rules of endpoints and keys, in one place: an agent's own model comes first, then
the model its graph was built with, then the run's
:class:`~debategraph.models.context.Context` (its ``agent_models`` entry for the agent, else
its model). A model named without an endpoint is at the run's endpoint, with the run's
key; one at another endpoint gets only the key its ``api_key_env`` names
(:meth:`ModelSpec.key <debategraph.models.spec.ModelSpec.key>`: a key goes only to the
endpoint it was given for). Nodes never read these rules: they ask an
:class:`~debategraph.nodes.agent.Agent`, which asks :func:`agent_binding`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from debategraph.errors import UsageError
from debategraph.models.spec import (
    ModelSpec,
    openai_home,
    parse_model,
    provider_of,
    same_endpoint,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from debategraph.models.binding import ModelBinding

#: An agent's own model: a spec, or a chat model of the caller's.
OwnModel = ModelSpec | Any


def own_model(value: Any, who: str) -> OwnModel | None:
    """An agent record's ``model``, parsed and its key checked (when the graph is built).

    Args:
        value: What the record holds (``None``, a spec string or mapping, a chat model).
        who: The agent, for errors (``agent 'alice'``).

    Returns:
        The spec or chat model, or ``None``.

    Raises:
        ValueError: One line naming the agent: a bad spec, or a key that is not set.
    """
    own = None if value is None else parse_model(value, who)
    if isinstance(own, ModelSpec):
        try:
            own.key()
        except UsageError as exc:
            raise ValueError(f"{who}: {exc}") from None
    return own


def calls_run_model(own: OwnModel | None) -> bool:
    """Whether an agent's calls go to the graph's model (else the run's), not its own.

    So they do for an agent with no model of its own, or with a model name but no
    endpoint (a name at the run's endpoint); the embedded model (``local``), a model at
    an endpoint of its own, a provider's model (``anthropic:...``, which its package
    reaches) and a chat model object are the agent's own.

    Args:
        own: The agent's own model (``None``: none).

    Returns:
        Whether its calls go to the graph's or the run's model.
    """
    if own is None:
        return True
    return (
        isinstance(own, ModelSpec)
        and not own.is_local
        and own.base_url is None
        and provider_of(own.model) is None
    )


def goes_to_embedded(own: ModelSpec | None, run: ModelSpec) -> bool:
    """Whether an agent's calls go to the embedded server, from its spec and the run's.

    The embedded SmolLM2's chat template has no tool calls, so such an agent cannot take
    tools: the rule of :func:`without_tool_calls`, read from specs alone before a graph
    is built (the CLI's checks of a run's settings).

    Args:
        own: The agent's own model (``None``: it calls the run's model).
        run: The run's model.

    Returns:
        ``True`` for ``local`` (or ``local:PATH``), and for a name without an endpoint
        (or no model of its own) on a run whose model is ``local``.
    """
    return run.is_local if own is None or calls_run_model(own) else own.is_local


def without_tool_calls(own: OwnModel | None, graph_model: ModelBinding | None) -> str | None:
    """The model an agent's calls go to, where that model cannot call tools.

    The embedded SmolLM2's chat template has no tool calls: an agent whose own model is
    ``local``, or whose calls go to a graph built with the embedded model
    (:func:`calls_run_model`), cannot take tools (:func:`goes_to_embedded` is the same
    rule read from specs).

    Args:
        own: The agent's own model.
        graph_model: The graph's model (``None``: the run's context).

    Returns:
        That model's label, or ``None`` when its calls may use tools.
    """
    if isinstance(own, ModelSpec) and own.is_local:
        return own.label
    if calls_run_model(own) and graph_model is not None and not graph_model.tool_calls:
        return graph_model.name or graph_model.endpoint
    return None


def agent_binding(
    name: str, own: OwnModel | None, graph_model: ModelBinding | None, context: Any
) -> ModelBinding:
    """The model an agent calls in a run, as the module's docstring says.

    A context that is not a :class:`~debategraph.models.context.Context` (a parent graph's own
    ``context_schema``, when the graph runs as its subgraph) names nothing: the graph's
    model decides, and a graph built without one refuses to guess.

    Args:
        name: The agent's name (its ``agent_models`` entry is matched case-insensitively).
        own: Its own model.
        graph_model: The graph's model (``None``: the run's context).
        context: The run's context (``runtime.context``), or ``None``.

    Returns:
        The bound model.

    Raises:
        ValueError: If the context is of another schema and nothing else names a model.
    """
    from debategraph.models.binding import bind_model
    from debategraph.models.context import Context

    if not isinstance(context, Context):
        if context is not None and own is None and graph_model is None:
            raise ValueError(
                f"agent {name}: the run's context is a {type(context).__name__}, "
                "not debategraph.Context, so it names no model: build the graph with "
                "a model (build_...(model, ...))"
            )
        context = None
    if own is None and graph_model is None and context is not None:
        named = {k.lower(): v for k, v in (context.agent_models or {}).items()}
        if name.lower() in named:
            own = parse_model(named[name.lower()], f"agent {name!r}")
    if own is not None:
        if graph_model is None and context is not None and calls_run_model(own):
            # a name at the run's endpoint: where the context's model is served (the
            # embedded server's address for ``local``), as if the graph were built on it
            graph_model = run_binding(context)
        return bind_model(_at_run_endpoint(own, graph_model, context))
    if graph_model is not None:
        return graph_model
    if context is None:
        return bind_model(None)
    return run_binding(context)


#: The last run context bound, and its binding: a run's nodes share one context object.
_LAST_RUN: list[tuple[Any, ModelBinding]] = []


def run_binding(context: Any) -> ModelBinding:
    """The model a run's context names (its ``agent_models`` aside), bound.

    A run passes one context object to all its nodes, so the last one bound is kept:
    an agent's call costs an identity check, not a spec's validation.

    Args:
        context: The run's :class:`~debategraph.models.context.Context`.

    Returns:
        The bound model.
    """
    from debategraph.models.binding import bind_model

    if _LAST_RUN and _LAST_RUN[0][0] is context:
        return _LAST_RUN[0][1]
    binding = bind_model(dataclasses.replace(context, agent_models=None))
    _LAST_RUN[:] = [(context, binding)]
    return binding


def _at_run_endpoint(
    own: ModelSpec | BaseChatModel, graph_model: ModelBinding | None, context: Any
) -> ModelSpec | BaseChatModel:
    """An own spec's endpoint and key, as :func:`agent_binding` says.

    A spec at the run's endpoint that names no key of its own gets the run's key (the
    one given for that endpoint); one elsewhere keeps what it names.
    """
    if not isinstance(own, ModelSpec) or own.is_local:
        return own
    run_key: str | None = None
    run_key_env: str | None = None
    if graph_model is not None:
        run_url = graph_model.endpoint if graph_model.endpoint.startswith("http") else None
        secret = getattr(graph_model.chat, "openai_api_key", None)
        run_key = secret.get_secret_value() if secret is not None else None
    elif context is not None:
        run_url, run_key, run_key_env = context.base_url, context.api_key, context.api_key_env
    else:
        run_url = None
    run_url = run_url or openai_home()
    base_url = own.base_url or run_url
    own = dataclasses.replace(own, base_url=base_url)
    keyless = own.api_key is None and own.api_key_env is None
    inherits = run_key is not None or run_key_env is not None
    if keyless and inherits and same_endpoint(base_url, run_url):
        own = dataclasses.replace(own, api_key=run_key, api_key_env=run_key_env)
    return own
