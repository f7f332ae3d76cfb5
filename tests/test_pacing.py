"""Rate limits waited out and faults tried again, for any chat model (models/pacing.py).

The stub answers like a provider: 429 with ``Retry-After`` (injected, or from a
token-bucket request limit), 5xx; a chat model of no OpenAI kind raises what other SDKs
raise. Every call to an endpoint waits out what the endpoint told one of them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from debategraph.errors import ModelUnavailableError
from debategraph.models import ModelSpec, bind_model
from debategraph.models.binding import ModelBinding
from debategraph.models.calls import astructured_call, structured_call, text_call
from debategraph.models.faults import Fault, retry_after_of, status_of, transient
from debategraph.models.pacing import backoff_s, pace_of
from tests.fake_model import TextOnlyChatModel
from tests.openai_stub import StubOpenAIServer

pytestmark = pytest.mark.usefixtures("fresh_paces")

MESSAGES = [HumanMessage("How many?")]


class Count(BaseModel):
    """A count."""

    answer: int


def spec_for(url: str, **settings: Any) -> ModelSpec:
    return ModelSpec(model="stub", base_url=url, timeout_s=10, **settings)


# -- what a failure is, whoever raised it ---------------------------------------------------


def _status_error(status: int, headers: dict[str, str]) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://x/v1/chat/completions")
    response = httpx.Response(status, headers=headers, request=request)
    cls = openai.RateLimitError if status == 429 else openai.InternalServerError
    return cls("limited", response=response, body=None)


class ProviderError(Exception):
    """Another SDK's error: a status and a retry hint as attributes."""

    def __init__(self, status_code: int, retry_after: float | None = None) -> None:
        super().__init__(f"provider said {status_code}")
        self.status_code = status_code
        self.retry_after = retry_after


class Response:
    """A response an SDK hangs on its error (``exc.response``)."""

    def __init__(self, status: int, headers: dict[str, str]) -> None:
        self.status_code = status
        self.headers = headers


class WrappedError(Exception):
    """An error carrying its HTTP response, as requests' and google's do."""

    def __init__(self, status: int, headers: dict[str, str]) -> None:
        super().__init__("wrapped")
        self.response = Response(status, headers)


@pytest.mark.parametrize(
    ("exc", "fault"),
    [
        (_status_error(429, {"retry-after": "2"}), Fault("rate_limit", 429, 2.0)),
        (_status_error(429, {"retry-after-ms": "250"}), Fault("rate_limit", 429, 0.25)),
        (
            _status_error(429, {"x-ratelimit-reset-requests": "1m30s"}),
            Fault("rate_limit", 429, 90.0),
        ),
        (
            _status_error(
                429, {"x-ratelimit-reset-requests": "20ms", "x-ratelimit-reset-tokens": "6m0s"}
            ),
            Fault("rate_limit", 429, 360.0),
        ),
        (_status_error(429, {}), Fault("rate_limit", 429, None)),
        (_status_error(503, {}), Fault("server", 503, None)),
        (ProviderError(529), Fault("server", 529, None)),
        (ProviderError(429, retry_after=3), Fault("rate_limit", 429, 3.0)),
        (WrappedError(429, {"Retry-After": "7"}), Fault("rate_limit", 429, 7.0)),
        (WrappedError(408, {}), Fault("server", 408, None)),
        (ConnectionResetError("reset by peer"), Fault("connection")),
        (TimeoutError("read timed out"), Fault("timeout")),
        (httpx.ReadTimeout("slow"), Fault("timeout")),
        (httpx.RemoteProtocolError("dropped"), Fault("connection")),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else "",
)
def test_a_transient_fault_is_read_whoever_raised_it(exc: BaseException, fault: Fault) -> None:
    assert transient(exc) == fault


@pytest.mark.parametrize(
    "exc",
    [
        ProviderError(401),
        ProviderError(400),
        _status_error(404, {}),
        ConnectionRefusedError("nothing listens"),
        ValueError("a bug"),
        NotImplementedError(),
    ],
    ids=lambda e: f"{type(e).__name__}-{status_of(e)}",
)
def test_what_no_retry_mends_is_no_fault(exc: BaseException) -> None:
    assert transient(exc) is None


def test_a_retry_after_date_and_nonsense() -> None:
    now = 1_800_000_000.0
    date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(now + 30))
    assert retry_after_of(WrappedError(429, {"retry-after": date}), now=now) == 30.0
    assert retry_after_of(WrappedError(429, {"retry-after": "soon"})) is None
    assert retry_after_of(WrappedError(429, {"retry-after": "-5"})) is None
    assert retry_after_of(WrappedError(429, {"retry-after": "1e12"})) is None
    assert retry_after_of(WrappedError(429, {"x-ratelimit-reset-requests": "1x"})) is None


