"""Tests for the native async model calls: astructured_call, atext_call, Agent.aask/asay."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from debategraph.errors import ModelUnavailableError
from debategraph.models import (
    ModelBinding,
    astructured_call,
    atext_call,
    bind_model,
    structured_call,
    text_call,
)
from debategraph.models import calls as model_calls
from debategraph.nodes.agent import Agent
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply
from tests.openai_stub import InGroups, StubOpenAIServer
from tests.studio_server import closed_port
from tests.test_models import (
    GOOD,
    HINT_PREFIX,
    MESSAGES,
    Estimate,
    spec_for,
)

T = TypeVar("T")

#: Generous: only there so that a hang fails the test instead of stalling the suite.
TIMEOUT_S = 60.0


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(lambda body: dict(GOOD)) as srv:
        yield srv


def run(coro: Coroutine[Any, Any, T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, TIMEOUT_S)

    return asyncio.run(bounded())


# --------------------------------------------------------------------------
# Concurrency: every call is in flight at once, on no thread
# --------------------------------------------------------------------------


def test_sixteen_concurrent_aask_are_all_in_flight_at_once() -> None:
    # A thread-pool version would be capped by the default executor (min(32, cpus + 4)).
    # The stub answers none of the 16 until all 16 are in flight (no stopwatch).
    with StubOpenAIServer(InGroups(16, 16, lambda body: dict(GOOD))) as srv:
        agent = Agent("solver", bind_model(spec_for(srv.url, timeout_s=30)))

        async def ask_all() -> list[Any]:
            return await asyncio.gather(*(agent.aask(None, Estimate, MESSAGES) for _ in range(16)))

        results = run(ask_all())
        assert srv.max_in_flight == 16
        assert srv.calls == 16
    assert [r.value for r in results] == [Estimate.model_validate(GOOD)] * 16
    assert all(r.attempts == 1 and r.usage.calls == 1 for r in results)


def test_aask_and_asay_do_not_use_a_thread(
    server: StubOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_thread(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the async path must not hand the call to a thread")

    agent = Agent("solver", bind_model(spec_for(server.url)))

    async def warm_then_both() -> tuple[Any, Any]:
        # The OpenAI client asks for the platform once, on a thread; then never again.
        # (LangChain itself still uses the loop's executor for small steps: not patched.)
        await agent.aask(None, Estimate, MESSAGES)
        monkeypatch.setattr(asyncio, "to_thread", no_thread)
        return await agent.aask(None, Estimate, MESSAGES), await agent.asay(None, MESSAGES)

    asked, said = run(warm_then_both())
    assert asked.value == Estimate.model_validate(GOOD)
    assert said.text == '{"answer": "18", "confidence": 0.75}'  # no tools: JSON content
    assert server.calls == 3


# --------------------------------------------------------------------------
# astructured_call repairs, retries and fails like structured_call
# --------------------------------------------------------------------------


def test_async_malformed_json_then_good(server: StubOpenAIServer) -> None:
    server.inject("malformed_json")
    result = run(astructured_call(bind_model(spec_for(server.url)), Estimate, MESSAGES))
    assert result.value == Estimate.model_validate(GOOD)
    assert result.attempts == 2
    assert result.usage.calls == 2  # the unreadable reply counts as a call
    assert len(server.requests) == 2


def test_async_bad_args_then_good_sends_a_repair_hint(server: StubOpenAIServer) -> None:
    server.inject("bad_args")
    result = run(astructured_call(bind_model(spec_for(server.url)), Estimate, MESSAGES))
    assert result.value == Estimate.model_validate(GOOD)
    assert result.attempts == 2
    assert server.requests[1]["messages"][-1]["content"].startswith(HINT_PREFIX)


def test_async_malformed_json_every_time_falls_back(server: StubOpenAIServer) -> None:
    server.inject("malformed_json", 2)
    binding = bind_model(spec_for(server.url))
    result = run(astructured_call(binding, Estimate, MESSAGES, max_attempts=2))
    assert result.value is None
    assert result.attempts == 2
    assert (result.reason or "").startswith("invalid output after 2 attempts")


@pytest.mark.parametrize(("fault", "status"), [("5xx", 500), ("503", 503)])
def test_async_server_error_raises_model_unavailable(
    server: StubOpenAIServer, fault: str, status: int
) -> None:
    server.inject(fault)
    with pytest.raises(ModelUnavailableError, match=f"HTTP {status}") as info:
        run(astructured_call(bind_model(spec_for(server.url)), Estimate, MESSAGES))
    assert server.url in str(info.value)
    assert len(server.requests) == 1


def test_async_unreachable_endpoint_raises_model_unavailable() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    binding = bind_model(spec_for(url))
    with pytest.raises(ModelUnavailableError, match="unreachable"):
        run(astructured_call(binding, Estimate, MESSAGES))
    with pytest.raises(ModelUnavailableError, match="unreachable"):
        run(atext_call(binding, MESSAGES))


def test_async_json_schema_falls_back_to_function_calling(
    server: StubOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model_calls, "_NO_JSON_SCHEMA", set())

    answer = server.responder

    def no_response_format(body: dict[str, Any]) -> Any:
        assert "response_format" not in body, "response_format is not supported here"
        return answer(body)  # the stub answers HTTP 500 with the message above

    server.responder = no_response_format
    chat = ChatOpenAI(model="stub", base_url=server.url, api_key=SecretStr("x"), max_retries=0)
    result = run(
        astructured_call(ModelBinding(chat, "json_schema", server.url), Estimate, MESSAGES)
    )
    assert result.value == Estimate.model_validate(GOOD)
    assert result.attempts == 1  # the rejected json_schema request is not an attempt
    assert ["response_format" in b for b in server.requests] == [True, False]


def test_sync_and_async_give_the_same_result() -> None:
    def script() -> list[BaseMessage]:
        return [
            tool_reply("Estimate", {"confidence": 0.5}, prompt_tokens=10, completion_tokens=5),
            tool_reply("Estimate", {"answer": "18", "confidence": 7}, prompt_tokens=20),
        ]

    sync_model, async_model = (
        ScriptedChatModel(responses=script()),
        ScriptedChatModel(responses=script()),
    )
    sync = structured_call(bind_model(sync_model), Estimate, MESSAGES)
    asyn = run(astructured_call(bind_model(async_model), Estimate, MESSAGES))
    assert asyn.value == sync.value == Estimate(answer="18", confidence=1.0)
    no_latency = {"latency_s": 0.0}
    assert asyn.usage.model_copy(update=no_latency) == sync.usage.model_copy(update=no_latency)
    assert (asyn.attempts, asyn.reason) == (sync.attempts, sync.reason)
    assert async_model.prompts == sync_model.prompts
    assert asyn.usage.latency_s >= 0


# --------------------------------------------------------------------------
# atext_call
# --------------------------------------------------------------------------


def test_atext_call_returns_text_and_usage(server: StubOpenAIServer) -> None:
    server.responder = lambda body: "Tea wins."
    result = run(atext_call(bind_model(spec_for(server.url)), MESSAGES))
    assert result.text == "Tea wins."
    assert result.attempts == 1 and result.reason is None
    assert result.usage.calls == 1
    assert result.usage.prompt_tokens == server.prompt_tokens
    assert result.usage.completion_tokens == server.completion_tokens
    assert not result.usage.estimated


def test_atext_call_retries_an_empty_reply(server: StubOpenAIServer) -> None:
    replies = iter(["   ", "Coffee wins."])
    server.responder = lambda body: next(replies)
    result = run(Agent("Bob", bind_model(spec_for(server.url))).asay(None, MESSAGES))
    assert result.text == "Coffee wins."
    assert result.attempts == 2
    assert result.usage.calls == 2
    assert len(server.requests) == 2


def test_atext_call_every_reply_empty_gives_a_reason() -> None:
    model = ScriptedChatModel(responses=[text_reply(""), text_reply(" ")])
    result = run(atext_call(bind_model(model), [HumanMessage("Argue.")]))
    assert result.text == ""
    assert result.attempts == 2
    assert result.reason == "empty reply after 2 attempts"


def test_unhandled_errors_reach_the_caller_unchanged() -> None:
    def respond(messages: list[BaseMessage]) -> AIMessage:
        raise KeyError("not a model error")

    binding = bind_model(ScriptedChatModel(respond=respond))
    with pytest.raises(KeyError, match="not a model error"):
        run(astructured_call(binding, Estimate, MESSAGES))
    with pytest.raises(KeyError, match="not a model error"):
        text_call(binding, MESSAGES)
