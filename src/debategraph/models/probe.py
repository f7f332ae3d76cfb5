"""``GET {base_url}/models``: whether an OpenAI-compatible endpoint answers, and what it lists.

The one request that asks an endpoint about itself: ``doctor`` reports it, the CLI asks it
before a run (a model the endpoint does not list is refused), and a call that timed out
asks it to tell a slow endpoint from a dead one.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

from debategraph.models.faults import unreached, unreached_words
from debategraph.words import plural

#: Model names a line lists at most (:func:`some_of`).
LISTED_MAX = 5


@dataclass(frozen=True)
class ModelList:
    """What ``GET {base_url}/models`` said.

    Attributes:
        answered: Whether the endpoint answered at all (any HTTP status): it is alive.
        ok: Whether it answered without refusing the key.
        detail: One line saying what was found, or why it failed.
        ids: The model ids it lists, or ``None`` if it lists none.
    """

    answered: bool
    ok: bool
    detail: str
    ids: list[str] | None = None


def list_models(base_url: str, api_key: str | None, timeout_s: float) -> ModelList:
    """``GET {base_url}/models``: does the endpoint answer, and which models does it list.

    Args:
        base_url: The OpenAI-compatible base URL.
        api_key: The key that goes to this endpoint (:meth:`ModelSpec.key
            <debategraph.models.ModelSpec.key>`), or ``None``: none is sent (a key
            never goes to an endpoint it was not given for).
        timeout_s: Seconds to wait.

    Returns:
        What it said.
    """
    from debategraph.words import one_line

    url = f"{base_url.rstrip('/')}/models"
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    started = time.perf_counter()
    late = f"{base_url} did not answer within {timeout_s:g}s"
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403) and not api_key:  # a wrong key is not what happened
            wants = f"{base_url} wants an API key (HTTP {exc.code} on /models): no key was sent"
            return ModelList(True, False, wants)
        if exc.code in (401, 403):
            refused = f"{base_url} refused the API key (HTTP {exc.code} on /models)"
            return ModelList(True, False, refused)
        said = f"{base_url} answered (HTTP {exc.code} on /models: no model list)"
        return ModelList(True, True, said)
    except (OSError, http.client.HTTPException) as exc:  # URLError is an OSError
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        failure = reason if isinstance(reason, BaseException) else exc
        kind = unreached(failure)
        if kind == "timeout":
            return ModelList(False, False, late)
        if kind is not None:  # DNS, refused, TLS, dropped: named as what they are
            return ModelList(False, False, unreached_words(kind, base_url, failure))
        text = failure.strerror if isinstance(failure, OSError) and failure.strerror else failure
        return ModelList(False, False, f"{base_url} is unreachable: {one_line(str(text))}")
    elapsed_ms = (time.perf_counter() - started) * 1000
    listed = _model_ids(body)
    if listed is None:
        return ModelList(True, True, f"{base_url} answered in {elapsed_ms:.0f} ms (no model list)")
    said = f"{base_url} answered in {elapsed_ms:.0f} ms, listing {plural(len(listed), 'model')}"
    return ModelList(True, True, said, listed)


def some_of(ids: Sequence[str]) -> str:
    """The first :data:`LISTED_MAX` ids, comma-separated (``, ...`` when there are more)."""
    return ", ".join(ids[:LISTED_MAX]) + (", ..." if len(ids) > LISTED_MAX else "")


def _model_ids(body: bytes) -> list[str] | None:
    """The ``data[].id`` of a ``/models`` reply, or ``None`` if it is not such a list."""
    try:
        payload = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    return [str(item["id"]) for item in data if isinstance(item, dict) and "id" in item]
