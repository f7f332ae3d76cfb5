"""A run checked before anything is written or called: its graph built once, its model fitted.

:func:`new_run` makes every check a new thread's run gets from whichever face starts it
(the CLI's pattern commands; later MCP and A2A): its concurrency, tools on the embedded
model, its settings (by building its graph, :func:`build_graph`: the graph the run then
compiles), the models each endpoint serves. :func:`resumed_run` is the same for a thread
that exists. A run is built without a model and reads it from its context (as LangGraph
Studio and ``serve`` run a pattern's graph), so nothing here starts the embedded model:
it starts on the run's first call, once the thread is recorded. What a run stores of its
model (:func:`spec_record`) and the model as it calls it (:func:`fitted_spec`) are made
here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from debategraph import registry
from debategraph.checkpoints.threads import RunInfo
from debategraph.errors import UsageError
from debategraph.models.spec import ModelSpec
from debategraph.runs.agents import own_agents, own_specs, refuse_tools_on_embedded
from debategraph.runs.endpoints import check_served

if TYPE_CHECKING:
    from langgraph.graph import StateGraph


def check_concurrency(value: int | None) -> None:
    """Refuse a ``max_concurrency`` below 1.

    Args:
        value: The value (``None``: the pattern's default).

    Raises:
        UsageError: If it is below 1 (named as the CLI's ``--max-concurrency``).
    """
    if value is not None and value < 1:
        raise UsageError(f"--max-concurrency {value} must be at least 1")


def build_graph(
    pattern: str, settings: Mapping[str, Any], *, reading: bool = False
) -> StateGraph[Any, Any, Any, Any]:
    """A thread's graph, built (not compiled): the pattern's factory on its settings.

    The graph is built without a model: each run's context names it (as LangGraph
    Studio and ``serve`` run a pattern's graph).

    Building checks the settings (each factory's one-line ``ValueError``), so a new
    run's settings are checked by building its graph before anything is written (and
    that graph is the one the run compiles: :class:`Run`'s ``graph``).

    Args:
        pattern: The pattern's name.
        settings: Its factory's keyword arguments.
        reading: Built only to read a stored thread: its agents' models, keys, tools
            and own agents are neither checked nor loaded
            (:func:`~debategraph.nodes.agent.reading`), so reading needs no key.

    Returns:
        The graph.

    Raises:
        ValueError: If the factory refuses the settings.
    """
    from debategraph.nodes.agent import reading as only_reading

    factory = registry.entry(pattern).build()
    if reading:
        with only_reading():
            graph: StateGraph[Any, Any, Any, Any] = factory(None, **settings)
            return graph
    graph = factory(None, **settings)
    return graph


def served_settings(pattern: str) -> dict[str, Any]:
    """A pattern's settings for a run that chooses few: as Studio and ``serve`` run it.

    The factory's defaults, with its registry line's Studio settings over them (a group
    chat's ``DEFAULT_CHAT``, a debate's moderator and judge), in full: what a door that
    lets a caller choose only a few settings (an MCP tool) starts from, and what a
    thread stores.

    Args:
        pattern: The pattern's name.

    Returns:
        The factory's keyword arguments (a fresh dict).
    """
    import inspect

    entry = registry.entry(pattern)
    parameters = inspect.signature(entry.build()).parameters.values()
    defaults = {
        p.name: p.default
        for p in parameters
        if p.default is not p.empty and p.name not in ("model", "state_schema")
    }
    return {**defaults, **entry.studio}


def spec_record(spec: ModelSpec) -> dict[str, Any]:
    """A model spec as stored with a thread (without its API key).

    Args:
        spec: The spec.

    Returns:
        Its fields.
    """
    record = asdict(spec)
    record.pop("api_key", None)
    return record


def fitted_spec(spec: ModelSpec, settings: Mapping[str, Any], max_concurrency: int) -> ModelSpec:
    """The model as a run calls it: the embedded model's slots fitted to the run.

    The embedded model serves as many requests at once as the run makes of it: the
    agents with models (or agents) of their own call elsewhere.

    Args:
        spec: The run's model.
        settings: The run's settings.
        max_concurrency: The most calls the run makes at once.

    Returns:
        The spec, its slots set where it is the embedded model.
    """
    if not spec.is_local:
        return spec
    slots = max(1, max_concurrency - len(own_agents(settings)))
    return replace(spec, slots=slots).validated()


@dataclass(frozen=True)
class Launch:
    """A new run as a face asks for it: what a pattern's CLI command makes of its options.

    Attributes:
        settings: The graph factory's keyword arguments (stored with the thread).
        input: The graph's input.
        notes: Lines to show the user before the run (e.g. what a parser noticed).
    """

    settings: dict[str, Any]
    input: dict[str, Any]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Checked:
    """A run whose settings and model passed every check: what :class:`~.thread.Run` takes.

    Attributes:
        info: Its pattern, settings and model (as stored with the thread).
        spec: The model as the run calls it (the embedded model's slots fitted).
        max_concurrency: The most tasks a step runs at once.
        graph: Its graph, built (not compiled), without a model: the run's context
            names it.
    """

    info: RunInfo
    spec: ModelSpec
    max_concurrency: int
    graph: StateGraph[Any, Any, Any, Any]


def built(
    pattern: str, settings: Mapping[str, Any], names: Mapping[str, str] | None = None
) -> StateGraph[Any, Any, Any, Any]:
    """A run's graph built, its settings checked: a factory's refusal as a usage error.

    Args:
        pattern: The pattern's name.
        settings: Its factory's keyword arguments.
        names: How the face names a setting in its messages (``{"max_rounds":
            "--rounds"}``).

    Returns:
        The graph (not compiled).

    Raises:
        UsageError: With the factory's one-line message.
    """
    try:
        return build_graph(pattern, settings)
    except ValueError as exc:
        message = str(exc)
        for setting, name in (names or {}).items():
            if message.startswith(f"{setting} "):
                message = name + message.removeprefix(setting)
        raise UsageError(message) from exc


def new_run(
    pattern: str,
    settings: Mapping[str, Any],
    spec: ModelSpec,
    max_concurrency: int | None = None,
    *,
    names: Mapping[str, str] | None = None,
) -> Checked:
    """Check a new run before anything is written or called, building its graph once.

    Args:
        pattern: The pattern's name.
        settings: Its factory's keyword arguments.
        spec: The run's model.
        max_concurrency: The most tasks a step runs at once (``None``: as many as one
            of its rounds runs agents).
        names: How the face names a setting in its messages.

    Returns:
        The checked run.

    Raises:
        UsageError: One line: a concurrency below 1, tools on the embedded model, a
            setting the factory refuses, a model its endpoint does not serve.
    """
    check_concurrency(max_concurrency)
    refuse_tools_on_embedded(settings, spec)
    graph = built(pattern, settings, names)
    check_served(own_specs(settings), spec)
    info = RunInfo(pattern, dict(settings), spec_record(spec))
    return _checked(info, spec, max_concurrency, graph)


def resumed_run(info: RunInfo, spec: ModelSpec, max_concurrency: int | None = None) -> Checked:
    """A thread's run to continue (its settings were checked when it started).

    Args:
        info: The thread's pattern, settings and model.
        spec: The model to continue with (the stored one, or the one the face names).
        max_concurrency: The most tasks a step runs at once (``None``: as many as one
            of its rounds runs agents).

    Returns:
        The run, its graph built.

    Raises:
        UsageError: If ``max_concurrency`` is below 1.
    """
    check_concurrency(max_concurrency)
    return _checked(info, spec, max_concurrency, built(info.pattern, info.settings))


def _checked(
    info: RunInfo,
    spec: ModelSpec,
    max_concurrency: int | None,
    graph: StateGraph[Any, Any, Any, Any],
) -> Checked:
    """The checked run: its concurrency (the pattern's default) and model fitted to it."""
    most = max_concurrency or registry.described(info.pattern).agents_per_round(info.settings)
    return Checked(info, fitted_spec(spec, info.settings, most), most, graph)
