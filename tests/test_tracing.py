"""OpenTelemetry traces of a run (``debategraph.models.tracing``, the ``otel`` extra).

* In process, with the SDK's in-memory exporter: a solver debate with a tool, run both
  ways (``invoke`` and ``ainvoke``) against the stub, makes one span tree by the GenAI
  conventions whose agents, rounds and tokens are the run's own.
* A fresh interpreter: without the ``OTEL_*`` variables a CLI run loads no exporter and
  sets no tracer provider (``OTEL_SDK_DISABLED`` turns tracing off, checked in process);
  an endpoint that refuses costs one warning line; a missing extra, one line saying so.
* Arize Phoenix (a real OTLP receiver, ``tests/phoenix_server.py``): a CLI run exports to
  it, and the spans read back through its REST API are the same tree.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

import debategraph
from debategraph.models import genai, otlp, tracing
from debategraph.models.genai import CONTENT_VARIABLE
from tests.openai_stub import StubOpenAIServer, StubReply
from tests.phoenix_server import phoenix_server
from tests.processes import python_run
from tests.studio_server import closed_port

if TYPE_CHECKING:  # imported by the fixture: CLI_RUN imports this module, and must not load it
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

PATTERN = "solver_debate"
QUESTION = "What is 48 / 2?"
TEMPERATURE = 0.2
MAX_TOKENS = 64
OPERATION = "gen_ai.operation.name"
ROUNDS = 2
#: What a chat span and a turn span say of the tokens: (input, output) attribute names.
TOKENS = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")


def calculator_then_answer(body: dict[str, Any]) -> Any:
    """An agent with the calculator calls it once a turn, then answers; the rest answer."""
    names = [tool["function"]["name"] for tool in body.get("tools") or []]
    last = (body.get("messages") or [{}])[-1]
    if "calculator" in names and last.get("role") != "tool":
        return StubReply(tool_args={"expression": "48 / 2"}, tool_name="calculator")
    if "calculator" in names:
        return StubReply(content="The calculator says 24.")
    return {"reasoning": "48 / 2 = 24", "answer": "24", "confidence": 0.9}


@pytest.fixture
def exporter(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[InMemorySpanExporter]:
    """Tracing on in this process, to an in-memory exporter; off again afterwards.

    Parametrized indirectly with ``True``, the spans hold content (the opt-in is set).
    """
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    content = getattr(request, "param", False)
    monkeypatch.setenv(CONTENT_VARIABLE, "true" if content else "false")
    memory = InMemorySpanExporter()
    assert tracing.enable_tracing(exporter=memory)
    assert tracing.CONTENT is content
    try:
        yield memory
    finally:
        tracing.disable_tracing()


#: Attributes only content (the opt-in) puts on a span.
CONTENT = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "input.value",
    "output.value",
)


def parsed(value: Any) -> Any:
    """A JSON attribute as the SDK holds it (a string) or as Phoenix hands it back (parsed)."""
    return json.loads(value) if isinstance(value, str) else value


def check_tree(
    spans: list[dict[str, Any]],
    thread: str,
    usage: Mapping[str, tuple[int, int, int]],
    tool_calls: int,
    *,
    request: Mapping[str, Any],
    content: bool,
    answer: str,
) -> None:
    """One run's spans: ``{"name", "id", "parent", "attributes"}`` each.

    Args:
        spans: The run's spans.
        thread: Its thread id.
        usage: ``(prompt tokens, completion tokens, calls)`` per agent, as the run counted.
        tool_calls: The tool calls in its transcript.
        request: What every model call's span says of its request (provider aside).
        content: Whether the run recorded content (the opt-in).
        answer: What the run's outcome message (its last ``messages``) holds.
    """
    operations = Counter(s["attributes"].get(OPERATION) for s in spans)
    assert set(operations) == {"invoke_workflow", "invoke_agent", "chat", "execute_tool", None}
    for span in spans:  # the debate's attributes on every span; content only if opted in
        assert span["attributes"]["debategraph.pattern"] == PATTERN, span
        assert span["attributes"]["gen_ai.conversation.id"] == thread, span
        if not content:
            assert not set(CONTENT) & set(span["attributes"]), span
    (run,) = [s for s in spans if s["attributes"].get(OPERATION) == "invoke_workflow"]
    assert run["name"] == f"invoke_workflow {PATTERN}" and run["parent"] is None
    assert run["attributes"]["debategraph.termination_reason"] == "rounds_completed"
    if content:  # the question in, the answer out
        assert run["attributes"]["input.value"] == QUESTION
        assert parsed(run["attributes"]["gen_ai.input.messages"]) == [
            {"role": "user", "parts": [{"type": "text", "content": QUESTION}]}
        ]
        assert answer in run["attributes"]["output.value"]
        (said,) = parsed(run["attributes"]["gen_ai.output.messages"])
        assert said["parts"] == [{"type": "text", "content": run["attributes"]["output.value"]}]
    # a span per round under the run, the agents' turns under their round
    rounds = {s["id"]: s for s in spans if s["attributes"].get(OPERATION) is None}
    assert sorted(s["name"] for s in rounds.values()) == [
        f"round {r}" for r in range(1, ROUNDS + 1)
    ]
    for each in rounds.values():
        assert each["parent"] == run["id"]
        assert each["name"] == f"round {each['attributes']['debategraph.round']}"
    turns = {s["id"]: s for s in spans if s["attributes"].get(OPERATION) == "invoke_agent"}
    seen = sorted(
        (t["attributes"]["gen_ai.agent.name"], t["attributes"]["debategraph.round"])
        for t in turns.values()
    )
    assert seen == sorted((agent, r) for agent in usage for r in range(1, ROUNDS + 1))
    for turn in turns.values():
        assert turn["name"] == f"invoke_agent {turn['attributes']['gen_ai.agent.name']}"
        assert (
            rounds[turn["parent"]]["attributes"]["debategraph.round"]
            == (turn["attributes"]["debategraph.round"])
        )
        if content:  # the turn's answer: its last reply, the structured one
            (said,) = parsed(turn["attributes"]["gen_ai.output.messages"])
            assert said["parts"][0]["arguments"]["answer"] == "24", said
    spent: dict[str, list[int]] = {agent: [0, 0, 0] for agent in usage}
    tools = 0
    for span in spans:
        operation = span["attributes"].get(OPERATION)
        if operation not in ("chat", "execute_tool"):
            continue
        turn = turns[span["parent"]]  # every call under its agent's turn, in its round
        for key in ("gen_ai.agent.name", "debategraph.round"):
            assert span["attributes"][key] == turn["attributes"][key], span
        if operation == "execute_tool":
            assert span["name"] == "execute_tool calculator"
            assert span["attributes"]["gen_ai.tool.name"] == "calculator"
            if content:
                assert parsed(span["attributes"]["gen_ai.tool.call.arguments"]) == {
                    "expression": "48 / 2"
                }
                assert span["attributes"]["gen_ai.tool.call.result"] == "24"
            tools += 1
            continue
        assert span["name"] == "chat stub"
        assert span["attributes"]["gen_ai.request.model"] == "stub"
        # the provider, the endpoint and the request's parameters, as the spec set them
        assert span["attributes"]["gen_ai.provider.name"] == "openai", span
        assert {k: span["attributes"].get(k) for k in request} == dict(request), span
        if content:  # the prompt (system and user messages) and the reply
            asked = parsed(span["attributes"]["gen_ai.input.messages"])
            assert [m["role"] for m in asked[:2]] == ["system", "user"], asked
            assert QUESTION in json.dumps(asked)
            (said,) = parsed(span["attributes"]["gen_ai.output.messages"])
            assert said["role"] == "assistant" and said["finish_reason"] in ("stop", "tool_call")
        counts = spent[span["attributes"]["gen_ai.agent.name"]]
        counts[0] += span["attributes"][TOKENS[0]]
        counts[1] += span["attributes"][TOKENS[1]]
        counts[2] += 1
    assert {agent: tuple(counts) for agent, counts in spent.items()} == dict(usage)
    assert tools == tool_calls
    for agent, (prompt, completion, _) in usage.items():  # a turn's tokens are its calls'
        mine = [t for t in turns.values() if t["attributes"]["gen_ai.agent.name"] == agent]
        assert sum(t["attributes"][TOKENS[0]] for t in mine) == prompt
        assert sum(t["attributes"][TOKENS[1]] for t in mine) == completion


def requested(port: int, temperature: float) -> dict[str, Any]:
    """What a model call's span says of a request to the stub on ``port``."""
    return {
        "server.address": "127.0.0.1",
        "server.port": port,
        "gen_ai.request.temperature": temperature,
        "gen_ai.request.max_tokens": MAX_TOKENS,
    }