def test_backoff_doubles_to_its_cap_less_a_quarter_at_most() -> None:
    assert [backoff_s(n, lambda: 0.0) for n in (1, 2, 3, 4, 5, 6)] == [0.5, 1, 2, 4, 8, 8]
    assert backoff_s(1, lambda: 0.999) == pytest.approx(0.375, abs=1e-3)


# -- against the stub, as against a provider ------------------------------------------------


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(lambda body: {"answer": 7}) as stub:
        yield stub


def test_a_429_waits_as_long_as_retry_after_says_then_answers(server: StubOpenAIServer) -> None:
    server.inject("429", 2, seconds=0.4)
    started = time.monotonic()
    result = structured_call(bind_model(spec_for(server.url, max_retries=0)), Count, MESSAGES)
    took = time.monotonic() - started
    assert result.value == Count(answer=7)
    assert result.attempts == 1  # a limit is not a bad reply: no output retry spent
    assert (server.limited, server.calls) == (2, 1)
    assert took >= 0.8  # both waits, as told (max_retries=0 does not cut a rate limit short)
    pace = pace_of(server.url)
    assert pace.limited == 2 and pace.waited_s >= 0.8


def test_a_429_past_the_patience_is_one_line(server: StubOpenAIServer) -> None:
    server.inject("429", 5, seconds=3.0)
    spec = spec_for(server.url, max_retries=0, patience_s=1.0)
    with pytest.raises(ModelUnavailableError) as info:
        text_call(bind_model(spec), MESSAGES)
    message = str(info.value)
    assert "answered HTTP 429" in message and server.url in message and "\n" not in message
    assert server.limited == len(server.requests) == 1  # gave up at once: 3 s is past 1 s


def test_a_5xx_is_tried_again_max_retries_times_with_backoff(server: StubOpenAIServer) -> None:
    server.inject("503", 2)
    result = text_call(bind_model(spec_for(server.url, max_retries=2)), MESSAGES)
    assert result.text and len(server.requests) == 3
    server.reset_stats()
    server.inject("503", 3)
    with pytest.raises(ModelUnavailableError, match="HTTP 503"):
        text_call(bind_model(spec_for(server.url, max_retries=2)), MESSAGES)
    assert len(server.requests) == 3  # the first call and its 2 retries


def test_every_call_to_a_limited_endpoint_waits_out_what_it_said() -> None:
    """Eight calls at once on a limit of 4 a second (burst 1): all answered, paced.

    Without the shared wait each call would fire into the limit on its own schedule;
    with it, the calls told to wait hold the others back, and the limit is met within
    about the time it sets itself.
    """
    with StubOpenAIServer(lambda body: {"answer": 7}, rate_limit=(4.0, 1)) as stub:
        model = bind_model(spec_for(stub.url, max_retries=0))

        async def many() -> list[Any]:
            calls = [astructured_call(model, Count, MESSAGES) for _ in range(8)]
            return await asyncio.gather(*calls)

        started = time.monotonic()
        results = asyncio.run(many())
        took = time.monotonic() - started
        assert [r.value for r in results] == [Count(answer=7)] * 8
        assert stub.calls == 8
        assert took >= 7 / 4 - 0.1  # the limit itself: 8 requests at 4 a second
        # Told, and waited: the first burst is refused, then about one in two at most
        # while the window grows back (a sanity bound, not a figure: providers.py has it).
        assert stub.limited <= 4 * 8


# -- another provider's chat model -----------------------------------------------------------


