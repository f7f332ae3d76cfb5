"""Any LangChain chat model: one that calls no tools gets its structured output as JSON text.

``BaseChatModel.bind_tools`` raises ``NotImplementedError`` (LangChain's fake models, many a
community model): such a model is asked for the schema's JSON in its reply's text, read
leniently (a code fence, words around it) and repaired as the other methods are.
"""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from debategraph import (
    build_debate,
    build_discussion,
    build_group_chat,
    build_meeting,
    build_solver_debate,
)
from debategraph.errors import ModelUnavailableError
from debategraph.models import ModelSpec, bind_model, binding, get_chat_model
from debategraph.models.calls import structured_call
from debategraph.models.pacing import forget_paces
from debategraph.models.spec import parse_model, provider_of
from tests.conftest import one_error_line, run_cli
from tests.fake_model import TextOnlyChatModel, ToolCallingChatModel

pytestmark = pytest.mark.usefixtures("fresh_paces")


class Count(BaseModel):
    """A count."""

    answer: int


def test_a_model_without_tools_is_asked_for_json_in_its_text() -> None:
    reply = 'Sure! Here it is:\n```json\n{"answer": 7}\n```\nAnything else?'
    model = TextOnlyChatModel(reply=reply)
    binding = bind_model(model)
    assert (binding.method, binding.tool_calls) == ("json_text", False)
    result = structured_call(binding, Count, [HumanMessage("How many?")])
    assert result.value == Count(answer=7) and result.attempts == 1
    asked = model.prompts[0][-1].text
    assert asked.startswith("Reply with one JSON object and nothing else") and '"answer"' in asked


def test_json_text_is_repaired_then_retried_with_the_reason() -> None:
    model = TextOnlyChatModel(reply='{"answer": "7"}')  # numeric text: coerced
    assert structured_call(bind_model(model), Count, [HumanMessage("?")]).value == Count(answer=7)
    model = TextOnlyChatModel(reply="no idea")
    result = structured_call(bind_model(model), Count, [HumanMessage("?")])
    assert result.value is None and result.attempts == 3
    assert result.reason is not None and result.reason.startswith("invalid output after 3")


SOLVER = '{"reasoning": "3 and 5 make 8", "answer": "8", "confidence": 0.9}'


def test_a_solver_debate_runs_on_a_model_without_tools() -> None:
    graph = build_solver_debate(TextOnlyChatModel(reply=SOLVER), agents=3, max_rounds=2).compile()
    out = graph.invoke({"question": "Tom has 3 apples and buys 5 more. How many?"})
    assert out["answer"] == "8" and out["termination_reason"] == "rounds_completed"


def test_a_judged_debate_runs_on_langchains_generic_fake_model() -> None:
    """The judge of a debate on GenericFakeChatModel (no bind_tools) answers in its text."""
    judge = '{"winner": "Ann", "scores": [], "rationale": "clearer", "strongest": []}'
    replies = itertools.chain(
        [AIMessage("Remote work saves commuting.")] * 2,  # round 1: Ann, Ben
        [AIMessage(judge)],
        itertools.repeat(AIMessage(judge)),
    )
    model = GenericFakeChatModel(messages=replies)
    graph = build_debate(
        model, debaters=["Ann:for", "Ben:against"], max_rounds=1, judge=True
    ).compile()
    out = graph.invoke({"topic": "Remote work is better"})
    assert out["termination_reason"] == "rounds_completed"
    assert out["verdict"].winner == "Ann"  # its own verdict, read from its text


# -- PROVIDER:MODEL, as LangChain's init_chat_model reads it ----------------------------------


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("anthropic:claude-sonnet-4-5", "anthropic"),
        ("ollama:llama3.2", "ollama"),
        ("openai:gpt-4o-mini", None),  # OpenAI-compatible, as always
        ("qwen2.5:7b", None),  # an Ollama model's name at an OpenAI-compatible endpoint
        ("mistral:7b", None),  # LangChain's provider is "mistralai"
        ("gpt-4o-mini", None),
        ("local", None),
    ],
)
def test_a_provider_prefix_is_read_as_init_chat_model_reads_it(
    model: str, provider: str | None
) -> None:
    assert provider_of(model) == provider


