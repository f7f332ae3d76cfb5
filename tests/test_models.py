"""Tests for the structured-call helper, the repair step, model binding and ModelSpec."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any, Literal

import openai
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.tool import tool_call
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field, SecretStr

from debategraph import models
from debategraph.errors import ModelUnavailableError, UsageError
from debategraph.models import (
    REPAIR_HINT,
    ModelBinding,
    ModelSpec,
    bind_model,
    get_chat_model,
    repair,
    structured_call,
    text_call,
)
from debategraph.models import calls as model_calls
from debategraph.models import output as model_output
from debategraph.state.records import Usage
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply
from tests.openai_stub import StubOpenAIServer
from tests.studio_server import closed_port

HINT_PREFIX = REPAIR_HINT.split("{error}")[0]  # "Your previous reply could not be used: "


class Estimate(BaseModel):
    answer: str
    confidence: float = Field(ge=0.0, le=1.0)
    count: int = 0


GOOD = {"answer": "18", "confidence": 0.75}
MESSAGES: list[BaseMessage] = [SystemMessage("You estimate."), HumanMessage("How many?")]


def scripted(*replies: BaseMessage) -> tuple[ScriptedChatModel, ModelBinding]:
    model = ScriptedChatModel(responses=list(replies))
    return model, bind_model(model)


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(lambda body: dict(GOOD)) as srv:
        yield srv


def spec_for(url: str, *, timeout_s: float = 5.0) -> ModelSpec:
    return ModelSpec(model="stub", base_url=url, timeout_s=timeout_s, max_retries=0)


# --------------------------------------------------------------------------
# structured_call with the scripted model
# --------------------------------------------------------------------------


def test_valid_reply_first_time() -> None:
    model, binding = scripted(tool_reply("Estimate", GOOD, prompt_tokens=12, completion_tokens=7))
    result = structured_call(binding, Estimate, MESSAGES)
    assert result.value == Estimate(answer="18", confidence=0.75)
    assert result.attempts == 1
    assert result.reason is None
    assert result.usage.prompt_tokens == 12
    assert result.usage.completion_tokens == 7
    assert result.usage.calls == 1
    assert result.usage.latency_s >= 0
    assert model.prompts == [MESSAGES]
    assert model.remaining == 0


def test_out_of_range_value_is_clamped() -> None:
    _, binding = scripted(tool_reply("Estimate", {"answer": "18", "confidence": 980}))
    result = structured_call(binding, Estimate, MESSAGES)
    assert result.value == Estimate(answer="18", confidence=1.0)
    assert result.attempts == 1
    assert result.usage.calls == 1
    assert result.reason is not None
    assert result.reason.startswith("repaired")
    assert "confidence" in result.reason


def test_negative_value_is_clamped_to_lower_bound() -> None:
    _, binding = scripted(tool_reply("Estimate", {"answer": "18", "confidence": -3}))
    result = structured_call(binding, Estimate, MESSAGES)
    assert result.value is not None
    assert result.value.confidence == 0.0


def test_numeric_strings_and_numbers_are_coerced() -> None:
    reply = tool_reply("Estimate", {"answer": 18, "confidence": "0.5", "count": "1,234"})
    _, binding = scripted(reply)
    result = structured_call(binding, Estimate, MESSAGES)
    assert result.value == Estimate(answer="18", confidence=0.5, count=1234)
    assert result.attempts == 1
    assert result.reason is not None and result.reason.startswith("repaired")


def test_missing_field_is_retried_with_a_repair_hint() -> None:
    model, binding = scripted(
        tool_reply("Estimate", {"confidence": 0.5}, prompt_tokens=10, completion_tokens=5),
        tool_reply("Estimate", GOOD, prompt_tokens=20, completion_tokens=6),
    )
    result = structured_call(binding, Estimate, MESSAGES)
    assert result.value == Estimate(answer="18", confidence=0.75)
    assert result.attempts == 2
    assert result.reason is None
    assert result.usage == Usage(
        prompt_tokens=30, completion_tokens=11, calls=2, latency_s=result.usage.latency_s
    )
    assert len(model.prompts) == 2
    first, second = model.prompts
    assert first == MESSAGES
    assert not any(HINT_PREFIX in str(m.content) for m in first)
    # The retry repeats the original prompt and adds one hint naming the problem.
    assert second[: len(MESSAGES)] == MESSAGES
    assert len(second) == len(MESSAGES) + 1
    hint = second[-1]
    assert isinstance(hint, HumanMessage)
    assert str(hint.content).startswith(HINT_PREFIX)
    assert "answer" in str(hint.content)
    assert "Field required" in str(hint.content)


def test_three_bad_replies_fall_back_to_a_reason() -> None:
    model, binding = scripted(
        text_reply("I refuse to use tools"),
        tool_reply("Estimate", {"confidence": 0.5}),
        text_reply("still no"),
    )
    result = structured_call(binding, Estimate, MESSAGES)
    assert result.value is None
    assert result.attempts == 3
    assert result.reason is not None
    assert result.reason.startswith("invalid output after 3 attempts")
    assert result.reason.endswith("the reply had no structured output")
    assert result.usage.calls == 3
    assert result.usage.prompt_tokens == 30
    assert result.usage.completion_tokens == 15
    assert len(model.prompts) == 3
    # Each retry carries only the latest hint, not an accumulation of them.
    assert all(len(p) == len(MESSAGES) + 1 for p in model.prompts[1:])


def test_max_attempts_is_respected() -> None:
    model, binding = scripted(text_reply("a"), text_reply("b"))
    result = structured_call(binding, Estimate, MESSAGES, max_attempts=1)
    assert result.value is None
    assert result.attempts == 1
    assert result.reason is not None
    assert result.reason.startswith("invalid output after 1 attempt")
    assert model.remaining == 1


# --------------------------------------------------------------------------
# repair()
# --------------------------------------------------------------------------


class Inner(BaseModel):
    score: int = Field(ge=0, le=10)


class Wide(BaseModel):
    ratio: float = Field(ge=0.0, le=1.0)
    count: int
    label: str = Field(max_length=5)
    kind: Literal["yes", "no"]
    tags: list[str] = Field(default_factory=list, max_length=2)
    inner: Inner
    items: list[Inner] = Field(default_factory=list)
    maybe: float | None = Field(default=None, le=2.0)
    flag: bool = False


def test_repair_coerces_clamps_and_truncates() -> None:
    data = {
        "ratio": "75%",
        "count": "2.6",
        "label": 12345678,
        "kind": " YES ",
        "tags": ["a", "b", "c"],
        "inner": {"score": "99"},
        "items": [{"score": -4}, {"score": "3"}],
        "maybe": "7",
        "flag": True,
        "extra": "kept",
    }
    out = repair(Wide, data)
    assert out == {
        "ratio": 1.0,
        "count": 3,
        "label": "12345",
        "kind": "yes",
        "tags": ["a", "b"],
        "inner": {"score": 10},
        "items": [{"score": 0}, {"score": 3}],
        "maybe": 2.0,
        "flag": True,
        "extra": "kept",
    }
    assert data["ratio"] == "75%"  # the input is not mutated
    Wide.model_validate(out)


def test_repair_leaves_what_it_cannot_fix() -> None:
    out = repair(Wide, {"ratio": "lots", "kind": "maybe", "maybe": None})
    assert out == {"ratio": "lots", "kind": "maybe", "maybe": None}


# --------------------------------------------------------------------------
# bind_model / get_chat_model
# --------------------------------------------------------------------------


def test_bind_model_wraps_a_chat_model() -> None:
    model = ScriptedChatModel(responses=[])
    binding = bind_model(model)
    assert binding.chat is model
    assert binding.method == "function_calling"
    assert binding.endpoint == "ScriptedChatModel"
    assert bind_model(binding) is binding


def test_bind_model_from_spec_builds_chat_openai(server: StubOpenAIServer) -> None:
    binding = bind_model(spec_for(server.url, timeout_s=7))
    assert isinstance(binding.chat, ChatOpenAI)
    assert binding.method == "function_calling"
    assert binding.endpoint == server.url
    assert binding.chat.model_name == "stub"
    assert binding.chat.max_retries == 0
    assert binding.chat.request_timeout == 7
    assert bind_model(spec_for(server.url, timeout_s=7)) is binding  # cached per spec


def test_bind_model_with_chat_openai_uses_its_base_url(server: StubOpenAIServer) -> None:
    chat = ChatOpenAI(model="stub", base_url=server.url, api_key=SecretStr("x"), max_retries=0)
    binding = bind_model(chat)
    assert binding.endpoint == server.url
    result = structured_call(binding, Estimate, MESSAGES)
    assert result.value == Estimate.model_validate(GOOD)


def test_structured_method_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    models.clear_model_cache()
    try:
        openai_default = get_chat_model(ModelSpec(model="gpt-test"))
        assert openai_default.method == "json_schema"
        assert openai_default.endpoint == "https://api.openai.com/v1"
        explicit = get_chat_model(
            ModelSpec(model="m", base_url="http://127.0.0.1:9/v1", structured_method="json_mode")
        )
        assert explicit.method == "json_mode"
        other = get_chat_model(ModelSpec(model="m", base_url="https://example.test/v1"))
        assert other.method == "function_calling"
    finally:
        models.clear_model_cache()


# --------------------------------------------------------------------------
# structured_call against the OpenAI stub server
# --------------------------------------------------------------------------


def test_stub_happy_path(server: StubOpenAIServer) -> None:
    result = structured_call(bind_model(spec_for(server.url)), Estimate, MESSAGES)
    assert result.value == Estimate.model_validate(GOOD)
    assert result.attempts == 1
    assert result.reason is None
    assert result.usage.calls == 1
    assert result.usage.prompt_tokens == server.prompt_tokens
    assert result.usage.completion_tokens == server.completion_tokens
    (body,) = server.requests
    assert body["model"] == "stub"
    assert [t["function"]["name"] for t in body["tools"]] == ["Estimate"]
    assert "response_format" not in body
    assert body["messages"][0] == {"role": "system", "content": "You estimate."}


def test_stub_bad_args_then_good(server: StubOpenAIServer) -> None:
    server.inject("bad_args")
    result = structured_call(bind_model(spec_for(server.url)), Estimate, MESSAGES)
    assert result.value == Estimate.model_validate(GOOD)
    assert result.attempts == 2
    assert result.usage.calls == 2
    assert server.calls == 2
    retry = server.requests[1]["messages"]
    assert retry[-1]["role"] == "user"
    assert retry[-1]["content"].startswith(HINT_PREFIX)


def test_stub_bad_schema_then_good(server: StubOpenAIServer) -> None:
    server.inject("bad_schema")
    result = structured_call(bind_model(spec_for(server.url)), Estimate, MESSAGES)
    assert result.value == Estimate.model_validate(GOOD)
    assert result.attempts == 2
    assert "Field required" in server.requests[1]["messages"][-1]["content"]


def test_stub_malformed_json_then_good(server: StubOpenAIServer) -> None:
    server.inject("malformed_json")
    result = structured_call(bind_model(spec_for(server.url)), Estimate, MESSAGES)
    assert result.value == Estimate.model_validate(GOOD)
    assert result.attempts == 2
    assert result.usage.calls == 2  # the unreadable reply counts as a call
    assert len(server.requests) == 2


def test_stub_malformed_json_every_time_falls_back(server: StubOpenAIServer) -> None:
    server.inject("malformed_json", 3)
    result = structured_call(bind_model(spec_for(server.url)), Estimate, MESSAGES)
    assert result.value is None
    assert result.attempts == 3
    assert result.reason is not None
    assert result.reason.startswith("invalid output after 3 attempts")


@pytest.mark.parametrize(("fault", "status"), [("5xx", 500), ("503", 503)])
def test_stub_server_error_raises_model_unavailable(
    server: StubOpenAIServer, fault: str, status: int
) -> None:
    server.inject(fault)
    with pytest.raises(ModelUnavailableError) as info:
        structured_call(bind_model(spec_for(server.url)), Estimate, MESSAGES)
    message = str(info.value)
    assert server.url in message
    assert f"HTTP {status}" in message
    assert "\n" not in message
    assert len(server.requests) == 1  # max_retries=0: no client retry, no output retry


def test_client_retries_recover_from_a_5xx(server: StubOpenAIServer) -> None:
    server.inject("5xx")
    spec = ModelSpec(model="stub", base_url=server.url, timeout_s=5, max_retries=1)
    result = structured_call(bind_model(spec), Estimate, MESSAGES)
    assert result.value == Estimate.model_validate(GOOD)
    assert result.attempts == 1
    assert len(server.requests) == 2


def test_unreachable_endpoint_fails_fast() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    started = time.perf_counter()
    with pytest.raises(
        ModelUnavailableError, match="unreachable: it refused the connection"
    ) as info:
        structured_call(bind_model(spec_for(url)), Estimate, MESSAGES)
    assert time.perf_counter() - started < 5
    assert url in str(info.value)


def test_dropped_connection_raises_model_unavailable(server: StubOpenAIServer) -> None:
    server.inject("drop")
    with pytest.raises(ModelUnavailableError, match=server.url):
        structured_call(bind_model(spec_for(server.url)), Estimate, MESSAGES)


def test_timeout_raises_model_unavailable(
    server: StubOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A timeout where the endpoint no longer answers is a dead endpoint.

    (One that still answers ``/models`` is slow, not dead: the call is a recorded
    fallback, tests/test_user_met_models.py.)
    """
    from debategraph.models import probe

    monkeypatch.setattr(
        probe, "list_models", lambda url, key, timeout_s: probe.ModelList(False, False, "gone")
    )
    server.inject("timeout", seconds=120)  # released when the server stops
    started = time.perf_counter()
    with pytest.raises(ModelUnavailableError, match="timed out") as info:
        structured_call(bind_model(spec_for(server.url, timeout_s=0.5)), Estimate, MESSAGES)
    # the client's 0.5 s, not the server's 120 s: a bound far from both, for a busy machine
    assert time.perf_counter() - started < 30
    assert server.url in str(info.value)


