"""The operator's model list: the models a served run may use, named, with their endpoints.

A client of ``debategraph serve`` names models, never endpoints or keys. The operator
lists them in a YAML (or JSON) file given to ``serve --models``::

    default: mini                 # what a run naming no model uses (default: the first)
    models:
      - name: mini                # what clients call it
        model: gpt-4o-mini        # what the endpoint calls it
        base_url: https://api.openai.com/v1
        api_key_env: OPENAI_API_KEY   # the variable holding this endpoint's key
      - name: local
        model: local              # the embedded model
    limits:                       # what each user may take (serve.limits; optional)
      runs_in_flight: 4

Each entry is a model mapping (:data:`~debategraph.models.spec.MODEL_KEYS`) with a
``name``. Without a file the server runs its default model only (``local``).

A run's context (and an assistant's, and ``config.configurable``) may set only
:data:`CLIENT_FIELDS`: ``model`` and each ``agent_models`` value are names from the list.
:meth:`ModelList.check` refuses anything else in one line (403 for a field that would
choose an endpoint or a key, 422 for a name or value the list does not hold), before a run
is made; :meth:`ModelList.resolve` turns the names into the operator's specs where the
graph starts (:attr:`~debategraph.graphs.served.ServedGraph.context_policy`), so a name
reaching a graph by any route is read through the list, and nothing else is.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from debategraph.datafiles import load_data
from debategraph.errors import UsageError
from debategraph.models.spec import MODEL_KEYS, ModelSpec, parse_model
from debategraph.serve.guard import clipped
from debategraph.serve.limits import Limits

#: The environment variable that names the model list's file for the server process.
MODELS_ENV = "DEBATEGRAPH_MODELS"
#: What a client may set in a run's context.
CLIENT_FIELDS = ("model", "agent_models", "temperature", "max_tokens")
#: Context fields only the operator sets (an endpoint, a key, how it is called, or tools).
OPERATOR_FIELDS = (
    "base_url",
    "api_key",
    "api_key_env",
    "timeout",
    "timeout_s",
    "max_retries",
    "patience",
    "patience_s",
    "rpm",
    "tpm",
    "price",
    "structured_method",
    "slots",
    "tools",  # an agent's tools: an MCP server's command would start a process here
)
#: The name of the only model of a server given no list.
DEFAULT_NAME = "local"


class RefusedContext(ValueError):
    """A context the operator's list refuses: one line, and the HTTP status to answer."""

    def __init__(self, message: str, status: int = 422) -> None:
        """Keep the line and the status.

        Args:
            message: The one line.
            status: 403 for a field only the operator sets, 422 for a bad name or value.
        """
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ModelList:
    """The models a served run may use, by name.

    Attributes:
        models: Name -> the operator's spec (its endpoint and key variable).
        default: The name a run that names no model uses.
        limits: What each user may take (:mod:`debategraph.serve.limits`).

    Example:
        ```python
        allowed = ModelList({"mini": ModelSpec("gpt-4o-mini", api_key_env="OPENAI_API_KEY")})
        allowed.check({"model": "mini"}, "context")
        allowed.resolve({"model": "mini"})["api_key_env"]  # 'OPENAI_API_KEY'
        ```
    """

    models: Mapping[str, ModelSpec]
    default: str = ""
    limits: Limits = dataclasses.field(default_factory=Limits)

    def __post_init__(self) -> None:
        """Refuse an empty list or a default it does not hold; the first is the default."""
        if not self.models:
            raise ValueError("the model list names no model")
        if not self.default:
            object.__setattr__(self, "default", next(iter(self.models)))
        if self.default not in self.models:
            raise ValueError(
                f"default {self.default!r} is not one of the models: {', '.join(self.models)}"
            )

    def names(self) -> str:
        """The names, for messages."""
        return ", ".join(self.models)

    def check(self, context: Any, where: str = "context") -> None:
        """Refuse a context that does more than name listed models.

        Args:
            context: A run's or assistant's ``context`` (or ``config.configurable``).
            where: What it is, for the line (``context``, ``config.configurable``).

        Raises:
            RefusedContext: One line naming the field and what is allowed.
        """
        if context is None:
            return
        if not isinstance(context, Mapping):
            raise RefusedContext(f"{where} must be an object, got {clipped(repr(context))}")
        allowed = f"a client sets only {', '.join(CLIENT_FIELDS)}"
        for key in OPERATOR_FIELDS:
            if context.get(key) is not None:
                raise RefusedContext(
                    f"{where} field {key!r} is the operator's to set: name a model from the "
                    f"server's list ({self.names()}); {allowed}",
                    403,
                )
        for key, value in context.items():
            if value is None or key in OPERATOR_FIELDS:
                continue
            if key == "model":
                self._name(value, f"{where}.model")
            elif key == "agent_models":
                self._agent_models(value, where)
            elif key == "temperature" and (
                isinstance(value, bool) or not isinstance(value, int | float)
            ):  # a string ("NaN", "0.5") is no number: the range check would raise
                raise RefusedContext(
                    f"{where}: temperature {clipped(repr(value))} must be a number from 0 to 2"
                )
            elif key in ("temperature", "max_tokens"):
                try:
                    ModelSpec(**{key: value}).check_values()
                except UsageError as exc:
                    raise RefusedContext(f"{where}: {exc}") from None
            elif where == "context":  # configurable holds LangGraph's own keys too
                raise RefusedContext(f"unknown {where} field {key!r}: {allowed}")

    def _name(self, value: Any, where: str) -> None:
        if isinstance(value, Mapping):
            raise RefusedContext(
                f"{where} must name a model from the server's list ({self.names()}), "
                "not describe one",
                403,
            )
        if not isinstance(value, str) or value not in self.models:
            raise RefusedContext(
                f"{where} {clipped(repr(value))} is not one of the server's models: {self.names()}"
            )

    def _agent_models(self, value: Any, where: str) -> None:
        if not isinstance(value, Mapping):
            got = clipped(repr(value))
            raise RefusedContext(
                f"{where}.agent_models must map agent names to model names, got {got}"
            )
        for agent, name in value.items():
            self._name(name, f"{where}.agent_models[{clipped(repr(agent))}]")

    def resolve(self, context: Any) -> dict[str, Any]:
        """A checked context with its names replaced by the operator's specs.

        Args:
            context: The run's context as the server passes it to the graph.

        Returns:
            The :class:`~debategraph.models.context.Context` fields to run with.

        Raises:
            RefusedContext: As :meth:`check`.
        """
        given = dict(context or {})
        self.check(given)
        spec = self.models[given.get("model") or self.default]
        tuning = {k: given[k] for k in ("temperature", "max_tokens") if given.get(k) is not None}
        fields = {**dataclasses.asdict(dataclasses.replace(spec, **tuning)), "api_key": None}
        agents = given.get("agent_models") or {}
        fields["agent_models"] = {a: self.mapping(n) for a, n in agents.items()} or None
        return fields

    def mapping(self, name: str) -> dict[str, Any]:
        """A listed model as the model mapping an agent's ``model`` takes."""
        spec = self.models[name]
        values = {key: getattr(spec, field) for key, field in MODEL_KEYS.items()}
        return {k: v for k, v in values.items() if v is not None and k != "timeout"}


