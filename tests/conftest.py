"""Shared fixtures: the OpenAI-compatible stub server and a solver responder."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.openai_stub import StubOpenAIServer

os.environ.setdefault("LANGGRAPH_CLI_NO_ANALYTICS", "1")


def solver_of(request: dict[str, Any]) -> str:
    """The solver a chat request is for (named in its system message)."""
    for message in request.get("messages", []):
        if message.get("role") == "system":
            found = re.search(r"You are (\S+),", str(message.get("content", "")))
            if found:
                return found.group(1)
    return "?"


def answer_18(request: dict[str, Any]) -> dict[str, Any]:
    """Every solver answers 18."""
    return {
        "reasoning": f"{solver_of(request)}: 48/2 = 24, no, 18.",
        "answer": "18",
        "confidence": 0.9,
    }


@pytest.fixture
def stub() -> Iterator[StubOpenAIServer]:
    """A running stub server whose solvers all answer 18."""
    with StubOpenAIServer(answer_18) as server:
        yield server
