"""Each compiled graph's JSON schemas tell a caller what to send, what comes back, and no secret.

What LangGraph Studio, LangGraph's server and Aegra show as ``/assistants/{id}/schemas``
(each calls the compiled graph's ``get_*_jsonschema``), read from the graphs
``langgraph.json`` and ``aegra.json`` serve: a one-line description of the graph, what
is required, every field described on one line, ``messages`` as the messages a caller
sends or gets (not every LangChain message type), and a context with no ``api_key``.
Sizes, measured here at the change: input 20-21 KB before, about 7.5 KB now; output 26-35
KB before, 9-18 KB now.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langgraph.graph import END, START, MessagesState, StateGraph

from debategraph import Context, build_debate
from debategraph.graphs.studio import GRAPHS
from debategraph.registry import BUILTIN

#: The most bytes each schema may take (they were 21 KB and 35 KB).
INPUT_MAX, OUTPUT_MAX = 10_000, 20_000


def described(schema: dict[str, Any]) -> dict[str, str]:
    return {key: prop.get("description", "") for key, prop in schema["properties"].items()}


@pytest.mark.parametrize("name", [entry.name for entry in BUILTIN])
def test_the_input_schema_says_what_is_required_and_describes_every_field(name: str) -> None:
    entry = next(e for e in BUILTIN if e.name == name)
    schema = GRAPHS[name].get_input_jsonschema()
    assert len(json.dumps(schema)) < INPUT_MAX
    assert schema["description"] and "\n" not in schema["description"]
    assert schema["description"] in (entry.description or "")
    assert schema["required"] == []  # nothing alone: the text field or messages
    text = entry.schemas().text
    assert {"required": [text]} in schema["anyOf"] and {"required": ["messages"]} in schema["anyOf"]
    for field, about in described(schema).items():
        assert about and "\n" not in about and about != f"The {field}.", (name, field)
    messages = schema["properties"]["messages"]
    kinds = {option["$ref"].rsplit("/", 1)[-1] for option in messages["items"]["anyOf"]}
    assert kinds == {"HumanMessage", "AIMessage", "SystemMessage", "ToolMessage"}
    assert "string" in messages["description"]
    assert not {"AIMessageChunk", "FunctionMessage", "ChatMessage"} & set(schema["$defs"])


@pytest.mark.parametrize("name", [entry.name for entry in BUILTIN])
def test_the_output_schema_describes_every_field(name: str) -> None:
    schema = GRAPHS[name].get_output_jsonschema()
    assert len(json.dumps(schema)) < OUTPUT_MAX
    for field, about in described(schema).items():
        assert about and "\n" not in about, (name, field)
    for definition in schema["$defs"].values():
        assert "\n" not in definition.get("description", "")
    kinds = {
        o["$ref"].rsplit("/", 1)[-1] for o in schema["properties"]["messages"]["items"]["anyOf"]
    }
    assert kinds == {"AIMessage", "HumanMessage"}


@pytest.mark.parametrize("name", [entry.name for entry in BUILTIN])
def test_the_context_schema_holds_no_key(name: str) -> None:
    schema = GRAPHS[name].get_context_jsonschema()
    assert schema is not None
    fields = described(schema)
    assert "api_key" not in fields and {"model", "base_url", "api_key_env"} <= set(fields)
    assert all(about and "\n" not in about for about in fields.values()), fields


def test_a_parent_with_the_context_schema_shows_no_key_either() -> None:
    app = (
        StateGraph(MessagesState, context_schema=Context)
        .add_node("panel", build_debate(max_rounds=1).compile(name="panel"))
        .add_edge(START, "panel")
        .add_edge("panel", END)
        .compile()
    )
    assert "api_key" not in app.get_context_jsonschema()["properties"]
    assert Context(api_key="sk-x").key() == "sk-x"  # Python callers may still give one