#: The list of a server given none: its default model.
DEFAULT_LIST = ModelList({DEFAULT_NAME: ModelSpec()})


def read_models(path: str | Path, option: str = "--models") -> ModelList:
    """The operator's model list from its file, every entry checked.

    Args:
        path: The YAML or JSON file.
        option: The option that named it, for errors.

    Returns:
        The list.

    Raises:
        UsageError: One line: an unreadable or malformed file, an entry without a name or
            with a bad field, a name written twice, a default it does not hold, or a key
            variable that is not set.
    """
    data = load_data(path, option)
    where = f"{option} {path}"
    if not isinstance(data, Mapping) or not isinstance(data.get("models"), list):
        raise UsageError(
            f"{where}: give 'models', a list of {{name, model, base_url, api_key_env}} "
            "entries (and optionally 'default', the name a run without one uses, and "
            "'limits', what each user may take)"
        )
    unknown = sorted(str(k) for k in data if k not in ("models", "default", "limits"))
    if unknown:
        raise UsageError(
            f"{where}: unknown field {unknown[0]!r}: allowed are models, default, limits"
        )
    models: dict[str, ModelSpec] = {}
    for number, entry in enumerate(data["models"], 1):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise UsageError(f"{where}: model {number} needs 'name', the name clients use")
        name = entry["name"].strip()
        if not name:
            raise UsageError(f"{where}: model {number} has an empty name")
        if name in models:
            raise UsageError(f"{where}: model name {name!r} is written twice")
        fields = {k: v for k, v in entry.items() if k != "name"}
        try:
            spec = parse_model(fields, f"model {name!r}")
        except ValueError as exc:
            raise UsageError(f"{where}: {exc}") from None
        if spec.api_key_env is not None and not os.environ.get(spec.api_key_env):
            raise UsageError(
                f"{where}: model {name!r}: its key variable {spec.api_key_env} is not set"
            )
        models[name] = spec
    default = data.get("default") or ""
    limits = Limits.read(data.get("limits"), where)
    try:
        return ModelList(models, str(default), limits)
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}") from None


def served_models() -> ModelList:
    """The list this server process runs with: :data:`MODELS_ENV`'s file, else the default.

    Raises:
        UsageError: As :func:`read_models`.
    """
    path = os.environ.get(MODELS_ENV)
    return read_models(path, MODELS_ENV) if path else DEFAULT_LIST
