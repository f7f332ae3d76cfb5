"""The notebooks use only the public API: the names of ``debategraph.__all__``.

Each notebook's code cells are read with :mod:`ast`: a ``from debategraph... import``
must be ``from debategraph import NAME`` of a public name, ``import debategraph.x`` is
internal, and ``debategraph.NAME`` is public or a module attribute (``__file__``).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import debategraph
from debategraph import registry

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def code_of(notebook: Path) -> str:
    """The notebook's code cells, one program (IPython's ``%``/``!`` lines left out)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    lines = [
        line
        for cell in cells
        if cell["cell_type"] == "code"
        for line in "".join(cell["source"]).splitlines()
        if not line.lstrip().startswith(("%", "!"))
    ]
    return "\n".join(lines)


def internal_names(code: str) -> list[str]:
    """What ``code`` takes from debategraph besides its public names, as written."""
    public = set(debategraph.__all__)
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("debategraph"):
            if node.module != "debategraph":
                found += [f"{node.module}.{a.name}" for a in node.names]
            else:
                found += [a.name for a in node.names if a.name not in public]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("debategraph.")]
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "debategraph"
            and node.attr not in public
            and not node.attr.startswith("__")
        ):
            found.append(f"debategraph.{node.attr}")
    return found


def test_there_are_notebooks() -> None:
    assert len(NOTEBOOKS) >= 6


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_imports_only_public_names(notebook: Path) -> None:
    assert internal_names(code_of(notebook)) == []


def test_the_check_sees_each_way_in() -> None:
    code = (
        "from debategraph import build_debate, registry\n"
        "from debategraph.checkpoints import open_checkpointer\n"
        "import debategraph.nodes.conversation\n"
        "import debategraph\n"
        "debategraph.build_meeting, debategraph.__file__, debategraph.documents\n"
    )
    assert internal_names(code) == [
        "registry",
        "debategraph.checkpoints.open_checkpointer",
        "debategraph.nodes.conversation",
        "debategraph.documents",
    ]


def test_type_checkers_see_every_builtin_factory() -> None:
    # The TYPE_CHECKING block (read by _homes) names each factory of the registry's lines.
    assert registry.factories().items() <= debategraph._homes().items()


def test_every_public_name_is_there_and_the_import_is_light() -> None:
    for name in debategraph.__all__:
        assert getattr(debategraph, name) is not None
    assert {"open_checkpointer", "termination", "render_report_markdown"} <= set(
        debategraph.__all__
    )
    code = (
        "import sys, debategraph; debategraph.__all__; "
        "print(sorted(n for n in ('langgraph', 'langchain_core', 'pydantic') if n in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
