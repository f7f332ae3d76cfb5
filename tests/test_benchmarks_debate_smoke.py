"""Smoke test: the debate benchmark runs in --quick mode and reports every figure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SCRIPT = REPO_ROOT / "benchmarks" / "debate.py"
FIGURES = ("Prompt tokens (window)", "Orchestration overhead")


@pytest.mark.timeout(60)
def test_debate_benchmark_quick(tmp_path: Path) -> None:
    out_json = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json", str(out_json)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    for name in FIGURES:
        assert name in output, f"figure {name!r} missing from:\n{output}"
    assert "advisory" in output
    payload = json.loads(out_json.read_text())
    assert [f["name"] for f in payload["figures"]] == list(FIGURES)
    assert payload["mode"] == "quick"
    window = payload["figures"][0]
    assert window["passed"], output  # token counts are deterministic: never advisory
    assert window["values"]["full_ratio"] > 2 * window["values"]["ratio"]
