"""Shared fixtures: the OpenAI-compatible stub server and a solver responder."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from debategraph.cli import main
from tests.backends import checkpoint_url, saver
from tests.openai_stub import StubOpenAIServer, default_responder

os.environ.setdefault("LANGGRAPH_CLI_NO_ANALYTICS", "1")

__all__ = ["checkpoint_url", "saver"]  # the backend fixtures, shared by every test module


def solver_of(request: dict[str, Any]) -> str:
    """The solver a chat request is for (named in its system message)."""
    for message in request.get("messages", []):
        if message.get("role") == "system":
            found = re.search(r"You are (\S+),", str(message.get("content", "")))
            if found:
                return found.group(1)
    return "?"


DEBATE_ARGUMENT = "Tea calms the mind and keeps you hydrated; coffee spikes anxiety and crashes."


def debate_reply(request: dict[str, Any]) -> Any:
    """Debaters argue; the moderator keeps it open; the judge misspells Alice."""
    tools = request.get("tools") or []
    name = tools[0]["function"]["name"] if tools else None
    if name == "ModeratorDecision":
        return {"settled": False, "leading": "alcie", "reason": "Close so far."}
    if name == "Verdict":
        return {
            "winner": "Alcie",  # misspelt: fuzzy-matched to Alice
            "scores": [{"debater": "Alice", "criterion": "evidence", "score": 8}],
            "rationale": "Alice answered every point.",
            "strongest": [{"debater": "Bob", "argument": "Coffee wakes you up."}],
        }
    return DEBATE_ARGUMENT


def answer_18(request: dict[str, Any]) -> dict[str, Any]:
    """Every solver answers 18."""
    return {
        "reasoning": f"{solver_of(request)}: 48/2 = 24, no, 18.",
        "answer": "18",
        "confidence": 0.9,
    }


def solvers_answer_18(request: dict[str, Any]) -> Any:
    """Solvers answer 18; every other call gets what its schema asks for."""
    if solver_of(request).startswith("solver_"):
        return answer_18(request)
    return default_responder(request)


@pytest.fixture
def stub() -> Iterator[StubOpenAIServer]:
    """A running stub server whose solvers all answer 18."""
    with StubOpenAIServer(answer_18) as server:
        yield server


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    captured = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 0), captured.out, captured.err


def stub_args(server: StubOpenAIServer, db: Path | str, *extra: str) -> list[str]:
    return [
        "--model",
        "stub",
        "--base-url",
        server.url,
        "--db",
        str(db),
        "--max-retries",
        "0",
        *extra,
    ]


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("debategraph: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the groups into node ids
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep tests that must share an xdist worker on one: a module's, or the embedded model's.

    ``pytest -n N --dist loadgroup`` (the default options) hands tests out one by one; a
    module whose tests share a server started once per module (Aegra, Studio, a stub whose
    counters the module reads) would start it on every worker. Its tests form one group.
    """
    for item in items:
        if item.get_closest_marker("embedded") is not None:
            # One embedded model at a time: a llama.cpp server takes every core it is given,
            # and four at once on two cores made each call slow enough to time out.
            item.add_marker(pytest.mark.xdist_group("embedded"))
            continue
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else ()
        shared = [d for chain in defs for d in chain if d.scope in ("module", "session")]
        if any(d.func.__module__.startswith("tests.") for d in shared):  # ours, not pytest's
            item.add_marker(pytest.mark.xdist_group(item.module.__name__ if item.module else ""))