def test_a_provider_whose_package_is_missing_is_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    if importlib.util.find_spec("langchain_ollama") is not None:
        pytest.skip("langchain-ollama is installed here")
    code, _, err = run_cli(["solve", "2+2?", "--model", "ollama:llama3.2"], capsys)
    assert code == 2
    assert one_error_line(err) == (
        "debategraph: error: model 'ollama:llama3.2': the ollama provider needs its LangChain "
        "package, not installed here: pip install langchain-ollama"
    )


def test_a_provider_model_is_built_by_init_chat_model_and_debates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """azure_openai's package (langchain-openai) is here; its model is a scripted one."""
    built: list[tuple[str, dict[str, Any]]] = []

    def init(model: str, **settings: Any) -> BaseChatModel:
        built.append((model, settings))
        return TextOnlyChatModel(reply=SOLVER)

    monkeypatch.setattr(binding, "init_chat_model", init)
    binding.clear_model_cache()
    spec = ModelSpec(model="azure_openai:my-deployment", max_tokens=64, patience_s=30, rpm=600)
    model = get_chat_model(spec)
    assert (model.name, model.method, model.patience_s, model.rpm) == (
        "azure_openai:my-deployment", "json_text", 30, 600,
    )  # fmt: skip
    assert built == [("azure_openai:my-deployment", {"temperature": 0.7, "max_tokens": 64})]
    out = build_solver_debate(spec, agents=2, max_rounds=1).compile().invoke({"question": "3+5?"})
    assert out["answer"] == "8"
    binding.clear_model_cache()


def test_an_agents_provider_model_is_its_own_on_a_local_run() -> None:
    """Named without an endpoint on a local run, it goes to its provider, not the embedded."""
    from debategraph.models.choice import calls_run_model, goes_to_embedded

    own = ModelSpec(model="azure_openai:my-deployment")
    assert not calls_run_model(own)
    assert not goes_to_embedded(own, ModelSpec())
    assert calls_run_model(ModelSpec(model="qwen2.5:7b"))  # a name at the run's endpoint


# -- every pattern, on a chat model of no OpenAI kind ----------------------------------------

PAPER = "# Sparse Debate Helps\n\n## Method\nAgents on a ring.\n\n## Results\nThe ring matches.\n"

#: Each pattern: its factory's call on a model, and a small input.
PATTERNS: dict[str, tuple[Any, dict[str, Any]]] = {
    "solver_debate": (
        lambda m: build_solver_debate(m, agents=2, max_rounds=1),
        {"question": "What is 3 + 5?"},
    ),
    "debate": (
        lambda m: build_debate(m, debaters=["Ann:for", "Ben:against"], max_rounds=1, judge=True),
        {"topic": "Remote work is better"},
    ),
    "discussion": (
        lambda m: build_discussion(
            m,
            personas=[{"name": "Critic", "focus": "methods"}, {"name": "Builder", "focus": "uses"}],
            max_rounds=1,
            max_sections=1,
        ),
        {"document": PAPER},
    ),
    "group_chat": (lambda m: build_group_chat(m, max_rounds=2), {"task": "A slogan, please."}),
    "meeting": (lambda m: build_meeting(m, max_rounds=1), {"topic": "A four-day week?"}),
}


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_every_pattern_runs_on_a_text_only_model(pattern: str) -> None:
    """No tools, no response format: the structured calls read JSON from text or fall back."""
    factory, payload = PATTERNS[pattern]
    graph = factory(TextOnlyChatModel(reply="I think it is fine. " + SOLVER)).compile()
    out = graph.invoke(payload)
    assert out["termination_reason"], out


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_every_pattern_stops_resumable_on_a_providers_failure(pattern: str) -> None:
    """A provider's 503 (its own error class) is one line; the thread resumes to its end."""
    factory, payload = PATTERNS[pattern]
    failing = TextOnlyChatModel(reply=SOLVER, failures=[ProviderDown(503)] * 50)
    config = {"configurable": {"thread_id": "t"}}
    saver = InMemorySaver()
    graph = factory(failing).compile(checkpointer=saver)
    with pytest.raises(ModelUnavailableError) as info:
        graph.invoke(payload, config)
    assert str(info.value).endswith("answered HTTP 503: down for maintenance")
    failing.failures.clear()  # the provider is back: the same thread goes on
    out = graph.invoke(None, config)
    assert out["termination_reason"], out


