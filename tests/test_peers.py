"""The peers of the speed benchmark run their debates against the stub server.

AutoGen needs a virtual environment of its own (it pins protobuf 5, the LangGraph server
needs 6): the first run makes ``.venv-peers`` from ``benchmarks/peers/requirements.txt``
(as ``make peers`` does), wheels only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.groups import one_worker
from tests.openai_stub import StubOpenAIServer

pytestmark = [pytest.mark.slow, one_worker(__name__)]  # a module-scoped fixture

REPO_ROOT = Path(__file__).resolve().parents[1]
PEERS_PYTHON = Path(
    os.environ.get("DEBATEGRAPH_PEERS_PYTHON", REPO_ROOT / ".venv-peers/bin/python")
)
REPLY = {"reasoning": "48 + 24 = 72", "answer": "72", "confidence": 0.9}


def run_worker(cmd: list[str], batches: str) -> list[dict[str, object]]:
    proc = subprocess.run(
        [*cmd, "--plan", batches], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    assert lines[0] == {"ready": True}
    return lines[1:]


@pytest.fixture(scope="module")
def peers_python() -> Path:
    """AutoGen's interpreter: ``.venv-peers``, made on first use.

    Made without a pip of its own (ensurepip's 3.5 core-s of every fresh clone's run): this
    environment's pip installs into it (``pip --python``); ``make peers`` adds one.
    """
    if not PEERS_PYTHON.exists():
        requirements = REPO_ROOT / "benchmarks/peers/requirements.txt"
        venv = [sys.executable, "-m", "venv", "--without-pip", str(PEERS_PYTHON.parents[1])]
        subprocess.run(venv, check=True)
        pip = [sys.executable, "-m", "pip", "--python", str(PEERS_PYTHON), "install", "-q"]
        pip += ["--only-binary", ":all:", "-r", str(requirements)]
        subprocess.run(pip, check=True, timeout=600)
    return PEERS_PYTHON


@pytest.mark.timeout(700)
def test_autogen_peer_debates_on_a_ring(peers_python: Path) -> None:
    with StubOpenAIServer(lambda body: json.dumps(REPLY)) as server:
        cmd = [str(peers_python), str(REPO_ROOT / "benchmarks/peers/autogen_debate.py")]
        (one, two) = run_worker([*cmd, "--url", server.url], "1,2")
        assert one["answers"] == ["72"] and two["answers"] == ["72", "72"]
        assert server.calls == 3 * 12  # 4 solvers x 3 rounds, per debate
        # Each solver keeps its whole conversation: its round-3 prompt holds rounds 1-2.
        last = max(server.requests, key=lambda body: len(body["messages"]))
        assert len(last["messages"]) == 1 + 5  # system, then user/assistant x2, user
        assert "tools" not in last  # plain text replies, as in the pattern


@pytest.mark.timeout(150)
def test_langgraph_peer_debates_on_a_ring(tmp_path: Path) -> None:
    with StubOpenAIServer(lambda body: dict(REPLY)) as server:
        cmd = [sys.executable, str(REPO_ROOT / "benchmarks/workload.py"), "langgraph"]
        (one,) = run_worker([*cmd, "--url", server.url, "--db", str(tmp_path / "p.sqlite")], "1")
        assert one["answers"] == ["72"]
        assert server.calls == 12
