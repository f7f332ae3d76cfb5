"""No module of ``src/`` but ``compat.py`` uses a private name of another library.

A private name is one with a single leading underscore. Reached outside this package's
own code it is one of:

- an import of it (``from langgraph._internal import x``, ``from m import _x``);
- an attribute read of it (``obj._x``, ``super()._x(...)``) where no module of ``src/``
  defines ``_x`` (as a function, class, attribute or name it assigns);
- the same reached by its name as a string: ``getattr(obj, "_x")`` (and ``hasattr``,
  ``setattr``, ``delattr``), under the same rule.

Allowed everywhere: the documented extension points of LangChain's ``BaseChatModel``
(``_generate``, ``_agenerate``, ``_llm_type``...), which a chat model subclass must
define, and the namedtuple methods (``_replace``, ``_asdict``, ``_fields``), which are
named so only to stay out of the fields' way.

The same goes for Aegra (``aegra_api``) as a whole: it documents a server to run, not a
library, so no module but ``compat.py`` imports any module of it (``import``, ``from
... import``, ``importlib.import_module("aegra_api...")`` or a ``"aegra_api.x"`` /
``"aegra_api.x:attr"`` string another library imports), but for :data:`AEGRA_ENTRY_POINTS`.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "debategraph"
COMPAT = SRC / "compat.py"

#: Names public in all but spelling (see the module's docstring).
ALLOWED = frozenset(
    {
        "_generate",
        "_agenerate",
        "_stream",
        "_astream",
        "_llm_type",
        "_identifying_params",
        "_replace",
        "_asdict",
        "_fields",
        "_make",
    }
)


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in ALLOWED


def own_names(trees: dict[Path, ast.Module]) -> set[str]:
    """Every private name a module of ``src/`` defines."""
    names: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias) and node.asname:
                names.add(node.asname)
    return {n for n in names if private(n)}


def foreign_privates(path: Path, tree: ast.Module, own: set[str]) -> list[str]:
    """``path:line name`` for each private name of another library ``tree`` uses."""
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and not (node.module or "").startswith("debategraph"):
            names += [p for p in (node.module or "").split(".") if private(p)]
            names += [a.name for a in node.names if private(a.name)]
        elif isinstance(node, ast.Import):
            names += [
                p
                for a in node.names
                if not a.name.startswith("debategraph")
                for p in a.name.split(".")
                if private(p)
            ]
        elif isinstance(node, ast.Attribute) and private(node.attr) and node.attr not in own:
            names.append(node.attr)
        elif (named := by_string(node)) is not None and private(named) and named not in own:
            names.append(named)
        found += [f"{path.relative_to(SRC.parent)}:{node.lineno} {name}" for name in names]
    return found


#: The builtins that reach an attribute by its name as a string (their second argument).
BY_NAME = frozenset({"getattr", "hasattr", "setattr", "delattr"})


def by_string(node: ast.AST) -> str | None:
    """The attribute name ``getattr(obj, "_x", ...)`` (or its kin) reaches, if ``node`` is one."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return None
    if node.func.id not in BY_NAME or len(node.args) < 2:
        return None
    name = node.args[1]
    return name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else None


@functools.cache
def parsed(path: Path, text: str) -> ast.Module:
    return ast.parse(text)


def scan(sources: dict[Path, str]) -> list[str]:
    trees = {path: parsed(path, text) for path, text in sources.items()}
    own = own_names(trees)
    return [
        hit
        for path, tree in trees.items()
        if path != COMPAT
        for hit in foreign_privates(path, tree, own)
    ]


def sources() -> dict[Path, str]:
    return {path: path.read_text() for path in sorted(SRC.rglob("*.py"))}


def test_no_private_name_of_another_library_outside_compat() -> None:
    found = scan(sources())
    assert not found, "private names of other libraries outside compat.py:\n" + "\n".join(found)


def test_compat_holds_private_names() -> None:
    """The scan sees what compat.py does: it would catch the same code anywhere else."""
    text = COMPAT.read_text()
    moved = {SRC / "nodes" / "planted.py": text, **sources()}
    found = scan(moved)
    assert any("_DeltaSnapshot" in hit for hit in found)
    assert any("_get_request_payload" in hit for hit in found)
    assert all(hit.startswith("debategraph/nodes/planted.py:") for hit in found)


