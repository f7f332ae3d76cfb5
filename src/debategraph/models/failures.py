"""What a failed model call means: cut by the deadline, slow, or down.

The calls of :mod:`debategraph.models.calls` (and the tool loop of
:mod:`debategraph.models.loops`) hand their failures here: a call the run's deadline cut
short is charged its time (:func:`spent`); a timeout is told apart from a dead endpoint
by asking the endpoint (:func:`slow_not_dead`, a step of the call); a transport failure
becomes one :class:`~debategraph.errors.ModelUnavailableError` line (:func:`unavailable`),
which stops the run and leaves its thread resumable.
"""

from __future__ import annotations

import asyncio

import openai
from langchain_core.runnables import Runnable, RunnableLambda

from debategraph.errors import ModelUnavailableError
from debategraph.models.binding import ModelBinding
from debategraph.models.faults import status_of, transient, unreached, unreached_words
from debategraph.models.steps import Steps, TimeLimitReached
from debategraph.state.records import Usage
from debategraph.words import one_line


def spent(cut: TimeLimitReached) -> Usage:
    """The usage of a call the deadline cut short: its time in flight, no tokens."""
    if cut.in_flight_s is None:
        return Usage()
    return Usage(calls=1, latency_s=round(cut.in_flight_s, 6))


def made(attempts: int, cut: TimeLimitReached) -> int:
    """The calls made, counting the last only if it was (cancelled in flight)."""
    return attempts if cut.in_flight_s is not None else attempts - 1


#: Seconds a timed-out call's endpoint has to answer ``GET /models`` to count as alive.
ALIVE_PROBE_S = 5.0


def answers(base_url: str) -> bool:
    """Whether ``base_url`` answers ``GET /models`` within :data:`ALIVE_PROBE_S` (no key)."""
    from debategraph.models.probe import list_models

    return list_models(base_url, None, ALIVE_PROBE_S).answered


async def aanswers(base_url: str) -> bool:
    """:func:`answers` on a worker thread: the event loop goes on meanwhile."""
    return await asyncio.to_thread(answers, base_url)


#: The probe of a timed-out call's endpoint, as a step (blocking, or on a thread when
#: awaited).
ALIVE_PROBE: Runnable[str, bool] = RunnableLambda(answers, afunc=aanswers, name="alive?")


def slow_not_dead(
    model: ModelBinding, exc: openai.APITimeoutError, waited_s: float
) -> Steps[tuple[str, Usage] | None]:
    """Whether a call that timed out met a slow endpoint rather than a dead one.

    A timeout alone does not say: an embedded model that shares two cores with other
    work, or a busy server, answers late but answers. The endpoint is asked
    ``GET /models`` (no key sent), as a step of the call (so under ``ainvoke`` the probe
    does not hold the event loop): if it answers, the call is one slow call, recorded
    as the agent's fallback with its reason, and the run goes on; if the embedded
    server's process has ended, or the endpoint does not answer, it is down.

    Args:
        model: The binding that was called.
        exc: The timeout.
        waited_s: Seconds the call was in flight.

    Returns:
        Steps returning the reason to record and the call's usage (its time), or
        ``None`` when the endpoint is down.
    """
    if refused(exc) or not model.endpoint.startswith("http"):
        return None
    if model.diagnose is not None and model.diagnose() is not None:
        return None
    try:
        answered = yield ALIVE_PROBE, model.endpoint
    except TimeLimitReached:  # the run is out of time: the call ends as a slow one
        answered = True
    if not answered:
        return None
    reason = (
        f"no reply within the timeout ({waited_s:.0f}s in flight): {model.endpoint} "
        "answers, so it is slow, not down (a longer --timeout, or fewer calls at once, "
        "gives it time)"
    )
    return reason, Usage(calls=1, latency_s=round(waited_s, 6))


def rejects_json_schema(exc: openai.APIStatusError) -> bool:
    """Whether an error says the endpoint does not take a ``json_schema`` response format.

    Other errors of the same status (a prompt longer than the context, say) are not
    reasons to switch method.
    """
    text = str(exc.message).lower()
    return exc.status_code in (400, 422, 500, 501) and any(
        word in text for word in ("response_format", "json_schema", "schema")
    )


def unavailable(model: ModelBinding, exc: BaseException) -> ModelUnavailableError:
    """The one-line error for a transport failure (after the call's retries).

    Any provider's: an HTTP status wherever its SDK put it
    (:func:`~debategraph.models.faults.status_of`), else a timeout or an unreachable
    endpoint.
    """
    failure = model.diagnose() if model.diagnose is not None else None
    if failure is not None:
        return ModelUnavailableError(failure)
    status = status_of(exc)
    if status in (401, 403) and model.key_note is not None:  # no key sent: not a wrong key
        said = one_line(exc.message if isinstance(exc, openai.APIStatusError) else str(exc))
        detail = f"answered HTTP {status} ({said}): {model.key_note}"
    elif isinstance(exc, openai.APIStatusError):
        detail = f"answered HTTP {exc.status_code}: {one_line(exc.message)}"
    elif status is not None:
        detail = f"answered HTTP {status}: {one_line(str(exc)) or type(exc).__name__}"
    elif (kind := unreached(exc)) is not None:  # DNS, refused, TLS, timeout, dropped
        return ModelUnavailableError(f"model endpoint {unreached_words(kind, model.endpoint, exc)}")
    else:
        detail = f"is unreachable: {one_line(root_cause(exc)) or type(exc).__name__}"
    return ModelUnavailableError(f"model endpoint {model.endpoint} {detail}")


def provider_failure(exc: BaseException) -> bool:
    """Whether a chat model's exception is its endpoint failing, for any provider.

    An HTTP status, a timeout, a reset or refused connection: one line and a resumable
    thread, as the openai client's own errors get. Anything else is the caller's bug
    or the model's limit, raised as it is.
    """
    return status_of(exc) is not None or transient(exc) is not None or refused(exc)


def refused(exc: BaseException) -> bool:
    """Whether a connection was refused down the chain (aiohttp calls that a timeout)."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def root_cause(exc: BaseException) -> str:
    """The innermost message of an exception chain (``Connection refused``, not ``error``)."""
    while exc.__cause__ is not None and str(exc.__cause__):
        exc = exc.__cause__
    return str(exc)