def test_json_schema_falls_back_to_function_calling(
    server: StubOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model_calls, "_NO_JSON_SCHEMA", set())

    def responder(body: dict[str, Any]) -> Any:
        if "response_format" in body:
            raise NotImplementedError("response_format is not supported here")
        assert body.get("tools"), "expected a tool call request"
        return dict(GOOD)

    server.responder = responder
    chat = ChatOpenAI(model="stub", base_url=server.url, api_key=SecretStr("x"), max_retries=0)
    binding = ModelBinding(chat, "json_schema", server.url)

    result = structured_call(binding, Estimate, MESSAGES)
    assert result.value == Estimate.model_validate(GOOD)
    assert result.attempts == 1  # the rejected json_schema request is not an attempt
    assert result.usage.calls == 1
    assert ["response_format" in b for b in server.requests] == [True, False]
    assert server.url in model_calls._NO_JSON_SCHEMA

    # The endpoint is remembered: the next call goes straight to function calling.
    again = structured_call(binding, Estimate, MESSAGES)
    assert again.value == Estimate.model_validate(GOOD)
    assert ["response_format" in b for b in server.requests] == [True, False, False]


def test_json_schema_used_when_supported(
    server: StubOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model_calls, "_NO_JSON_SCHEMA", set())
    chat = ChatOpenAI(model="stub", base_url=server.url, api_key=SecretStr("x"), max_retries=0)
    result = structured_call(ModelBinding(chat, "json_schema", server.url), Estimate, MESSAGES)
    assert result.value == Estimate.model_validate(GOOD)
    (body,) = server.requests
    assert body["response_format"]["type"] == "json_schema"
    assert set() == model_calls._NO_JSON_SCHEMA


