"""`debategraph discuss` end to end against the stub server, and its bad inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import one_error_line, run_cli, stub_args
from tests.openai_stub import StubOpenAIServer

PAPER = """# Sparse Debate Helps

## Abstract
We show that sparse communication topologies improve multi-agent debate.

## Method
Agents on a ring read only their neighbours.

## Results
Ring topologies match full ones at lower cost.
"""


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    path = tmp_path / "paper.md"
    path.write_text(PAPER)
    return path


def test_discuss_writes_report_and_json(
    paper: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.md"
    with StubOpenAIServer() as server:  # default responder: valid arguments for any schema
        args = ["discuss", str(paper), "--rounds", "2", "--report", str(report)]
        code, out, err = run_cli(
            [*args, "--json", *stub_args(server, tmp_path / "d.sqlite")], capsys
        )
    assert code == 0, err
    result = json.loads(out)
    assert result["title"] == "Sparse Debate Helps"
    assert result["termination_reason"] in {"converged", "stalled", "rounds_completed"}
    assert result["report"] is not None and result["report_file"] == str(report)
    text = report.read_text()
    assert text.startswith("# ") and "Sparse Debate Helps" in text
    code, out, _ = run_cli(["threads", "--db", str(tmp_path / "d.sqlite"), "--json"], capsys)
    assert [(r["pattern"], r["status"]) for r in json.loads(out)] == [("discussion", "finished")]


def test_document_without_sections_is_one_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flat = tmp_path / "flat.txt"
    flat.write_text("Just a paragraph about debate, with no headings at all.\n")
    with StubOpenAIServer() as server:
        args = ["discuss", str(flat), "--rounds", "1", "--report", str(tmp_path / "r.md")]
        code, _, err = run_cli([*args, *stub_args(server, tmp_path / "d.sqlite")], capsys)
    assert code == 0, err
    assert "note:" in err and "section" in err


def test_max_iterations_is_a_hidden_deprecated_rounds(
    paper: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with StubOpenAIServer() as server:
        args = ["discuss", str(paper), "--max-iterations", "1", "--report", str(tmp_path / "r.md")]
        code, out, err = run_cli(
            [*args, "--json", *stub_args(server, tmp_path / "d.sqlite")], capsys
        )
    assert code == 0, err
    assert "note: --max-iterations is deprecated: use --rounds" in err
    assert json.loads(out)["iterations_completed"] == 1
    code, out, _ = run_cli(["discuss", "--help"], capsys)
    assert code == 0
    assert "--rounds" in out and "--max-iterations" not in out


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--threshold", "1.5"], "1.5"),
        (["--threshold", "-0.1"], "-0.1"),
        (["--rounds", "0"], "0"),
        (["--max-iterations", "0"], "--rounds must be at least 1, got 0"),
        (["--rounds", "2", "--max-iterations", "2"], "give only --rounds"),
        (["--time-limit", "soon"], "'soon'"),
        (["--time-limit", "0m"], "positive"),
    ],
)
def test_discuss_bad_settings(
    extra: list[str], needle: str, paper: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        ["discuss", str(paper), *extra, "--db", str(tmp_path / "d.sqlite")], capsys
    )
    assert code == 2, err
    assert needle in one_error_line(err)
    assert out == ""


def test_discuss_bad_documents_and_personas(
    paper: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ["--db", str(tmp_path / "d.sqlite")]
    empty = tmp_path / "empty.md"
    empty.write_text("  \n")
    code, _, err = run_cli(["discuss", str(empty), *db], capsys)
    assert code == 2 and "empty" in one_error_line(err)
    code, _, err = run_cli(["discuss", str(tmp_path / "missing.md"), *db], capsys)
    assert code == 2 and "missing.md" in one_error_line(err)
    binary = tmp_path / "paper.pdf"
    binary.write_bytes(b"%PDF-1.7\xff\xfe\x00\x01")
    code, _, err = run_cli(["discuss", str(binary), *db], capsys)
    assert code == 2 and "paper.pdf" in one_error_line(err)
    personas = tmp_path / "personas.json"
    for bad, needle in [
        ("not json", "not valid JSON"),
        (json.dumps({"name": "x"}), "expected a JSON list"),
        (json.dumps([{"name": "Only"}]), "persona"),
        (json.dumps([{"name": "A", "focus": "x"}, {"name": "a", "focus": "y"}]), "a"),
    ]:
        personas.write_text(bad)
        code, _, err = run_cli(["discuss", str(paper), "--persona", str(personas), *db], capsys)
        assert code == 2, (bad, err)
        assert needle in one_error_line(err), (bad, err)
