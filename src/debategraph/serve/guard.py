"""What the server refuses before Aegra sees it: values it would fail on with a 500.

Aegra 0.6.0 hands some request values to PostgreSQL, to LangGraph or to its own JSON
encoder unchecked, and answers a 500 (with the exception's text) when they fail there,
some of them only later, on every read of what it stored. Each is the client's mistake,
so it gets a 422 with one line naming the value and what is allowed:

- a body nested deeper than :data:`MAX_DEPTH` levels (:func:`body_refusal`, before the
  body is parsed: parsing a deep one recurses; stored, one deeper than about 250 levels
  cannot be encoded again, so every later listing of it failed);
- a ``metadata`` nested deeper than :data:`METADATA_DEPTH` levels or larger than
  :data:`METADATA_BYTES` as JSON (it is stored, and listed with every thread or
  assistant);
- a string holding NUL or an unpaired surrogate, or a ``NaN`` / ``Infinity`` number
  (JSONB stores none of them);
- a ``limit`` / ``offset`` beyond PostgreSQL's ``integer``, an empty store namespace
  label, a run status it does not know;
- ``config.configurable: null``;
- a ``checkpoint`` object with a key other than :data:`CHECKPOINT_KEYS`, or a value that
  is not a string (LangGraph reads them as strings);
- a history's ``metadata`` filter (Aegra passes it to LangGraph under a name LangGraph
  does not take: every such request failed);
- a store search ``filter`` operator other than :data:`FILTER_OPERATORS`;
- a thread's or an assistant's id, in the path or in the body that creates it (read
  with Aegra's own request model), holding
  anything but printable ASCII (Aegra writes a thread's id into the ``Location`` header
  of a run it starts: a control character there, or a character Latin-1 lacks, cannot be
  sent, and the connection was dropped without an answer);
- on the thread's own routes, what the thread's graph does not have
  (:mod:`~debategraph.serve.graph_values`, which reads the thread).

:func:`normalised` turns a ``null`` ``config`` / ``context`` / ``metadata``, which Aegra
would trip on, into the default it means. Found by hand and by the property-based runs
(``schemathesis`` against the server's own OpenAPI: ``tests/fuzz_server.py``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from itertools import accumulate
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
#: The store's search route (the one that takes a ``filter``).
STORE_SEARCH_ROUTE = re.compile(r"^/store/items/search/?$")
#: A thread's history route.
HISTORY_ROUTE = re.compile(r"^/threads/[^/]+/history/?$")
#: A route naming a thread or an assistant by its id: the kind (group 1), the id (group 2).
ID_ROUTE = re.compile(r"^/(thread|assistant)s/([^/]+)")
#: A character an id may not hold: anything but printable ASCII (no space, no control).
NOT_ID = re.compile(r"[^\x21-\x7e]")
#: Run and assistant fields that Aegra reads as objects, so ``null`` means "none given".
OBJECTS = ("config", "context", "metadata")
#: The deepest a request body may nest (objects and lists, the outermost counting 1).
MAX_DEPTH = 64
#: The deepest a ``metadata`` object may nest (itself counting 1).
METADATA_DEPTH = 32
#: The largest a ``metadata`` object may be, as compact JSON (UTF-8 bytes).
METADATA_BYTES = 16 * 1024
#: The keys of a ``checkpoint`` object (each a string, ``checkpoint_map`` an object of
#: strings): what LangGraph's ``Checkpoint`` holds.
CHECKPOINT_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")
#: The operators a store search ``filter`` may use (LangGraph's Postgres store's).
FILTER_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")

#: Why a history's ``metadata`` filter is refused (Aegra 0.6.0 passes it to LangGraph as
#: ``metadata=``, which ``aget_state_history`` does not take: every one failed).
_NO_HISTORY_FILTER = "a history's metadata filter is not supported by this server: leave it out"


def body_refusal(raw: bytes) -> str | None:
    """Why a raw request body is refused before it is parsed, if it is: too deep.

    Args:
        raw: The body as received.

    Returns:
        One line giving its depth and :data:`MAX_DEPTH`, or ``None``.
    """
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return None  # too few brackets to nest deeper
    depth = nesting(raw)
    if depth > MAX_DEPTH:
        return f"the body is nested {depth} levels deep: at most {MAX_DEPTH}"
    return None


#: A JSON string, escapes included; one left open runs to the end (so a search never
#: fails part-way and starts again: linear in the body's length).
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.DOTALL)
#: Every byte but the brackets (for ``bytes.translate``'s ``delete``).
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def nesting(raw: bytes) -> int:
    """How deep a JSON text nests its objects and lists, read without parsing it.

    The brackets outside strings are counted (an opening one 1 deeper, a closing one 1
    shallower), so a body of any depth is measured in linear time and no recursion.

    Args:
        raw: The JSON text (not necessarily valid).

    Returns:
        The deepest level reached (``0`` for a scalar, ``1`` for ``{}`` or ``[1, 2]``).
    """
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    steps = (1 if byte in b"[{" else -1 for byte in brackets)
    return max(accumulate(steps, initial=0))


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
    named = ID_ROUTE.match(path)
    if named and (line := bad_id(named.group(1), named.group(2))):
        return line
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
    if method == "GET" and HISTORY_ROUTE.match(path) and any(k == "metadata" for k, _ in params):
        return _NO_HISTORY_FILTER
    if body is None:
        return None
    for where, value in _leaves(body, "body"):
        line = _bad_text(value, where) if isinstance(value, str) else _bad_number(value, where)
        if line:
            return line
    return _bad_fields(method, path, body) if isinstance(body, dict) else None


def _bad_fields(method: str, path: str, body: dict[str, Any]) -> str | None:
    """Why a JSON object body's fields are refused, if they are (see :func:`refusal`)."""
    for name in COUNTS:
        if body.get(name) is not None:
            line = _bad_count(name, body[name])
            if line:
                return line
    store = bool(STORE_ROUTE.match(path))
    if store:
        for name in NAMESPACES:
            labels = body.get(name)
            if isinstance(labels, list) and (bad := _bad_labels(name, labels)):
                return bad
    if store and STORE_SEARCH_ROUTE.match(path) and isinstance(body.get("filter"), dict):
        line = _bad_filter(body["filter"])
        if line:
            return line
    status = body.get("status", RUN_STATUSES[0])
    if method == "PATCH" and RUN_ROUTE.match(path) and status not in RUN_STATUSES:
        return f"run status {clipped(repr(status))} is not one of {', '.join(RUN_STATUSES)}"
    metadata = body.get("metadata")
    if metadata is not None and HISTORY_ROUTE.match(path):
        return _NO_HISTORY_FILTER
    if metadata is not None:
        line = _bad_metadata(metadata)
        if line:
            return line
    config = body.get("config")
    if isinstance(config, dict) and "configurable" in config and config["configurable"] is None:
        return "config.configurable is null: give an object, or leave it out"
    checkpoint = body.get("checkpoint")
    return _bad_checkpoint(checkpoint) if isinstance(checkpoint, dict) else None


