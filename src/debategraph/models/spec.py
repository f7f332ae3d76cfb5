"""Which chat model to call and how: :class:`ModelSpec`, and checking its values.

Kept free of the OpenAI client and LangChain's chat models, so that a command line can
check its options without the slow imports that calling a model needs. It imports
:mod:`debategraph.local` (the embedded model's file and slots) only when a spec of the
embedded model is validated.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Literal
from urllib.parse import urlparse

from debategraph.errors import UsageError

StructuredMethod = Literal["function_calling", "json_schema", "json_mode"]
MethodChoice = Literal["auto", "function_calling", "json_schema", "json_mode"]
LOCAL = "local"


@dataclass(frozen=True)
class ModelSpec:
    """Which chat model to call and how.

    Attributes:
        model: ``local`` for the embedded model (SmolLM2, or the GGUF file named by
            ``DEBATEGRAPH_GGUF``), ``local:PATH.gguf`` for another GGUF file served the
            same way, else the endpoint's model name.
        base_url: OpenAI-compatible base URL; ``None`` uses ``OPENAI_BASE_URL`` or OpenAI.
        api_key: API key; ``None`` uses ``OPENAI_API_KEY`` (or a placeholder).
        temperature: Sampling temperature.
        max_tokens: Completion token cap (``None``: endpoint default; local: 320).
        timeout_s: Per-request timeout in seconds (``None``: 60, local: 300).
        max_retries: Client retries on connection errors, 429 and 5xx.
        structured_method: ``auto`` picks ``json_schema`` for api.openai.com and the
            embedded model (grammar-constrained), ``function_calling`` (the most widely
            supported) elsewhere.
        slots: Embedded model only: requests its server answers at once (``None``: 4).
            The CLI sets it to the run's maximum concurrency.
    """

    model: str = LOCAL
    base_url: str | None = None
    api_key: str | None = None
    temperature: float = 0.7
    max_tokens: int | None = None
    timeout_s: float | None = None
    max_retries: int = 2
    structured_method: MethodChoice = "auto"
    slots: int | None = None

    @property
    def is_local(self) -> bool:
        """Whether this is the embedded model (``local`` or ``local:PATH``)."""
        return is_local(self.model)

    def check_values(self) -> None:
        """Check the values themselves, reading no file and no environment.

        Raises:
            UsageError: On a bad value, naming it and what is allowed.
        """
        if not self.model.strip():
            raise UsageError("model name is empty: use 'local' or the endpoint's model name")
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise UsageError(f"timeout {self.timeout_s} must be > 0 seconds")
        if self.max_retries < 0:
            raise UsageError(f"max retries {self.max_retries} must be >= 0")
        if self.is_local and self.base_url:
            raise UsageError(f"--base-url {self.base_url} needs --model NAME (the model it serves)")

    def validated(self) -> ModelSpec:
        """Check the values, the embedded model's file and slots, and fill in defaults.

        Returns:
            A spec with ``base_url`` resolved for remote models.

        Raises:
            UsageError: On a bad value, naming it and what is allowed.
        """
        self.check_values()
        if self.is_local:
            from debategraph.local import check_gguf, check_slots, resolve_gguf

            info = check_gguf(resolve_gguf(self.model))
            if self.slots is not None:
                check_slots(info, self.slots)
            return self
        base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or None
        if base_url is not None:
            parsed = urlparse(base_url)
            if parsed.scheme not in ("http", "https") or not parsed.netloc:
                raise UsageError(f"base URL {base_url!r} is not an http(s) URL")
        return replace(self, base_url=base_url)


def is_local(model: str) -> bool:
    """Whether a model name means the embedded model (``local`` or ``local:PATH``).

    Args:
        model: The model name.

    Returns:
        ``True`` for the embedded model.
    """
    return model == LOCAL or model.startswith(f"{LOCAL}:")
