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
