"""What a compiled pattern graph tells its callers about itself: its JSON schemas.

LangGraph's servers (``langgraph dev`` for Studio, LangGraph's own server, Aegra) show a
graph's input, output and context schemas (``/assistants/{id}/schemas``) by calling the
compiled graph's ``get_input_jsonschema``, ``get_output_jsonschema`` and
``get_context_jsonschema``; MCP and A2A doors read them to describe a graph to a model.
Made by pydantic from the typed states alone, they say nothing a caller can act on: no
field is described, none is required, and the LangChain message types fill 20 KB of
``$defs`` with their docstrings. A :class:`PatternCompiled` (what
:meth:`~debategraph.graphs.skeleton.PatternGraph.compile` returns) gives instead:

- **input**: a one-line description of the graph (its registry line's), each field's
  one-line description (the ``Attributes:`` section of the pattern's input type and of
  :class:`~debategraph.state.base.MessagesInput`, :func:`field_descriptions`), what is
  required (one of the pattern's text field or ``messages``, as ``anyOf``; ``required``
  lists what every input needs: nothing more), and ``messages`` as the messages a caller
  sends (human, AI, system, tool; a string too, in words);
- **output**: each field described (the pattern's output type and
  :class:`~debategraph.state.base.RunOutput`), the records' own descriptions cut to their
  first line, ``messages`` as what the graph returns (AI and human messages);
- **context**: the model fields described, with no ``api_key``
  (:class:`~debategraph.models.context.Context` hides it: a key is named by
  ``api_key_env``, the variable that holds it).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from langgraph.graph.state import CompiledStateGraph

#: Where a field's description sits in a typed dict's docstring (Google style).
_ATTRIBUTE = re.compile(r"^\s{4,8}(\w+): (.+)$")

#: The LangChain message types a caller sends as ``messages``, and those a graph returns.
INPUT_MESSAGES = ("HumanMessage", "AIMessage", "SystemMessage", "ToolMessage")
OUTPUT_MESSAGES = ("AIMessage", "HumanMessage")
_REF = "#/$defs/"


def field_descriptions(*schemas: type[Any]) -> dict[str, str]:
    """Field descriptions from the ``Attributes:`` sections of typed dicts' docstrings.

    Args:
        *schemas: The types, the first one's description of a field winning.

    Returns:
        Field -> its description, each on one line.
    """
    out: dict[str, str] = {}
    for schema in reversed(schemas):
        found: dict[str, str] = {}
        doc = (schema.__doc__ or "").split("Attributes:", 1)
        field = None
        for line in doc[1].splitlines() if len(doc) == 2 else ():
            if match := _ATTRIBUTE.match(line):
                field = match.group(1)
                found[field] = match.group(2)
            elif field is not None and line.strip():
                found[field] += " " + line.strip()  # a continuation line
            else:
                field = None
        out.update(found)
    return out


def first_line(text: str | None) -> str:
    """A docstring's first paragraph, on one line.

    Args:
        text: The docstring.

    Returns:
        Its first paragraph, its lines joined.
    """
    paragraph = (text or "").strip().split("\n\n", 1)[0]
    return " ".join(part.strip() for part in paragraph.splitlines())


def _described(schema: dict[str, Any], about: dict[str, str]) -> dict[str, Any]:
    """``schema`` with each property described, its ``$defs`` described in one line."""
    for key, prop in schema.get("properties", {}).items():
        if key in about:
            prop["description"] = about[key]
    for definition in schema.get("$defs", {}).values():
        if "description" in definition:
            definition["description"] = first_line(definition["description"])
        for prop in definition.get("properties", {}).values():
            if "description" in prop:
                prop["description"] = first_line(prop["description"])
    return schema


def _messages(schema: dict[str, Any], kinds: tuple[str, ...]) -> None:
    """Make ``messages`` the message types ``kinds`` (and drop every other's ``$defs``)."""
    prop = schema.get("properties", {}).get("messages")
    defs = schema.get("$defs", {})
    if prop is None:
        return
    prop.pop("items", None)
    prop.pop("anyOf", None)
    prop["type"] = "array"
    prop["items"] = {"anyOf": [{"$ref": f"{_REF}{kind}"} for kind in kinds]}
    wanted = _reachable(defs, [f"{_REF}{kind}" for kind in kinds], schema)
    for name in list(defs):
        if name not in wanted:
            del defs[name]


def _reachable(defs: dict[str, Any], roots: list[str], schema: dict[str, Any]) -> set[str]:
    """The ``$defs`` names reachable from ``roots`` and from every property of ``schema``."""
    seen: set[str] = set()
    todo = [*roots, *_refs(schema.get("properties", {}))]
    while todo:
        name = todo.pop()[len(_REF) :]
        if name in seen or name not in defs:
            continue
        seen.add(name)
        todo.extend(_refs(defs[name]))
    return seen


def _refs(value: Any) -> list[str]:
    """Every ``$ref`` inside a JSON schema value."""
    if isinstance(value, dict):
        found = [value["$ref"]] if isinstance(value.get("$ref"), str) else []
        return found + [ref for item in value.values() for ref in _refs(item)]
    if isinstance(value, list):
        return [ref for item in value for ref in _refs(item)]
    return []


class PatternCompiled(CompiledStateGraph[Any, Any, Any, Any]):
    """A compiled pattern graph whose JSON schemas describe it to callers.

    See the module's docstring. Every other behaviour is ``CompiledStateGraph``'s.
    """

    @classmethod
    def of(cls, graph: CompiledStateGraph[Any, Any, Any, Any]) -> PatternCompiled:
        """The same compiled graph as a :class:`PatternCompiled` (what ``graph.copy()`` builds).

        Args:
            graph: A graph a pattern's factory built, compiled.

        Returns:
            The graph.
        """
        return cls(**{k: v for k, v in graph.__dict__.items() if k != "__orig_class__"})

    def _pattern(self) -> tuple[str, Any]:
        builder: Any = self.builder
        return str(getattr(builder, "pattern", "")), getattr(builder, "pattern_schemas", None)

    def get_input_jsonschema(self, config: Any = None) -> dict[str, Any]:
        """The input schema: the graph and each field described, what is required.

        Args:
            config: As for ``CompiledStateGraph.get_input_jsonschema``.

        Returns:
            The JSON schema.
        """
        from debategraph.state.base import MessagesInput

        schema = copy.deepcopy(super().get_input_jsonschema(config))
        pattern, schemas = self._pattern()
        _messages(schema, INPUT_MESSAGES)
        _described(schema, field_descriptions(self.builder.input_schema, MessagesInput))
        schema["title"] = f"{self.name}_input"
        schema["description"] = graph_description(pattern)
        starts = [schemas.text, "messages", schemas.later_text] if schemas else ["messages"]
        fields = schema.get("properties", {})
        schema["required"] = []
        schema["anyOf"] = [{"required": [key]} for key in starts if key and key in fields]
        return schema

    def get_output_jsonschema(self, config: Any = None) -> dict[str, Any]:
        """The output schema: each field described, ``messages`` what the graph returns.

        Args:
            config: As for ``CompiledStateGraph.get_output_jsonschema``.

        Returns:
            The JSON schema.
        """
        from debategraph.state.base import RunOutput

        schema = copy.deepcopy(super().get_output_jsonschema(config))
        _messages(schema, OUTPUT_MESSAGES)
        _described(schema, field_descriptions(self.builder.output_schema, RunOutput))
        schema["title"] = f"{self.name}_output"
        schema["description"] = f"What the {self.name} graph returns."
        return schema

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        """The context schema: the run's model, each field described, no secret.

        Returns:
            The JSON schema (``None`` for a graph with no context schema).
        """
        from debategraph.models.context import Context
        from debategraph.models.spec import ModelSpec

        schema = super().get_context_jsonschema()
        if schema is None:
            return None
        schema = copy.deepcopy(schema)
        _described(schema, field_descriptions(Context, ModelSpec))
        schema["description"] = first_line(Context.__doc__)
        return schema


def graph_description(pattern: str) -> str:
    """A pattern's one-line description: its registry line's first sentence.

    Args:
        pattern: The pattern's registry name.

    Returns:
        The sentence (``Run the PATTERN graph.`` for a pattern with no registry line).
    """
    from debategraph import registry
    from debategraph.errors import UsageError

    try:
        entry = registry.entry(pattern)
    except UsageError:
        return f"Run the {pattern or 'debategraph'} graph."
    text = " ".join((entry.description or entry.help).split())
    sentence = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return sentence
