"""Fair shares of one operator's server and key: what each signed-in user may take.

The operator sets them in the model list's file (``serve --models``), under ``limits``;
each has a default, and ``null`` lifts it::

    limits:
      runs_in_flight: 4          # runs of one user at once; more get 429 + Retry-After
      requests_per_minute: 600   # requests of one user; more get 429 + Retry-After
      tokens_per_day: 2000000    # model tokens of one user per UTC day; then runs stop
      body_bytes: 1000000        # the largest request body; more get 413, unread

On a server where nobody signs in, everyone is one user (Aegra's ``anonymous``), so the
limits are the server's as a whole.

- **Requests** (:class:`RequestRate`): a token bucket per user, full at
  ``requests_per_minute`` and refilled at that rate; a request that finds it empty gets a
  429 whose ``Retry-After`` says when the next one is in.
- **Runs in flight** (:class:`RunsInFlight`): a request that creates a run takes a place
  (or gets a 429) before Aegra sees it, and gives it back when the run's execution ends
  (or at once when the request is refused), whatever ends it.
- **Bodies**: refused by ``Content-Length`` before a byte is read, or as soon as a body
  without one grows past the limit.
- **Tokens per day** (:class:`TokenBudget`): every model call of a user's run is added to
  the user's count for the UTC day, in the server's database (so every server process on
  it shares it); once the count reaches the budget, the run's next model call stops the
  run with one line (:class:`~debategraph.errors.BudgetSpentError`), leaving its thread
  resumable, as a dead endpoint does.

These bound one process; several processes on one database share the token count, and
each keeps its own request and run counts.
"""

from __future__ import annotations

import contextvars
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.outputs import LLMResult

from debategraph.errors import BudgetSpentError, UsageError


@dataclass(frozen=True)
class Limits:
    """What one user may take (``None``: no limit).

    Attributes:
        runs_in_flight: Runs of one user executing at once.
        requests_per_minute: Requests of one user per minute.
        tokens_per_day: Model tokens (prompt and completion) of one user per UTC day.
        body_bytes: The largest request body, in bytes.
    """

    runs_in_flight: int | None = 4
    requests_per_minute: int | None = 600
    tokens_per_day: int | None = 2_000_000
    body_bytes: int | None = 1_000_000

    @classmethod
    def read(cls, data: Any, where: str) -> Limits:
        """The ``limits`` object of the operator's file, every field checked.

        Args:
            data: The parsed ``limits`` value (``None``: the defaults).
            where: The file, for errors (``--models FILE``).

        Returns:
            The limits.

        Raises:
            UsageError: One line for a field it does not know, or a value that is not a
                whole number of at least 1 (or ``null``).
        """
        if data is None:
            return cls()
        names = [f.name for f in fields(cls)]
        if not isinstance(data, Mapping):
            raise UsageError(f"{where}: limits must be an object of {', '.join(names)}")
        values: dict[str, int | None] = {}
        for key, value in data.items():
            if key not in names:
                raise UsageError(
                    f"{where}: unknown limits field {key!r}: allowed are {', '.join(names)}"
                )
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise UsageError(
                    f"{where}: limits.{key} {value!r} must be a whole number of at least 1 "
                    "(or null: no limit)"
                )
            values[str(key)] = value
        return cls(**values)


class RequestRate:
    """Requests per minute per user: a token bucket each, full at the start.

    Attributes:
        per_minute: The rate (and the bucket's size).
    """

    def __init__(self, per_minute: int | None) -> None:
        """Start every user's bucket full."""
        self.per_minute = per_minute
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, user: str, now: float | None = None) -> float | None:
        """Take one request from the user's bucket.

        Args:
            user: Who sends it.
            now: The monotonic time (default: now).

        Returns:
            ``None`` when it may go on, else the seconds until the next one may.
        """
        if self.per_minute is None:
            return None
        now = time.monotonic() if now is None else now
        rate = self.per_minute / 60.0
        level, then = self._buckets.get(user, (float(self.per_minute), now))
        level = min(float(self.per_minute), level + (now - then) * rate)
        if level < 1.0:
            self._buckets[user] = (level, now)
            return (1.0 - level) / rate
        self._buckets[user] = (level - 1.0, now)
        return None


class Place:
    """A place a run holds among its user's runs in flight; given back once."""

    def __init__(self, runs: RunsInFlight, user: str) -> None:
        """Hold a place of ``user``'s."""
        self._runs = runs
        self._user = user
        self._held = True

    def give_back(self) -> None:
        """Give the place back (again: nothing)."""
        if self._held:
            self._held = False
            self._runs.counts[self._user] -= 1


class RunsInFlight:
    """Runs of each user executing now in this process, capped.

    Attributes:
        cap: The most runs of one user at once (``None``: no cap).
        counts: User -> places held now.
    """

    #: Seconds a refused client is told to wait (a debate takes seconds to minutes).
    RETRY_AFTER_S = 5

    def __init__(self, cap: int | None) -> None:
        """No run in flight yet."""
        self.cap = cap
        self.counts: dict[str, int] = {}

    def full(self, user: str) -> bool:
        """Whether ``user`` holds the cap now."""
        return self.cap is not None and self.counts.get(user, 0) >= self.cap

    def admit(self, user: str) -> Place | None:
        """A place for one more run of ``user``'s, or ``None`` when they hold the cap."""
        if self.full(user):
            return None
        self.counts[user] = self.counts.get(user, 0) + 1
        return Place(self, user)


