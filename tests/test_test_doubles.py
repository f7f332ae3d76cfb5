"""Tests for the test doubles: the OpenAI stub server and the scripted chat model."""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from typing import Any

import openai
import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, SecretStr, ValidationError

from tests.fake_model import ScriptedChatModel, ScriptExhaustedError, text_reply, tool_reply
from tests.openai_stub import (
    InGroups,
    StubOpenAIServer,
    StubReply,
    count_prompt_tokens,
    example_from_schema,
)


class Answer(BaseModel):
    answer: str
    confidence: float


class Verdict(BaseModel):
    winner: str
    votes: int
    unanimous: bool
    tags: list[str]


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer() as srv:
        yield srv


def make_llm(server: StubOpenAIServer, timeout: float = 5.0) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=server.url, api_key=SecretStr("x"), model="stub", timeout=timeout, max_retries=0
    )


def merge(chunks: Sequence[BaseMessage]) -> AIMessageChunk:
    ai_chunks = [c for c in chunks if isinstance(c, AIMessageChunk)]
    assert len(ai_chunks) == len(chunks)
    return ai_chunks[0] + ai_chunks[1:]


def http_get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return int(resp.status), json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return int(err.code), json.loads(err.read())


# --------------------------------------------------------------------------
# StubOpenAIServer
# --------------------------------------------------------------------------


def test_url_health_models_and_404(server: StubOpenAIServer) -> None:
    assert server.url.startswith("http://127.0.0.1:")
    assert server.url.endswith("/v1")
    root = server.url.removesuffix("/v1")
    assert http_get(root + "/health")[0] == 200
    status, body = http_get(server.url + "/models")
    assert status == 200
    assert [m["id"] for m in body["data"]] == ["stub"]
    status, body = http_get(server.url + "/nope")
    assert status == 404
    assert "error" in body
    models = openai.OpenAI(base_url=server.url, api_key="x", max_retries=0).models.list()
    assert [m.id for m in models] == ["stub"]


def test_url_requires_start() -> None:
    srv = StubOpenAIServer()
    with pytest.raises(RuntimeError):
        _ = srv.url
    srv.start()
    try:
        assert srv.url.startswith("http://127.0.0.1:")
    finally:
        srv.stop()
    srv.stop()  # idempotent


def test_plain_invoke_returns_content_and_usage(server: StubOpenAIServer) -> None:
    msg = make_llm(server).invoke("hello")  # 5 chars -> 2 tokens; "stub reply" -> 3
    assert msg.content == "stub reply"
    assert msg.usage_metadata is not None
    assert msg.usage_metadata["input_tokens"] == 2
    assert msg.usage_metadata["output_tokens"] == 3
    assert msg.usage_metadata["total_tokens"] == 5
    assert msg.response_metadata["finish_reason"] == "stop"
    assert server.calls == 1
    assert (server.prompt_tokens, server.completion_tokens) == (2, 3)
    assert server.requests[0]["messages"] == [{"role": "user", "content": "hello"}]


def test_string_responder_sees_request(server: StubOpenAIServer) -> None:
    server.responder = lambda body: "echo: " + body["messages"][-1]["content"]
    assert make_llm(server).invoke("ping").content == "echo: ping"


def test_structured_output_parses_responder_dict(server: StubOpenAIServer) -> None:
    server.responder = lambda body: {"answer": "42", "confidence": 0.9}
    runnable = make_llm(server).with_structured_output(
        Answer, method="function_calling", include_raw=True
    )
    out = runnable.invoke("question")
    assert isinstance(out, dict)
    assert out["parsed"] == Answer(answer="42", confidence=0.9)
    assert out["parsing_error"] is None
    raw = out["raw"]
    assert isinstance(raw, AIMessage)
    assert raw.response_metadata["finish_reason"] == "tool_calls"
    assert raw.usage_metadata is not None
    request = server.requests[-1]
    assert request["tool_choice"] == {"type": "function", "function": {"name": "Answer"}}
    # prompt tokens include the tool schema JSON
    assert raw.usage_metadata["input_tokens"] == count_prompt_tokens(request)
    assert raw.usage_metadata["input_tokens"] > 10


