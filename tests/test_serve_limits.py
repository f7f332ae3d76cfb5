"""The operator's ``limits`` and the counters behind them, in-process (no server).

``tests/test_serve_fair.py`` shows each limit on real server processes; these check the
reading of the operator's file and the arithmetic of the request rate and the places.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from debategraph.errors import UsageError
from debategraph.serve.limits import Limits, RequestRate, RunsInFlight, call_tokens


def test_the_defaults_and_a_lifted_limit() -> None:
    assert Limits.read(None, "f") == Limits(4, 600, 2_000_000, 1_000_000)
    assert Limits.read({"runs_in_flight": None, "body_bytes": 10}, "f") == Limits(
        None, 600, 2_000_000, 10
    )


@pytest.mark.parametrize(
    ("given", "line"),
    [
        ({"runs": 3}, "f: unknown limits field 'runs': allowed are runs_in_flight, "),
        ({"runs_in_flight": 0}, "f: limits.runs_in_flight 0 must be a whole number of at least 1"),
        ({"body_bytes": "1MB"}, "f: limits.body_bytes '1MB' must be a whole number of at least 1"),
        ({"tokens_per_day": 1.5}, "f: limits.tokens_per_day 1.5 must be a whole number"),
        ({"requests_per_minute": True}, "f: limits.requests_per_minute True must be a whole"),
        ([1], "f: limits must be an object of runs_in_flight, requests_per_minute, "),
    ],
)
def test_a_bad_limit_is_refused_in_one_line(given: object, line: str) -> None:
    with pytest.raises(UsageError) as refused:
        Limits.read(given, "f")
    assert str(refused.value).startswith(line) and "\n" not in str(refused.value)


def test_the_models_file_carries_the_limits(tmp_path: Path) -> None:
    from debategraph.serve.models import read_models

    path = tmp_path / "models.yaml"
    path.write_text("models:\n  - {name: a, model: m}\nlimits:\n  runs_in_flight: 2\n")
    assert read_models(path).limits == Limits(runs_in_flight=2)
    path.write_text("models:\n  - {name: a, model: m}\nlimit:\n  runs_in_flight: 2\n")
    with pytest.raises(UsageError, match="unknown field 'limit': allowed are models, default"):
        read_models(path)


def test_the_request_rate_is_a_bucket_per_user() -> None:
    rate = RequestRate(60)  # one a second, 60 at once
    assert all(rate.take("bob", now=0.0) is None for _ in range(60))
    assert rate.take("bob", now=0.0) == pytest.approx(1.0)
    assert rate.take("alice", now=0.0) is None  # hers is full
    assert rate.take("bob", now=0.5) == pytest.approx(0.5)
    assert rate.take("bob", now=1.0) is None
    assert RequestRate(None).take("bob") is None


def test_a_place_is_given_back_once() -> None:
    runs = RunsInFlight(2)
    first, second = runs.admit("bob"), runs.admit("bob")
    assert first is not None and second is not None
    assert runs.admit("bob") is None and runs.full("bob")
    assert runs.admit("alice") is not None
    first.give_back()
    first.give_back()  # again: nothing
    assert runs.counts["bob"] == 1
    assert runs.admit("bob") is not None and runs.admit("bob") is None
    assert RunsInFlight(None).admit("bob") is not None


def test_a_calls_tokens_are_read_from_its_usage() -> None:
    message = AIMessage(
        "x", usage_metadata={"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}
    )
    assert call_tokens(LLMResult(generations=[[ChatGeneration(message=message)]])) == 10
    bare = LLMResult(
        generations=[[ChatGeneration(message=AIMessage("x"))]],
        llm_output={"token_usage": {"total_tokens": 12}},
    )
    assert call_tokens(bare) == 12
    assert call_tokens(LLMResult(generations=[[ChatGeneration(message=AIMessage("x"))]])) == 0
