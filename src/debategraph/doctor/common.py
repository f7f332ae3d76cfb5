"""What every group of doctor checks shares: :class:`Check`, and the probe call's parts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import openai
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from debategraph.errors import DebategraphError

#: The embedded model's runtime (a distribution name).
RUNTIME_PACKAGE = "xllamacpp"

_PROBE_MESSAGES: Sequence[BaseMessage] = (
    SystemMessage("You add numbers. Reply with the sum only."),
    HumanMessage("What is 2 + 3?"),
)
#: Errors a model call is expected to fail with (the rest are bugs).
_CALL_ERRORS = (DebategraphError, openai.OpenAIError, OSError)


class _Sum(BaseModel):
    """The reply of a structured-output probe."""

    answer: int = Field(description="The sum, as a number.")


@dataclass(frozen=True)
class Check:
    """The outcome of one check.

    Attributes:
        name: What was checked (``python``, ``checkpoint db``, ``endpoint``, ...).
        ok: Whether it passed.
        detail: What was found, or why it failed (one line).
    """

    name: str
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        """The check as a JSON-ready dict (``name``, ``ok``, ``detail``)."""
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


def _size(n_bytes: int) -> str:
    """``98.4 MB`` (or ``12 KB`` below a megabyte)."""
    return f"{n_bytes / 1e6:.1f} MB" if n_bytes >= 1e6 else f"{n_bytes / 1e3:.0f} KB"
