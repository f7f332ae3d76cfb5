"""Trying a failed call again, and every call to an endpoint waiting when it says so.

:func:`paced` makes one model call as steps (see :mod:`debategraph.models.steps`): a
call that meets a :class:`~debategraph.models.faults.Fault` waits and tries again.

- **A rate limit (HTTP 429)** waits as long as the endpoint said (``Retry-After`` and
  the like), else backs off, and tries again for as long as the binding's patience
  lasts, however many times: a limit is the endpoint pacing its callers, not a fault.
  What it said holds for **every call of the process to that endpoint**: the others wait
  out the same time before they start (:class:`Pace`), instead of each agent firing
  into the limit and being told again.
- **A server fault, a timeout or a dropped connection** is tried again up to the
  binding's ``retries`` (the spec's ``max_retries``), with exponential backoff and
  jitter (half a second, doubling, at most 8 s, less up to a quarter: the openai
  client's own schedule, which this replaces: its own retries are off), within the
  patience too.

A request the run's response cache holds (:mod:`debategraph.models.cache`) is answered
from it before any of that: no wait, no budget held, no paid call; a reply to one it does
not hold is kept there.

What still fails is raised to the call, which turns it into its one-line error: the run
stops and its thread stays resumable. The waits are steps of the call, so under
``ainvoke`` they hold no thread and the run's deadline cuts them short like a call.
"""

from __future__ import annotations

import asyncio
import math
import random
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from langchain_core.runnables import Runnable, RunnableLambda

from debategraph.models.binding import ModelBinding
from debategraph.models.cache import cached_request
from debategraph.models.faults import Fault, HeldPastPatience, transient
from debategraph.models.money import UNCAPPED_REPLY_TOKENS, active_budget
from debategraph.models.steps import Steps
from debategraph.models.usage import prompt_tokens_of, usage_of

#: The backoff's first wait and its cap, in seconds (the openai client's).
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 8.0


def backoff_s(retry: int, draw: Callable[[], float] = random.random) -> float:
    """The wait before retry number ``retry`` (1, 2, ...) when the endpoint named none.

    Args:
        retry: Which retry this is, from 1.
        draw: A number in [0, 1) for the jitter.

    Returns:
        ``min(0.5 * 2 ** (retry - 1), 8)`` seconds, less up to a quarter.
    """
    wait = min(BACKOFF_FIRST_S * 2.0 ** min(retry - 1, 30), BACKOFF_MAX_S)
    return wait * (1.0 - 0.25 * draw())


