"""The response cache (models/cache.py): a request made before is answered without a call.

Unit tests on scripted fakes (what a request is, its samples, what is kept, a file that is
not a cache), then the CLI against the OpenAI-compatible stub: a solve and an eval run
twice, the second making no request the first made.
"""

from __future__ import annotations

import asyncio
import json
import operator
import sqlite3
import threading
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from pydantic import BaseModel

from debategraph.errors import UsageError
from debategraph.models import ModelSpec, bind_model
from debategraph.models.binding import ModelBinding
from debategraph.models.cache import (
    CACHE_MARK,
    FORMAT,
    active_cache,
    cached_run,
    caching,
    from_cache,
    open_cache,
    parameters_of,
    request_key,
)
from debategraph.models.calls import astructured_call, structured_call, text_call
from debategraph.models.money import Budget, Price, spending
from debategraph.models.pacing import pace_of
from tests.conftest import one_error_line, run_cli, stub_args
from tests.eval_data import chance_responder
from tests.fake_model import ScriptedChatModel, TextOnlyChatModel, text_reply, tool_reply
from tests.openai_stub import StubOpenAIServer

pytestmark = pytest.mark.usefixtures("fresh_paces")

PROMPT = [HumanMessage("What is 6 times 7?")]


class Answer(BaseModel):
    """An answer."""

    answer: int


class Counting:
    """A fake's replies: ``reply N`` for the N-th call, so samples tell apart."""

    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, messages: list[BaseMessage]) -> AIMessage:
        with self.lock:
            self.calls += 1
            n = self.calls
        return text_reply(f"reply {n}", prompt_tokens=12, completion_tokens=3)


def fake_binding(model: Any, name: str = "fake") -> ModelBinding:
    return ModelBinding(chat=model, method="function_calling", endpoint="fake://", name=name)


# -- one request, one call, whatever runs it again ------------------------------------------


def test_a_request_made_before_is_answered_from_the_cache(tmp_path: Path) -> None:
    counting = Counting()
    binding = fake_binding(ScriptedChatModel(respond=counting))
    with open_cache(tmp_path / "c.sqlite") as cache:
        with caching(cache):
            first = text_call(binding, PROMPT)
        with caching(cache):  # another run: its samples counted from 0 again
            again = text_call(binding, PROMPT)
        assert counting.calls == 1
        assert again.text == first.text == "reply 1"
        assert (first.usage.cache_hits, again.usage.cache_hits) == (0, 1)
        # A hit counts its tokens as the call did, and a call.
        assert (again.usage.prompt_tokens, again.usage.completion_tokens) == (12, 3)
        assert again.usage.calls == 1
        assert (cache.lookups, cache.hits, len(cache)) == (2, 1, 1)


def test_no_cache_unless_one_is_opened(tmp_path: Path) -> None:
    counting = Counting()
    binding = fake_binding(ScriptedChatModel(respond=counting))
    assert active_cache() is None
    text_call(binding, PROMPT)
    text_call(binding, PROMPT)
    assert counting.calls == 2
    with cached_run(None) as cache:
        assert cache is None and active_cache() is None


def test_identical_requests_in_one_run_are_distinct_samples(tmp_path: Path) -> None:
    """K votes at temperature > 0 stay K samples; a rerun asks for the same K."""
    counting = Counting()
    binding = fake_binding(ScriptedChatModel(respond=counting))
    with open_cache(tmp_path / "c.sqlite") as cache:
        with caching(cache):
            first = [text_call(binding, PROMPT).text for _ in range(3)]
        with caching(cache):
            again = [text_call(binding, PROMPT).text for _ in range(4)]
    assert first == ["reply 1", "reply 2", "reply 3"]
    assert again == [*first, "reply 4"]  # the fourth sample was never made: it is called
    assert counting.calls == 4


def test_a_hit_waits_on_no_rate_limit_and_holds_no_budget(tmp_path: Path) -> None:
    counting = Counting()
    price = Price(1.0, 2.0)
    binding = fake_binding(ScriptedChatModel(respond=counting))._replace(price=price)
    with open_cache(tmp_path / "c.sqlite") as cache:
        with caching(cache):
            paid = text_call(binding, PROMPT)
        pace_of(binding.endpoint).told_to_wait(60.0)  # a miss would wait a minute
        budget = Budget(1e-9)  # a miss would be refused before its call
        with caching(cache), spending(budget):
            hit = text_call(binding, PROMPT)
    assert counting.calls == 1
    assert paid.usage.cost is not None and paid.usage.cost > 0
    assert hit.usage.cost == 0.0 and hit.usage.cache_hits == 1
    assert budget.spent == 0.0