# --------------------------------------------------------------------------
# ModelSpec.validated
# --------------------------------------------------------------------------


def test_spec_local_with_base_url() -> None:
    with pytest.raises(UsageError, match="needs --model NAME") as info:
        ModelSpec(model="local", base_url="http://127.0.0.1:8080/v1").validated()
    assert "http://127.0.0.1:8080/v1" in str(info.value)
    assert info.value.exit_code == 2


def test_spec_local_is_left_alone() -> None:
    spec = ModelSpec()
    assert spec.validated() is spec


@pytest.mark.parametrize("url", ["ftp://example.test/v1", "127.0.0.1:8080/v1", "http://"])
def test_spec_non_http_base_url(url: str) -> None:
    with pytest.raises(UsageError, match="is not an http"):
        ModelSpec(model="m", base_url=url).validated()


@pytest.mark.parametrize("name", ["", "   "])
def test_spec_empty_model(name: str) -> None:
    with pytest.raises(UsageError, match="model name is empty"):
        ModelSpec(model=name).validated()


def test_spec_bad_timeout_and_retries() -> None:
    with pytest.raises(UsageError, match="timeout 0"):
        ModelSpec(model="m", base_url="http://x.test/v1", timeout_s=0).validated()
    with pytest.raises(UsageError, match="max retries -1"):
        ModelSpec(model="m", base_url="http://x.test/v1", max_retries=-1).validated()