def recorded(span: Any) -> dict[str, Any]:
    """An SDK span as :func:`check_tree` reads it."""
    return {
        "name": span.name,
        "id": format(span.context.span_id, "016x"),
        "parent": format(span.parent.span_id, "016x") if span.parent else None,
        "attributes": dict(span.attributes),
    }


@pytest.mark.parametrize(
    ("way", "exporter"),
    [("invoke", False), ("ainvoke", True)],
    ids=["invoke", "ainvoke-with-content"],
    indirect=["exporter"],
)
def test_a_debate_makes_one_span_tree_by_the_genai_conventions(
    exporter: InMemorySpanExporter, way: str
) -> None:
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    spec = {"model": "stub", "temperature": TEMPERATURE, "max_tokens": MAX_TOKENS}
    with StubOpenAIServer(calculator_then_answer) as server:
        graph = debategraph.build_solver_debate(
            debategraph.ModelSpec(**spec, base_url=server.url, max_retries=0),
            agents=[{"name": "Ada", "tools": ["calculator"]}, "Bo"],
            max_rounds=ROUNDS,
        ).compile(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": thread}}
        question = {"question": QUESTION}
        if way == "invoke":
            out = graph.invoke(question, config)
        else:
            out = asyncio.run(graph.ainvoke(question, config))
    usage = {
        agent: (u.prompt_tokens, u.completion_tokens, u.calls)
        for agent, u in out["usage_by_agent"].items()
    }
    assert not any(u.estimated for u in out["usage_by_agent"].values())
    tool_calls = sum(1 for turn in out["transcript"] if turn.role == "tool")
    assert tool_calls == ROUNDS  # Ada's, once a round
    check_tree(
        [recorded(s) for s in exporter.get_finished_spans()],
        thread,
        usage,
        tool_calls,
        request=requested(server.port, TEMPERATURE),
        content=tracing.CONTENT,
        answer=out["messages"][-1].text,
    )


def test_with_tracing_off_no_span_is_made(exporter: InMemorySpanExporter) -> None:
    tracing.disable_tracing()
    with StubOpenAIServer(calculator_then_answer) as server:
        graph = debategraph.build_solver_debate(
            debategraph.ModelSpec(model="stub", base_url=server.url), agents=2, max_rounds=1
        ).compile()
        graph.invoke({"question": "What is 48 / 2?"})
    assert exporter.get_finished_spans() == ()


@pytest.mark.parametrize(
    ("value", "on"),
    [("true", True), ("TRUE", True), ("span_only", True), ("false", False), ("", False)],
)
def test_the_content_opt_in_reads_the_standard_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str, on: bool
) -> None:
    monkeypatch.setenv(CONTENT_VARIABLE, value)
    assert genai.capture_content() is on
    assert capsys.readouterr().err == ""