def test_a_failed_call_is_not_kept(tmp_path: Path) -> None:
    chat = TextOnlyChatModel(failures=[RuntimeError("the provider fell over")])
    binding = fake_binding(chat)
    with open_cache(tmp_path / "c.sqlite") as cache:
        with caching(cache), pytest.raises(RuntimeError):
            text_call(binding, PROMPT)
        with caching(cache):
            assert text_call(binding, PROMPT).text == "seven"
        assert chat.calls == 2 and len(cache) == 1


def test_a_file_that_fails_costs_no_reply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A cache that cannot be read or written is a miss: the call is made and stands."""
    counting = Counting()
    binding = fake_binding(ScriptedChatModel(respond=counting))

    def locked(*args: Any) -> None:
        raise sqlite3.OperationalError("database is locked")

    with open_cache(tmp_path / "c.sqlite") as cache:
        monkeypatch.setattr(cache, "get", locked)
        monkeypatch.setattr(cache, "put", locked)
        with caching(cache):
            assert text_call(binding, PROMPT).text == "reply 1"
    assert counting.calls == 1
    assert "could not be read: database is locked" in caplog.text
    assert "was not kept: database is locked" in caplog.text


def test_a_tool_call_reply_round_trips(tmp_path: Path) -> None:
    model = ScriptedChatModel(responses=[tool_reply("Answer", {"answer": 42}, prompt_tokens=30)])
    binding = fake_binding(model)
    with open_cache(tmp_path / "c.sqlite") as cache:
        with caching(cache):
            first = structured_call(binding, Answer, PROMPT)
        with caching(cache):  # the script is spent: only the cache can answer
            again = asyncio.run(astructured_call(binding, Answer, PROMPT))
        key = request_key("fake", "fake://", model.bind_tools([]), PROMPT, 0)
    assert first.value == again.value == Answer(answer=42)
    assert again.usage.cache_hits == 1 and again.usage.prompt_tokens == 30
    with open_cache(tmp_path / "c.sqlite") as cache, caching(cache):
        reply = cache.get(key)
    assert reply is not None and from_cache(reply)
    assert reply.response_metadata[CACHE_MARK] is True
    assert reply.tool_calls[0]["name"] == "Answer" and reply.tool_calls[0]["args"] == {"answer": 42}
    assert reply.usage_metadata is not None and reply.usage_metadata["input_tokens"] == 30


# -- what a request is ------------------------------------------------------------------------


def test_what_changes_the_reply_changes_the_key(tmp_path: Path) -> None:
    with StubOpenAIServer(lambda body: "hi") as server:
        spec = ModelSpec(model="stub", base_url=server.url, api_key="sk-secret-key-123")
        chat = bind_model(spec).chat
        warmer = bind_model(ModelSpec(model="stub", base_url=server.url, temperature=0.9)).chat
    base = request_key("m", "e", chat, PROMPT, 0)
    assert request_key("m", "e", chat, list(PROMPT), 0) == base  # the same request
    assert request_key("m", "e", chat, PROMPT, 1) != base  # another sample
    assert request_key("m", "e", warmer, PROMPT, 0) != base  # another temperature
    assert request_key("other", "e", chat, PROMPT, 0) != base
    assert request_key("m", "e", chat, [HumanMessage("What is 6 times 8?")], 0) != base
    tool = {"type": "function", "function": {"name": "Answer", "parameters": {}}}
    bound = chat.bind_tools([tool], tool_choice="Answer")
    assert request_key("m", "e", bound, PROMPT, 0) != base
    assert "tools" in parameters_of(bound) and "tool_choice" in parameters_of(bound)
    assert "secret" not in json.dumps(parameters_of(bound), default=str)
    # A message's id (new on every run) is not part of what the endpoint reads.
    with_ids = [HumanMessage("What is 6 times 7?", id="a1")]
    assert request_key("m", "e", chat, with_ids, 0) == base


def test_no_api_key_reaches_the_file(tmp_path: Path) -> None:
    with StubOpenAIServer(lambda body: "hi") as server:
        spec = ModelSpec(model="stub", base_url=server.url, api_key="sk-secret-key-123")
        binding = bind_model(spec)
        with open_cache(tmp_path / "c.sqlite") as cache, caching(cache):
            assert text_call(binding, PROMPT).text == "hi"
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"hi" in data and b"sk-secret-key-123" not in data


# -- samples per LangGraph thread ---------------------------------------------------------


class Votes(TypedDict):
    """K solvers' replies."""

    replies: Annotated[list[str], operator.add]