def test_default_responder_builds_args_from_schema(server: StubOpenAIServer) -> None:
    out = make_llm(server).with_structured_output(Verdict, method="function_calling").invoke("x")
    assert out == Verdict(winner="stub", votes=1, unanimous=True, tags=[])
    # default method (json_schema response_format) also works: dict -> JSON content
    assert make_llm(server).with_structured_output(Answer).invoke("x") == Answer(
        answer="stub", confidence=0.5
    )


def test_example_from_schema_edge_cases() -> None:
    schema = {
        "type": "object",
        "properties": {
            "mode": {"enum": ["fast", "slow"]},
            "maybe": {"anyOf": [{"type": "null"}, {"type": "integer"}]},
            "child": {"$ref": "#/$defs/Child"},
            "optional": {"type": "string"},
        },
        "required": ["mode", "maybe", "child"],
        "$defs": {
            "Child": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}
        },
    }
    assert example_from_schema(schema) == {"mode": "fast", "maybe": 1, "child": {"x": 0.5}}


def test_stub_reply_content_and_raw_args(server: StubOpenAIServer) -> None:
    server.responder = lambda body: StubReply(
        content="thinking", tool_args='{"answer": "a", "confidence": 1}', tool_name="Answer"
    )
    msg = make_llm(server).bind_tools([Answer]).invoke("x")
    assert msg.content == "thinking"
    assert msg.tool_calls[0]["name"] == "Answer"
    assert msg.tool_calls[0]["args"] == {"answer": "a", "confidence": 1}