#: The place the run a request creates holds (set by the request check, read by the
#: run's execution, which Aegra starts as a task of the request: it inherits it).
run_place: contextvars.ContextVar[Place | None] = contextvars.ContextVar(
    "debategraph_run_place", default=None
)


async def holding_place(execute: Any, *args: Any, **kwargs: Any) -> Any:
    """Run Aegra's execution of a run, giving its user's place back when it ends.

    Args:
        execute: Aegra's ``execute_run_async``.
        *args: Its arguments.
        **kwargs: Its keyword arguments.

    Returns:
        What it returns.
    """
    place = run_place.get()
    try:
        return await execute(*args, **kwargs)
    finally:
        if place is not None:
            place.give_back()


# -- tokens per day ----------------------------------------------------------------------

#: The table of token counts per user and UTC day (in the server's database).
USAGE_TABLE = "debategraph_usage"
_CREATE = (
    f"CREATE TABLE IF NOT EXISTS {USAGE_TABLE} ("
    "user_id TEXT NOT NULL, day DATE NOT NULL, tokens BIGINT NOT NULL DEFAULT 0, "
    "PRIMARY KEY (user_id, day))"
)
_ADD = (
    f"INSERT INTO {USAGE_TABLE} (user_id, day, tokens) VALUES (:user, :day, :tokens) "
    f"ON CONFLICT (user_id, day) DO UPDATE SET tokens = {USAGE_TABLE}.tokens + :tokens"
)
_READ = f"SELECT tokens FROM {USAGE_TABLE} WHERE user_id = :user AND day = :day"


def today() -> Any:
    """The UTC day counts are kept by."""
    return datetime.now(UTC).date()


async def create_usage_table() -> None:
    """Create the token count table where it is missing (at start)."""
    from sqlalchemy import text

    from debategraph.compat import aegra_session_maker

    async with aegra_session_maker()() as session:
        await session.execute(text(_CREATE))
        await session.commit()


async def tokens_used(user: str) -> int:
    """The tokens ``user``'s runs used today (UTC), over every server process."""
    from sqlalchemy import text

    from debategraph.compat import aegra_session_maker

    async with aegra_session_maker()() as session:
        used = await session.scalar(text(_READ), {"user": user, "day": today()})
    return int(used or 0)


async def add_tokens(user: str, tokens: int) -> None:
    """Add ``tokens`` to ``user``'s count for today."""
    from sqlalchemy import text

    from debategraph.compat import aegra_session_maker

    async with aegra_session_maker()() as session:
        await session.execute(text(_ADD), {"user": user, "day": today(), "tokens": tokens})
        await session.commit()


class TokenBudget(AsyncCallbackHandler):
    """A run's model calls, counted against its user's tokens for the day.

    A LangChain callback on the run's config, so it sees every chat model call of the
    run (any model, any agent, tool loops included): before a call it stops the run
    when the user's count has reached the budget; after one it adds the call's tokens.

    Attributes:
        user: Whose count it is.
        budget: The user's tokens per day.
    """

    raise_error = True  # a spent budget stops the call (and the run), not just a log line
    run_inline = True

    def __init__(self, user: str, budget: int) -> None:
        """Count ``user``'s calls against ``budget``."""
        self.user = user
        self.budget = budget

    async def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        """Stop the run (resumable) when the user's budget is spent."""
        used = await tokens_used(self.user)
        if used >= self.budget:
            raise BudgetSpentError(
                f"user {self.user!r} has used {used:,} of {self.budget:,} tokens today (UTC): "
                "the run stops here and its thread can be resumed tomorrow, or once the "
                "operator raises limits.tokens_per_day"
            )

    async def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        """Add the call's tokens to the user's count."""
        tokens = call_tokens(response)
        if tokens:
            await add_tokens(self.user, tokens)


def call_tokens(response: LLMResult) -> int:
    """The tokens a chat model call reported (its messages' usage, else the output's)."""
    total = 0
    for generations in response.generations:
        for generation in generations:
            usage = getattr(getattr(generation, "message", None), "usage_metadata", None)
            if usage:
                total += int(usage.get("total_tokens") or 0)
    if total:
        return total
    reported = (response.llm_output or {}).get("token_usage") or {}
    return int(reported.get("total_tokens") or 0) if isinstance(reported, Mapping) else 0


def with_callback(config: Any, handler: Any) -> Any:
    """``config`` with ``handler`` among its callbacks (a list, a manager, or none)."""
    config = dict(config or {})
    callbacks = config.get("callbacks")
    if callbacks is None:
        config["callbacks"] = [handler]
    elif isinstance(callbacks, list):
        config["callbacks"] = [*callbacks, handler]
    else:  # a callback manager
        manager = callbacks.copy()
        manager.add_handler(handler, inherit=True)
        config["callbacks"] = manager
    return config


def retry_after(seconds: float) -> str:
    """A ``Retry-After`` value: whole seconds, at least 1."""
    return str(max(1, math.ceil(seconds)))