def test_the_scan_sees_each_kind_of_use() -> None:
    planted = SRC / "models" / "planted.py"
    code = (
        "from langgraph._internal._constants import NULL_TASK_ID\n"
        "from langchain_openai.chat_models.base import _handle_openai_api_error\n"
        "import openai._base_client\n"
        "def f(chat):\n"
        "    return chat._create_chat_result({})\n"
        "class C:\n"
        "    def g(self):\n"
        "        return super()._convert_input(1)\n"
        "def h(auth):\n"
        "    return getattr(auth, '_authenticate_handler', None)\n"
    )
    found = scan({**sources(), planted: code})
    assert [hit.split()[-1] for hit in found] == [
        "_internal",
        "_constants",
        "_handle_openai_api_error",
        "_base_client",
        "_authenticate_handler",
        "_create_chat_result",
        "_convert_input",
    ]


#: The Aegra names a module other than ``compat.py`` may import, ``(file, name)``: the
#: ASGI app Aegra documents running (``uvicorn aegra_api.main:app``), which
#: ``serve/server.py`` hands uvicorn.
AEGRA_ENTRY_POINTS = frozenset({("debategraph/serve/server.py", "aegra_api.main:app")})
#: A string that is a whole module path of Aegra (or ``module:attribute``): what
#: ``importlib`` or uvicorn import by name. ``"aegra_api"`` alone (a module looked for,
#: not imported) is not one.
AEGRA_PATH = re.compile(r"^aegra_api(\.\w+)+(:\w+)?$")


def aegra_imports(path: Path, tree: ast.Module) -> list[str]:
    """``path:line module`` for each Aegra module ``tree`` imports (or names to import)."""
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value] if AEGRA_PATH.match(node.value) else []
        found += [
            f"{path.relative_to(SRC.parent)}:{node.lineno} {name}"
            for name in names
            if name == "aegra_api" or name.startswith(("aegra_api.", "aegra_api:"))
        ]
    return sorted(found, key=lambda hit: int(hit.split(" ")[0].rpartition(":")[2]))


def aegra_scan(sources: dict[Path, str]) -> list[str]:
    """Every import of Aegra outside ``compat.py`` but :data:`AEGRA_ENTRY_POINTS`."""
    return [
        hit
        for path, text in sources.items()
        if path != COMPAT
        for hit in aegra_imports(path, parsed(path, text))
        if (hit.split(" ")[0].rpartition(":")[0], hit.split(" ")[1]) not in AEGRA_ENTRY_POINTS
    ]


def test_no_module_but_compat_imports_aegra() -> None:
    found = aegra_scan(sources())
    assert not found, "Aegra imported outside compat.py (add an aegra_* there):\n" + "\n".join(
        found
    )


def test_compat_holds_aegra_imports() -> None:
    """The Aegra scan sees what compat.py does: it would catch the same code anywhere else."""
    moved = {SRC / "serve" / "planted.py": COMPAT.read_text(), **sources()}
    found = aegra_scan(moved)
    assert any(hit.endswith(" aegra_api.core.orm") for hit in found)
    assert all(hit.startswith("debategraph/serve/planted.py:") for hit in found)


def test_the_aegra_scan_sees_each_kind_of_import() -> None:
    planted = SRC / "serve" / "planted.py"
    code = (
        "import aegra_api.core.orm\n"
        "from aegra_api.models import ThreadCreate\n"
        "from aegra_api import settings\n"
        "import importlib.util\n"
        "def f():\n"
        "    importlib.import_module('aegra_api.settings')\n"
        "    importlib.util.find_spec('aegra_api')\n"  # looked for, not imported
        "    return 'aegra_api.main:app'\n"  # an entry point only where allowed
    )
    found = aegra_scan({**sources(), planted: code})
    assert [hit.split()[-1] for hit in found] == [
        "aegra_api.core.orm",
        "aegra_api.models",
        "aegra_api",
        "aegra_api.settings",
        "aegra_api.main:app",
    ]
