"""The lean chat model: what it skips changes nothing a caller or the endpoint sees.

:class:`~debategraph.models.client.LeanChatOpenAI` posts plain chat-completions requests
without the openai SDK's request transform and reply model. These tests hold it to that:
the transform is the identity on every kind of payload the package sends (so skipping it
sends the same body), the endpoint receives the same body as from ``ChatOpenAI``, the
replies are the same messages with the same usage, errors are the same errors, and what
is not plain (images, a pydantic ``response_format``) takes ``ChatOpenAI``'s own path.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any, TypedDict

import openai
import pytest
from langchain_core.callbacks import BaseCallbackHandler, get_usage_metadata_callback
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langchain_openai.chat_models.base import BaseChatOpenAI
from langgraph.graph import START, StateGraph
from openai._utils import transform
from openai.types.chat import completion_create_params
from pydantic import BaseModel, SecretStr

from debategraph.models.calls import _structured_runnable
from debategraph.models.client import LeanChatOpenAI
from debategraph.nodes.solver_debate.rounds import SolverReply
from tests.openai_stub import StubOpenAIServer

PROMPT = [
    SystemMessage("You are solver 1 of 4."),
    HumanMessage("What is 6 times 3?"),
    AIMessage(
        "",
        tool_calls=[{"name": "calculator", "args": {"expression": "6*3"}, "id": "call_1"}],
    ),
    ToolMessage("18", tool_call_id="call_1"),
    HumanMessage("Now answer."),
]


def reply(body: dict[str, Any]) -> dict[str, Any]:
    """Every structured call answers 18."""
    return {"reasoning": "6 times 3 is 18.", "answer": "18", "confidence": 0.9}


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(reply) as srv:
        yield srv


def models(url: str, **extra: Any) -> tuple[ChatOpenAI, LeanChatOpenAI]:
    settings: dict[str, Any] = {
        "model": "stub", "base_url": url, "api_key": SecretStr("k"), "max_retries": 0,
        "timeout": 10, **extra,
    }  # fmt: skip
    return ChatOpenAI(**settings), LeanChatOpenAI(**settings)


def bound(chat: ChatOpenAI, method: str) -> Any:
    return _structured_runnable(chat, SolverReply, method)  # type: ignore[arg-type]


@pytest.mark.parametrize("method", ["function_calling", "json_schema"])
def test_the_skipped_transform_is_the_identity_on_what_the_package_sends(method: str) -> None:
    _, lean = models("http://127.0.0.1:9/v1", extra_body={"max_tokens": 32})
    runnable = bound(lean, method)
    payload = lean._get_request_payload(PROMPT, **runnable.kwargs)
    plain = lean._lean_request(payload)
    assert plain is not None
    body, options = plain
    assert options == {"extra_json": {"max_tokens": 32}}
    params = completion_create_params.CompletionCreateParamsNonStreaming
    assert transform(body, params) == body


@pytest.mark.parametrize("method", ["function_calling", "json_schema"])
def test_the_endpoint_receives_what_chat_openai_sends(
    server: StubOpenAIServer, method: str
) -> None:
    plain, lean = models(server.url, extra_body={"max_tokens": 32})
    replies = [bound(chat, method).invoke(PROMPT) for chat in (plain, lean)]

    async def both() -> list[Any]:  # one loop: the SDK's pooled connections are its own
        return [await bound(chat, method).ainvoke(PROMPT) for chat in (plain, lean)]

    replies += asyncio.run(both())
    assert len(server.requests) == 4
    assert all(body == server.requests[0] for body in server.requests)
    assert server.requests[0]["max_tokens"] == 32  # extra_body reached the body
    first = replies[0]
    for message in replies[1:]:
        assert message.content == first.content
        assert [(c["name"], c["args"]) for c in message.tool_calls] == [
            (c["name"], c["args"]) for c in first.tool_calls
        ]
        assert message.usage_metadata == first.usage_metadata
        assert message.response_metadata["finish_reason"] == "stop" or message.tool_calls


def test_text_replies_are_the_same(server: StubOpenAIServer) -> None:
    plain, lean = models(server.url)
    a, b = plain.invoke(PROMPT[:2]), lean.invoke(PROMPT[:2])
    assert a.content == b.content and a.usage_metadata == b.usage_metadata
    assert b.response_metadata["model_name"] == a.response_metadata["model_name"]


def test_errors_are_chat_openais(server: StubOpenAIServer) -> None:
    plain, lean = models(server.url)
    caught: list[openai.APIStatusError] = []

    async def both() -> None:  # one loop: the SDK's pooled connections are its own
        for chat in (plain, lean):
            server.inject("5xx")
            with pytest.raises(openai.APIStatusError) as info:
                await chat.ainvoke(PROMPT[:2])
            caught.append(info.value)

    asyncio.run(both())
    assert type(caught[0]) is type(caught[1])
    assert caught[0].status_code == caught[1].status_code == 500


def test_a_body_that_is_not_json_is_refused_as_chat_openai_refuses_it(
    server: StubOpenAIServer,
) -> None:
    plain, lean = models(server.url)
    messages = []
    for chat in (plain, lean):
        server.inject("malformed_json")
        with pytest.raises(json.JSONDecodeError) as info:  # the structured call retries it
            chat.invoke(PROMPT[:2])
        messages.append((type(info.value), str(info.value)[:60]))
    assert messages[0] == messages[1]


class Person(BaseModel):
    name: str


@pytest.mark.parametrize(
    ("messages", "kwargs"),
    [
        ([HumanMessage([{"type": "text", "text": "hi"}])], {}),  # content blocks
        (PROMPT[:2], {"response_format": Person}),  # a pydantic response format
        (PROMPT[:2], {"stream": True}),
    ],
)
def test_what_is_not_plain_takes_chat_openais_path(
    messages: list[Any], kwargs: dict[str, Any]
) -> None:
    _, lean = models("http://127.0.0.1:9/v1")
    payload = lean._get_request_payload(messages, **kwargs)
    assert lean._lean_request(payload) is None


def test_response_headers_take_chat_openais_path() -> None:
    _, lean = models("http://127.0.0.1:9/v1", include_response_headers=True)
    assert lean._lean_request(lean._get_request_payload(PROMPT[:2])) is None


class Recorder(BaseCallbackHandler):
    """Records the chat-model starts and ends it is told of."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.events.append("start")

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.events.append("end")


