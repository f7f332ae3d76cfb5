"""What model calls cost: the operator's prices, and a budget a run or an eval stops at.

No price is invented or fetched: a model has a price only where the operator gave one
(``--price``, an agent's ``price``, a served model's ``price``), per million tokens:

- **input**: prompt tokens;
- **output**: completion tokens;
- **cached input** (optional): prompt tokens the provider read from its prompt cache and
  bills at its lower rate (the reply's ``input_token_details.cache_read``); without it,
  they cost what input does.

A call's cost (:func:`call_cost`) is written into its :class:`~debategraph.state.records.
Usage`, so every record, agent, model, thread and eval row sums its own; a call answered
from the response cache costs nothing.

**A budget** (:class:`Budget`, ``--max-cost``) is checked before each priced call: the call
holds back what it could cost at most (its prompt's tokens at the input price, and the
model's ``max_tokens`` at the output price, or the largest reply this budget has seen,
at least :data:`UNCAPPED_REPLY_TOKENS`), and is not made where what was spent plus what
the calls in flight hold plus that would pass the budget: the run stops there with one
line (:class:`~debategraph.errors.CostLimitReached`), its thread resumable, as after a
provider's failure. A budget is what one command may spend (:func:`spending` opens it for
a run or an eval): a resume or a rerun has a budget of its own.
"""

from __future__ import annotations

import contextvars
import math
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from debategraph.errors import CostLimitReached, UsageError
from debategraph.state.records import COST_DECIMALS, Usage, add_costs

#: Tokens a price is given for.
PER_TOKENS = 1_000_000
#: The fewest completion tokens a call of a model without ``max_tokens`` is held back
#: for (:meth:`Budget.hold`): the largest reply seen is used once larger.
UNCAPPED_REPLY_TOKENS = 1024
#: How a price is written on a command line.
PRICE_FORM = "INPUT/OUTPUT[/CACHED_INPUT] per million tokens, e.g. 2.50/10/1.25"


@dataclass(frozen=True)
class Price:
    """A model's price per million tokens, in the operator's currency.

    Attributes:
        input: Per million prompt tokens.
        output: Per million completion tokens.
        cached_input: Per million prompt tokens read from the provider's prompt cache
            (``None``: as ``input``).
    """

    input: float
    output: float
    cached_input: float | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        """What a call of these tokens costs.

        Args:
            prompt_tokens: Tokens sent (the cached ones included).
            completion_tokens: Tokens generated.
            cached_tokens: Of the prompt's, those read from the provider's cache.

        Returns:
            The cost, rounded to :data:`~debategraph.state.records.COST_DECIMALS` places.
        """
        cached = min(max(0, cached_tokens), prompt_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        total = (
            (prompt_tokens - cached) * self.input
            + cached * cached_rate
            + completion_tokens * self.output
        ) / PER_TOKENS
        return round(total, COST_DECIMALS)

    def written(self) -> str:
        """The price as ``--price`` takes it (``2.5/10`` or ``2.5/10/1.25``)."""
        parts = [self.input, self.output]
        if self.cached_input is not None:
            parts.append(self.cached_input)
        return "/".join(f"{p:g}" for p in parts)


#: The keys of a price written as a mapping.
PRICE_KEYS = ("input", "output", "cached_input")


def parse_price(value: Any, where: str = "price") -> Price:
    """A :class:`Price` from ``--price`` text, an agents file's value or a stored record.

    Args:
        value: ``"INPUT/OUTPUT[/CACHED_INPUT]"``, a mapping of ``input``, ``output`` and
            (optionally) ``cached_input``, or a :class:`Price`.
        where: What gave it, for the error (``--price``, ``agent critic: price``).

    Returns:
        The price.

    Raises:
        UsageError: One line naming the value and what is allowed: an amount that is
            negative or not a number, a part too many or too few, an unknown key.
    """
    if isinstance(value, Price):
        return value
    if isinstance(value, str):
        parts = value.split("/")
        if not 2 <= len(parts) <= 3:
            raise UsageError(f"{where} {value!r}: expected {PRICE_FORM}")
        numbers = [_amount(part, value, where) for part in parts]
        return Price(numbers[0], numbers[1], numbers[2] if len(numbers) == 3 else None)
    if isinstance(value, Mapping):
        unknown = sorted(str(k) for k in value if k not in PRICE_KEYS)
        if unknown:
            raise UsageError(
                f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(PRICE_KEYS)})"
            )
        missing = [k for k in ("input", "output") if value.get(k) is None]
        if missing:
            raise UsageError(f"{where}: {missing[0]!r} is missing ({PRICE_FORM})")
        cached = value.get("cached_input")
        return Price(
            _amount(value["input"], value, where),
            _amount(value["output"], value, where),
            None if cached is None else _amount(cached, value, where),
        )
    raise UsageError(f"{where} {value!r}: expected {PRICE_FORM}, or a mapping of input/output")


def _amount(part: Any, value: Any, where: str) -> float:
    try:
        number = math.nan if isinstance(part, bool) else float(str(part).strip().lstrip("$"))
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number < 0:
        raise UsageError(f"{where} {value!r}: {part!r} is not an amount >= 0 ({PRICE_FORM})")
    return number


def parse_cost(value: Any, where: str = "--max-cost") -> float:
    """A budget: a finite amount > 0 (``$`` allowed before it).

    Args:
        value: The text or number given.
        where: What gave it, for the error.

    Returns:
        The amount.

    Raises:
        UsageError: One line where it is not a finite number > 0.
    """
    try:
        amount = float(str(value).strip().lstrip("$"))
    except ValueError:
        amount = math.nan
    if isinstance(value, bool) or not math.isfinite(amount) or amount <= 0:
        raise UsageError(f"{where} {value!r}: expected an amount > 0, e.g. 5 or 0.50")
    return amount