def test_spec_base_url_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env.test:1234/v1")
    assert ModelSpec(model="m").validated().base_url == "http://env.test:1234/v1"
    assert ModelSpec(model="m", base_url="https://x.test/v1").validated().base_url == (
        "https://x.test/v1"
    )
    monkeypatch.setenv("OPENAI_BASE_URL", "not a url")
    with pytest.raises(UsageError, match="not an http"):
        ModelSpec(model="m").validated()


def test_get_chat_model_rejects_a_bad_spec() -> None:
    with pytest.raises(UsageError):
        get_chat_model(ModelSpec(model="local", base_url="http://127.0.0.1:1/v1"))


# --------------------------------------------------------------------------
# Replies cut off at the token limit, usage estimates, a dead embedded server
# --------------------------------------------------------------------------


def cut_off(content: str, prompt_tokens: int = 40, completion_tokens: int = 320) -> Exception:
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate(
        {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": "local",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "length",
                    "message": {"role": "assistant", "content": content},
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )
    return openai.LengthFinishReasonError(completion=completion)


@pytest.mark.parametrize(
    ("text", "closed"),
    [
        ('{"reasoning": "abc', {"reasoning": "abc"}),
        ('{"a": [1, 2', {"a": [1, 2]}),
        ('{"a": "x", "b":', {"a": "x"}),
        ('{"a": "x",', {"a": "x"}),
        ('{"a": "x", "b', {"a": "x"}),
        ('{"a": "x, y', {"a": "x, y"}),
        ('{"a": "q\\"', {"a": 'q"'}),
    ],
)
def test_close_json(text: str, closed: dict[str, Any]) -> None:
    assert json.loads(model_output._close_json(text)) == closed


def test_cut_off_reply_is_kept_when_complete_enough() -> None:
    replies = iter([cut_off('{"answer": "18", "confidence": 0.5, "count": 3')])

    def respond(messages: list[BaseMessage]) -> Any:
        raise next(replies)

    binding = bind_model(ScriptedChatModel(respond=respond))
    result = structured_call(binding, Estimate, MESSAGES)
    assert result.value == Estimate(answer="18", confidence=0.5, count=3)
    assert result.reason == "repaired: reply was cut off"
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (40, 320)
    assert not result.usage.estimated


def test_cut_off_reply_without_the_fields_is_retried_then_abstains() -> None:
    calls: list[list[BaseMessage]] = []

    def respond(messages: list[BaseMessage]) -> Any:
        calls.append(messages)
        raise cut_off('{"reasoning": "First, 48 / 2 = 24. Then')

    binding = bind_model(ScriptedChatModel(respond=respond))
    result = structured_call(binding, Estimate, MESSAGES)
    assert result.value is None and result.attempts == 3 and len(calls) == 3
    assert "cut off at the token limit" in (result.reason or "")
    assert "keep every text field short" in calls[1][-1].text
    assert result.usage.completion_tokens == 960 and result.usage.calls == 3


def test_no_usage_reported_is_estimated_and_marked() -> None:
    reply = AIMessage(content="", tool_calls=[tool_call(name="Estimate", args=GOOD, id="1")])
    _, binding = scripted(reply)
    result = structured_call(binding, Estimate, MESSAGES)
    assert result.value == Estimate.model_validate(GOOD)
    assert result.usage.estimated
    prompt_chars = sum(len(m.text) for m in MESSAGES)
    assert result.usage.prompt_tokens == sum((len(m.text) + 3) // 4 for m in MESSAGES)
    assert 0 < result.usage.prompt_tokens <= prompt_chars
    assert result.usage.completion_tokens == (len(json.dumps(GOOD)) + 3) // 4
    text = text_call(bind_model(ScriptedChatModel(responses=[AIMessage("Tea wins.")])), MESSAGES)
    assert text.usage.estimated and text.usage.completion_tokens == 3
    assert (text.usage + Usage(prompt_tokens=1)).estimated
    assert not (Usage() + Usage()).estimated


def test_dead_embedded_server_is_named_not_unreachable() -> None:
    chat = ChatOpenAI(
        model="m", base_url=f"http://127.0.0.1:{closed_port()}/v1", api_key=SecretStr("x"),
        max_retries=0, timeout=5,
    )  # fmt: skip
    died = "embedded model process died (SIGSEGV, signal 11); last log line: oops"
    binding = ModelBinding(chat, "json_schema", "http://x/v1", lambda: died)
    with pytest.raises(ModelUnavailableError) as info:
        structured_call(binding, Estimate, MESSAGES)
    assert str(info.value) == died
    alive = ModelBinding(chat, "json_schema", "http://x/v1", lambda: None)
    with pytest.raises(ModelUnavailableError, match="is unreachable"):
        text_call(alive, MESSAGES)


def test_other_errors_do_not_switch_away_from_json_schema(
    server: StubOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model_calls, "_NO_JSON_SCHEMA", set())

    def responder(body: dict[str, Any]) -> Any:
        raise ValueError("the request exceeds the available context size, try increasing it")

    server.responder = responder
    chat = ChatOpenAI(model="stub", base_url=server.url, api_key=SecretStr("x"), max_retries=0)
    with pytest.raises(ModelUnavailableError, match="exceeds the available context size"):
        structured_call(ModelBinding(chat, "json_schema", server.url), Estimate, MESSAGES)
    assert ["response_format" in b for b in server.requests] == [True]
    assert set() == model_calls._NO_JSON_SCHEMA


def test_json_schema_reply_out_of_range_is_clamped_not_retried(
    server: StubOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model_calls, "_NO_JSON_SCHEMA", set())
    server.responder = lambda body: {"answer": "18", "confidence": -1.1}
    chat = ChatOpenAI(model="stub", base_url=server.url, api_key=SecretStr("x"), max_retries=0)
    result = structured_call(ModelBinding(chat, "json_schema", server.url), Estimate, MESSAGES)
    assert result.value == Estimate(answer="18", confidence=0.0)
    assert result.attempts == 1 and (result.reason or "").startswith("repaired:")
    assert result.usage.completion_tokens > 0 and not result.usage.estimated
    (body,) = server.requests
    assert body["response_format"]["json_schema"]["name"] == "Estimate"
