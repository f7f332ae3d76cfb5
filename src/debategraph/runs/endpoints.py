"""Before a run: each model it names goes to an endpoint that serves it.

A model is called at the endpoint its spec names (``NAME@BASE_URL``), else at the run's
endpoint (:meth:`Agent.binding <debategraph.nodes.agent.Agent.binding>`): the embedded
server when the run's model is ``local``, else ``--base-url`` or ``OPENAI_BASE_URL`` or
OpenAI's API. The embedded server serves ``local`` only (it answers any name with
SmolLM2, so a name it does not serve would abstain every round); a remote endpoint
serves what ``GET {base_url}/models`` lists, where it answers. Every run asks each
distinct endpoint once, with a short timeout; one that does not answer is not refused
here (its first call says what is wrong, and the thread stays resumable).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from debategraph.errors import UsageError
from debategraph.models.choice import goes_to_embedded
from debategraph.models.spec import LOCAL, OPENAI_URL, ModelSpec, provider_of, same_endpoint

if TYPE_CHECKING:
    from debategraph.models.probe import ModelList

#: Seconds ``GET {base_url}/models`` may take before a run (no answer: the run goes on).
PROBE_S = 3.0


def endpoint_of(own: ModelSpec, run: ModelSpec) -> str:
    """The remote endpoint a model that does not go to the embedded server is called at.

    Args:
        own: The model (an agent's own, or the run's).
        run: The run's model (validated: its ``base_url`` resolved).

    Returns:
        Its base URL: its own, else the run's, else ``OPENAI_BASE_URL``, else OpenAI's.
    """
    return own.base_url or run.base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL


def where(url: str) -> str:
    """How a refusal names an endpoint: its URL, and the variable that holds it, if one does.

    Args:
        url: The base URL.

    Returns:
        ``URL (OPENAI_BASE_URL)`` where the URL is that variable's, ``URL (OpenAI's
        API)`` for OpenAI's, else the URL.
    """
    if same_endpoint(url, os.environ.get("OPENAI_BASE_URL") or "-"):
        return f"{url} (OPENAI_BASE_URL)"
    if same_endpoint(url, OPENAI_URL):
        return f"{url} (OpenAI's API)"
    return url


@dataclass
class Endpoints:
    """What each endpoint's ``GET /models`` said, asked once per endpoint per run.

    Attributes:
        found: Base URL -> what it said (:func:`~debategraph.models.probe.list_models`).
        timeout_s: Seconds each request may take.
    """

    found: dict[str, ModelList] = field(default_factory=dict)
    timeout_s: float = PROBE_S

    def probe(self, base_url: str, key: str | None) -> ModelList:
        """``GET {base_url}/models``, asked the first time only.

        Args:
            base_url: The endpoint.
            key: The key that goes to it (:meth:`ModelSpec.key`), if any.

        Returns:
            What it said.
        """
        for known, found in self.found.items():
            if same_endpoint(known, base_url):
                return found
        from debategraph.models.probe import list_models

        self.found[base_url] = list_models(base_url, key, self.timeout_s)
        return self.found[base_url]

    def models(self, base_url: str, key: str | None) -> list[str] | None:
        """The models ``base_url`` lists, or ``None`` where it did not answer with a list.

        Args:
            base_url: The endpoint.
            key: The key that goes to it, if any.

        Returns:
            The ids, or ``None`` (nothing is refused there).
        """
        found = self.probe(base_url, key)
        return found.ids if found.ok else None


def check_served(
    models: Iterable[tuple[str, ModelSpec | None]],
    run: ModelSpec,
    endpoints: Endpoints | None = None,
) -> None:
    """Refuse, before a run, a model the endpoint it goes to does not serve.

    Args:
        models: ``(who, model)`` for each agent or official with a model of its own
            (``who`` names it in the refusal: ``agent 'ann'``; a ``None`` model is
            skipped). The run's model is checked too (as ``--model``).
        run: The run's model (validated).
        endpoints: What the run asked the endpoints so far (one request each).

    Raises:
        UsageError: One line naming who, the model, the endpoint and what it serves.
    """
    endpoints = endpoints or Endpoints()
    checked = [("--model", run), *((who, own) for who, own in models if own is not None)]
    for who, own in checked:
        if provider_of(own.model) is not None:  # its provider's package reaches it
            continue
        if goes_to_embedded(own, run):
            if own.is_local:
                continue
            raise UsageError(
                f"{who}: model {own.model!r} goes to the run's endpoint, the embedded "
                f"model (--model {LOCAL}), which serves only {LOCAL!r}: name its endpoint "
                "(NAME@BASE_URL), or run with --model NAME --base-url URL"
            )
        url = endpoint_of(own, run)
        listed = endpoints.models(url, _key(own, run, url))
        if listed is None or own.model in listed:
            continue
        from debategraph.models.probe import some_of

        shown = some_of(listed)
        raise UsageError(
            f"{who}: model {own.model!r} is not served by {where(url)}, which lists "
            f"{shown or 'no model'}"
        )


def _key(own: ModelSpec, run: ModelSpec, url: str) -> str | None:
    """The key a model's calls send to ``url`` (as :meth:`Agent.binding` gives it).

    A model naming no key of its own, at the run's endpoint, sends the run's key; any
    other sends what it names (:meth:`ModelSpec.key`: a key goes only to its endpoint).
    """
    keyless = own.api_key is None and own.api_key_env is None
    at_run = not run.is_local and same_endpoint(url, endpoint_of(run, run))
    spec = run if keyless and at_run else replace(own, base_url=url)
    try:
        return spec.key()
    except UsageError:
        return None
