"""``--agents-file``: one roster input for every pattern.

A YAML or JSON file holding a list of agents (or a mapping whose ``agents`` key holds
it). Each entry is the pattern's agent record (its own fields, such as a debater's
``side`` or a persona's ``focus``) plus what every agent may have
(:class:`~debategraph.state.records.AgentSpec`): ``model`` (a spec string or mapping,
see :func:`~debategraph.models.parse_model`), ``tools`` (built-in tool names,
``module:attribute`` references, or MCP servers: :mod:`debategraph.nodes.mcp_tools`) and
``agent`` (a ``module:attribute`` reference to a
LangChain Runnable or compiled graph). An entry named after one of the pattern's
officials (``judge``, ``moderator``, ``selector``, ``chair``...) gives that official
its model, tools or agent.

Every entry is checked here, before anything runs, and a bad one gets one line naming
the file, the entry's line and the field.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from debategraph.datafiles import first_problem, load_data
from debategraph.errors import UsageError

OPTION = "--agents-file"


@dataclass
class Roster:
    """What an agents file holds, split: the pattern's agents and its officials.

    Attributes:
        agents: The agents, in order (dicts, as the factory takes them).
        officials: The officials' entries (dicts naming them).
    """

    agents: list[dict[str, Any]] = field(default_factory=list)
    officials: list[dict[str, Any]] = field(default_factory=list)


def read_agents_file(
    path: str,
    record: type[BaseModel],
    officials: Collection[str] = (),
    *,
    text_form: bool = False,
) -> Roster:
    """Read and check an agents file for one pattern.

    Args:
        path: The file.
        record: The pattern's agent record (``Debater``, ``Persona``, ``Participant``).
        officials: The pattern's officials' names (lower case): entries so named go to
            :attr:`Roster.officials`, checked as plain agent records.
        text_form: Whether an entry may be a string (``'Name: instructions'``), which the
            pattern parses.

    Returns:
        The roster.

    Raises:
        UsageError: One line naming the file, the entry's line and the bad field.
    """
    from debategraph.models.spec import parse_model
    from debategraph.nodes.tools import check_tool_names
    from debategraph.state.records import AgentSpec

    data = load_data(path, OPTION)
    lines = _entry_lines(path)
    if isinstance(data, Mapping) and "agents" in data:
        data = data["agents"]
    if not isinstance(data, list) or not data:
        raise UsageError(
            f"{OPTION} {path}: expected a list of agents (each with a 'name'), got "
            f"{type(data).__name__ if data else 'nothing'}"
        )
    roster = Roster()
    seen: dict[str, int] = {}
    for index, entry in enumerate(data):
        where = f"{OPTION} {path} line {lines[index] if index < len(lines) else '?'}"
        if text_form and isinstance(entry, Mapping) and len(entry) == 1:
            ((key, text),) = entry.items()  # YAML's `- Writer: writes the text`
            if key not in record.model_fields and isinstance(text, str | None):
                entry = f"{key}: {text}" if text else str(key)
        if isinstance(entry, str) and text_form:
            roster.agents.append(entry)  # type: ignore[arg-type]  # the pattern parses it
            continue
        if not isinstance(entry, Mapping):
            raise UsageError(f"{where}: an agent must be a mapping with a 'name', got {entry!r}")
        name = str(entry.get("name", "")).strip()
        official = name.lower() in officials
        kind = AgentSpec if official else record
        try:
            kind.model_validate(dict(entry))
        except ValidationError as exc:
            raise UsageError(f"{where}: {first_problem(exc, kind)}") from None
        key = name.lower()
        if key in seen:
            raise UsageError(
                f"{where}: two agents are named {name!r} (also line {seen[key]}): give each "
                "agent a different name"
            )
        seen[key] = lines[index] if index < len(lines) else 0
        who = f"{where}: agent {name!r}"
        try:
            if entry.get("model") is not None:
                parse_model(entry["model"], who)
            tools = entry.get("tools") or []
            check_tool_names([tools] if isinstance(tools, str | Mapping) else tools, who)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        (roster.officials if official else roster.agents).append(dict(entry))
    return roster


def _entry_lines(path: str) -> list[int]:
    """The line (1-based) each entry of the file's agent list starts on, where known."""
    import yaml

    try:
        root = yaml.compose(Path(path).read_text(encoding="utf-8"))
    except (yaml.YAMLError, OSError, UnicodeDecodeError):
        return []
    if isinstance(root, yaml.MappingNode):
        found = [v for k, v in root.value if getattr(k, "value", None) == "agents"]
        root = found[0] if found else None
    if not isinstance(root, yaml.SequenceNode):
        return []
    return [item.start_mark.line + 1 for item in root.value]
