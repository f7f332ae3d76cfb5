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
from debategraph.models import tracing
from tests.openai_stub import StubOpenAIServer, StubReply
from tests.phoenix_server import phoenix_server
from tests.processes import python_run
from tests.studio_server import closed_port

if TYPE_CHECKING:  # imported by the fixture: CLI_RUN imports this module, and must not load it
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

PATTERN = "solver_debate"
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
def exporter() -> Iterator[InMemorySpanExporter]:
    """Tracing on in this process, to an in-memory exporter; off again afterwards."""
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    assert tracing.enable_tracing(exporter=memory)
    try:
        yield memory
    finally:
        tracing.disable_tracing()


def check_tree(
    spans: list[dict[str, Any]],
    thread: str,
    usage: Mapping[str, tuple[int, int, int]],
    tool_calls: int,
) -> None:
    """One run's spans: ``{"name", "id", "parent", "attributes"}`` each.

    Args:
        spans: The run's spans.
        thread: Its thread id.
        usage: ``(prompt tokens, completion tokens, calls)`` per agent, as the run counted.
        tool_calls: The tool calls in its transcript.
    """
    operations = Counter(s["attributes"].get(OPERATION) for s in spans)
    assert set(operations) == {"invoke_workflow", "invoke_agent", "chat", "execute_tool"}
    for span in spans:  # the debate's attributes on every span
        assert span["attributes"]["debategraph.pattern"] == PATTERN, span
        assert span["attributes"]["gen_ai.conversation.id"] == thread, span
    (run,) = [s for s in spans if s["attributes"][OPERATION] == "invoke_workflow"]
    assert run["name"] == f"invoke_workflow {PATTERN}" and run["parent"] is None
    turns = {s["id"]: s for s in spans if s["attributes"][OPERATION] == "invoke_agent"}
    seen = sorted(
        (t["attributes"]["gen_ai.agent.name"], t["attributes"]["debategraph.round"])
        for t in turns.values()
    )
    assert seen == sorted((agent, r) for agent in usage for r in range(1, ROUNDS + 1))
    for turn in turns.values():
        assert turn["name"] == f"invoke_agent {turn['attributes']['gen_ai.agent.name']}"
        assert turn["parent"] == run["id"]
    spent: dict[str, list[int]] = {agent: [0, 0, 0] for agent in usage}
    tools = 0
    for span in spans:
        operation = span["attributes"][OPERATION]
        if operation not in ("chat", "execute_tool"):
            continue
        turn = turns[span["parent"]]  # every call under its agent's turn, in its round
        for key in ("gen_ai.agent.name", "debategraph.round"):
            assert span["attributes"][key] == turn["attributes"][key], span
        if operation == "execute_tool":
            assert span["name"] == "execute_tool calculator"
            assert span["attributes"]["gen_ai.tool.name"] == "calculator"
            tools += 1
            continue
        assert span["name"] == "chat stub"
        assert span["attributes"]["gen_ai.request.model"] == "stub"
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


def recorded(span: Any) -> dict[str, Any]:
    """An SDK span as :func:`check_tree` reads it."""
    return {
        "name": span.name,
        "id": format(span.context.span_id, "016x"),
        "parent": format(span.parent.span_id, "016x") if span.parent else None,
        "attributes": dict(span.attributes),
    }


@pytest.mark.parametrize("way", ["invoke", "ainvoke"])
def test_a_debate_makes_one_span_tree_by_the_genai_conventions(
    exporter: InMemorySpanExporter, way: str
) -> None:
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    with StubOpenAIServer(calculator_then_answer) as server:
        graph = debategraph.build_solver_debate(
            debategraph.ModelSpec(model="stub", base_url=server.url, max_retries=0),
            agents=[{"name": "Ada", "tools": ["calculator"]}, "Bo"],
            max_rounds=ROUNDS,
        ).compile(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": thread}}
        question = {"question": "What is 48 / 2?"}
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
    check_tree([recorded(s) for s in exporter.get_finished_spans()], thread, usage, tool_calls)


def test_with_tracing_off_no_span_is_made(exporter: InMemorySpanExporter) -> None:
    tracing.disable_tracing()
    with StubOpenAIServer(calculator_then_answer) as server:
        graph = debategraph.build_solver_debate(
            debategraph.ModelSpec(model="stub", base_url=server.url), agents=2, max_rounds=1
        ).compile()
        graph.invoke({"question": "What is 48 / 2?"})
    assert exporter.get_finished_spans() == ()


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
              "--thread", sys.argv[2], "--max-retries", "0", "--json"])
    except SystemExit as exc:
        assert not exc.code, exc.code
loaded = sorted(m for m in sys.modules if m.startswith(
    ("opentelemetry.sdk.trace.export", "opentelemetry.exporter")))
from opentelemetry import trace
from debategraph.models import tracing
print(json.dumps({"loaded": loaded, "on": tracing.TRACER is not None,
                  "provider": type(trace.get_tracer_provider()).__name__}))
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
    assert state == {"loaded": [], "on": False, "provider": "ProxyTracerProvider"}
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
def test_a_cli_run_reaches_phoenix_with_its_agents_thread_and_tokens(tmp_path: Path) -> None:
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    with phoenix_server(tmp_path / "phoenix") as phoenix:
        result, state, err = cli_run(
            tmp_path,
            thread,
            OTEL_EXPORTER_OTLP_ENDPOINT=phoenix.url,
            OTEL_SERVICE_NAME="debategraph-test",
        )
        assert state["on"] and "warning" not in err, err
        usage = {
            agent: (u["prompt_tokens"], u["completion_tokens"], u["calls"])
            for agent, u in result["usage_by_agent"].items()
        }
        tool_calls = len(result["tool_calls"])
        # every span of the run: one per run, turn (agents x rounds), model call, tool call
        expected = 1 + len(usage) * ROUNDS + sum(u[2] for u in usage.values()) + tool_calls
        deadline = time.monotonic() + 60
        while True:  # Phoenix writes what it is sent in the background
            spans = [
                {
                    "name": s["name"],
                    "id": s["context"]["span_id"],
                    "parent": s.get("parent_id"),
                    "attributes": s["attributes"],
                }
                for s in phoenix.spans()
                if s["attributes"].get("gen_ai.conversation.id") == thread
            ]
            if len(spans) >= expected or time.monotonic() > deadline:
                break
            time.sleep(0.5)
    assert len(spans) == expected
    check_tree(spans, thread, usage, tool_calls)
