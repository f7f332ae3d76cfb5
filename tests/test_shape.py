"""Every pattern's ``nodes/<p>/`` package has the same functions, with the same signatures.

Knowing one pattern teaches the next: each ``nodes/<p>/`` package (re-exported by its
``__init__``) has ``<p>_setup`` taking exactly its factory's settings and returning
``<P>Setup``; ``check_input(state)`` in its ``setup.py`` (the registry line's input
check); and the round built from the setup record: ``make_open_round(setup)``,
``termination_conditions(setup)``, ``make_close_round(setup, model)`` and
``round_review(setup)``. Every ``make_*`` node factory returns a runnable. The
signatures are compared as ``inspect.signature`` reads them (annotations as written).
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from debategraph import registry
from tests.processes import python_output

PATTERNS = [entry.name for entry in registry.BUILTIN]

#: What every pattern's package holds: name -> (parameters, their annotations, returns).
#: ``{Setup}`` is the pattern's setup record.
SHAPE: dict[str, tuple[list[str], list[str], str]] = {
    "check_input": (["state"], ["Mapping[str, Any]"], "None"),
    "make_open_round": (["setup"], ["{Setup}"], "Runnable[Any, Any]"),
    "termination_conditions": (["setup"], ["{Setup}"], "list[Condition]"),
    "make_close_round": (
        ["setup", "model"],
        ["{Setup}", "ModelBinding | None"],
        "Runnable[Any, Any]",
    ),
    "round_review": (
        ["setup"],
        ["{Setup}"],
        "Callable[[Mapping[str, Any]], dict[str, Any]]",
    ),
}
#: What every node factory (``make_*``) returns: one kind, a runnable for ``add_node``.
NODE = "Runnable[Any, Any]"


def package(pattern: str) -> ModuleType:
    return importlib.import_module(f"debategraph.nodes.{pattern}")


def setup_record(pattern: str) -> str:
    """``group_chat`` -> ``GroupChatSetup``."""
    return "".join(word.capitalize() for word in pattern.split("_")) + "Setup"


def shown(fn: Any) -> tuple[list[str], list[str], str]:
    """A function's parameter names, their annotations and its return, as written."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    return (
        [p.name for p in params],
        [str(p.annotation) for p in params],
        str(sig.return_annotation),
    )


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("name", sorted(SHAPE))
def test_every_pattern_has_the_shared_function_with_the_shared_signature(
    pattern: str, name: str
) -> None:
    nodes = package(pattern)
    assert name in nodes.__all__, f"nodes/{pattern}/ does not export {name}"
    names, annotations, returns = SHAPE[name]
    record = setup_record(pattern)
    expected = (names, [a.format(Setup=record) for a in annotations], returns)
    assert shown(getattr(nodes, name)) == expected, f"nodes/{pattern}/: {name}"


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_setup_function_takes_exactly_the_factorys_settings(pattern: str) -> None:
    nodes = package(pattern)
    setup, record = f"{pattern}_setup", setup_record(pattern)
    assert setup in nodes.__all__ and record in nodes.__all__, f"nodes/{pattern}/"
    factory = registry.load(registry.entry(pattern).factory)
    settings = set(inspect.signature(factory).parameters) - {"model", "state_schema"}
    sig = inspect.signature(getattr(nodes, setup))
    assert set(sig.parameters) == settings
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in sig.parameters.values())
    assert str(sig.return_annotation) == record
    assert inspect.isclass(getattr(nodes, record))


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_input_check_is_the_setup_modules_and_the_registry_names_it(pattern: str) -> None:
    setup = importlib.import_module(f"debategraph.nodes.{pattern}.setup")
    assert registry.entry(pattern).input_check == f"{setup.__name__}:check_input"
    assert package(pattern).check_input is setup.check_input


@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_node_factory_returns_a_runnable(pattern: str) -> None:
    nodes = package(pattern)
    factories = [name for name in nodes.__all__ if name.startswith("make_")]
    assert "make_open_round" in factories and "make_close_round" in factories
    returns = {name: shown(getattr(nodes, name))[2] for name in factories}
    assert returns == dict.fromkeys(factories, NODE)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_make_in_a_patterns_modules_is_a_node_factory(pattern: str) -> None:
    """Exported or not: a ``make_*`` of ``nodes/<p>/`` returns a runnable, one shape
    (a helper that returns something else is named for what it returns)."""
    nodes = package(pattern)
    found = {}
    for path in sorted(Path(nodes.__file__).parent.glob("*.py")):
        module = importlib.import_module(f"{nodes.__name__}.{path.stem}")
        for name, fn in vars(module).items():
            mine = inspect.isfunction(fn) and fn.__module__ == module.__name__
            if name.startswith("make_") and mine:
                found[f"{path.stem}.{name}"] = shown(fn)[2]
    assert found and found == dict.fromkeys(found, NODE)


@pytest.mark.slow  # make test-fast leaves it out: a Python process of its own
@pytest.mark.parametrize("pattern", PATTERNS)
def test_declaring_the_pattern_loads_no_model_client(pattern: str) -> None:
    """The registry loads no LangGraph; the CLI declaration no model client."""
    code = (
        f"import sys, debategraph.registry as r; r.entry({pattern!r}); "
        "print(sorted(n for n in ('langgraph', 'typer', 'openai') if n in sys.modules)); "
        f"import debategraph.cli.patterns.{pattern} as m; m.PATTERN.described.describe; "
        "print(sorted(n for n in ('openai', 'langchain_openai') if n in sys.modules))"
    )
    assert python_output(code).split() == ["[]", "[]"]
