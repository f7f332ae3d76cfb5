"""The response cache: a reply to a request made before, answered without a paid call.

This module holds what the rest of the model stack reads of a cached reply: its mark
(:func:`from_cache`), which the call's usage counts as a cache hit that cost nothing.
"""

from __future__ import annotations

from typing import Any

#: The key of a cached reply's ``response_metadata`` that marks it as one.
CACHE_MARK = "debategraph_cache_hit"


def from_cache(reply: Any) -> bool:
    """Whether ``reply`` came from the response cache (not from a paid call)."""
    meta = getattr(reply, "response_metadata", None)
    return bool(meta.get(CACHE_MARK)) if isinstance(meta, dict) else False