def test_a_bad_content_opt_in_is_said_in_one_line_and_records_none(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(CONTENT_VARIABLE, "yes please")
    assert genai.capture_content() is False
    assert capsys.readouterr().err.splitlines() == [
        f"debategraph: warning: {CONTENT_VARIABLE}='yes please' is not one of true, false, "
        "span_only, span_and_event, event_only, no_content: message content is not recorded"
    ]


@pytest.mark.parametrize(
    ("variables", "service", "project"),
    [
        ({}, "debategraph", "debategraph"),
        ({"OTEL_SERVICE_NAME": "debates"}, "debates", "debates"),
        ({"OTEL_RESOURCE_ATTRIBUTES": "service.name=lab,team=x"}, "lab", "lab"),
        (
            {"OTEL_SERVICE_NAME": "debates", "OTEL_RESOURCE_ATTRIBUTES": f"{otlp.PROJECT}=mine"},
            "debates",
            "mine",
        ),
    ],
)
def test_the_service_name_is_the_viewers_project(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], service: str, project: str
) -> None:
    for name in ("OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    resource = otlp.provider().resource.attributes
    assert (resource["service.name"], resource[otlp.PROJECT]) == (service, project)


def test_a_providers_name_and_endpoint_by_the_conventions() -> None:
    from langchain_openai import ChatOpenAI

    said = genai.request_attributes(
        ChatOpenAI(model="gpt-x", api_key="unused"),  # type: ignore[arg-type]
        {"ls_provider": "openai", "ls_temperature": 0.0, "ls_stop": "END"},
        {"top_p": 0.5, "seed": 7},
    )
    assert said == {
        "gen_ai.provider.name": "openai",
        "server.address": "api.openai.com",  # the OpenAI API: no base URL set
        "server.port": 443,
        "gen_ai.request.temperature": 0.0,
        "gen_ai.request.stop_sequences": ["END"],
        "gen_ai.request.top_p": 0.5,
        "gen_ai.request.seed": 7,
    }
    # LangChain's names where the conventions have their own, else LangChain's
    for langchain, convention in [("google_genai", "gcp.gen_ai"), ("ollama", "ollama")]:
        named = genai.request_attributes(None, {"ls_provider": langchain}, {})
        assert named == {"gen_ai.provider.name": convention}


# -- a fresh interpreter: the CLI as a user runs it ----------------------------------------

#: A CLI run against a stub in a fresh interpreter; prints what tracing loaded and set.
CLI_RUN = """
import json, sys
from tests.openai_stub import StubOpenAIServer
from tests.test_tracing import calculator_then_answer
from debategraph.cli import main

with StubOpenAIServer(calculator_then_answer) as server:
    try:
        main(["solve", "What is 48 / 2?", "--agents", "2", "--rounds", "2", "--tools",
              "calculator", "--model", "stub", "--base-url", server.url, "--db", sys.argv[1],
              "--thread", sys.argv[2], "--max-retries", "0", "--max-tokens", "64", "--json"])
    except SystemExit as exc:
        assert not exc.code, exc.code
loaded = sorted(m for m in sys.modules if m.startswith(
    ("opentelemetry.sdk.trace.export", "opentelemetry.exporter")))
from opentelemetry import trace
from debategraph.models import genai, otlp, tracing
from debategraph.models.genai import CONTENT_VARIABLE
print(json.dumps({"loaded": loaded, "on": tracing.TRACER is not None,
                  "provider": type(trace.get_tracer_provider()).__name__, "port": server.port}))
"""


def cli_run(
    tmp_path: Path, thread: str, **variables: str
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """Run :data:`CLI_RUN` with the ``OTEL_*`` variables given (and no others).

    Returns:
        The CLI's JSON result, what tracing loaded and set, and what went to stderr.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = python_run(
        CLI_RUN, str(tmp_path / "t.sqlite"), thread, env={**env, **variables}, timeout=180
    )
    assert done.returncode == 0, done.stderr
    result, state = done.stdout.strip().splitlines()[-2:]
    return json.loads(result), json.loads(state), done.stderr


@pytest.mark.slow  # make test-fast leaves it out: a Python process of its own
def test_without_the_variables_nothing_is_loaded_or_set(tmp_path: Path) -> None:
    result, state, err = cli_run(tmp_path, "quiet")
    assert result["answer"] == "24"
    assert {k: state[k] for k in ("loaded", "on", "provider")} == {
        "loaded": [],
        "on": False,
        "provider": "ProxyTracerProvider",
    }
    assert "warning" not in err


def test_otel_sdk_disabled_turns_it_off_whatever_the_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:9/v1/traces")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert not tracing.enable_tracing()
    assert tracing.TRACER is None
    monkeypatch.setenv("OTEL_SDK_DISABLED", "false")
    assert tracing.endpoint() == "http://127.0.0.1:9/v1/traces"


@pytest.mark.slow  # make test-fast leaves it out: a Python process of its own
def test_an_endpoint_that_refuses_costs_the_run_one_warning_line(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    result, state, err = cli_run(tmp_path, "refused", OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
    assert result["answer"] == "24" and result["termination_reason"] == "rounds_completed"
    assert state["on"] and state["provider"] == "TracerProvider"
    warnings = [line for line in err.splitlines() if line.startswith("debategraph: warning:")]
    assert warnings == [
        f"debategraph: warning: traces are not being sent: the OTLP endpoint {endpoint} did "
        "not take them (is the receiver running?); the run goes on"
    ], err
    assert "Traceback" not in err and "rror" not in err, err  # no exporter's own lines


@pytest.mark.slow  # make test-fast leaves it out: a Python process of its own
def test_without_the_extra_one_line_says_how_to_install_it() -> None:
    code = (
        "import sys\n"
        "sys.modules['opentelemetry.exporter.otlp.proto.http.trace_exporter'] = None\n"
        "from debategraph.models.tracing import enable_tracing\n"
        "print(enable_tracing())\n"
    )
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}
    done = python_run(code, env=env)
    assert done.stdout.strip() == "False", done.stderr
    assert done.stderr.strip().splitlines() == [
        "debategraph: warning: traces are not being sent: the otel extra is not installed "
        "(opentelemetry.exporter.otlp.proto.http.trace_exporter is missing): "
        "pip install 'debategraph[otel]'"
    ]


@pytest.mark.slow  # starts Phoenix and a CLI process
def test_a_cli_run_reaches_phoenix_as_one_tree_with_its_content(tmp_path: Path) -> None:
    """What a user sees in Phoenix: the project, the tree, the content, Phoenix's own view."""
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    project = "debategraph-test"
    with phoenix_server(tmp_path / "phoenix") as phoenix:
        result, state, err = cli_run(
            tmp_path,
            thread,
            OTEL_EXPORTER_OTLP_ENDPOINT=phoenix.url,
            OTEL_SERVICE_NAME=project,
            **{CONTENT_VARIABLE: "true"},
        )
        assert state["on"] and "warning" not in err, err
        usage = {
            agent: (u["prompt_tokens"], u["completion_tokens"], u["calls"])
            for agent, u in result["usage_by_agent"].items()
        }
        tool_calls = len(result["tool_calls"])
        # every span of the run: the run, its rounds, its turns (agents x rounds), its
        # model calls and its tool calls
        expected = 1 + ROUNDS + len(usage) * ROUNDS + sum(u[2] for u in usage.values()) + tool_calls
        deadline = time.monotonic() + 60
        while True:  # Phoenix writes what it is sent in the background
            # the service's project (the resource's openinference.project.name), not "default"
            found = [
                s
                for s in phoenix.spans(project)
                if s["attributes"].get("gen_ai.conversation.id") == thread
            ]
            if len(found) >= expected or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert not [s for s in phoenix.spans() if s["name"].startswith("invoke_workflow")]
    assert len(found) == expected
    spans = [
        {
            "name": s["name"],
            "id": s["context"]["span_id"],
            "parent": s.get("parent_id"),
            "attributes": s["attributes"],
        }
        for s in found
    ]
    check_tree(
        spans,
        thread,
        usage,
        tool_calls,
        request=requested(state["port"], 0.7),  # the CLI's default temperature
        content=True,
        answer=result["answer"],
    )
    assert {
        s["attributes"]["debategraph.termination_reason"] for s in spans if s["parent"] is None
    } == {result["termination_reason"]}
    # Phoenix's view of them: the kind of each span, the model calls' provider and chat
    # messages, the thread as the session that groups its runs
    kinds = Counter((s["name"].split()[0], s["span_kind"]) for s in found)
    assert set(kinds) == {
        ("invoke_workflow", "CHAIN"),
        ("round", "CHAIN"),
        ("invoke_agent", "AGENT"),
        ("chat", "LLM"),
        ("execute_tool", "TOOL"),
    }
    for span in found:
        assert span["attributes"]["session.id"] == thread
        if span["span_kind"] == "LLM":
            assert span["attributes"]["llm.provider"] == "openai"
            assert span["attributes"]["llm.input_messages.0.message.role"] == "system"
            assert span["attributes"]["llm.output_messages.0.message.role"] == "assistant"
