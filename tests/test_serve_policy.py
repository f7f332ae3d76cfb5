"""The operator's model list, the request guard and the served graph's context policy.

In-process parts of ``debategraph serve`` (the real servers are driven in
``tests/test_serve_safety.py``): what a client's context may say, how names become the
operator's specs where a served graph starts (so a context that reached a graph by any
route is read through the list), and the values the server refuses before Aegra sees
them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from debategraph.graphs.served import ServedGraph, served
from debategraph.models import ModelSpec
from debategraph.registry import BUILTIN
from debategraph.serve import guard
from debategraph.serve.models import DEFAULT_LIST, ModelList, RefusedContext
from debategraph.serve.server import is_loopback
from tests.conftest import solvers_answer_18
from tests.openai_stub import StubOpenAIServer

LISTED = ModelList(
    {
        "mini": ModelSpec("gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key_env="K"),
        "local": ModelSpec(),
    }
)


@pytest.mark.parametrize(
    "field", ["base_url", "api_key", "api_key_env", "timeout_s", "max_retries", "slots", "tools"]
)
def test_a_field_that_chooses_an_endpoint_or_a_key_is_forbidden(field: str) -> None:
    with pytest.raises(RefusedContext) as refused:
        LISTED.check({"model": "mini", field: "x"})
    assert refused.value.status == 403
    assert str(refused.value) == (
        f"context field {field!r} is the operator's to set: name a model from the server's "
        "list (mini, local); a client sets only model, agent_models, temperature, max_tokens"
    )


@pytest.mark.parametrize(
    ("context", "status", "line"),
    [
        ({"model": "gpt-4o"}, 422, "context.model 'gpt-4o' is not one of the server's models"),
        ({"model": {"model": "m"}}, 403, "context.model must name a model from the server's"),
        ({"agent_models": {"ann": "nope"}}, 422, "context.agent_models['ann'] 'nope' is not"),
        (
            {"agent_models": {"ann": {"model": "m", "base_url": "http://x"}}},
            403,
            "context.agent_models['ann'] must name a model from the server's list",
        ),
        ({"agent_models": ["mini"]}, 422, "context.agent_models must map agent names"),
        ({"temperature": 9}, 422, "context: temperature 9 must be a number from 0 to 2"),
        ({"max_tokens": 0}, 422, "context: max_tokens 0 must be a whole number"),
        ({"modle": "mini"}, 422, "unknown context field 'modle'"),
        ("mini", 422, "context must be an object, got 'mini'"),
    ],
)
def test_a_context_the_list_does_not_allow_is_refused_in_one_line(
    context: Any, status: int, line: str
) -> None:
    with pytest.raises(RefusedContext) as refused:
        LISTED.check(context)
    assert refused.value.status == status and str(refused.value).startswith(line)
    assert "\n" not in str(refused.value)


def test_nulls_and_langgraphs_own_configurable_keys_pass() -> None:
    LISTED.check({"model": "mini", "base_url": None, "api_key": None}, "context")
    LISTED.check({"thread_id": "t", "checkpoint_ns": ""}, "config.configurable")
    LISTED.check(None)


def test_names_become_the_operators_specs() -> None:
    fields = LISTED.resolve({"model": "mini", "temperature": 0.1, "agent_models": {"a": "local"}})
    assert (fields["model"], fields["base_url"], fields["api_key_env"]) == (
        "gpt-4o-mini",
        "http://127.0.0.1:9/v1",
        "K",
    )
    assert fields["temperature"] == 0.1 and fields["api_key"] is None
    assert fields["agent_models"] == {
        "a": {"model": "local", "temperature": 0.7, "max_retries": 2, "structured_method": "auto"}
    }
    assert LISTED.resolve({})["model"] == "gpt-4o-mini"  # the first is the default
    assert DEFAULT_LIST.resolve(None)["model"] == "local"
    with pytest.raises(RefusedContext):
        DEFAULT_LIST.resolve({"model": "mini"})  # no list: the default model only


def test_a_default_the_list_does_not_hold_is_refused() -> None:
    with pytest.raises(ValueError, match="default 'big' is not one of the models: mini"):
        ModelList({"mini": ModelSpec("m")}, "big")


@pytest.fixture
def policy(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubOpenAIServer]:
    """The served graphs read contexts through a list naming a stub, its key by variable."""
    with StubOpenAIServer(solvers_answer_18) as stub:
        listed = ModelList({"stub": ModelSpec("stub", base_url=stub.url, api_key_env="SRV_KEY")})
        monkeypatch.setenv("SRV_KEY", "sk-operator")
        monkeypatch.setattr(ServedGraph, "context_policy", listed.resolve)
        yield stub


def solver_debate() -> ServedGraph:
    entry = next(e for e in BUILTIN if e.name == "solver_debate")
    return served(entry.build()(**entry.studio).compile(name=entry.name))


def test_a_served_graph_refuses_an_endpoint_its_context_names(
    policy: StubOpenAIServer,
) -> None:
    """Were the HTTP check passed by, the graph itself reads the context through the list."""
    graph = solver_debate()
    with pytest.raises(RefusedContext, match="context field 'base_url' is the operator's"):
        graph.invoke({"question": "1+1?"}, context={"model": "stub", "base_url": "http://x/v1"})
    assert policy.calls == 0


def test_a_served_graph_runs_a_listed_model_with_the_operators_key(
    policy: StubOpenAIServer,
) -> None:
    result = solver_debate().invoke({"question": "1+1?"}, context={"model": "stub"})
    assert result["answer"] == "18" and policy.calls == 12
    assert set(policy.keys) == {"Bearer sk-operator"}


@pytest.mark.parametrize(
    ("method", "path", "query", "body", "line"),
    [
        ("POST", "/threads", b"", {"metadata": {"a": "x\x00y"}}, "body.metadata.a holds a NUL"),
        ("POST", "/threads", b"", {"k\ud800": 1}, "body key holds an unpaired surrogate"),
        ("GET", "/threads/t/runs", b"limit=99999999999999999999", None, "limit '9999"),
        ("POST", "/threads/search", b"", {"offset": -1}, "offset -1 must be a whole number"),
        ("POST", "/store/namespaces", b"", {"suffix": [""]}, "store suffix label '' must be"),
        ("GET", "/store/items", b"key=k&namespace=a..b", None, "store namespace label ''"),
        ("PATCH", "/threads/t/runs/r", b"", {"status": ""}, "run status '' is not one of"),
        ("GET", "/threads", b"q=%ff", None, "the query string is not UTF-8"),
    ],
)
def test_values_the_database_cannot_hold_are_refused(
    method: str, path: str, query: bytes, body: Any, line: str
) -> None:
    refused = guard.refusal(method, path, query, body)
    assert refused is not None and refused.startswith(line), refused


def test_a_dotted_store_namespace_is_split_and_a_null_config_dropped() -> None:
    query = b"key=k&namespace=debategraph.inbox.t1"
    assert guard.store_query("/store/items", query) == (
        b"key=k&namespace=debategraph&namespace=inbox&namespace=t1"
    )
    assert guard.store_query("/threads", query) == query
    assert guard.normalised({"config": None, "input": {}}) == {"input": {}}
    body = {"config": {}}
    assert guard.normalised(body) is body


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("0.0.0.0", False),
        ("10.0.0.5", False),
        ("myhost", False),
    ],
)
def test_only_loopback_hosts_may_serve_without_sign_in(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_key_written_twice_in_a_data_file_is_refused_with_its_line(tmp_path: Path) -> None:
    """YAML keeps the last of two equal keys silently; a user's file says which line."""
    from debategraph.datafiles import load_data
    from debategraph.errors import UsageError

    path = tmp_path / "tokens.yaml"
    path.write_text("alice: one-token-of-24-characters-x\nbob: x\nalice: another\n")
    with pytest.raises(UsageError) as refused:
        load_data(path, "--tokens")
    assert (
        str(refused.value) == f"--tokens {path}: not valid YAML at line 3: 'alice' is written twice"
    )


def test_a_history_before_given_as_a_checkpoint_id_is_read_as_one() -> None:
    """Aegra passes ``before`` as the id string; LangGraph needs a config (it raised)."""
    import asyncio
    from typing import TypedDict

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, StateGraph

    class Count(TypedDict):
        n: int

    builder = StateGraph(Count)
    builder.add_node("inc", lambda state: {"n": state["n"] + 1})
    builder.add_edge(START, "inc")
    graph = served(builder.compile(checkpointer=InMemorySaver()))
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"n": 0}, config)
    graph.invoke({"n": 5}, config)
    history = list(graph.get_state_history(config))
    middle = history[2].config["configurable"]["checkpoint_id"]
    older = [s.config for s in graph.get_state_history(config, before=middle)]
    assert older == [s.config for s in history[3:]]

    async def read(before: Any) -> list[Any]:
        return [s.config async for s in graph.aget_state_history(config, before=before)]

    assert asyncio.run(read(middle)) == older
    assert asyncio.run(read("not an id")) == [s.config for s in history]  # ids sort after
