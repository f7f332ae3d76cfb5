"""The registry is the one list: langgraph.json, the exports and the names agree with it."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

import debategraph
from debategraph import registry

ROOT = Path(__file__).resolve().parents[1]


def test_langgraph_json_lists_exactly_the_registrys_graphs() -> None:
    committed = json.loads((ROOT / "langgraph.json").read_text())
    assert committed == registry.langgraph_json(), "run: make langgraph.json"


def test_aegra_json_serves_the_same_graphs_as_aegra_reads_them() -> None:
    committed = json.loads((ROOT / "aegra.json").read_text())
    assert committed == registry.aegra_json(), "run: make aegra.json"
    studio = registry.langgraph_json()["graphs"]
    assert committed["graphs"] == {name: spec["path"] for name, spec in studio.items()}


@pytest.mark.parametrize("entry", registry.BUILTIN, ids=lambda e: e.name)
def test_each_input_check_is_what_the_graph_runs_first(entry: registry.Entry) -> None:
    """The check the CLI and the server make is the one the graph makes when it starts."""
    from debategraph.graphs.inputs import check_input, input_fields

    own = [f for f in entry.input_schema().__annotations__ if f != "messages"]
    assert input_fields(entry.name) == [*own, "messages"]  # its own fields first
    if entry.name == "group_chat":  # a later invocation has no task: its check is a first's
        check_input(entry.name, {"message": "Shorter, please."}, first=False)
    check = registry.load(entry.input_check)
    with pytest.raises(ValueError) as by_check:
        check({})
    with pytest.raises(ValueError) as by_input:
        check_input(entry.name, {})
    assert str(by_input.value) == str(by_check.value)
    with pytest.raises(ValueError) as by_graph:
        entry.build()(model=None).compile().invoke({})
    assert str(by_graph.value) == str(by_check.value)


@pytest.mark.parametrize("entry", registry.BUILTIN, ids=lambda e: e.name)
def test_each_part_is_named_as_its_line(entry: registry.Entry) -> None:
    factory = entry.build()
    assert entry.name == importlib.import_module(factory.__module__).GRAPH_NAME
    assert entry.declaration().name == entry.name
    assert getattr(debategraph, factory.__name__) is factory
    schemas = importlib.import_module(entry.state).SCHEMAS
    graph = factory()
    assert graph.state_schema is schemas.state
    assert (graph.input_schema, graph.output_schema) == (schemas.input, schemas.output)
    for old, new in entry.renamed.items():
        assert registry.current_settings(entry.name, {old: 1}) == {new: 1}


@pytest.mark.parametrize("entry", registry.BUILTIN, ids=lambda e: e.name)
def test_the_cli_declaration_holds_the_description_the_line_names(entry: registry.Entry) -> None:
    """What a pattern is lives below the CLI; its command renders that one description."""
    described = registry.described(entry.name)
    assert described.name == entry.name
    assert entry.described == f"debategraph.nodes.{entry.name}.described:DESCRIBED"
    assert entry.declaration().described is described


def test_the_exports_come_from_the_registry() -> None:
    assert set(registry.factories()) <= set(debategraph.__all__)
    assert registry.factories() == {
        "build_solver_debate": "debategraph.graphs.solver_debate",
        "build_debate": "debategraph.graphs.debate",
        "build_discussion": "debategraph.graphs.discussion",
        "build_group_chat": "debategraph.graphs.group_chat",
        "build_meeting": "debategraph.graphs.meeting",
    }


def test_a_bad_plugin_does_not_break_the_library(monkeypatch: pytest.MonkeyPatch) -> None:
    """DEBATEGRAPH_PATTERNS is the CLI's: a bad entry never stops a factory from building."""
    monkeypatch.setenv(registry.PLUGINS_ENV, "nowhere:ENTRY")
    with pytest.warns(DeprecationWarning):
        graph = debategraph.build_solver_debate(agents=2, rounds=1)
    assert graph.round_cap == 1
    with pytest.raises(debategraph.UsageError, match="nowhere:ENTRY"):
        registry.entries()
