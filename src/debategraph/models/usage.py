"""What a model call used: its tokens (reported, or estimated from text), time and cost.

One place turns a reply into its :class:`~debategraph.state.records.Usage`
(:func:`usage_of`), for every call of :mod:`debategraph.models.calls` and
:mod:`debategraph.models.loops`; the pacing of calls counts a prompt's tokens before it
is sent the same way (:func:`prompt_tokens_of`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage

from debategraph.models.cache import from_cache
from debategraph.models.money import Price, call_cost
from debategraph.state.records import Usage

#: Characters per token where a count is estimated from text (:func:`estimate_tokens`).
CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Tokens in ``text`` by the usual rule of thumb for English (4 characters a token).

    What a call's usage says where the endpoint reported none, and what a budget or a
    tokens-a-minute limit counts a prompt as before it is sent.
    """
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def prompt_tokens_of(prompt: Sequence[Any]) -> int:
    """A prompt's tokens (:func:`estimate_tokens` of each message's text)."""
    return sum(estimate_tokens(getattr(m, "text", "") or "") for m in prompt)


def usage_of(
    raw: object,
    latency_s: float,
    prompt: Sequence[Any],
    price: Price | None = None,
) -> Usage:
    """The usage a reply reports (estimated from text length if it reports none).

    Args:
        raw: The reply.
        latency_s: The call's wall time.
        prompt: What was sent (for the estimate).
        price: The model's price (``None``: no cost recorded).

    Returns:
        Its usage, its cost at ``price`` (0 for a reply from the response cache, which
        counts a cache hit).
    """
    hit = from_cache(raw)
    meta = getattr(raw, "usage_metadata", None)
    if meta:
        prompt_tokens = int(meta.get("input_tokens", 0))
        completion_tokens = int(meta.get("output_tokens", 0))
        estimated = False
    else:
        reply = raw if isinstance(raw, AIMessage) else None
        completion_tokens = estimate_tokens(reply.text if reply is not None else "")
        if reply is not None:
            calls = reply.tool_calls
            completion_tokens += sum(estimate_tokens(json.dumps(c["args"])) for c in calls)
        prompt_tokens = prompt_tokens_of(prompt)
        estimated = True
    cost = call_cost(price, prompt_tokens, completion_tokens, raw)
    return Usage(
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        calls=1,
        latency_s=round(latency_s, 6),
        estimated=estimated,
        cost=0.0 if hit and cost is not None else cost,
        cache_hits=int(hit),
    )
