"""Run-scoped context: which model endpoint a graph's agents call.

Graphs built without a model (the module-level graphs served to LangGraph Studio) read
their model from the run's context, so a Studio user picks the endpoint per run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic.json_schema import SkipJsonSchema

from debategraph.models.spec import ModelSpec


@dataclass(frozen=True)
class Context(ModelSpec):
    """Context schema of every debategraph graph: a :class:`ModelSpec` per run.

    The defaults run the embedded SmolLM2 model; set ``model`` and ``base_url`` to use
    any OpenAI-compatible endpoint. Its JSON schema (what Studio and the servers show)
    has no ``api_key``: a run names the variable that holds its key (``api_key_env``);
    ``Context(api_key=...)`` still works from Python.

    Attributes:
        api_key: An API key, from Python only (see :class:`ModelSpec`); left out of the
            schema.
        agent_models: Agent name -> its own model for this run (a spec string or
            mapping, see :func:`~debategraph.models.parse_model`), for the agents of a
            graph built without models of their own (as LangGraph Studio serves them).
            A model given to an agent when the graph was built comes first.
    """

    api_key: SkipJsonSchema[str | None] = None
    agent_models: dict[str, Any] | None = None