class Pace:
    """What an endpoint said about calling it, shared by every call of the process to it.

    Three things: how long to hold off (the longest wait it asked of any call), how
    many calls may be in flight at once, adapted as TCP's congestion window is: halved
    on each rate limit (to half the calls then in flight, at least one), grown back by
    one per window of calls answered, and lifted when it has grown past
    :data:`WINDOW_LIFTED` (without a rate limit seen, calls are not counted against
    it); and the requests a minute the operator allows it (:meth:`limit_to`).

    Attributes:
        limited: Rate limits (429s) this endpoint answered in this process.
        waited_s: Seconds calls to it spent waiting on what it said.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._until = 0.0
        self._window: float | None = None
        self._in_flight = 0
        self._rpm: float | None = None
        self._tokens = 1.0
        self._tpm: float | None = None
        self._model_tokens = 0.0
        self._refilled = time.monotonic()
        self.limited = 0
        self.waited_s = 0.0

    @property
    def window(self) -> int | None:
        """Calls allowed in flight at once (``None``: no bound)."""
        with self._lock:
            return None if self._window is None else int(self._window)

    def hold_s(self) -> float:
        """Seconds a call must still wait before it may start (0: none)."""
        with self._lock:
            return max(0.0, self._until - time.monotonic())

    def limit_to(self, rpm: float | None) -> None:
        """Hold the endpoint's calls to ``rpm`` requests a minute (the lowest one given).

        The operator's limit, set up front: calls start evenly spaced (a token bucket
        of one), so they never meet the endpoint's own limit for it.

        Args:
            rpm: Requests per minute (> 0), or ``None``: no change.
        """
        if rpm is None:
            return
        with self._lock:
            if self._rpm is None or rpm < self._rpm:
                self._rpm = rpm
                self._tokens = min(self._tokens, 1.0)

    def limit_tokens_to(self, tpm: float | None) -> None:
        """Hold the endpoint's calls to ``tpm`` model tokens a minute (the lowest one given).

        The operator's limit, set up front: a bucket of a minute's tokens, refilled
        evenly; a call takes what it may use (its prompt's tokens and its completion
        cap, as providers count it) before it starts, and gives back what it did not use
        when it ends (:meth:`used`).

        Args:
            tpm: Tokens per minute (> 0), or ``None``: no change.
        """
        if tpm is None:
            return
        with self._lock:
            if self._tpm is None or tpm < self._tpm:
                self._tpm = tpm
                self._model_tokens = tpm

    def enter(self, tokens: int = 0) -> bool:
        """Take a place in flight if the window has one, no hold is on, and the rates allow.

        Args:
            tokens: The model tokens the call may use (counted against the tpm).

        Returns:
            Whether the call may start (``False``: wait a little and ask again).
        """
        with self._lock:
            now = time.monotonic()
            if self._window is not None and (
                self._in_flight >= int(self._window) or now < self._until
            ):
                return False
            elapsed, self._refilled = now - self._refilled, now
            if self._rpm is not None:
                self._tokens = min(1.0, self._tokens + elapsed * self._rpm / 60)
            if self._tpm is not None:
                self._model_tokens = min(self._tpm, self._model_tokens + elapsed * self._tpm / 60)
            if self._rpm is not None and self._tokens < 1.0:
                return False
            if self._tpm is not None and self._model_tokens < min(tokens, self._tpm):
                return False
            if self._rpm is not None:
                self._tokens -= 1.0
            if self._tpm is not None:
                self._model_tokens -= min(tokens, self._tpm)
            self._in_flight += 1
            return True

    def used(self, taken: int, tokens: int) -> None:
        """A call that took ``taken`` tokens of the tpm used ``tokens``: settle the difference.

        Args:
            taken: What it took on entering.
            tokens: What its reply says it used (more than it took is owed).
        """
        with self._lock:
            if self._tpm is not None:
                taken = min(taken, int(self._tpm))
                self._model_tokens = min(self._tpm, self._model_tokens + taken - tokens)

    def leave(self) -> None:
        """Give the place back (the call ended, however)."""
        with self._lock:
            self._in_flight -= 1

    def answered(self) -> None:
        """A call was answered: the window grows by one per window of answers."""
        with self._lock:
            if self._window is not None:
                self._window += 1.0 / self._window
                if self._window > WINDOW_LIFTED:
                    self._window = None

    def told_to_wait(self, seconds: float) -> None:
        """A call was told to wait ``seconds``: every call to the endpoint waits with it.

        The window shrinks to half the calls in flight when it was told (this one
        counted), at least one.
        """
        with self._lock:
            self.limited += 1
            self._until = max(self._until, time.monotonic() + seconds)
            half = max(1.0, float((self._in_flight + 1) // 2))
            self._window = half if self._window is None else min(self._window, half)

    def waited(self, seconds: float) -> None:
        """Count ``seconds`` a call spent waiting on the endpoint."""
        with self._lock:
            self.waited_s += seconds


#: A window grown past this many calls in flight is lifted: the limit is behind us.
WINDOW_LIFTED = 64.0
#: Seconds between two looks at a full window.
WINDOW_POLL_S = 0.02


_PACES: dict[str, Pace] = {}
_PACES_LOCK = threading.Lock()


def pace_of(endpoint: str) -> Pace:
    """The shared :class:`Pace` of ``endpoint`` (its base URL) in this process."""
    with _PACES_LOCK:
        pace = _PACES.get(endpoint)
        if pace is None:
            pace = _PACES[endpoint] = Pace()
        return pace


def waiting_note() -> str:
    """What the process's calls wait on now, for a progress line ("" when nothing).

    Returns:
        ``waiting on a rate limit: api.openai.com 12s`` (each endpoint held, its time
        left), or ``""``.
    """
    with _PACES_LOCK:
        paces = list(_PACES.items())
    held = [(endpoint, pace.hold_s()) for endpoint, pace in paces]
    shown = [f"{urlsplit(e).netloc or e} {math.ceil(left)}s" for e, left in held if left > 0]
    return f"waiting on a rate limit: {', '.join(shown)}" if shown else ""


def forget_paces() -> None:
    """Forget what every endpoint said (a test's fresh start)."""
    with _PACES_LOCK:
        _PACES.clear()


async def _asleep(seconds: float) -> None:
    await asyncio.sleep(seconds)


#: A wait, as a step: blocking (``time.sleep``) or awaited (``asyncio.sleep``).
WAIT: Runnable[float, None] = RunnableLambda(time.sleep, afunc=_asleep, name="wait")


def _enter(place: tuple[Pace, int]) -> None:
    pace, tokens = place
    while not pace.enter(tokens):
        time.sleep(WINDOW_POLL_S)


async def _aenter(place: tuple[Pace, int]) -> None:
    pace, tokens = place
    while not pace.enter(tokens):
        await asyncio.sleep(WINDOW_POLL_S)


#: Waiting for a place in an endpoint's window (and its rates), as a step: given the pace
#: and the tokens the call may use.
ENTER: Runnable[tuple[Pace, int], None] = RunnableLambda(
    _enter, afunc=_aenter, name="wait for a place"
)


def paced(
    model: ModelBinding,
    runnable: Runnable[Any, Any],
    prompt: Any,
    *,
    draw: Callable[[], float] = random.random,
) -> Steps[Any]:
    """One model call as steps, tried again on a fault within the binding's limits.

    A request the run's response cache holds is answered from it at once; a reply to one
    it does not hold is kept there.

    Before each try, the run's budget (:func:`~debategraph.models.money.active_budget`,
    for a model with a price) holds back what the call could cost, or stops the run
    (:class:`~debategraph.errors.CostLimitReached`) before a call that could pass
    it; the endpoint's tokens a minute are taken the same way.

    Args:
        model: The binding called: its endpoint (whose :class:`Pace` the call shares),
            ``retries`` (how many times a server fault, timeout or dropped connection is
            tried again; rate limits: as often as the patience allows), ``patience_s``
            (the most seconds the call spends waiting in all), ``rpm``, ``tpm``,
            ``price`` and ``max_tokens``.
        runnable: The chat model (bound as the call needs it).
        prompt: Its input.
        draw: The jitter's random numbers.

    Returns:
        Steps returning the reply; the last failure is raised where no retry is left.

    Raises:
        CostLimitReached: Before a call that could take the run past its budget.
        HeldPastPatience: Before a call the endpoint holds longer than its patience.
    """
    cached = cached_request(model.name, model.endpoint, runnable, prompt)
    if cached is not None and cached.reply is not None:
        return cached.reply
    pace = pace_of(model.endpoint)
    pace.limit_to(model.rpm)
    pace.limit_tokens_to(model.tpm)
    budget = active_budget() if model.price is not None else None
    sent = prompt_tokens_of(prompt) if model.tpm is not None or budget is not None else 0
    most = sent + (model.max_tokens or UNCAPPED_REPLY_TOKENS) if model.tpm is not None else 0
    retries, patience_s = model.retries, model.patience_s
    waited = 0.0
    tried = 0
    while True:
        hold, left = pace.hold_s(), max(0.0, patience_s - waited)
        if hold > left:  # it would wait out its patience, then fail: it fails now
            raise HeldPastPatience(hold, left)
        if hold > 0:
            yield WAIT, hold
            waited += hold
            pace.waited(hold)
        held = 0.0
        if budget is not None and model.price is not None:
            held = budget.hold(model.price, sent, model.max_tokens)
        try:
            if not pace.enter(most):
                yield ENTER, (pace, most)
            try:
                reply = yield runnable, prompt
            except BaseException:
                pace.used(most, 0)
                raise
            finally:
                pace.leave()
        except Exception as exc:
            if budget is not None:
                budget.settle(held, None)
            fault = transient(exc)
            if fault is None:
                raise
            tried += 1
            wait = _wait_s(fault, tried, draw)
            if fault.kind == "rate_limit":
                pace.told_to_wait(wait)
            elif tried > retries:
                raise
            if waited + wait > patience_s:
                raise
        else:
            pace.answered()
            if most or budget is not None:  # what it used, as its usage will say
                usage = usage_of(reply, 0.0, prompt, model.price)
                pace.used(most, usage.total_tokens)
                if budget is not None:
                    budget.settle(held, usage.cost, usage.completion_tokens)
            if cached is not None:
                cached.keep(reply)
            return reply
        yield WAIT, wait
        waited += wait
        pace.waited(wait)


def _wait_s(fault: Fault, retry: int, draw: Callable[[], float]) -> float:
    if fault.retry_after_s is not None:
        return fault.retry_after_s
    return backoff_s(retry, draw)