class ProviderDown(Exception):
    """Another SDK's error for an HTTP status."""

    def __init__(self, status_code: int) -> None:
        super().__init__("down for maintenance")
        self.status_code = status_code


def test_a_served_or_agents_model_of_a_missing_provider_is_refused_where_written(
    tmp_path: Path,
) -> None:
    if importlib.util.find_spec("langchain_ollama") is not None:
        pytest.skip("langchain-ollama is installed here")
    from debategraph.errors import UsageError
    from debategraph.serve.models import read_models

    listing = tmp_path / "models.yaml"
    listing.write_text("models:\n  - name: small\n    model: ollama:llama3.2\n")
    with pytest.raises(UsageError) as info:
        read_models(str(listing), "--models")
    assert str(info.value).endswith(
        "model 'small': model 'ollama:llama3.2': the ollama provider needs its LangChain "
        "package, not installed here: pip install langchain-ollama"
    )
    with pytest.raises(ValueError) as refused:
        parse_model("ollama:llama3.2", "agent 'ann'")
    assert str(refused.value).startswith("agent 'ann': model 'ollama:llama3.2': the ollama")


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_every_pattern_runs_on_a_model_with_tool_calls_only(pattern: str) -> None:
    """Tool calling, no response format: every structured call is the one tool's arguments."""
    model = ToolCallingChatModel(reply="I think it is fine. " + SOLVER)
    assert bind_model(model).method == "function_calling"
    factory, payload = PATTERNS[pattern]
    out = factory(model).compile().invoke(payload)
    assert out["termination_reason"], out
    asked = [p for p in model.prompts if p]
    assert asked  # it was called, and the run went to its end on its tool calls


class ProviderRateLimitError(Exception):
    """Another SDK's rate limit: a status and a wait past the call's patience."""

    def __init__(self) -> None:
        super().__init__("slow down")
        self.status_code = 429
        self.retry_after = 3600.0


#: Each kind of failure a provider's chat model raises, and what its one line says.
FAILURES: dict[str, tuple[BaseException, str]] = {
    "ConnectionError": (ConnectionError("connection reset by peer"), "is unreachable"),
    "TimeoutError": (TimeoutError("read timed out"), "timed out"),
    "httpx.ConnectError": (httpx.ConnectError("name or service not known"), "is unreachable"),
    "rate limit": (ProviderRateLimitError(), "answered HTTP 429"),  # its own, or the hold
    "503": (ProviderDown(503), "answered HTTP 503: down for maintenance"),
}


@pytest.mark.parametrize("pattern", list(PATTERNS))
@pytest.mark.parametrize("kind", list(FAILURES))
def test_each_failure_of_a_tool_calling_model_stops_every_pattern_resumable(
    pattern: str, kind: str
) -> None:
    """Raised past the retries (none) and the patience: one line; the thread then resumes."""
    error, says = FAILURES[kind]
    model = ToolCallingChatModel(reply=SOLVER, failures=[error] * 50)
    factory, payload = PATTERNS[pattern]
    graph = factory(model).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    with pytest.raises(ModelUnavailableError) as info:
        graph.invoke(payload, config)
    assert says in str(info.value) and "\n" not in str(info.value)
    model.failures.clear()
    forget_paces()  # a resume is a new process: it knows nothing of the hour's hold
    out = graph.invoke(None, config)
    assert out["termination_reason"], out