def vote_graph(binding: ModelBinding, k: int) -> Any:
    """K solvers sent one prompt at once (a Send fan-out), as a vote's first round."""

    def solver(state: Votes) -> dict[str, Any]:
        return {"replies": [text_call(binding, PROMPT).text]}

    builder = StateGraph(Votes)
    builder.add_node("solver", solver)
    builder.add_conditional_edges(START, lambda s: [Send("solver", {}) for _ in range(k)])
    builder.add_edge("solver", END)
    return builder.compile()


def test_k_identical_prompts_in_a_thread_are_k_samples_a_rerun_makes_none(
    tmp_path: Path,
) -> None:
    counting = Counting()
    graph = vote_graph(fake_binding(ScriptedChatModel(respond=counting)), 3)

    def run(thread: str) -> list[str]:
        with open_cache(tmp_path / "c.sqlite") as cache, caching(cache):
            values = graph.invoke({"replies": []}, {"configurable": {"thread_id": thread}})
        return sorted(values["replies"])

    first = run("t1")
    assert counting.calls == 3 and first == ["reply 1", "reply 2", "reply 3"]
    assert run("t1") == first and counting.calls == 3  # the rerun: every sample kept
    # Another thread (another mode sharing the first round) asks for the same samples.
    assert run("t2") == first and counting.calls == 3


def test_each_thread_of_a_run_counts_its_own_samples(tmp_path: Path) -> None:
    """In one run, thread b's samples are 0 and 1 as thread a's were, not 2 and 3."""
    counting = Counting()
    graph = vote_graph(fake_binding(ScriptedChatModel(respond=counting)), 2)
    with open_cache(tmp_path / "c.sqlite") as cache, caching(cache):
        a, b = (
            asyncio.run(graph.ainvoke({"replies": []}, {"configurable": {"thread_id": t}}))
            for t in ("a", "b")
        )
    assert sorted(a["replies"]) == sorted(b["replies"]) == ["reply 1", "reply 2"]
    assert counting.calls == 2


# -- a file that is not a cache -------------------------------------------------------------


def sqlite_with(path: Path, *statements: str) -> Path:
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()
    return path


def test_a_new_path_or_an_empty_file_becomes_a_cache(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    for path in (tmp_path / "new.sqlite", empty):
        with open_cache(path) as cache:
            assert len(cache) == 0
        with open_cache(path) as cache:  # and opens again as one
            assert cache.path == path


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda p: p.write_text("question,answer\n1,2\n") and p, "not a SQLite file"),
        (
            lambda p: sqlite_with(p, "CREATE TABLE results (line INTEGER)"),
            "without its meta table",
        ),
        (
            lambda p: sqlite_with(
                p, "CREATE TABLE meta (key TEXT, value TEXT)", "INSERT INTO meta VALUES ('a', 'b')"
            ),
            "does not name one",
        ),
    ],
)
def test_a_file_that_is_not_a_cache_is_refused_and_left_as_it_was(
    tmp_path: Path, make: Any, why: str
) -> None:
    path = make(tmp_path / "results.sqlite")
    before = path.read_bytes()
    with pytest.raises(UsageError) as refused:
        open_cache(path)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"--cache {path}: not a debategraph response cache (")
    assert why in message
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.sqlite"]


def test_a_cache_of_a_newer_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    open_cache(path).close()
    sqlite_with(path, f"UPDATE meta SET value = '{FORMAT + 1}' WHERE key = 'format'")
    before = path.read_bytes()
    with pytest.raises(UsageError, match=f"format {FORMAT + 1}, written by a newer"):
        open_cache(path)
    assert path.read_bytes() == before


def test_a_folder_or_a_postgres_url_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^--cache .*: cannot open"):
        open_cache(tmp_path)
    with pytest.raises(UsageError, match="PostgreSQL cache is not supported yet"):
        open_cache("postgresql://u@db/cache")


