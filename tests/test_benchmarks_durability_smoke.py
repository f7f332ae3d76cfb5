"""Smoke test: the durability benchmark runs in --quick mode and reports every figure.

The kill -9 and multi-process figures must pass (the issue's done-when figures); the prune
figure must report its numbers, whether or not it reaches its target.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SCRIPT = REPO_ROOT / "benchmarks" / "durability.py"
FIGURES = ("kill -9 recovery", "multi-process SQLite", "prune")
MUST_PASS = ("kill -9 recovery", "multi-process SQLite")


@pytest.mark.timeout(90)
def test_durability_benchmark_quick(tmp_path: Path) -> None:
    out_json = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json", str(out_json)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=80,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1), output
    for name in FIGURES:
        assert name in output, f"figure {name!r} missing from:\n{output}"
    payload = json.loads(out_json.read_text())
    assert [f["name"] for f in payload["figures"]] == list(FIGURES)
    by_name = {f["name"]: f for f in payload["figures"]}
    assert all(by_name[name]["passed"] for name in MUST_PASS), output
    prune = by_name["prune"]["values"]
    assert prune["bytes_after"] < prune["bytes_before"], output
    assert proc.returncode == (0 if all(f["passed"] for f in payload["figures"]) else 1)
    assert payload["mode"] == "quick"
