"""A remote endpoint's checks: reachable, serving the model, its structured-output methods.

``api key`` says which key goes to the endpoint (or which is withheld, and why);
``endpoint`` checks that ``GET {base_url}/models`` answers; ``model`` that the model is
in that list, when the endpoint lists models; ``structured output`` which of
``json_schema`` and ``function_calling`` return valid output, and how fast.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import replace

from debategraph.doctor.common import _CALL_ERRORS, _PROBE_MESSAGES, Check, _Sum
from debategraph.models import (
    ModelSpec,
    get_chat_model,
    json_schema_rejected,
    structured_call,
)
from debategraph.models.probe import some_of
from debategraph.words import one_line, plural

#: Seconds ``GET {base_url}/models`` may take (``--timeout`` when given).
REACH_TIMEOUT_S = 5.0
#: Seconds a structured-output probe of a remote endpoint may take (``--timeout`` when given).
PROBE_TIMEOUT_S = 30.0


def remote_checks(spec: ModelSpec) -> Iterator[Check]:
    """A remote endpoint: reachable, serving the model, and its structured-output methods.

    Args:
        spec: A remote spec with ``base_url`` set (see
            :func:`~debategraph.doctor.check_input`).

    Yields:
        ``endpoint``, then (if it answered) ``model`` when it lists models, and
        ``structured output``.
    """
    base_url = str(spec.base_url)
    key = spec.key()
    yield check_key(spec, key)
    timeout_s = spec.timeout_s or REACH_TIMEOUT_S
    reach, listed = check_endpoint(base_url, key, timeout_s, note=spec.key_note())
    yield reach
    if not reach.ok:
        return
    if listed is not None:
        yield check_model_listed(spec.model, listed)
    yield check_structured_output(spec)


def check_key(spec: ModelSpec, key: str | None) -> Check:
    """Which key goes to the endpoint: "no key sent" is told apart from "key refused".

    Args:
        spec: A remote spec.
        key: The key that goes to its endpoint (:meth:`ModelSpec.key`), or ``None``.

    Returns:
        The check: it passes either way (an endpoint may need no key); where a key is
        withheld, it names the key, why, and the option that sends it.
    """
    if key is not None:
        source = "given" if spec.api_key is not None else spec.api_key_env or "OPENAI_API_KEY"
        return Check("api key", True, f"sent ({source})")
    withheld = spec.withheld()
    if withheld is not None:
        return Check("api key", True, f"none sent: {withheld}")
    return Check("api key", True, "none sent (no key variable is named for this endpoint)")


def check_endpoint(
    base_url: str, api_key: str | None, timeout_s: float, *, note: str | None = None
) -> tuple[Check, list[str] | None]:
    """``GET {base_url}/models`` (:func:`~debategraph.models.probe.list_models`) as a check.

    Args:
        base_url: The OpenAI-compatible base URL.
        api_key: The key for this endpoint, or ``None`` (as ``list_models`` takes it).
        timeout_s: Seconds to wait.
        note: What to add where the endpoint wants a key it did not get
            (:meth:`ModelSpec.key_note`).

    Returns:
        The check, and the model ids it lists (``None`` if it lists none).
    """
    from debategraph.models.probe import list_models

    found = list_models(base_url, api_key, timeout_s)
    detail = found.detail
    if found.answered and not found.ok and note is not None:  # 401 or 403: no key sent
        detail = f"{detail}: {note}"
    return Check("endpoint", found.ok, detail), found.ids


def check_model_listed(model: str, listed: Sequence[str]) -> Check:
    """Whether the endpoint's model list names ``model``.

    Args:
        model: The model name.
        listed: The ids the endpoint lists.

    Returns:
        The check.
    """
    if model in listed:
        return Check("model", True, f"{model} is listed")
    shown = some_of(listed)
    return Check(
        "model",
        False,
        f"{model} is not among the {plural(len(listed), 'model')} listed: {shown or '-'}",
    )


def check_structured_output(spec: ModelSpec) -> Check:
    """Which structured-output methods the endpoint supports, and how long each took.

    ``json_schema`` is tried, then ``function_calling``. The check passes when the
    method runs use on this endpoint works (``json_schema`` falls back to
    ``function_calling`` on its own when the endpoint rejects it).

    Args:
        spec: A remote spec with ``base_url`` set.

    Returns:
        The check.
    """
    spec = replace(spec, timeout_s=spec.timeout_s or PROBE_TIMEOUT_S)
    try:
        runs_use = get_chat_model(spec).method
        outcomes = {
            method: _probe(replace(spec, structured_method=method))
            for method in ("json_schema", "function_calling")
        }
    except _CALL_ERRORS as exc:
        return Check("structured output", False, one_line(str(exc)))
    working = [m for m, (ok, _) in outcomes.items() if ok]
    parts = [f"{m} {'ok' if ok else 'failed'} ({note})" for m, (ok, note) in outcomes.items()]
    detail = f"{'; '.join(parts)}; runs use {runs_use}"
    ok = bool(working) if runs_use == "json_schema" else runs_use in working
    return Check("structured output", ok, detail)


def _probe(spec: ModelSpec) -> tuple[bool, str]:
    """One structured call with the spec's method: whether it worked, and its latency or why not.

    Raises:
        ModelUnavailableError: If the endpoint fails the request outright.
    """
    binding = get_chat_model(spec)
    json_schema = binding.method == "json_schema"
    if json_schema:  # a fresh verdict: forget an earlier rejection of this endpoint
        json_schema_rejected(binding.endpoint, forget=True)
    started = time.perf_counter()
    result = structured_call(binding, _Sum, _PROBE_MESSAGES, max_attempts=2)
    elapsed = time.perf_counter() - started
    if json_schema and json_schema_rejected(binding.endpoint):
        return False, "rejected by the endpoint"
    if result.value is None:
        return False, one_line(result.reason or "no valid output")[:160]
    return True, f"{elapsed:.2f}s"
