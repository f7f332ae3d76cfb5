"""A small OpenAI-compatible HTTP server for integration tests and benchmarks.

The server speaks just enough of the OpenAI REST API for ``langchain_openai``
and the ``openai`` SDK to talk to it:

* ``POST /v1/chat/completions`` (plain and ``"stream": true`` SSE responses,
  plain content or a single function tool call),
* ``GET /v1/models`` (one model, ``"stub"``),
* ``GET /health``.

Replies are produced by a *responder* callable that receives the parsed
request body. Faults (HTTP 5xx, timeouts, malformed bodies, invalid tool-call
arguments, dropped connections) can be injected for the next N chat requests.

Example:
    >>> with StubOpenAIServer(lambda body: {"answer": "42"}) as server:
    ...     llm = ChatOpenAI(base_url=server.url, api_key="x", model="stub")
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import TCPServer
from types import TracebackType
from typing import Any

__all__ = [
    "FAULTS",
    "Responder",
    "StubOpenAIServer",
    "StubReply",
    "default_responder",
    "example_from_schema",
]

Responder = Callable[[dict[str, Any]], Any]
"""Callable receiving the parsed request body.

It returns a ``dict`` (tool-call arguments), a ``str`` (plain assistant
content) or a :class:`StubReply`.
"""

FAULTS: frozenset[str] = frozenset(
    {"5xx", "503", "429", "timeout", "malformed_json", "bad_args", "bad_schema", "drop"}
)
"""Fault names accepted by :meth:`StubOpenAIServer.inject`."""

BAD_ARGS_TEXT = '{"answer": '
"""Tool-call arguments sent by the ``bad_args`` fault (invalid JSON)."""

BAD_SCHEMA_TEXT = "{}"
"""Tool-call arguments sent by the ``bad_schema`` fault (valid JSON, no fields)."""

MALFORMED_BODY = b'{"id": "chatcmpl-broken", "choices": [ this is not json'
"""Body sent with HTTP 200 by the ``malformed_json`` fault."""

MODEL_ID = "stub"

#: The faults a ``fault_rate`` draws from, and the ``Retry-After`` of its 429s.
RANDOM_FAULTS = ("429", "5xx", "503")
RANDOM_RETRY_AFTER_S = 0.1


@dataclass
class StubReply:
    """A fully specified reply from a responder.

    Attributes:
        content: Assistant text content, or ``None`` for no content.
        tool_args: Tool-call arguments. A ``dict`` is JSON-encoded; a ``str``
            is sent verbatim (so it may be invalid JSON). ``None`` means no
            tool call.
        tool_name: Name of the called function. Defaults to the function named
            by the request's ``tool_choice``, else the first tool in the
            request, else ``"tool"``.
    """

    content: str | None = None
    tool_args: dict[str, Any] | str | None = None
    tool_name: str | None = None


class _HTTPError(Exception):
    """Internal: abort request handling with an HTTP error response."""

    def __init__(self, status: int, message: str, err_type: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.err_type = err_type


# --------------------------------------------------------------------------
# Schema-driven default replies
# --------------------------------------------------------------------------


def _resolve_ref(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    """Resolve a local JSON pointer such as ``#/$defs/Name``.

    Args:
        ref: The ``$ref`` value.
        root: The document the pointer is relative to.

    Returns:
        The referenced sub-schema, or an empty schema if it cannot be found.
    """
    if not ref.startswith("#/"):
        return {}
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return {}
        node = node[part]
    return node if isinstance(node, dict) else {}


def example_from_schema(
    schema: dict[str, Any], root: dict[str, Any] | None = None, _depth: int = 0
) -> Any:
    """Build a simple value that matches a JSON schema.

    Only required object properties are filled. Defaults: strings ``"stub"``,
    numbers ``0.5``, integers ``1``, booleans ``True``, arrays ``[]``, enums
    their first value, ``const`` its value, ``anyOf``/``oneOf`` the first
    non-null branch; local ``$ref`` pointers are followed.

    Args:
        schema: The JSON schema (for example a tool's ``parameters``).
        root: The document used to resolve ``$ref``; defaults to ``schema``.
        _depth: Recursion guard, internal.

    Returns:
        A JSON-compatible value.
    """
    root = schema if root is None else root
    if _depth > 32:
        return None
    if "$ref" in schema:
        return example_from_schema(_resolve_ref(str(schema["$ref"]), root), root, _depth + 1)
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            non_null = [b for b in branches if isinstance(b, dict) and b.get("type") != "null"]
            chosen = non_null[0] if non_null else branches[0]
            return example_from_schema(chosen, root, _depth + 1)
    typ = schema.get("type")
    if isinstance(typ, list):
        non_null_types = [t for t in typ if t != "null"]
        typ = non_null_types[0] if non_null_types else "null"
    if typ is None and "properties" in schema:
        typ = "object"
    if typ == "string":
        return "stub"
    if typ == "number":
        return 0.5
    if typ == "integer":
        return 1
    if typ == "boolean":
        return True
    if typ == "array":
        return []
    if typ == "null":
        return None
    if typ == "object":
        props = schema.get("properties") or {}
        required = schema.get("required") or []
        return {
            name: example_from_schema(props.get(name, {}), root, _depth + 1) for name in required
        }
    return "stub"


def _tool_functions(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the ``function`` objects of the request's tools.

    Args:
        body: The parsed request body.

    Returns:
        The function definitions (name, parameters, ...), possibly empty.
    """
    out: list[dict[str, Any]] = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
            out.append(tool["function"])
    return out


def _chosen_tool_name(body: dict[str, Any]) -> str | None:
    """Return the tool the request asks for, else the first tool.

    Args:
        body: The parsed request body.

    Returns:
        A function name, or ``None`` if the request has no tools.
    """
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        fn = choice.get("function")
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            return str(fn["name"])
    functions = _tool_functions(body)
    if functions and isinstance(functions[0].get("name"), str):
        return str(functions[0]["name"])
    return None


def schema_of(body: dict[str, Any]) -> str | None:
    """The structured output a request asks for: its tool's name, or its json_schema's.

    Args:
        body: The parsed request body.

    Returns:
        The schema's name, or ``None`` for a plain text request.
    """
    tool = _chosen_tool_name(body)
    if tool is not None:
        return tool
    fmt = body.get("response_format") or {}
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        return str(fmt.get("json_schema", {}).get("name"))
    return None


#: Seconds a call held by :class:`InGroups` waits for its group to fill before failing.
GROUP_WAIT_S = 60.0


class InGroups:
    """A responder that answers calls only in groups of ``size`` in flight together.

    Overlap is shown by an event, never by how long a slow reply happened to take: a
    group's calls are answered once ``size`` of them have arrived (the last ``total %
    size``, fewer, at once). A client that never has ``size`` calls in flight at once
    never fills a group, and its calls fail after :data:`GROUP_WAIT_S` (a 500), so the
    server's ``max_in_flight`` is ``size`` exactly where the client lets that many out.

    Args:
        size: The calls in flight together before any of them is answered.
        total: The calls expected in all.
        responder: What answers each call (default :func:`default_responder`).
    """

    def __init__(self, size: int, total: int, responder: Responder | None = None) -> None:
        self.barrier = threading.Barrier(size, timeout=GROUP_WAIT_S)
        self.grouped = total - total % size
        self.responder = responder or default_responder
        self.arrived = 0
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        """Wait for the call's group (if it is in one), then answer it."""
        with self.lock:
            self.arrived += 1
            grouped = self.arrived <= self.grouped
        if grouped:
            self.barrier.wait()
        return self.responder(body)


def default_responder(body: dict[str, Any]) -> Any:
    """Answer from the request alone.

    With tools: arguments built from the chosen tool's parameter schema (see
    :func:`example_from_schema`). With a ``json_schema`` response format: a
    dict built from that schema (sent as JSON content). Otherwise the content
    ``"stub reply"``.

    Args:
        body: The parsed request body.

    Returns:
        A ``dict`` of tool arguments / JSON content, or a ``str``.
    """
    functions = _tool_functions(body)
    if functions:
        name = _chosen_tool_name(body)
        fn = next((f for f in functions if f.get("name") == name), functions[0])
        params = fn.get("parameters")
        return example_from_schema(params) if isinstance(params, dict) else {}
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        js = fmt.get("json_schema")
        if isinstance(js, dict) and isinstance(js.get("schema"), dict):
            return example_from_schema(js["schema"])
    return "stub reply"


# --------------------------------------------------------------------------
# Token counting and response building
# --------------------------------------------------------------------------


def _content_chars(content: Any) -> int:
    """Count the characters of a message ``content`` value.

    Args:
        content: A string, a list of content parts, or ``None``.

    Returns:
        Number of characters (text parts counted by their text; other parts
        by their JSON encoding).
    """
    if content is None:
        return 0
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        total = 0
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                total += len(part["text"])
            elif isinstance(part, str):
                total += len(part)
            else:
                total += len(json.dumps(part))
        return total
    return len(json.dumps(content))


def count_prompt_tokens(body: dict[str, Any]) -> int:
    """Deterministic prompt token count.

    ``ceil(chars / 4)`` where chars is the total length of every message's
    content plus, when tools are given, ``len(json.dumps(tools))``.

    Args:
        body: The parsed request body.

    Returns:
        The token count, at least 1.
    """
    chars = 0
    for msg in body.get("messages") or []:
        if isinstance(msg, dict):
            chars += _content_chars(msg.get("content"))
    if body.get("tools"):
        chars += len(json.dumps(body["tools"]))
    return max(1, math.ceil(chars / 4))


def count_completion_tokens(text: str) -> int:
    """Deterministic completion token count: ``ceil(len(text) / 4)``, min 1.

    Args:
        text: Output content plus tool-call arguments JSON.

    Returns:
        The token count, at least 1.
    """
    return max(1, math.ceil(len(text) / 4))


def _split(text: str, pieces: int = 3) -> list[str]:
    """Split text into up to ``pieces`` non-empty consecutive parts.

    Args:
        text: Text to split.
        pieces: Maximum number of parts.

    Returns:
        The parts; ``[]`` for empty text.
    """
    if not text:
        return []
    size = max(1, math.ceil(len(text) / pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]


@dataclass
class _Completion:
    """Internal: a normalised completion ready to be serialised."""

    content: str | None
    tool_name: str | None
    tool_args: str | None
    tool_call_id: str | None

    @property
    def finish_reason(self) -> str:
        """Return ``"tool_calls"`` with a tool call, else ``"stop"``."""
        return "tool_calls" if self.tool_args is not None else "stop"

    def output_text(self) -> str:
        """Return the text used for completion token counting."""
        return (self.content or "") + (self.tool_args or "")


def _normalise(reply: Any, body: dict[str, Any]) -> _Completion:
    """Turn a responder's return value into a :class:`_Completion`.

    A ``dict`` becomes tool-call arguments when the request has tools,
    otherwise JSON content (useful for ``response_format`` requests).

    Args:
        reply: The responder's return value.
        body: The parsed request body.

    Returns:
        The normalised completion.

    Raises:
        TypeError: If the responder returned an unsupported type.
    """
    has_tools = bool(_tool_functions(body))
    if isinstance(reply, StubReply):
        content, args, name = reply.content, reply.tool_args, reply.tool_name
    elif isinstance(reply, dict):
        if not has_tools:
            return _Completion(json.dumps(reply), None, None, None)
        content, args, name = None, reply, None
    elif isinstance(reply, str):
        content, args, name = reply, None, None
    else:
        msg = f"responder must return dict, str or StubReply, got {type(reply).__name__}"
        raise TypeError(msg)
    if args is None:
        return _Completion(content, None, None, None)
    args_text = args if isinstance(args, str) else json.dumps(args)
    tool_name = name or _chosen_tool_name(body) or "tool"
    call_id = "call_" + uuid.uuid4().hex[:24]
    return _Completion(content, tool_name, args_text, call_id)


# --------------------------------------------------------------------------
# HTTP plumbing
# --------------------------------------------------------------------------


class _QuietServer(ThreadingHTTPServer):
    """ThreadingHTTPServer that never prints tracebacks or does DNS lookups."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 128
    stub: StubOpenAIServer

    def server_bind(self) -> None:
        """Bind without ``socket.getfqdn`` (slow without a resolver)."""
        TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Count the connection as open from its accept to its handler's end."""
        self.stub._opened(1)
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """Handle the connection; then it no longer counts as open."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.stub._opened(-1)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Swallow handler errors (client disconnects and the like).

        Args:
            request: The request socket.
            client_address: The peer address.
        """


class _Handler(BaseHTTPRequestHandler):
    """Request handler; all state lives on the owning :class:`StubOpenAIServer`."""

    protocol_version = "HTTP/1.1"
    server_version = "StubOpenAI/1.0"
    server: _QuietServer

    # -- plumbing ---------------------------------------------------------

    def setup(self) -> None:
        """Disable Nagle and register the connection so ``stop()`` can close it.

        Without ``TCP_NODELAY`` the separate header/body writes interact with
        delayed ACKs and every keep-alive request costs ~40 ms.
        """
        super().setup()
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.stub._track(self.connection, add=True)

    def finish(self) -> None:
        """Unregister the connection, ignoring socket errors."""
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.stub._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        """Do not log requests to stderr.

        Args:
            format: Format string (ignored).
            *args: Format arguments (ignored).
        """

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        """Send a JSON response with Content-Length.

        Args:
            status: HTTP status code.
            payload: JSON-serialisable payload.
            headers: More response headers.
        """
        data = json.dumps(payload).encode()
        self._send_bytes(status, data, "application/json", headers)

    def _send_bytes(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        """Send a complete response body.

        Args:
            status: HTTP status code.
            data: Body bytes.
            content_type: Value of the Content-Type header.
            headers: More response headers.
        """
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_error(
        self, status: int, message: str, err_type: str, headers: dict[str, str] | None = None
    ) -> None:
        """Send an OpenAI-style JSON error body.

        Args:
            status: HTTP status code.
            message: Human readable message.
            err_type: OpenAI error ``type`` value.
            headers: More response headers (``Retry-After``).
        """
        payload = {"error": {"message": message, "type": err_type, "param": None, "code": None}}
        self._send_json(status, payload, headers)

    def _path(self) -> str:
        """Return the request path without query string or trailing slash."""
        return self.path.split("?", 1)[0].rstrip("/") or "/"

    def _read_body(self) -> bytes:
        """Read the request body as announced by Content-Length.

        Returns:
            The body bytes.

        Raises:
            _HTTPError: If Content-Length is missing or invalid.
        """
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            raise _HTTPError(411, "Content-Length required", "invalid_request_error")
        try:
            length = int(length_text)
        except ValueError:
            raise _HTTPError(400, "invalid Content-Length", "invalid_request_error") from None
        return self.rfile.read(length) if length > 0 else b""

    # -- verbs ------------------------------------------------------------

    def refused_key(self) -> bool:
        """Answer 401 (as OpenAI does) unless the request carries the stub's key, if it has one.

        Returns:
            Whether the request was refused (answered already).
        """
        key = self.server.stub.api_key
        if key is None or self.headers.get("Authorization", "") == f"Bearer {key}":
            return False
        self._send_error(
            401, "Incorrect API key provided: check your key.", "invalid_request_error"
        )
        return True

    def do_GET(self) -> None:
        """Serve ``/health`` and ``/v1/models``."""
        try:
            path = self._path()
            if path != "/health" and self.refused_key():
                return
            if path == "/health":
                self._send_json(200, {"status": "ok"})
            elif path == "/v1/models":
                listed = [
                    {"id": name, "object": "model", "created": 0, "owned_by": "stub"}
                    for name in self.server.stub.models
                ]
                self._send_json(200, {"object": "list", "data": listed})
            elif path == f"/v1/models/{MODEL_ID}":
                self._send_json(
                    200,
                    {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "stub"},
                )
            else:
                self._send_error(404, f"Unknown path: {path}", "not_found_error")
        except OSError:
            self.close_connection = True

    def do_POST(self) -> None:
        """Serve ``/v1/chat/completions``; anything else is 404."""
        self.arrived = time.monotonic()  # latency counts from here, not after parsing
        try:
            try:
                raw = self._read_body()
            except _HTTPError as err:
                self.close_connection = True
                self._send_error(err.status, err.message, err.err_type)
                return
            if self._path() != "/v1/chat/completions":
                self._send_error(404, f"Unknown path: {self._path()}", "not_found_error")
                return
            try:
                body = json.loads(raw or b"null")
            except ValueError as exc:
                self._send_error(400, f"Invalid JSON body: {exc}", "invalid_request_error")
                return
            if not isinstance(body, dict):
                self._send_error(400, "Body must be a JSON object", "invalid_request_error")
                return
            self.server.stub.keys.append(self.headers.get("Authorization", ""))
            if self.refused_key():
                return
            self.server.stub._handle_chat(self, body)
        except OSError:
            # Client went away (e.g. it timed out first); nothing to report.
            self.close_connection = True

    # -- helpers used by the server --------------------------------------

    def drop(self) -> None:
        """Close the connection without sending a response."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def send_sse(self, events: Iterator[str]) -> None:
        """Stream Server-Sent Events, then close the connection.

        Args:
            events: The ``data:`` payloads to send, in order.
        """
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in events:
            self.wfile.write(f"data: {event}\n\n".encode())
            self.wfile.flush()


class StubOpenAIServer:
    """An OpenAI-compatible chat-completions server on a background thread.

    Attributes:
        responder: Callable producing replies from the parsed request body.
        latency_s: Seconds from a chat request's arrival to its answer (the reply is
            built meanwhile, so the server's own work is not added to it).
        requests: Every chat request body received, in arrival order.
        keys: Every chat request's ``Authorization`` header (``""``: none), in order.
        calls: Number of successfully answered chat completions.
        prompt_tokens: Sum of prompt tokens of answered completions.
        completion_tokens: Sum of completion tokens of answered completions.
        max_in_flight: Highest number of chat requests handled at once.
        idle: Set while no chat request is being handled (an event to wait on).
        models: The model ids ``GET /v1/models`` lists (a chat request may name any).
        rate_limit: ``(requests per second, burst)``: a token bucket, as a provider's
            request limit; a chat request finding it empty is answered 429 with the
            ``Retry-After`` (seconds, a decimal) until its next token. ``None``: no limit.
        limited: Chat requests answered 429 (the bucket's and injected ones).
        fault_rate: The share of chat requests (beyond injected faults) that fail at
            random, as a provider's do: a 429 (``Retry-After: 0.1``), a 500 or a 503,
            drawn from a generator seeded with ``fault_seed``.
        api_key: The key-checking mode: every request but ``/health`` without
            ``Authorization: Bearer API_KEY`` is answered 401, as OpenAI answers a
            wrong key. ``None``: any key (or none) is taken.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency_s: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        models: tuple[str, ...] = (MODEL_ID,),
        rate_limit: tuple[float, int] | None = None,
        fault_rate: float = 0.0,
        fault_seed: int = 0,
        api_key: str | None = None,
    ) -> None:
        """Create the server (not yet listening; call :meth:`start`).

        Args:
            responder: Reply factory; defaults to :func:`default_responder`.
            latency_s: Per-request latency in seconds.
            host: Interface to bind.
            port: Port to bind; ``0`` picks a free port.
            models: The model ids ``GET /v1/models`` lists.
            rate_limit: ``(requests per second, burst)``, or ``None`` (see the class).
            fault_rate: The share of requests failing at random (see the class).
            fault_seed: The seed of those draws.
            api_key: The key every request must carry (see the class); ``None``: none.

        Raises:
            ValueError: For a rate that is not positive or a burst below 1.
        """
        if rate_limit is not None and (rate_limit[0] <= 0 or rate_limit[1] < 1):
            raise ValueError(f"rate_limit {rate_limit!r}: a positive rate and a burst >= 1")
        self.rate_limit = rate_limit
        self.api_key = api_key
        self.fault_rate = fault_rate
        self._draws = random.Random(fault_seed)
        self.limited = 0
        self._tokens = float(rate_limit[1]) if rate_limit else 0.0
        self._refilled = time.monotonic()
        self.responder: Responder = responder or default_responder
        self.models = models
        self.latency_s = latency_s
        self.host = host
        self.port = port
        self.requests: list[dict[str, Any]] = []
        self.keys: list[str] = []
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.max_in_flight = 0
        self._in_flight = 0
        self.idle = threading.Event()
        self.idle.set()
        self._lock = threading.Lock()
        self._faults: deque[tuple[str, float]] = deque()
        self._stopping = threading.Event()
        self._conns: set[socket.socket] = set()
        #: Connections accepted and not yet handled to their end (see :meth:`settle`).
        self._open = 0
        self._settled = threading.Condition()
        self._httpd: _QuietServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Chat requests being handled now."""
        with self._lock:
            return self._in_flight

    @property
    def url(self) -> str:
        """Base URL for OpenAI clients, e.g. ``http://127.0.0.1:PORT/v1``.

        Raises:
            RuntimeError: If the server has not been started.
        """
        if self._httpd is None:
            msg = "StubOpenAIServer is not running; call start() first"
            raise RuntimeError(msg)
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> StubOpenAIServer:
        """Bind and start serving on a daemon thread.

        Returns:
            ``self``, for chaining.
        """
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _QuietServer((self.host, self.port), _Handler)
        httpd.stub = self
        self.port = int(httpd.server_address[1])
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"StubOpenAIServer:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close open connections and the listening socket."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> StubOpenAIServer:
        """Start the server.

        Returns:
            ``self``.
        """
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the server.

        Args:
            exc_type: Exception type, if any.
            exc: Exception, if any.
            tb: Traceback, if any.
        """
        self.stop()

    # -- test controls ----------------------------------------------------

    def inject(self, fault: str, count: int = 1, *, seconds: float = 30.0) -> None:
        """Make the next ``count`` chat requests fail.

        Faults: ``"5xx"`` (HTTP 500), ``"503"`` (HTTP 503), ``"timeout"``
        (sleep ``seconds`` then answer normally), ``"malformed_json"`` (HTTP
        200 whose body is not JSON), ``"bad_args"`` (valid response whose tool
        call arguments are the invalid JSON ``'{"answer": '``), ``"429"`` (HTTP
        429 with ``Retry-After: seconds``), ``"bad_schema"``
        (valid response whose tool call arguments are ``{}``, valid JSON that
        misses every required field), ``"drop"`` (close the connection without
        answering). Faults queue in order and are consumed one per request.

        Args:
            fault: Fault name, one of :data:`FAULTS`.
            count: Number of requests affected.
            seconds: Sleep for the ``"timeout"`` fault; ``Retry-After`` of ``"429"``.

        Raises:
            ValueError: For an unknown fault name.
        """
        if fault not in FAULTS:
            msg = f"unknown fault {fault!r}; expected one of {sorted(FAULTS)}"
            raise ValueError(msg)
        with self._lock:
            self._faults.extend([(fault, seconds)] * count)

    def clear_faults(self) -> None:
        """Drop all pending injected faults."""
        with self._lock:
            self._faults.clear()

    def settle(self, limit_s: float = 60.0) -> None:
        """Wait until every connection a client made is handled to its end.

        A client that gave up (a CLI that failed and returned) may have left requests on
        the wire: the server records them when it reads them, which a busy machine may
        delay. Settled: no connection waits to be accepted and none accepted is open.

        Args:
            limit_s: The longest wait (a bound for a hang, not a measure).
        """
        import select

        with self._settled:
            for _ in range(int(limit_s / 0.05)):
                httpd = self._httpd
                waiting = httpd is not None and select.select([httpd.socket], [], [], 0)[0]
                if not waiting and not self._open:
                    return
                self._settled.wait(0.05)

    def _opened(self, change: int) -> None:
        """Count a connection accepted (+1) or handled to its end (-1)."""
        with self._settled:
            self._open += change
            self._settled.notify_all()

    def reset_stats(self) -> None:
        """Zero counters, clear recorded requests and ``max_in_flight``."""
        with self._lock:
            self.requests.clear()
            self.keys.clear()
            self.calls = 0
            self.prompt_tokens = 0
            self.completion_tokens = 0
            self.limited = 0
            self.max_in_flight = self._in_flight

    # -- internals --------------------------------------------------------

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        """Add or remove an open client connection.

        Args:
            conn: The connection socket.
            add: ``True`` to add, ``False`` to remove.
        """
        with self._lock:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)

    def _handle_chat(self, handler: _Handler, body: dict[str, Any]) -> None:
        """Answer one chat completion request (faults, latency, reply).

        Bookkeeping (``calls``, token counters, in-flight count) is updated
        *before* the response bytes are sent, so a client that has received
        its answer always observes up-to-date counters.

        Args:
            handler: The active request handler.
            body: The parsed request body.
        """
        with self._lock:
            self.requests.append(body)
            fault = self._faults.popleft() if self._faults else None
            if fault is None and self.fault_rate and self._draws.random() < self.fault_rate:
                fault = (self._draws.choice(RANDOM_FAULTS), RANDOM_RETRY_AFTER_S)
            if fault is None:
                wait = self._take_token()
                if wait > 0:
                    fault = ("429", wait)
            if fault is not None and fault[0] == "429":
                self.limited += 1
            self._in_flight += 1
            self.idle.clear()
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        send: Callable[[], None] = handler.drop
        answered: tuple[int, int] | None = None
        try:
            send, answered = self._prepare(handler, body, fault)
            if self.latency_s > 0:  # the reply is ready: send it latency_s after arrival
                remaining = getattr(handler, "arrived", time.monotonic()) + self.latency_s
                self._stopping.wait(max(0.0, remaining - time.monotonic()))
        finally:
            with self._lock:
                self._in_flight -= 1
                if not self._in_flight:
                    self.idle.set()
                if answered is not None:
                    self.calls += 1
                    self.prompt_tokens += answered[0]
                    self.completion_tokens += answered[1]
        send()

    def _take_token(self) -> float:
        """Take a request's token from the bucket: 0, or the seconds until there is one.

        Called with the lock held.
        """
        if self.rate_limit is None:
            return 0.0
        rate, burst = self.rate_limit
        now = time.monotonic()
        self._tokens = min(float(burst), self._tokens + (now - self._refilled) * rate)
        self._refilled = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return 0.0
        return (1.0 - self._tokens) / rate

    def _prepare(
        self, handler: _Handler, body: dict[str, Any], fault: tuple[str, float] | None
    ) -> tuple[Callable[[], None], tuple[int, int] | None]:
        """Apply latency and faults and build the response to send.

        Args:
            handler: The active request handler.
            body: The parsed request body.
            fault: The injected fault for this request, if any.

        Returns:
            A callable that sends the response, and ``(prompt_tokens,
            completion_tokens)`` for a successful completion or ``None``.
        """
        kind = fault[0] if fault else None
        if kind == "5xx":
            return lambda: handler._send_error(500, "Injected server error", "server_error"), None
        if kind == "503":
            return (
                lambda: handler._send_error(503, "Injected service unavailable", "server_error"),
                None,
            )
        if kind == "429" and fault is not None:
            headers = {"Retry-After": f"{fault[1]:.3f}"}
            message = "Rate limit reached for requests"
            return lambda: handler._send_error(429, message, "requests", headers), None
        if kind == "drop":
            return handler.drop, None
        if kind == "malformed_json":
            return lambda: handler._send_bytes(200, MALFORMED_BODY, "application/json"), None
        if kind == "timeout" and fault is not None:
            self._stopping.wait(fault[1])
        try:
            reply = self.responder(body)
            if kind in ("bad_args", "bad_schema"):
                name = reply.tool_name if isinstance(reply, StubReply) else None
                text = BAD_ARGS_TEXT if kind == "bad_args" else BAD_SCHEMA_TEXT
                reply = StubReply(tool_args=text, tool_name=name)
            completion = _normalise(reply, body)
        except Exception as exc:  # noqa: BLE001 - reported to the client
            message = f"responder error: {type(exc).__name__}: {exc}"
            return lambda: handler._send_error(500, message, "server_error"), None
        prompt = count_prompt_tokens(body)
        output = count_completion_tokens(completion.output_text())
        if body.get("stream"):
            events = list(self._sse_events(body, completion, prompt, output))
            return lambda: handler.send_sse(iter(events)), (prompt, output)
        payload = self._completion_json(body, completion, prompt, output)
        return lambda: handler._send_json(200, payload), (prompt, output)

    @staticmethod
    def _usage(prompt: int, output: int) -> dict[str, int]:
        """Build a ``usage`` object.

        Args:
            prompt: Prompt tokens.
            output: Completion tokens.

        Returns:
            The usage dict.
        """
        return {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "total_tokens": prompt + output,
        }

    def _completion_json(
        self, body: dict[str, Any], c: _Completion, prompt: int, output: int
    ) -> dict[str, Any]:
        """Build a non-streaming ``chat.completion`` object.

        Args:
            body: The request body.
            c: The completion.
            prompt: Prompt tokens.
            output: Completion tokens.

        Returns:
            The response payload.
        """
        message: dict[str, Any] = {
            "role": "assistant",
            "content": c.content,
            "refusal": None,
        }
        if c.tool_args is not None:
            message["tool_calls"] = [
                {
                    "id": c.tool_call_id,
                    "type": "function",
                    "function": {"name": c.tool_name, "arguments": c.tool_args},
                }
            ]
        return {
            "id": "chatcmpl-" + uuid.uuid4().hex[:24],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model") or MODEL_ID),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": c.finish_reason,
                }
            ],
            "usage": self._usage(prompt, output),
            "system_fingerprint": "fp_stub",
        }

    def _sse_events(
        self, body: dict[str, Any], c: _Completion, prompt: int, output: int
    ) -> Iterator[str]:
        """Yield the SSE ``data`` payloads of a streamed completion.

        Args:
            body: The request body.
            c: The completion.
            prompt: Prompt tokens.
            output: Completion tokens.

        Yields:
            JSON-encoded ``chat.completion.chunk`` objects, then ``[DONE]``.
        """
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        base: dict[str, Any] = {
            "id": "chatcmpl-" + uuid.uuid4().hex[:24],
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": str(body.get("model") or MODEL_ID),
            "system_fingerprint": "fp_stub",
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            payload = dict(base)
            payload["choices"] = [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            ]
            if include_usage:
                payload["usage"] = None
            return json.dumps(payload)

        yield chunk({"role": "assistant", "content": "", "refusal": None})
        for piece in _split(c.content or ""):
            yield chunk({"content": piece})
        if c.tool_args is not None:
            yield chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": c.tool_call_id,
                            "type": "function",
                            "function": {"name": c.tool_name, "arguments": ""},
                        }
                    ]
                }
            )
            for piece in _split(c.tool_args):
                yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        yield chunk({}, c.finish_reason)
        if include_usage:
            payload = dict(base)
            payload["choices"] = []
            payload["usage"] = self._usage(prompt, output)
            yield json.dumps(payload)
        yield "[DONE]"
