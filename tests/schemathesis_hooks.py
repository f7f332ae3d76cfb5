"""Schemathesis checks of debategraph's own (``SCHEMATHESIS_HOOKS=tests.schemathesis_hooks``).

``no_exception_text``: no response, of any status, carries a Python traceback or an
exception's text (which may quote the database: SQL, parameters, connection details).
"""

from __future__ import annotations

from typing import Any

import schemathesis

#: What a response may never hold.
MARKS = ("Traceback (most recent call last)", '"exception"', "sqlalchemy", "[SQL: ")


@schemathesis.check
def no_exception_text(ctx: Any, response: Any, case: Any) -> bool:
    """Fail on a response that shows a traceback or an exception's text."""
    text = response.text if isinstance(response.text, str) else ""
    found = [mark for mark in MARKS if mark in text]
    if found:
        raise AssertionError(f"the response shows {found[0]!r}: {text[:200]}")
    return True