class RecordedWaits(threading.Event):
    """The stub's stop event, recording how long each wait on it was asked to last."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        return super().wait(timeout)


def test_latency_is_applied(server: StubOpenAIServer) -> None:
    llm = make_llm(server)
    llm.invoke("warm up")
    waits = RecordedWaits()
    server._stopping = waits
    server.latency_s = 0.3
    assert llm.invoke("x").content == "stub reply"
    # The reply waited out what was left of 0.3 s after the request arrived (recorded,
    # not timed: a busy machine makes the call slower, never the test fail).
    (waited,) = waits.waits
    assert waited is not None and 0 < waited <= 0.3
    server.latency_s = 0.0
    llm.invoke("y")
    assert len(waits.waits) == 1  # no latency, no wait


def test_keep_alive_requests_have_nagle_off(server: StubOpenAIServer) -> None:
    """Guards against Nagle/delayed-ACK stalls (~40 ms per keep-alive request).

    The stall comes from the server's separate header and body writes on a socket with
    Nagle's algorithm on; so every connection a request is answered on must have
    ``TCP_NODELAY`` set. Checked on the sockets themselves, not with a stopwatch.
    """
    seen: dict[socket.socket, int] = {}

    def record(body: dict[str, Any]) -> str:
        for conn in list(server._conns):  # the connections open while answering
            seen[conn] = conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        return "stub reply"

    server.responder = record
    llm = make_llm(server)
    for _ in range(21):
        llm.invoke("x")
    assert server.calls == 21
    assert len(seen) == 1, "the client's requests should share one keep-alive connection"
    assert all(seen.values()), f"TCP_NODELAY off on {len(seen)} connection(s)"


@pytest.mark.parametrize(("fault", "status"), [("5xx", 500), ("503", 503)])
def test_fault_server_errors(server: StubOpenAIServer, fault: str, status: int) -> None:
    llm = make_llm(server)
    server.inject(fault)
    with pytest.raises(openai.InternalServerError) as info:
        llm.invoke("x")
    assert info.value.status_code == status
    assert llm.invoke("x").content == "stub reply"  # fault consumed
    assert server.calls == 1
    assert len(server.requests) == 2


def test_fault_count_and_order(server: StubOpenAIServer) -> None:
    llm = make_llm(server)
    server.inject("5xx", 2)
    server.inject("drop")
    for _ in range(2):
        with pytest.raises(openai.InternalServerError):
            llm.invoke("x")
    with pytest.raises(openai.APIConnectionError):
        llm.invoke("x")
    assert llm.invoke("x").content == "stub reply"


def test_fault_timeout(server: StubOpenAIServer, capfd: pytest.CaptureFixture[str]) -> None:
    # The fault holds its request for an hour: only the client's timeout ends the call,
    # and only stop() waking the handler ends the handler (no stopwatch either way).
    server.inject("timeout", seconds=3600)
    with pytest.raises(openai.APITimeoutError):
        make_llm(server, timeout=0.5).invoke("x")
    assert make_llm(server).invoke("x").content == "stub reply"
    assert server.in_flight == 1  # the timed-out request's handler still holds it
    server.stop()
    assert server.idle.wait(60), "stop() did not wake the handler holding the request"
    assert capfd.readouterr().err == ""


def test_fault_malformed_json(server: StubOpenAIServer) -> None:
    server.inject("malformed_json")
    # openai surfaces an HTTP 200 non-JSON body as a bare json.JSONDecodeError
    with pytest.raises(json.JSONDecodeError):
        make_llm(server).invoke("x")


def test_fault_bad_args_gives_invalid_tool_call(server: StubOpenAIServer) -> None:
    server.inject("bad_args")
    out = (
        make_llm(server)
        .with_structured_output(Answer, method="function_calling", include_raw=True)
        .invoke("x")
    )
    assert isinstance(out, dict)
    # langchain-openai moves unparsable arguments to invalid_tool_calls, so the
    # Pydantic parser sees no tool call at all: parsed is None, no parsing_error.
    assert out["parsed"] is None
    assert out["parsing_error"] is None
    raw = out["raw"]
    assert isinstance(raw, AIMessage)
    assert raw.tool_calls == []
    assert raw.invalid_tool_calls[0]["args"] == '{"answer": '
    assert raw.invalid_tool_calls[0]["name"] == "Answer"


def test_fault_bad_schema_sets_parsing_error(server: StubOpenAIServer) -> None:
    server.inject("bad_schema")
    out = (
        make_llm(server)
        .with_structured_output(Answer, method="function_calling", include_raw=True)
        .invoke("x")
    )
    assert isinstance(out, dict)
    assert out["parsed"] is None
    assert isinstance(out["parsing_error"], ValidationError)


def test_fault_drop(server: StubOpenAIServer, capfd: pytest.CaptureFixture[str]) -> None:
    server.inject("drop")
    with pytest.raises(openai.APIConnectionError):
        make_llm(server).invoke("x")
    assert capfd.readouterr().err == ""


def test_inject_rejects_unknown_fault(server: StubOpenAIServer) -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        server.inject("nonsense")


def test_responder_exception_is_http_500(server: StubOpenAIServer) -> None:
    def boom(body: dict[str, Any]) -> Any:
        raise KeyError("no script")

    server.responder = boom
    with pytest.raises(openai.InternalServerError, match="no script"):
        make_llm(server).invoke("x")
    assert server.calls == 0


def test_stream_content(server: StubOpenAIServer) -> None:
    server.responder = lambda body: "The quick brown fox jumps over the lazy dog"
    chunks = list(make_llm(server).stream("x", stream_usage=True))
    assert sum(1 for c in chunks if c.content) >= 3
    total = merge(chunks)
    assert total.content == "The quick brown fox jumps over the lazy dog"
    assert total.usage_metadata is not None
    assert total.usage_metadata["output_tokens"] == 11
    assert server.requests[-1]["stream"] is True
    assert server.calls == 1


def test_stream_tool_call(server: StubOpenAIServer) -> None:
    server.responder = lambda body: {"answer": "streamed", "confidence": 0.25}
    chunks = list(make_llm(server).bind_tools([Answer], tool_choice="Answer").stream("x"))
    assert len(chunks) >= 4
    total = merge(chunks)
    assert total.tool_calls[0]["name"] == "Answer"
    assert total.tool_calls[0]["args"] == {"answer": "streamed", "confidence": 0.25}


def test_concurrent_requests_overlap(server: StubOpenAIServer) -> None:
    llm = make_llm(server)
    llm.invoke("warm up")
    server.reset_stats()
    assert (server.calls, server.max_in_flight, server.requests) == (0, 0, [])
    # The server answers none of the four until all four have arrived: they overlap, or
    # the group never fills and the calls fail. No stopwatch.
    server.responder = InGroups(4, 4, lambda body: "stub reply")
    barrier = threading.Barrier(4)
    results: list[str] = []
    errors: list[Exception] = []

    def work(i: int) -> None:
        try:
            barrier.wait()
            results.append(str(llm.invoke(f"q{i}").content))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == ["stub reply"] * 4
    assert server.max_in_flight == 4
    assert server.calls == 4


# --------------------------------------------------------------------------
# ScriptedChatModel
# --------------------------------------------------------------------------


def test_scripted_replies_in_order_then_exhausted() -> None:
    model = ScriptedChatModel(responses=[text_reply("one"), text_reply("two")])
    assert model.invoke("a").content == "one"
    assert model.invoke([HumanMessage("b")]).content == "two"
    with pytest.raises(ScriptExhaustedError, match="script exhausted after 2 replies"):
        model.invoke("c")
    assert [[m.content for m in p] for p in model.prompts] == [["a"], ["b"], ["c"]]


def test_scripted_structured_output_include_raw() -> None:
    model = ScriptedChatModel(
        responses=[tool_reply("Answer", {"answer": "yes", "confidence": 0.7})]
    )
    out = model.with_structured_output(Answer, method="function_calling", include_raw=True).invoke(
        "hi"
    )
    assert isinstance(out, dict)
    assert out["parsed"] == Answer(answer="yes", confidence=0.7)
    assert out["parsing_error"] is None
    raw = out["raw"]
    assert isinstance(raw, AIMessage)
    assert raw.usage_metadata == {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    assert raw.tool_calls[0]["id"]
    assert model.bound_tool_choice is not None


def test_scripted_structured_output_validation_error() -> None:
    model = ScriptedChatModel(responses=[tool_reply("Answer", {"answer": "no confidence"})])
    out = model.with_structured_output(Answer, method="function_calling", include_raw=True).invoke(
        "hi"
    )
    assert isinstance(out, dict)
    assert out["parsed"] is None
    assert isinstance(out["parsing_error"], ValidationError)


def test_bind_tools_returns_self_and_scripts_are_not_mutated() -> None:
    reply = tool_reply("Answer", {"answer": "a", "confidence": 1.0}, prompt_tokens=3)
    model = ScriptedChatModel(responses=[reply])
    assert model.bind_tools([Answer], tool_choice="Answer") is model
    out = model.invoke("x")
    assert isinstance(out, AIMessage)
    assert out.tool_calls == reply.tool_calls
    assert out.usage_metadata is not None
    assert out.usage_metadata["input_tokens"] == 3
    assert reply.id is None  # langchain set an id on the copy only
    assert model.remaining == 0


def test_respond_callback() -> None:
    def respond(messages: list[BaseMessage]) -> AIMessage:
        return text_reply(f"saw {len(messages)}: {messages[-1].content}")

    model = ScriptedChatModel(respond=respond)
    assert model.invoke("hi").content == "saw 1: hi"
    assert model.invoke(["a", "b"]).content == "saw 2: b"
    assert len(model.prompts) == 2


def test_scripted_model_is_thread_safe() -> None:
    n = 40
    model = ScriptedChatModel(responses=[text_reply(str(i)) for i in range(n)])
    barrier = threading.Barrier(8)
    seen: list[str] = []
    exhausted: list[BaseException] = []
    lock = threading.Lock()

    def work() -> None:
        barrier.wait()
        for _ in range(6):  # 48 attempts for 40 replies
            try:
                content = str(model.invoke("x").content)
            except ScriptExhaustedError as exc:
                with lock:
                    exhausted.append(exc)
            else:
                with lock:
                    seen.append(content)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen, key=int) == [str(i) for i in range(n)]
    assert len(exhausted) == 8
    assert len(model.prompts) == 48


# --------------------------------------------------------------------------
# Ports for servers the tests start (parallel workers must not collide)
# --------------------------------------------------------------------------


def test_free_port_skips_a_port_another_process_reserved(monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    from tests import studio_server

    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom tests.studio_server import free_port\n"
         "print(free_port(), flush=True)\nsys.stdin.read()"],
        cwd=studio_server.REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        taken = int(holder.stdout.readline())
        offered = [taken]  # the OS offers the other process's port first, then its own pick
        real = studio_server._unused_port
        monkeypatch.setattr(
            studio_server, "_unused_port", lambda host: offered.pop() if offered else real(host)
        )
        port = studio_server.free_port()
        assert offered == [] and port != taken
    finally:
        holder.communicate("", timeout=60)


def test_a_closed_port_refuses_and_no_server_can_take_it() -> None:
    from tests.studio_server import closed_port

    port = closed_port()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=10).close()
    with socket.socket() as other:
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as HTTP servers do
        with pytest.raises(OSError, match="in use"):
            other.bind(("127.0.0.1", port))