def _bad_metadata(metadata: Any) -> str | None:
    """Why a ``metadata`` value is too deep or too large to store, if it is."""
    depth = _depth(metadata)
    if depth > METADATA_DEPTH:
        return f"metadata is nested {depth} levels deep: at most {METADATA_DEPTH}"
    size = len(json.dumps(metadata, separators=(",", ":"), ensure_ascii=False).encode())
    if size > METADATA_BYTES:
        return f"metadata is {size:,} bytes as JSON: at most {METADATA_BYTES:,}"
    return None


def _bad_checkpoint(checkpoint: dict[str, Any]) -> str | None:
    """Why a ``checkpoint`` object is refused: a key or a value LangGraph cannot read."""
    allowed = f"a checkpoint holds only {', '.join(CHECKPOINT_KEYS)}"
    for key, value in checkpoint.items():
        if key not in CHECKPOINT_KEYS:
            return f"checkpoint key {clipped(repr(key))} is not one of its keys: {allowed}"
        if key == "checkpoint_map" and value is not None:
            strings = isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
            if not strings:
                got = clipped(json.dumps(value))
                return f"checkpoint.checkpoint_map must map namespaces to checkpoint ids, got {got}"
        elif key != "checkpoint_map" and value is not None and not isinstance(value, str):
            return f"checkpoint.{key} must be a string, got {clipped(json.dumps(value))}"
    return None


def _bad_filter(filters: dict[str, Any]) -> str | None:
    """Why a store search ``filter`` is refused: an operator the store does not have."""
    for key, value in filters.items():
        if not isinstance(value, dict):
            continue  # a value to equal
        for operator in value:
            if operator not in FILTER_OPERATORS:
                return (
                    f"store filter {clipped(repr(key))}: operator {clipped(repr(operator))} "
                    f"is not one of {', '.join(FILTER_OPERATORS)}"
                )
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


def _leaves(body: Any, where: str) -> Iterator[tuple[str, Any]]:
    """Every key and scalar of a JSON value, in order, with where it lies (no recursion)."""
    pending: list[Iterator[tuple[str, Any]]] = [iter([(where, body)])]
    while pending:
        step = next(pending[-1], None)
        if step is None:
            pending.pop()
        elif isinstance(step[1], dict | list):
            pending.append(_children(step[1], step[0]))
        else:
            yield step


def _children(value: dict[Any, Any] | list[Any], where: str) -> Iterator[tuple[str, Any]]:
    """An object's keys and values, or a list's items, with where each lies."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield f"{where}[{index}]", item
        return
    for key, item in value.items():
        yield f"{where} key", str(key)
        yield f"{where}.{key}", item


def _depth(value: Any) -> int:
    """How deep a JSON value nests (``0`` for a scalar), with no recursion."""
    deepest = 0
    pending = [(value, 1)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, level + 1) for child in children)
    return deepest


def bad_id(kind: str, value: str) -> str | None:
    """Why a thread's or an assistant's id is refused, if it is (:data:`NOT_ID`).

    The path's id is checked by :func:`refusal`; the id a body creating a thread or an
    assistant asks for, as Aegra reads it (:func:`~debategraph.serve.owners.created_id`),
    by the server's request check.

    Args:
        kind: ``thread`` or ``assistant``.
        value: The id.

    Returns:
        One line naming the character and what an id may hold, or ``None``.
    """
    odd = NOT_ID.search(value)
    if odd is None:
        return None
    char = odd.group()
    return (
        f"{kind} id {clipped(repr(value))} holds {char!r} (U+{ord(char):04X}): an id is "
        "printable ASCII without spaces (a UUID, say)"
    )


def _bad_number(value: Any, where: str) -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return f"{clipped(where)} is {value!r}, which is not a JSON number: give a finite number"
    return None


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

    A body nested deeper than :data:`MAX_DEPTH` is not parsed (parsing recurses), and so
    reads as not JSON: :func:`body_refusal` refuses it first.

    Args:
        body: The raw body.

    Returns:
        Whether it parsed, and the value (``None`` for an empty body).
    """
    if not body.strip():
        return True, None
    if body_refusal(body) is not None:
        return False, None
    try:
        return True, json.loads(body)
    except ValueError:
        return False, None
