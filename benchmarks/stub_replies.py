"""The stub server's replies in the benchmarks: the question, its answer, a solver's reply.

Kept apart from ``solver_debate.py`` (which imports debategraph and LangGraph) so the stub
server's own process (``stub_process.py``) starts without them: about 1.7 s of CPU each
start, in every benchmark that runs one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

QUESTION = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many "
    "clips in May. How many clips did Natalia sell altogether in April and May?"
)
ANSWER = "72"
#: Step-by-step text a solver "writes"; cut or repeated to the length a figure asks for.
REASONING_TEXT = (
    "Step 1: In April Natalia sold 48 clips to her friends. "
    "Step 2: In May she sold half as many clips as in April, so she sold 48 / 2 = 24 clips. "
    "Step 3: To find the total for both months, add the two amounts: 48 + 24 = 72 clips. "
    "Check: 24 is exactly half of 48, and 72 - 48 = 24, so the May figure is consistent. "
    "Comparing with the other agents, their arithmetic agrees with mine at every step, and "
    "nobody misread 'half as many' as 'half as many more'. "
)


def reasoning_text(chars: int, salt: str = "") -> str:
    """Deterministic reasoning of exactly ``chars`` characters."""
    head = f"[{salt}] " if salt else ""
    body = head + REASONING_TEXT * (chars // len(REASONING_TEXT) + 2)
    return body[:chars]


def make_responder(chars: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Responder for the stub server: a ``SolverReply`` tool call, same input -> same output.

    ``answer`` is sent as a JSON *string* holding a number (``"72"``): ``SolverReply.answer``
    is ``str``, and a bare JSON number would fail validation and go through
    ``structured_call``'s repair path on every call.
    """

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        prompt = json.dumps(body.get("messages"), sort_keys=True)
        salt = hashlib.sha1(prompt.encode()).hexdigest()[:8]
        return {"reasoning": reasoning_text(chars, salt), "answer": ANSWER, "confidence": 0.8}

    return respond