def test_several_processes_share_one_file(tmp_path: Path) -> None:
    """Two connections (as two processes have) write and read the same file at once."""
    path = tmp_path / "c.sqlite"
    reply = text_reply("kept")
    with open_cache(path) as one, open_cache(path) as two:
        threads = [
            threading.Thread(target=lambda c=c, i=i: c.put(f"k{i}", "m", reply))
            for i, c in enumerate([one, two] * 20)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(one) == len(two) == 40
        hit = two.get("k0")
        assert hit is not None and hit.text == "kept"


# -- the CLI ------------------------------------------------------------------------------


def test_a_solve_run_again_is_answered_from_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "replies.sqlite"
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        args = ["solve", "What is 2+2?", "--agents", "3", "--rounds", "2", "--cache", str(cache)]
        code, stdout, err = run_cli(
            [*args, *stub_args(server, tmp_path / "a.sqlite"), "--json"], capsys
        )
        assert code == 0, err
        made = len(server.requests)
        assert made == 6
        first = json.loads(stdout)
        assert "cache_hits" not in first["usage"]
        code, stdout, err = run_cli([*args, *stub_args(server, tmp_path / "b.sqlite")], capsys)
        assert code == 0, err
        assert len(server.requests) == made  # no request the first run made
    assert "6 calls (6 from the cache)" in stdout


def test_a_json_result_counts_the_hits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "replies.sqlite"
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        args = ["solve", "What is 2+2?", "--agents", "2", "--rounds", "1", "--cache", str(cache)]
        for db in ("a", "b"):
            code, stdout, err = run_cli(
                [*args, *stub_args(server, tmp_path / db), "--json"], capsys
            )
            assert code == 0, err
        assert len(server.requests) == 2
    usage = json.loads(stdout)["usage"]
    assert (usage["calls"], usage["cache_hits"]) == (2, 2)


def test_a_run_that_stops_says_to_resume_with_its_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache, db = tmp_path / "replies.sqlite", tmp_path / "d.sqlite"
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        args = ["solve", "What is 2+2?", "--agents", "2", "--rounds", "2", "--cache", str(cache)]
        server.inject("5xx", 1)
        code, _, err = run_cli([*args, *stub_args(server, db), "--thread", "t"], capsys)
        assert code == 1
        hint = f"debategraph resume t --db {db} --cache {cache}"
        assert one_error_line(err).endswith(hint)
        code, _, err = run_cli(hint.split()[1:], capsys)
        assert code == 0, err


def arithmetic_responder(request: dict[str, Any]) -> dict[str, Any]:
    """Works out 'What is a + b?' (the generated question) exactly."""
    import re

    found = re.search(r"What is (\d+) \+ (\d+)\?", json.dumps(request["messages"]))
    value = int(found.group(1)) + int(found.group(2)) if found else -1
    return {"reasoning": f"it is {value}", "answer": str(value), "confidence": 0.9}


def test_an_eval_rerun_in_another_mode_or_decision_set_pays_for_no_call_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "replies.sqlite"

    def run_eval(out: str, *extra: str) -> tuple[int, str, str]:
        args = ["eval", "arithmetic", "--count", "3", "--operands", "2", "--max-operand", "9"]
        args += ["--out", str(tmp_path / out), "--agents", "3", "--rounds", "2", "--no-matched"]
        args += ["--cache", str(cache), *extra]
        before = len(server.requests)
        db = tmp_path / out / "c.sqlite"
        code, stdout, err = run_cli([*args, *stub_args(server, db)], capsys)
        assert code == 0, err
        return len(server.requests) - before, stdout, err

    with StubOpenAIServer(arithmetic_responder) as server:
        made, _, err = run_eval("a", "--modes", "single,vote")
        assert made == 3 * (1 + 3) and "from the cache" not in err
        # Another decision set, fresh checkpoints: every call is one the first run made.
        extra = ("--modes", "single,vote", "--decisions", "plurality,weighted")
        made, _, err = run_eval("b", *extra)
        assert made == 0
        assert "12 of 12 model calls answered from the cache" in err
        # Another mode: its first round is the vote's; only its second round is paid for.
        made, stdout, _ = run_eval("c", "--modes", "debate-ring", "--json")
        assert made == 3 * 3
    result = json.loads(stdout)
    assert result["meta"]["cache"] == {"file": str(cache), "calls": 18, "hits": 9}
    assert result["modes"][0]["accuracy"] == 1.0


@pytest.mark.parametrize("command", ["solve", "eval"])
def test_a_cache_that_is_not_one_stops_the_command_before_any_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a cache\n")
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        if command == "solve":
            args = ["solve", "What is 2+2?"]
        else:
            args = ["eval", "arithmetic", "--count", "2", "--out", str(tmp_path / "out")]
        db = tmp_path / "c.sqlite"
        code, _, err = run_cli([*args, "--cache", str(path), *stub_args(server, db)], capsys)
        assert not server.requests
    assert code == 2
    line = one_error_line(err)
    assert line == (
        f"debategraph: error: --cache {path}: not a debategraph response cache (not a SQLite file)"
    )
    assert path.read_text() == "not a cache\n"
    assert not db.exists() and not (tmp_path / "out").exists()
