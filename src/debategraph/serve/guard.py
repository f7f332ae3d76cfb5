"""What the server refuses before Aegra sees it: values its database cannot hold.

Aegra 0.6.0 hands some request values to PostgreSQL, or to LangGraph's store, unchecked,
and answers a 500 (with the database's error text) when they fail there: a string holding
NUL or an unpaired surrogate (JSONB stores neither), a ``limit`` beyond 64 bits, an empty
store namespace label, a run status it does not know, a ``config`` of ``null``. Each is
the client's mistake, so :func:`refusal` names it in one line for a 422, and
:func:`normalised` turns the ``null`` Aegra would trip on into the default it means. Found
by the property-based run in ``tests/test_serve_safety.py`` (``schemathesis`` against the
server's own OpenAPI).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl

#: The largest ``limit`` / ``offset`` a request may give (PostgreSQL's ``integer``).
MAX_COUNT = 2**31 - 1
#: Fields and query parameters that count rows.
COUNTS = ("limit", "offset")
#: Fields and query parameters that hold a store namespace (a list of labels).
NAMESPACES = ("namespace", "namespace_prefix", "prefix", "suffix")
#: The statuses a run may be given (``PATCH /threads/T/runs/R``).
RUN_STATUSES = ("pending", "running", "error", "success", "timeout", "interrupted")
#: A run's own route (where its status may be changed).
RUN_ROUTE = re.compile(r"^/threads/[^/]+/runs/[^/]+/?$")
#: A store route.
STORE_ROUTE = re.compile(r"^/store/")
#: Run and assistant fields that Aegra reads as objects, so ``null`` means "none given".
OBJECTS = ("config", "context", "metadata")


def refusal(method: str, path: str, query: bytes, body: Any) -> str | None:
    """Why a request carries a value the server cannot store or act on, if it does.

    Args:
        method: The HTTP method.
        path: The request's path (decoded).
        query: Its raw query string.
        body: Its parsed JSON body (``None`` for none).

    Returns:
        One line naming the value and what is allowed, or ``None``.
    """
    if "\x00" in path:
        return "the path holds a NUL character"
    try:
        params = parse_qsl(query.decode("utf-8"), keep_blank_values=True, errors="strict")
    except UnicodeDecodeError:
        return "the query string is not UTF-8"
    for where, text in [("path", path), *((f"query {k}", v) for k, v in params)]:
        line = _bad_text(text, where)
        if line:
            return line
    for name, value in params:
        if name in COUNTS:
            line = _bad_count(name, value)
            if line:
                return line
    store = bool(STORE_ROUTE.match(path))
    namespace = [v for k, v in params if k == "namespace"]
    if store and namespace:
        line = _bad_labels("namespace", [p for v in namespace for p in v.split(".")])
        if line:
            return line
    if body is None:
        return None
    for where, text in _strings(body, "body"):
        line = _bad_text(text, where)
        if line:
            return line
    if not isinstance(body, dict):
        return None
    for name in COUNTS:
        if body.get(name) is not None:
            line = _bad_count(name, body[name])
            if line:
                return line
    if store:
        for name in NAMESPACES:
            labels = body.get(name)
            if isinstance(labels, list) and (bad := _bad_labels(name, labels)):
                return bad
    status = body.get("status", RUN_STATUSES[0])
    if method == "PATCH" and RUN_ROUTE.match(path) and status not in RUN_STATUSES:
        return f"run status {clipped(repr(status))} is not one of {', '.join(RUN_STATUSES)}"
    return None


def store_query(path: str, query: bytes) -> bytes:
    """A store route's query with a dotted ``namespace`` given as one label per parameter.

    ``langgraph-sdk`` sends ``store.get_item``'s namespace as one dotted string; Aegra
    0.6.0 reads the parameter as a list and so looks up one label holding dots, which the
    store refuses with a 500. Split, it reads the namespace the client meant.

    Args:
        path: The request's path.
        query: Its raw query string (checked by :func:`refusal` first).

    Returns:
        The query to hand on (the same bytes elsewhere, or with no dotted namespace).
    """
    if not STORE_ROUTE.match(path) or b"namespace=" not in query:
        return query
    from urllib.parse import urlencode

    params = parse_qsl(query.decode("utf-8"), keep_blank_values=True)
    split = [
        (name, part)
        for name, value in params
        for part in (value.split(".") if name == "namespace" else [value])
    ]
    return urlencode(split).encode() if split != params else query


def normalised(body: Any) -> Any:
    """A run's or assistant's body with ``null`` objects left out (Aegra means ``{}``).

    Args:
        body: The parsed JSON body.

    Returns:
        The body to hand on (the same object when nothing changed).
    """
    if isinstance(body, dict) and any(k in body and body[k] is None for k in OBJECTS):
        return {k: v for k, v in body.items() if not (k in OBJECTS and v is None)}
    return body


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string of a JSON value, keys too, with where it lies."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield f"{where} key", str(key)
            yield from _strings(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}[{index}]")


def _bad_text(text: str, where: str) -> str | None:
    if "\x00" in text:
        return f"{clipped(where)} holds a NUL character, which the database cannot store"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return f"{clipped(where)} holds an unpaired surrogate, which is not text"
    return None


def _bad_count(name: str, value: Any) -> str | None:
    try:
        number = int(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None  # not a number: Aegra's own validation answers
    if number is None or not 0 <= number <= MAX_COUNT:
        return f"{name} {clipped(repr(value))} must be a whole number from 0 to {MAX_COUNT}"
    return None


def _bad_labels(name: str, labels: list[Any]) -> str | None:
    for label in labels:
        if not isinstance(label, str) or not label or "." in label:
            return (
                f"store {name} label {clipped(repr(label))} must be a non-empty string without '.'"
            )
    return None


def clipped(text: str) -> str:
    """``text`` cut to 60 characters for a one-line message (``...`` where cut)."""
    return text if len(text) <= 60 else text[:57] + "..."


def parse(body: bytes) -> tuple[bool, Any]:
    """A request body as JSON: ``(True, value)``, or ``(False, None)`` when it is not JSON.

    Args:
        body: The raw body.

    Returns:
        Whether it parsed, and the value (``None`` for an empty body).
    """
    if not body.strip():
        return True, None
    try:
        return True, json.loads(body)
    except ValueError:
        return False, None
