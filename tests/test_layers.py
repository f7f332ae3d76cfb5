"""Imports go one way: down the layers that ``docs/architecture.md`` lists, and in no circle.

The test reads the ``layers`` block of that page (the one place the order is written)
and checks every ``debategraph`` import in ``src/``, function-level and ``TYPE_CHECKING``
ones included: a module may import its own layer or one below it.

Within a layer, modules must not import each other in a circle. What counts as an import
for that: every ``import debategraph...`` and ``from debategraph... import ...`` statement
in a module, wherever it stands (at module level, inside a function, under ``if
TYPE_CHECKING:``): a circle through a function-level import is still two modules that
each need the other. ``from package import name`` is an import of the submodule
``package.name`` when there is one, else of the package's ``__init__``. Not counted: the
parent packages Python runs on the way to a module (``import a.b.c`` runs ``a/__init__``
and ``a/b/__init__`` too: those are not the importer's choice), imports of a module by
itself, and modules named by strings (``importlib.import_module``, the registry's
``"module:attribute"`` lines), which are read only when used.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from itertools import pairwise
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


def module_name(path: Path, src: Path = SRC.parent) -> str:
    parts = path.relative_to(src).with_suffix("").parts
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


def import_edges(src: Path) -> dict[str, dict[str, str]]:
    """Module -> {module it imports: ``path:line`` of the first such import}, under ``src``.

    ``src`` is the directory holding the top package (``src/`` for ``debategraph``).
    What counts is written in this file's docstring.
    """
    paths = {module_name(p, src): p for p in sorted(src.rglob("*.py"))}
    edges: dict[str, dict[str, str]] = {}
    for module, path in paths.items():
        targets = edges.setdefault(module, {})
        for node in ast.walk(ast.parse(path.read_text())):
            found: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found = [
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in paths else node.module
                    for a in node.names
                ]
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            for target in found:
                if target in paths and target != module:
                    targets.setdefault(target, f"{path.relative_to(src.parent)}:{node.lineno}")
    return edges


def import_circles(src: Path) -> list[str]:
    """Every import circle among the modules under ``src``, one line each.

    Each strongly connected part of the import graph is reported by one shortest circle
    through its first module (by name): ``a -> b (src/a.py:3) -> a (src/b.py:9)``, each
    arrow followed by where the import is written, then the part's other modules.
    """
    return circles(import_edges(src))


def layer_edges(src: Path) -> dict[str, dict[str, str]]:
    """Top-level package or module -> {one it imports: where it first does}, under ``src``.

    ``debategraph.models.choice`` importing ``debategraph.nodes.agent`` is an arrow
    ``debategraph.models -> debategraph.nodes``; the package's own ``__init__`` (the public
    API, which names every layer) is left out.
    """

    def top(module: str) -> str:
        return ".".join(module.split(".")[:2])

    edges: dict[str, dict[str, str]] = {}
    for module, targets in import_edges(src).items():
        if "." not in module:
            continue
        arrows = edges.setdefault(top(module), {})
        for target, where in targets.items():
            if "." in target and top(target) != top(module):
                arrows.setdefault(top(target), where)
                edges.setdefault(top(target), {})
    return edges


def circles(edges: dict[str, dict[str, str]]) -> list[str]:
    """Every circle in a graph of imports (``edges``: node -> {target: where}), one line each.

    As :func:`import_circles` reports them.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    parts: list[list[str]] = []

    def connect(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in edges[module]:
            if target not in index:
                connect(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            part = []
            while True:
                member = stack.pop()
                part.append(member)
                if member == module:
                    break
            if len(part) > 1:
                parts.append(sorted(part))

    for module in sorted(edges):
        if module not in index:
            connect(module)
    return [_shortest_circle(edges, part) for part in sorted(parts)]


def _shortest_circle(edges: dict[str, dict[str, str]], part: list[str]) -> str:
    """The shortest circle through ``part[0]`` inside ``part``, as one line."""
    start, members = part[0], set(part)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        module = queue.popleft()
        for target in sorted(edges[module]):
            if target in members and target not in came_from:
                came_from[target] = module
                queue.append(target)
        if start in came_from:
            break
    chain = [start]
    while len(chain) == 1 or chain[-1] != start:
        chain.append(came_from[chain[-1]])
    chain.reverse()  # start -> ... -> start
    steps = [f"{b} ({edges[a][b]})" for a, b in pairwise(chain)]
    others = sorted(members - set(chain))
    tied = f" [tied up with {', '.join(others)} too]" if others else ""
    return " -> ".join([chain[0], *steps]) + tied


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


def test_no_import_circles() -> None:
    circles = import_circles(SRC.parent)
    assert not circles, "import circles (see this file's docstring for what counts):\n" + (
        "\n".join(circles)
    )


def test_no_arrow_up_between_peers() -> None:
    """Peers of one layer line import each other one way only: no circle of top-level
    packages or modules (``models`` importing ``context``, which imported ``models``)."""
    found = circles(layer_edges(SRC.parent))
    assert not found, "packages that import each other:\n" + "\n".join(found)


def plant(root: Path, files: dict[str, str]) -> Path:
    """A ``src/`` under ``root`` holding ``files`` (path under ``src/`` -> text)."""
    for name, text in files.items():
        (root / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "src" / name).write_text(text)
    return root / "src"


def test_the_check_sees_packages_that_import_each_other(tmp_path: Path) -> None:
    src = plant(
        tmp_path,
        {
            "debategraph/__init__.py": "from debategraph.models import choice\n",
            "debategraph/models/__init__.py": "",
            "debategraph/models/choice.py": "def f():\n    from debategraph.context import C\n",
            "debategraph/context.py": "from debategraph.models import choice\n",
        },
    )
    assert circles(layer_edges(src)) == [
        "debategraph.context -> debategraph.models (src/debategraph/context.py:1)"
        " -> debategraph.context (src/debategraph/models/choice.py:2)"
    ]


#: The faces: what people and programs drive a run through. With the strategies they
#: know no pattern; a pattern's own CLI module (``cli/patterns/<p>.py``) is the pattern's.
FACES = ("cli", "eval", "serve", "doctor", "views", "runs")


def pattern_states() -> dict[str, str]:
    """Each built-in pattern's state module -> the pattern's name."""
    from debategraph import registry

    return {entry.state: entry.name for entry in registry.BUILTIN}


def test_no_strategy_or_face_imports_a_patterns_state() -> None:
    states = pattern_states()
    found = []
    for path in sorted(SRC.rglob("*.py")):
        module = module_name(path)
        if layer_of(module) not in ("strategies", *FACES):
            continue
        for line, target in imports(path):
            pattern = states.get(target)
            if pattern is not None and module != f"debategraph.cli.patterns.{pattern}":
                found.append(f"{path.relative_to(ROOT)}:{line} {module} -> {target}")
    assert not found, "a pattern's state imported by a strategy or a face:\n" + "\n".join(found)


def test_the_check_sees_a_circle_through_a_function(tmp_path: Path) -> None:
    """A planted circle (one side imports inside a function) is found and named."""
    package = tmp_path / "src" / "debategraph"
    (package / "cli").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "cli" / "__init__.py").write_text("")
    (package / "cli" / "app.py").write_text(
        "def main():\n    from debategraph.cli import commands\n"
    )
    (package / "cli" / "commands.py").write_text("from debategraph.cli.app import main\n")
    (package / "cli" / "render.py").write_text("from debategraph.cli import app\n")
    assert import_circles(tmp_path / "src") == [
        "debategraph.cli.app -> debategraph.cli.commands (src/debategraph/cli/app.py:2)"
        " -> debategraph.cli.app (src/debategraph/cli/commands.py:1)"
    ]


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


#: What rendering for people imports: the pages and exports (``views``) and HTML escaping.
RENDERING = ("debategraph.views", "html")


def rendering_imports(path: Path) -> list[str]:
    """``line module`` of each import in a file of what renders (see :data:`RENDERING`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        found += [
            f"{node.lineno} {name}"
            for name in names
            if any(name == r or name.startswith(f"{r}.") for r in RENDERING)
        ]
    return found


def test_checkpoints_store_and_read_only() -> None:
    """Nothing in ``checkpoints/`` renders a page or an export: ``views`` does, reading
    threads through ``checkpoints``; a checkpoints module imports neither ``views`` nor
    HTML escaping."""
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((SRC / "checkpoints").rglob("*.py"))
        for line in rendering_imports(path)
    ]
    assert not found, "rendering in checkpoints/ (it belongs in views/):\n" + "\n".join(found)


def test_the_check_sees_rendering(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import html\nfrom debategraph.views.shell import esc\nimport htmlmin\n")
    assert rendering_imports(probe) == ["1 html", "2 debategraph.views.shell"]


# --------------------------------------------------------------------------------------------
# Every module is named in docs/architecture.md (issue 48, item 5)
# --------------------------------------------------------------------------------------------


def doc_blocks(text: str) -> list[str]:
    """The page's blocks: each paragraph, list item, table row, heading and code block."""
    blocks: list[list[str]] = []
    fenced = False
    for line in text.splitlines():
        starts = re.match(r"(- |\d+\. |\||#|```)", line) and not fenced
        if line.startswith("```"):
            fenced = not fenced
        if not line.strip() and not fenced:
            blocks.append([])
        elif starts or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    return ["\n".join(block) for block in blocks if block]


def written(name: str, text: str) -> bool:
    """Whether ``text`` holds ``name`` as a path of its own (not the end of a longer one)."""
    return re.search(rf"(?<![\w/.]){re.escape(name)}(?![\w/])", text) is not None


def names_folder(block: str, folder: str) -> bool:
    """Whether a block names ``folder`` (``serve``): as `` `serve` `` or in a path ``serve/...``."""
    return (
        f"`{folder}`" in block or re.search(rf"(?<![\w/.]){re.escape(folder)}/", block) is not None
    )


def unnamed_modules(src: Path, doc: str, patterns: list[str]) -> list[str]:
    """The modules under ``src`` (its ``__init__.py`` files aside) that ``doc`` names nowhere.

    A module is named when the page holds its path under ``src`` (``serve/owners.py``; a
    pattern of ``patterns`` in it may be written ``p``: ``nodes/p/setup.py`` names each
    pattern's setup module), or its file name in a block (a paragraph, list item or table
    row) that names its folder (`` `serve` `` or ``serve/``).
    """
    blocks = doc_blocks(doc)
    missing = []
    for path in sorted(src.rglob("*.py")):
        if path.name == "__init__.py":
            continue
        relative = path.relative_to(src)
        parts = relative.parts
        generic = [
            "/".join(
                "p" if part == name else "p.py" if part == f"{name}.py" else part for part in parts
            )
            for name in patterns
            if name in parts or f"{name}.py" in parts
        ]
        if any(written(name, doc) for name in (relative.as_posix(), *generic)):
            continue
        folder = relative.parent.as_posix()
        if folder != "." and any(
            written(path.name, block) and names_folder(block, folder) for block in blocks
        ):
            continue
        missing.append(relative.as_posix())
    return missing


def test_every_module_is_named_in_the_architecture_page() -> None:
    """Each module of the package is named, with what it holds, on the page."""
    from debategraph import registry

    patterns = [entry.name for entry in registry.BUILTIN]
    missing = unnamed_modules(SRC, DOC.read_text(), patterns)
    assert not missing, (
        "modules docs/architecture.md names nowhere (see unnamed_modules for what counts):\n"
        + "\n".join(missing)
    )


def test_the_check_sees_an_unnamed_module(tmp_path: Path) -> None:
    src = plant(
        tmp_path,
        {
            "debategraph/__init__.py": "",
            "debategraph/serve/__init__.py": "",
            "debategraph/serve/owners.py": "",
            "debategraph/serve/stray.py": "",
            "debategraph/nodes/chat/setup.py": "",
            "debategraph/nodes/chat/turns.py": "",
            "debategraph/nodes/chat/extra.py": "",
            "debategraph/nodes/other/setup.py": "",
            "debategraph/words.py": "",
            "debategraph/cli/options.py": "",
        },
    )
    doc = (
        "- `serve`: `owners.py` (whose threads).\n"
        "- `cli`: what `eval/options.py` checks; `nodes/p/setup.py`, `nodes/p/turns.py`\n"
        "\n"
        "Also `stray.py` and `words.py`, outside the server's block.\n"
    )
    assert unnamed_modules(src / "debategraph", doc, ["chat"]) == [
        "cli/options.py",  # the block names `cli`, but `options.py` only as eval's
        "nodes/chat/extra.py",
        "nodes/other/setup.py",  # `other` is no pattern: `nodes/p/setup.py` is not its name
        "serve/stray.py",  # named, but not in a block that names `serve`
    ]