def cached_tokens_of(reply: object) -> int:
    """Of a reply's prompt tokens, those the provider says it read from its cache."""
    meta = getattr(reply, "usage_metadata", None) or {}
    details = meta.get("input_token_details") or {}
    return int(details.get("cache_read") or 0) if isinstance(details, Mapping) else 0


def call_cost(
    price: Price | None, prompt_tokens: int, completion_tokens: int, reply: object = None
) -> float | None:
    """What one call cost at ``price`` (``None``: the model has no price).

    Args:
        price: The model's price.
        prompt_tokens: Tokens sent.
        completion_tokens: Tokens generated.
        reply: The reply, whose usage may say how many prompt tokens were cached.

    Returns:
        The cost, or ``None``.
    """
    if price is None:
        return None
    return price.cost(prompt_tokens, completion_tokens, cached_tokens_of(reply))


class Budget:
    """What a run or an eval may spend, and what it has spent (thread-safe).

    Attributes:
        limit: The most it may spend.
        spent: What it spent so far (including what was spent before this process,
            given when it was opened).
        largest_reply: The most completion tokens one call of this budget returned.
    """

    def __init__(self, limit: float, spent: float = 0.0) -> None:
        """A budget of ``limit``, ``spent`` of it already."""
        self.limit = limit
        self.spent = spent
        self.largest_reply = 0
        self._held = 0.0
        self._lock = threading.Lock()

    def hold(self, price: Price, prompt_tokens: int, max_tokens: int | None) -> float:
        """Hold back what a call could cost at most, or refuse it.

        Args:
            price: The model's price.
            prompt_tokens: The prompt's tokens (estimated).
            max_tokens: The model's completion cap, if it has one.

        Returns:
            The amount held (give it to :meth:`settle` when the call ends).

        Raises:
            CostLimitReached: If what was spent, what calls in flight hold and this
                call's most would pass the limit.
        """
        with self._lock:
            reply = max_tokens or max(UNCAPPED_REPLY_TOKENS, self.largest_reply)
            most = price.cost(prompt_tokens, reply)
            if self.spent + self._held + most > self.limit:
                raise CostLimitReached(
                    f"cost limit reached: {money(self.spent)} spent"
                    + (f", {money(self._held)} held by calls in flight" if self._held else "")
                    + f" of --max-cost {money(self.limit)}, and the next call could cost "
                    f"up to {money(most)}: stopped before it"
                )
            self._held += most
            return most

    def settle(self, held: float, cost: float | None, completion_tokens: int = 0) -> None:
        """A call ended: give back what it held and count what it cost.

        Args:
            held: What :meth:`hold` held for it.
            cost: What it cost (``None``/0: nothing, e.g. it failed or was a cache hit).
            completion_tokens: Its reply's tokens.
        """
        with self._lock:
            self._held = max(0.0, self._held - held)
            self.spent = round(self.spent + (cost or 0.0), COST_DECIMALS)
            self.largest_reply = max(self.largest_reply, completion_tokens)


_BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar(
    "debategraph_budget", default=None
)


def active_budget() -> Budget | None:
    """The budget the calls made here count against (``None``: none)."""
    return _BUDGET.get()


@contextmanager
def spending(budget: Budget | None) -> Iterator[Budget | None]:
    """Count the calls made inside (threads and tasks started inside too) against ``budget``.

    Args:
        budget: The budget, or ``None`` (no budget: a no-op).

    Yields:
        The budget.
    """
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def money(amount: float) -> str:
    """An amount as people read it: ``$0.0123``, ``$0.80``, ``$1.50``, ``$1,234.00``.

    Amounts under a unit keep four significant digits (a debate on a cheap model costs
    fractions of a cent), and at least two decimals; a unit or more, two decimals.
    """
    if amount >= 1 or amount == 0:
        return f"${amount:,.2f}"
    text = f"{amount:.4g}"
    if "e" in text:
        return f"${amount:.2e}"
    return f"${text}" if len(text.partition(".")[2]) >= 2 else f"${amount:.2f}"


def spend_words(usage: Mapping[str, Any], by_model: Mapping[str, Any]) -> str:
    """What a thread (or an eval) spent, as the plain outputs say it ("" where nothing).

    Args:
        usage: The total usage (a :class:`~debategraph.state.records.Usage` or its
            dict form, as a ``--json`` result holds it).
        by_model: Model label -> its usage (the models called without a price named).

    Returns:
        ``$0.0123``, ``$0.0123 (no price for m)``, with ``· 4 calls from the cache``
        where some were; ``""`` where no call had a price nor came from the cache.
    """
    total = Usage.coerce(usage)
    _, unpriced = costs_known(by_model)
    parts = []
    if total.cost is not None:
        missing = f" (no price for {', '.join(unpriced)})" if unpriced else ""
        parts.append(f"{money(total.cost)}{missing}")
    if total.cache_hits:
        hits = total.cache_hits
        parts.append(f"{hits} call{'' if hits == 1 else 's'} from the cache")
    return " · ".join(parts)


def costs_known(by_model: Mapping[str, Any]) -> tuple[float | None, list[str]]:
    """A thread's cost from its usage by model, and the models that had no price.

    Args:
        by_model: Model label -> its :class:`~debategraph.state.records.Usage` (or dict).

    Returns:
        The summed cost of the priced models (``None``: none was priced) and the labels
        of the models called without a price.
    """
    total: float | None = None
    unpriced: list[str] = []
    for label, raw in by_model.items():
        usage = Usage.coerce(raw)
        if usage.cost is None:
            if usage.calls:
                unpriced.append(label)
        else:
            total = add_costs(total, usage.cost)
    return total, unpriced
