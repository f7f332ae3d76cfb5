"""The lean client and stock ``ChatOpenAI`` give the same runs.

:class:`~debategraph.models.client.LeanChatOpenAI` is the default chat model; with
``DEBATEGRAPH_LEAN_CLIENT=0`` (or where a private name it needs has changed, see
:mod:`debategraph.compat`) bindings are langchain-openai's ``ChatOpenAI``. Each pattern
runs here twice against the same stub endpoint, once each way, blocking and awaited: the
endpoint receives the same requests, and the runs record the same turns, usage and ending.
(``make test-stock-client`` runs the whole suite with the lean client off.)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

import debategraph
from debategraph.models import ModelSpec, clear_model_cache, get_chat_model
from debategraph.models.binding import LEAN_CLIENT_ENV
from debategraph.models.client import LeanChatOpenAI
from tests.openai_stub import StubOpenAIServer

INPUT = "Should a city put its budget to a vote of its residents? Say 18 if unsure."
PATTERNS = ("debate", "discussion", "group_chat", "meeting", "solver_debate")


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer() as stub:
        yield stub


def run_once(pattern: str, server: StubOpenAIServer, awaited: bool) -> dict[str, Any]:
    """One run of ``pattern`` at the stub: what it recorded, and the requests it sent."""
    clear_model_cache()
    server.requests.clear()
    spec = ModelSpec(model="stub", base_url=server.url, max_retries=0)
    factory = getattr(debategraph, f"build_{pattern}")
    graph = factory(spec, max_rounds=2).compile(name=pattern)
    config = {"recursion_limit": debategraph.recursion_limit(graph)}
    payload = {"messages": [{"role": "user", "content": INPUT}]}
    out = asyncio.run(graph.ainvoke(payload, config)) if awaited else graph.invoke(payload, config)
    return {
        "turns": [(t.agent, t.round, t.content) for t in out["transcript"]],
        "tokens": (out["usage"].prompt_tokens, out["usage"].completion_tokens),
        "ending": out.get("termination_reason"),
        # A round's calls are in flight at once: they arrive in any order.
        "requests": sorted(json.dumps(r, sort_keys=True) for r in server.requests),
    }


@pytest.mark.parametrize("awaited", [False, True], ids=["invoke", "ainvoke"])
@pytest.mark.parametrize("pattern", PATTERNS)
def test_lean_and_stock_clients_give_the_same_run(
    pattern: str, awaited: bool, server: StubOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LEAN_CLIENT_ENV, "0")
    stock = run_once(pattern, server, awaited)
    assert type(get_chat_model(ModelSpec(model="stub", base_url=server.url)).chat) is ChatOpenAI
    monkeypatch.delenv(LEAN_CLIENT_ENV)
    lean = run_once(pattern, server, awaited)
    chat = get_chat_model(ModelSpec(model="stub", base_url=server.url)).chat
    assert isinstance(chat, LeanChatOpenAI)
    clear_model_cache()
    assert stock["requests"] and len(stock["turns"]) > 1
    assert lean == stock
