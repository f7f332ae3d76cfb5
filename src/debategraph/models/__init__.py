"""Chat-model factory and the one structured-call helper every node uses.

Every LLM call in debategraph goes through :func:`structured_call`: it takes a pydantic
output schema, uses the structured-output method the endpoint supports, validates,
repairs (clamp, coerce, truncate) and retries malformed output, falls back to a recorded
reason instead of crashing, and records token usage and latency. Transport failures (an
endpoint that is down, or keeps answering 5xx after the client's retries) raise
:class:`~debategraph.errors.ModelUnavailableError` so the graph run stops and the thread
stays resumable.

The modules:

* :mod:`~debategraph.models.spec`: :class:`ModelSpec` and checking its values. It does
  not import the OpenAI client or LangChain's chat models, so it loads fast.
* :mod:`~debategraph.models.choice`: which model an agent calls (its own, the graph's,
  the run's) and with which key.
* :mod:`~debategraph.models.binding`: building the chat model a spec describes
  (:func:`get_chat_model`, :func:`bind_model`); the lean client only where
  :mod:`debategraph.compat` finds what it needs.
* :mod:`~debategraph.models.client`: the chat model it builds, langchain-openai's
  ``ChatOpenAI`` with a lean path for plain text requests nobody observes.
* :mod:`~debategraph.models.calls`: :func:`structured_call` and :func:`text_call` (and
  :func:`astructured_call`, :func:`atext_call` for async code).
* :mod:`~debategraph.models.output`: lenient parsing and :func:`repair` of replies.
* :mod:`~debategraph.models.failures`: what a failed call means (cut by the deadline,
  slow, or down).

The names of binding, calls and output are imported on first use, so that importing
``debategraph.models.spec`` (or :class:`ModelSpec` from here) stays quick.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from debategraph.models.spec import (
    LOCAL,
    LOCAL_MAX_TOKENS,
    MethodChoice,
    ModelSpec,
    StructuredMethod,
    is_local,
    parse_model,
)

if TYPE_CHECKING:
    from debategraph.models.binding import (
        ModelBinding,
        bind_model,
        clear_model_cache,
        get_chat_model,
    )
    from debategraph.models.calls import (
        CUT_OFF_HINT,
        REPAIR_HINT,
        CallResult,
        TextResult,
        astructured_call,
        atext_call,
        json_schema_rejected,
        structured_call,
        structured_steps,
        text_call,
        text_steps,
    )
    from debategraph.models.limits import call_limit, set_call_limit
    from debategraph.models.output import repair
    from debategraph.models.steps import Steps, arun_steps, run_steps
    from debategraph.models.usage import CHARS_PER_TOKEN

__all__ = [
    "CHARS_PER_TOKEN",
    "CUT_OFF_HINT",
    "LOCAL",
    "LOCAL_MAX_TOKENS",
    "REPAIR_HINT",
    "CallResult",
    "MethodChoice",
    "ModelBinding",
    "ModelSpec",
    "Steps",
    "StructuredMethod",
    "TextResult",
    "arun_steps",
    "astructured_call",
    "atext_call",
    "bind_model",
    "call_limit",
    "clear_model_cache",
    "get_chat_model",
    "is_local",
    "json_schema_rejected",
    "parse_model",
    "repair",
    "run_steps",
    "set_call_limit",
    "structured_call",
    "structured_steps",
    "text_call",
    "text_steps",
]

#: The modules that hold the names imported on first use, in the order they are searched:
#: the light ones first; the others need the OpenAI client.
_LAZY_MODULES = ("steps", "limits", "usage", "binding", "calls", "output")

if not TYPE_CHECKING:  # type checkers see the imports above, and flag unknown names

    def __getattr__(name: str) -> object:
        """Import a name of :data:`__all__` from its module on first use (PEP 562).

        Args:
            name: The attribute asked for.

        Returns:
            Its value, also stored here so the next lookup finds it directly.

        Raises:
            AttributeError: If it is not one of this package's names.
        """
        if name in __all__:
            for module_name in _LAZY_MODULES:
                module = importlib.import_module(f"{__name__}.{module_name}")
                if name in vars(module):
                    value = vars(module)[name]
                    globals()[name] = value
                    return value
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, including those not imported yet."""
    return sorted({*globals(), *__all__})
