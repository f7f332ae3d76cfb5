"""What the README tells a user to type works as it says (issue 20, item 8)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import run_cli, stub_args
from tests.openai_stub import StubOpenAIServer

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_archive_query_in_the_readme_reads_the_file_solve_wrote(
    stub: StubOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The README's archive query reads the file a default run archives to."""
    text = README.read_text(encoding="utf-8")
    found = re.search(r'sqlite3 (\S+) "(SELECT [^"]+ FROM debates)"', text)
    assert found, "the README shows no archive query"
    archive_file, query = found.groups()
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(
        ["solve", "2 + 2?", *stub_args(stub, "debates.sqlite"), "--agents", "2", "--rounds", "1"],
        capsys,
    )
    assert code == 0, err
    with sqlite3.connect(tmp_path / archive_file) as conn:
        rows = conn.execute(query).fetchall()
    assert len(rows) == 1
    assert rows[0][1] == "18"  # the stub's solvers all answer 18


#: What the README's Python may import from debategraph: the package's own names and the
#: documented modules (``docs/architecture.md``); everything else is internal.
DOCUMENTED = {
    "debategraph",
    "debategraph.checkpoints",
    "debategraph.models",
    "debategraph.strategies.selection",
    "debategraph.strategies.termination",
}


def test_readme_python_uses_the_public_api() -> None:
    import ast

    import debategraph

    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) >= 4
    for block in blocks:
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("debategraph"):
                assert node.module in DOCUMENTED, f"README imports {node.module}"
                if node.module == "debategraph":
                    missing = {a.name for a in node.names} - set(debategraph.__all__)
                    assert not missing, f"README imports {missing} from debategraph"