def same_reply(a: AIMessage, b: AIMessage) -> None:
    assert (a.content, a.usage_metadata) == (b.content, b.usage_metadata)
    assert [(c["name"], c["args"]) for c in a.tool_calls] == [
        (c["name"], c["args"]) for c in b.tool_calls
    ]
    assert a.response_metadata.keys() == b.response_metadata.keys()
    assert a.id is not None and b.id is not None and a.id.startswith("lc_run--")


@pytest.mark.parametrize("method", ["function_calling", "json_schema"])
def test_an_unobserved_call_skips_the_callbacks_and_replies_the_same(
    server: StubOpenAIServer, method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain, lean = models(server.url)
    observed = []
    monkeypatch.setattr(
        BaseChatOpenAI,  # langchain-core's invoke asks it for a run's tracing parameters
        "_get_ls_params",
        lambda self, *a, **k: observed.append(1) or {},
        raising=True,
    )
    expected = bound(plain, method).invoke(PROMPT)
    observed.clear()

    async def lean_call() -> AIMessage:
        return await bound(lean, method).ainvoke(PROMPT)  # type: ignore[no-any-return]

    for reply in (bound(lean, method).invoke(PROMPT), asyncio.run(lean_call())):
        same_reply(reply, expected)
    assert observed == []  # no run was started: nobody was listening


def test_a_listener_gets_every_event(server: StubOpenAIServer) -> None:
    _, lean = models(server.url)
    recorder = Recorder()
    bound(lean, "function_calling").invoke(PROMPT, {"callbacks": [recorder]})
    assert recorder.events == ["start", "end"]
    with get_usage_metadata_callback() as usage:  # a configure hook: LangChain's path
        bound(lean, "function_calling").invoke(PROMPT)
    assert usage.usage_metadata["stub"]["total_tokens"] > 0


def test_messages_stream_through_langgraph(server: StubOpenAIServer) -> None:
    _, lean = models(server.url)

    def node(state: dict[str, Any]) -> dict[str, Any]:
        return {"reply": lean.invoke(PROMPT[:2]).content}

    builder: StateGraph[Any] = StateGraph(Turnless)
    builder.add_node("talk", node)
    builder.add_edge(START, "talk")
    graph = builder.compile()
    streamed = [chunk for chunk, _ in graph.stream({"reply": ""}, stream_mode="messages")]
    assert streamed and "".join(str(c.content) for c in streamed) == str(
        lean.invoke(PROMPT[:2]).content
    )


class Turnless(TypedDict):
    reply: Any


@pytest.mark.parametrize("method", ["function_calling", "json_schema"])
def test_with_structured_output_sends_what_chat_openai_sends(
    server: StubOpenAIServer, method: str
) -> None:
    plain, lean = models(server.url)
    answers = [
        chat.with_structured_output(SolverReply, method=method).invoke(PROMPT[:2])  # type: ignore[arg-type]
        for chat in (plain, lean)
    ]
    assert answers[0] == answers[1]
    assert server.requests[0] == server.requests[1]  # no tracing-only argument in the body
