"""Imports go one way: down the layers that ``docs/architecture.md`` lists.

The test reads the ``layers`` block of that page (the one place the order is written)
and checks every ``debategraph`` import in ``src/``, function-level and ``TYPE_CHECKING``
ones included: a module may import its own layer or one below it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "debategraph"
DOC = ROOT / "docs" / "architecture.md"


def layer_ranks() -> dict[str, int]:
    """Layer name -> rank (0 is the top) from the page's ``layers`` block."""
    match = re.search(r"```layers\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert match, "docs/architecture.md lost its ```layers block"
    ranks: dict[str, int] = {}
    for rank, line in enumerate(filter(None, match.group(1).splitlines())):
        for name in line.split(","):
            ranks[name.strip()] = rank
    return ranks


def layer_of(module: str) -> str:
    """``debategraph.nodes.debate.setup`` -> ``nodes``; the package itself -> ``debategraph``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts).removesuffix(".__init__")


def imports(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every debategraph import in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "debategraph":
                found += [(node.lineno, f"debategraph.{a.name}") for a in node.names]
            elif node.module.startswith("debategraph."):
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("debategraph")]
    return found


def test_every_module_has_a_layer() -> None:
    ranks = layer_ranks()
    layers = {layer_of(module_name(p)) for p in SRC.rglob("*.py")}
    assert layers <= set(ranks), f"not in docs/architecture.md: {sorted(layers - set(ranks))}"


def test_imports_point_down() -> None:
    ranks = layer_ranks()
    upward = []
    for path in sorted(SRC.rglob("*.py")):
        module = module_name(path)
        mine = ranks[layer_of(module)]
        for line, target in imports(path):
            theirs = layer_of(target)
            if theirs != "debategraph" and ranks[theirs] < mine:
                upward.append(f"{path.relative_to(ROOT)}:{line} {module} -> {target}")
    assert not upward, "imports up a layer:\n" + "\n".join(upward)


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from debategraph.cli.app import app\n")
    assert imports(probe) == [(2, "debategraph.cli.app")]
    assert layer_ranks()["cli"] < layer_ranks()["state"]


def test_only_the_cli_imports_typer_and_rich() -> None:
    """A factory, a node or a record never needs the terminal: ``graphs/`` and below
    import neither typer nor rich (at run time LangGraph's httpx may load rich itself)."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if layer_of(module_name(path)) in ("cli", "eval", "doctor", "debategraph"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            found += [
                f"{path.relative_to(ROOT)}:{node.lineno} {n}"
                for n in names
                if n.split(".")[0] in ("typer", "rich", "click")
            ]
    assert not found, "terminal libraries below the CLI:\n" + "\n".join(found)