@pytest.mark.parametrize(
    "failure",
    [ProviderError(429, retry_after=0.05), ProviderError(503), ConnectionResetError("reset")],
    ids=["429", "503", "reset"],
)
def test_another_providers_faults_are_retried(failure: BaseException) -> None:
    chat = TextOnlyChatModel(failures=[failure])
    binding = ModelBinding(chat, "function_calling", "flaky", retries=1)
    assert text_call(binding, MESSAGES).text == "seven"
    assert chat.calls == 2


@pytest.mark.parametrize(
    ("failure", "says"),
    [
        (ProviderError(503), "answered HTTP 503: provider said 503"),
        (ProviderError(401), "answered HTTP 401: provider said 401"),
        (ConnectionResetError("reset by peer"), "is unreachable: reset by peer"),
        (TimeoutError("read timed out"), "timed out: read timed out"),
        (httpx.ConnectError("name does not resolve"), "is unreachable: name does not resolve"),
    ],
    ids=["503", "401", "reset", "timeout", "httpx"],
)
def test_another_providers_failure_is_one_line(failure: BaseException, says: str) -> None:
    chat = TextOnlyChatModel(failures=[failure])
    binding = ModelBinding(chat, "function_calling", "flaky", retries=0)
    with pytest.raises(ModelUnavailableError) as info:
        text_call(binding, MESSAGES)
    assert str(info.value) == f"model endpoint flaky {says}"


def test_a_bug_in_a_chat_model_is_not_called_an_endpoint_failure() -> None:
    chat = TextOnlyChatModel(failures=[ValueError("a bug")])
    binding = ModelBinding(chat, "function_calling", "flaky", retries=3)
    with pytest.raises(ValueError, match="a bug"):
        text_call(binding, MESSAGES)
    assert chat.calls == 1


def test_an_agents_or_served_model_names_its_patience() -> None:
    from debategraph.models.spec import parse_model

    assert parse_model({"model": "m", "patience": 90}).patience_s == 90
    assert bind_model(ModelSpec(model="m", base_url="http://h/v1", patience_s=5)).patience_s == 5
    assert bind_model(ModelSpec(model="m", base_url="http://h/v1")).patience_s == 600
    with pytest.raises(ValueError, match="patience -1 must be a number of seconds >= 0"):
        parse_model({"model": "m", "patience": -1}, "agent 'ann'")
    with pytest.raises(ValueError, match="must be a number"):
        parse_model({"model": "m", "patience": "soon"}, "agent 'ann'")


def test_an_operators_rpm_spaces_the_calls_so_the_limit_is_never_met() -> None:
    """The endpoint allows 2 requests a second (burst 2); the operator says 60 a minute.

    Half the endpoint's rate: a request's way to the server varies, most on a busy machine.
    """
    with StubOpenAIServer(lambda body: {"answer": 7}, rate_limit=(2.0, 2)) as stub:
        model = bind_model(spec_for(stub.url, max_retries=0, rpm=60))

        async def many() -> list[Any]:
            return await asyncio.gather(
                *[astructured_call(model, Count, MESSAGES) for _ in range(5)]
            )

        started = time.monotonic()
        results = asyncio.run(many())
        assert [r.value for r in results] == [Count(answer=7)] * 5
        assert stub.limited == 0  # paced up front: never told to wait
        assert time.monotonic() - started >= 4 * 1.0 - 0.1


@pytest.mark.parametrize("rpm", [0, -1, float("inf"), True])
def test_a_bad_rpm_is_refused(rpm: float) -> None:
    from debategraph.errors import UsageError

    with pytest.raises(UsageError, match=r"rpm .* must be a number of requests a minute > 0"):
        ModelSpec(model="m", rpm=rpm).check_values()


def test_a_held_endpoint_is_said_on_the_progress_line() -> None:
    from debategraph.eval.progress import Tally
    from debategraph.models.pacing import waiting_note

    assert waiting_note() == ""
    pace_of("https://api.example.com/v1").told_to_wait(12.0)
    assert waiting_note() == "waiting on a rate limit: api.example.com 12s"
    tally = Tally(("single",), 3)
    assert tally.status().endswith(" · waiting on a rate limit: api.example.com 12s")
