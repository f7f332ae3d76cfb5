"""The patterns' notebooks run as written, against an OpenAI-compatible endpoint.

Each notebook reads ``DEBATEGRAPH_MODEL`` (its default: ``local``, the embedded model)
and ``OPENAI_BASE_URL``, as a user pointing it at a provider sets them: here the suite's
stub server, so each runs in seconds. Every pattern runs on the embedded model itself
through its CLI (``tests/test_embedded.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.notebooks import run_notebook
from tests.openai_stub import StubOpenAIServer

pytestmark = pytest.mark.slow  # a notebook's kernel


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubOpenAIServer]:
    """The stub, named as a user names a provider: the kernel inherits the environment."""
    with StubOpenAIServer() as server:
        monkeypatch.setenv("DEBATEGRAPH_MODEL", "stub")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield server


def test_debate_notebook_runs(tmp_path: Path, endpoint: StubOpenAIServer) -> None:
    text, _ = run_notebook("debate.ipynb", tmp_path)
    assert "graph TD" in text and "human" in text
    assert "waiting at: ('human',)" in text
    assert "termination: rounds_completed rounds: 2" in text
    assert "winner:" in text and "Talk about commuting time." in text
    assert endpoint.calls > 0


def test_discussion_notebook_runs(tmp_path: Path, endpoint: StubOpenAIServer) -> None:
    text, _ = run_notebook("discussion.ipynb", tmp_path)
    assert "Sparse Debate Helps | ['Method', 'Results']" in text or "Sparse Debate Helps" in text
    assert "graph TD" in text and "termination:" in text
    assert "# Discussion report: Sparse Debate Helps" in text
    assert endpoint.calls > 0


def test_group_chat_notebook_runs(tmp_path: Path, endpoint: StubOpenAIServer) -> None:
    text, _ = run_notebook("group_chat.ipynb", tmp_path)
    assert "graph TD" in text and "close_turn" in text
    assert "complete: False | turns: 1" in text
    assert "termination: matched" in text or "termination: max_turns" in text
    assert "Writer saw and wrote" in text
    assert endpoint.calls > 0


def test_meeting_notebook_runs(tmp_path: Path, endpoint: StubOpenAIServer) -> None:
    text, _ = run_notebook("meeting.ipynb", tmp_path)
    assert "graph TD" in text and "termination: completed" in text
    assert "decision:" in text or "no usable decision" in text
    assert endpoint.calls > 0


def test_solver_debate_notebook_runs(tmp_path: Path, endpoint: StubOpenAIServer) -> None:
    text, _ = run_notebook("solver_debate.ipynb", tmp_path)
    assert "graph TD" in text
    assert "answer:" in text and "termination: rounds_completed" in text
    assert "parent graph got:" in text
    assert endpoint.calls > 0
