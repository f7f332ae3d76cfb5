"""Which model each agent of a run's settings calls: the checks made before a run starts.

An agent record (a mapping or an :class:`~debategraph.state.records.AgentSpec` with a
``name``) may sit at any depth of a pattern's settings (a roster, a stage's participants,
the officials) and may name a model or an agent of its own; these functions find them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from debategraph.errors import UsageError
from debategraph.models.choice import goes_to_embedded
from debategraph.models.spec import ModelSpec, is_local, parse_model
from debategraph.registry import Values
from debategraph.state.records import AgentSpec


def refuse_tools_on_embedded(settings: Values, run: ModelSpec = ModelSpec()) -> None:  # noqa: B008 (frozen)
    """Refuse a run in which an agent would call tools on the embedded model.

    An agent's calls go to the embedded model when its own model is ``local``, or when
    it has none (or only a name without an endpoint) on a run whose model is ``local``
    (:func:`~debategraph.models.choice.goes_to_embedded`); the embedded SmolLM2's chat
    template has no tool calls. The agents are the records (mappings or ``AgentSpec`` s
    with a ``name``) at any depth of the settings; a ``tools`` setting (``solve
    --tools``) gives tools to every agent of the ``agents`` setting without tools or an
    agent of its own.

    Args:
        settings: The run's settings.
        run: The run's model (default: the embedded one).

    Raises:
        UsageError: One line naming the first such agent.
    """
    users = [
        name
        for name, record in agent_records(settings)
        if _field(record, "tools") and _calls_embedded(record, run)
    ]
    if settings.get("tools"):
        agents = settings.get("agents")
        if isinstance(agents, int) and run.is_local:
            users.append("every agent")
        for entry in agents if isinstance(agents, list | tuple) else ():
            record = {"name": entry} if isinstance(entry, str) else entry
            if _field(record, "tools") or _field(record, "agent") is not None:
                continue
            if _calls_embedded(record, run):
                users.append(str(_field(record, "name")))
    if users:
        who = users[0] if users[0] == "every agent" else f"agent {users[0]!r}"
        raise UsageError(
            f"{who} has tools, but its calls go to the embedded model (--model local), which "
            "has no tool calls: tools need a model with tool calls (give --model NAME "
            "--base-url URL, or a model per agent in --agents-file: NAME@BASE_URL)"
        )


def agent_records(settings: Any) -> list[tuple[str, Any]]:
    """Every agent record at any depth of the settings (a stage's participants, officials).

    Args:
        settings: The settings, or a value in them.

    Returns:
        ``(name, record)`` pairs: the mappings and ``AgentSpec`` s with a ``name``.
    """
    found: list[tuple[str, Any]] = []
    if isinstance(settings, Mapping | AgentSpec) and _field(settings, "name") is not None:
        found.append((str(_field(settings, "name")), settings))
    if isinstance(settings, Mapping):
        found += [r for k, v in settings.items() if k != "model" for r in agent_records(v)]
    elif isinstance(settings, list | tuple):
        found += [r for v in settings for r in agent_records(v)]
    return found


def own_specs(settings: Values) -> list[tuple[str, ModelSpec]]:
    """The model specs the agents (and officials) of a run's settings name of their own.

    Args:
        settings: The run's settings.

    Returns:
        ``(who, spec)`` pairs (``who``: ``agent 'ann'``); a chat model object, an agent
        of its own or a model that does not parse (refused where it is read) is left out.
    """
    found = []
    for name, record in agent_records(settings):
        spec = _own_spec(record)
        if spec is not None and _field(record, "agent") is None:
            found.append((f"agent {name!r}", spec))
    return found


def models_of_agents(settings: Values, run: ModelSpec) -> list[tuple[str, ModelSpec | None]]:
    """The agents (and officials) whose calls go elsewhere than the run's model, and where.

    What a run's first line names beside the run's model, so that it names every model
    the run calls: an agent's own model (a name without an endpoint is that model at
    the run's endpoint), or its own agent.

    Args:
        settings: The run's settings.
        run: The run's model (validated: its endpoint filled in).

    Returns:
        ``(name, spec)`` pairs in the settings' order, each agent once; ``spec`` is
        ``None`` for an agent of its own (or a chat model object). Agents whose own
        model is the run's own are left out.
    """
    found: dict[str, tuple[str, ModelSpec | None]] = {}
    for name, record in agent_records(settings):
        if name.lower() in found:
            continue
        if _field(record, "agent") is not None:
            found[name.lower()] = (name, None)
            continue
        if _field(record, "model") is None:
            continue
        spec = _own_spec(record)
        if spec is None:
            found[name.lower()] = (name, None)
            continue
        if spec.base_url is None and not spec.is_local and not run.is_local:
            spec = replace(spec, base_url=run.base_url)
        if (spec.model, spec.base_url) != (run.model, run.base_url):
            found[name.lower()] = (name, spec)
    return list(found.values())


def _own_spec(record: Any) -> ModelSpec | None:
    """A record's own model, as a spec (``None``: none, or not a spec)."""
    model = _field(record, "model")
    if model is None:
        return None
    try:
        spec = parse_model(model)
    except ValueError:
        return None
    return spec if isinstance(spec, ModelSpec) else None


def _calls_embedded(record: Any, run: ModelSpec) -> bool:
    """Whether a record's calls go to the embedded model."""
    if _field(record, "agent") is not None:
        return False
    if _field(record, "model") is not None and _own_spec(record) is None:
        return False  # a chat model of its own
    return goes_to_embedded(_own_spec(record), run)


def _field(record: Any, key: str) -> Any:
    """A field of an agent record: a dict (as files give them) or an ``AgentSpec``."""
    return record.get(key) if isinstance(record, Mapping) else getattr(record, key, None)


def own_agents(settings: Values) -> list[str]:
    """The agents in a run's settings that call a model (or an agent) of their own.

    Any record (a mapping with a ``name``) at any depth of the settings counts: a
    roster, a stage's participants; one whose own model is the embedded one does not
    (it calls the run's embedded server), nor do the officials (who do not speak in a
    round's step). An agent named twice (a participant of two stages) counts once.

    Args:
        settings: The run's settings (as stored with the thread).

    Returns:
        Their names.
    """
    speakers = {k: v for k, v in settings.items() if k != "officials"}
    return sorted({name.lower() for name, r in agent_records(speakers) if _elsewhere(r)})


def _elsewhere(record: Any) -> bool:
    """Whether a record has a model (not the embedded one) or an agent of its own."""
    model = _field(record, "model")
    local = isinstance(model, str) and is_local(model.strip())
    return (model is not None and not local) or _field(record, "agent") is not None
