"""Which failed model calls are worth trying again, for any LangChain chat model.

A provider's SDK puts a failure's HTTP status and its retry hint in different places
(``status_code`` on openai's and anthropic's errors, ``response.status_code`` on httpx's,
``code`` on some, a ``retry_after`` attribute on others; the hint in ``Retry-After``,
``retry-after-ms`` or OpenAI's ``x-ratelimit-reset-*`` headers), and a transport failure
may come as the SDK's own error or as a bare ``ConnectionError``, ``TimeoutError`` or
``httpx`` error. :func:`transient` reads them all into one :class:`Fault`: a rate limit,
a server fault, a timeout or a dropped connection, with the wait the endpoint asked for.
Anything else (a refused key, a bad request, a model that does not exist, a bug) is no
fault to retry: the call's own handling decides. A refused connection is not retried
either: nothing listens there, and waiting does not start it.
"""

from __future__ import annotations

import email.utils
import math
import re
import socket
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

FaultKind = Literal["rate_limit", "server", "timeout", "connection"]
#: How an endpoint could not be reached (:func:`unreached`).
Unreached = Literal["dns", "refused", "tls", "timeout", "connection"]

#: HTTP statuses a provider answers when trying again later may work: a request
#: timeout, a lock conflict (OpenAI's own client retries both), any server error, and
#: Anthropic's "overloaded" (529).
SERVER_STATUSES = frozenset({408, 409})

#: The longest wait a hint may ask for that is still believed (a day): beyond it the
#: header is taken as nonsense and the usual backoff applies.
MAX_HINT_S = 86_400.0

_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)(ms|h|m|s))")


@dataclass(frozen=True)
class Fault:
    """A failed call that may succeed if tried again.

    Attributes:
        kind: ``rate_limit`` (HTTP 429), ``server`` (5xx, 408, 409), ``timeout`` or
            ``connection`` (reset or dropped, not refused).
        status: The HTTP status, where there was one.
        retry_after_s: How long the endpoint asked to wait, where it said.
    """

    kind: FaultKind
    status: int | None = None
    retry_after_s: float | None = None


class HeldPastPatience(Exception):
    """An endpoint told its callers to wait longer than a call's patience has left.

    Raised before the call is made (what another call to the endpoint was told holds
    this one too), so a call does not sleep out its whole patience only to fail: it
    fails as that rate limit would have, with its status.

    Attributes:
        status_code: 429, the status of the rate limit that holds the endpoint.
    """

    status_code = 429

    def __init__(self, hold_s: float, left_s: float) -> None:
        """The hold the endpoint asked for, and the patience the call has left."""
        super().__init__(
            f"rate limited: every call must wait {hold_s:.0f} s, more than the "
            f"{left_s:.0f} s of --patience left"
        )


def transient(exc: BaseException) -> Fault | None:
    """The fault ``exc`` is, if trying the call again may succeed; else ``None``.

    Args:
        exc: What a chat model's call raised.

    Returns:
        The fault, or ``None`` for anything no retry mends.
    """
    status = status_of(exc)
    if status is not None:
        if status == 429:
            return Fault("rate_limit", status, retry_after_of(exc))
        if status >= 500 or status in SERVER_STATUSES:
            return Fault("server", status, retry_after_of(exc))
        return None
    if _refused(exc):
        return None
    if _is_timeout(exc):
        return Fault("timeout")
    if _is_connection(exc):
        return Fault("connection")
    return None


def unreached(exc: BaseException) -> Unreached | None:
    """How a call failed to reach its endpoint, whichever SDK or transport raised it.

    Read down the exception chain, so a name that does not resolve is a DNS failure even
    where a client reports it as a timeout: ``dns`` (the host name does not resolve),
    ``refused`` (nothing listens at that port), ``tls`` (the TLS handshake or the
    certificate failed), ``timeout`` (no answer in time), ``connection`` (dropped or
    reset).

    Args:
        exc: What a call raised.

    Returns:
        The kind, or ``None`` where the endpoint was reached (an HTTP status) or the
        failure is no transport failure.
    """
    if status_of(exc) is not None:
        return None
    chain = _chain(exc)
    if any(isinstance(e, socket.gaierror) for e in chain):
        return "dns"
    if _refused(exc):
        return "refused"
    if any(isinstance(e, ssl.SSLError | ssl.CertificateError) for e in chain):
        return "tls"
    if _is_timeout(exc):
        return "timeout"
    if _is_connection(exc):
        return "connection"
    return None


def unreached_words(kind: Unreached, endpoint: str, exc: BaseException) -> str:
    """One line naming how ``endpoint`` could not be reached (what :func:`unreached` found).

    Args:
        kind: The kind.
        endpoint: The base URL.
        exc: The failure (its innermost message is quoted).

    Returns:
        ``URL is unreachable: its host H does not resolve (DNS: ...)``, ``URL is
        unreachable: it refused the connection (nothing listens there: ...)``, ``URL is
        unreachable: TLS failed (...)``, ``URL timed out: ...`` or ``URL is unreachable:
        ...`` (a dropped or reset connection).
    """
    from urllib.parse import urlparse

    cause = exc
    while cause.__cause__ is not None and str(cause.__cause__):
        cause = cause.__cause__
    text = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(cause)
    said = " ".join(str(text).split()) or type(cause).__name__
    if kind == "dns":
        host = urlparse(endpoint).hostname or endpoint
        return f"{endpoint} is unreachable: its host {host} does not resolve (DNS: {said})"
    if kind == "refused":
        return (
            f"{endpoint} is unreachable: it refused the connection (nothing listens there: {said})"
        )
    if kind == "tls":
        return f"{endpoint} is unreachable: TLS failed ({said}; is it https?)"
    if kind == "timeout":
        return f"{endpoint} timed out: {said}"
    return f"{endpoint} is unreachable: {said}"


def status_of(exc: BaseException) -> int | None:
    """The HTTP status a failure carries, wherever its SDK put it.

    Args:
        exc: What a call raised.

    Returns:
        The status, or ``None`` where there is none.
    """
    for holder in (exc, getattr(exc, "response", None)):
        if holder is None:
            continue
        for name in ("status_code", "status", "http_status", "code"):
            value = getattr(holder, name, None)
            if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
                return value
    return None


def retry_after_of(exc: BaseException, now: float | None = None) -> float | None:
    """The seconds the endpoint asked to wait, from the failure's headers or attributes.

    Read in order: ``retry-after-ms``, ``Retry-After`` (seconds or an HTTP date), then
    OpenAI's ``x-ratelimit-reset-requests`` and ``x-ratelimit-reset-tokens`` (``1s``,
    ``6m0s``, ``20ms``; the longer of the two), then a ``retry_after`` attribute.

    Args:
        exc: What a call raised.
        now: The Unix time an HTTP date is read against (``None``: now).

    Returns:
        The wait in seconds (at least 0, at most :data:`MAX_HINT_S`), or ``None``.
    """
    headers = _headers_of(exc)
    found: float | None = None
    if headers is not None:
        found = _seconds(headers.get("retry-after-ms"), 1000.0)
        if found is None:
            found = _retry_after(headers.get("retry-after"), now)
        if found is None:
            resets = [
                _duration(headers.get(name))
                for name in ("x-ratelimit-reset-requests", "x-ratelimit-reset-tokens")
            ]
            known = [r for r in resets if r is not None]
            found = max(known) if known else None
    if found is None:
        found = _seconds(getattr(exc, "retry_after", None), 1.0)
    if found is None or not 0 <= found <= MAX_HINT_S:
        return None
    return found


def _headers_of(exc: BaseException) -> Mapping[str, Any] | None:
    for holder in (exc, getattr(exc, "response", None)):
        headers = getattr(holder, "headers", None)
        if headers is not None and hasattr(headers, "get"):
            if isinstance(headers, Mapping) and not hasattr(headers, "get_list"):
                return {str(k).lower(): v for k, v in headers.items()}
            return headers  # type: ignore[no-any-return]  # httpx's, case-insensitive
    return None


def _seconds(value: Any, divisor: float) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number / divisor if math.isfinite(number) else None


def _retry_after(value: Any, now: float | None) -> float | None:
    seconds = _seconds(value, 1.0)
    if seconds is not None or not isinstance(value, str):
        return seconds
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return max(0.0, email.utils.mktime_tz(parsed) - (time.time() if now is None else now))


def _duration(value: Any) -> float | None:
    """OpenAI's reset durations: ``1s``, ``6m0s``, ``1h2m3.5s``, ``20ms``."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    plain = _seconds(text, 1.0)
    if plain is not None:
        return plain
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(n) * scale[u] for n, u in parts)


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and cause not in seen:
        seen.append(cause)
        cause = cause.__cause__ or cause.__context__
    return seen


def _refused(exc: BaseException) -> bool:
    return any(isinstance(e, ConnectionRefusedError) for e in _chain(exc))


def _is_timeout(exc: BaseException) -> bool:
    return isinstance(exc, TimeoutError) or _named(exc, ("TimeoutException", "APITimeoutError"))


def _is_connection(exc: BaseException) -> bool:
    return isinstance(exc, ConnectionError) or _named(
        exc, ("APIConnectionError", "TransportError", "NetworkError", "RemoteProtocolError")
    )


def _named(exc: BaseException, names: tuple[str, ...]) -> bool:
    """Whether ``exc``'s class, or a base of it, has one of ``names`` (any SDK's)."""
    return any(cls.__name__ in names for cls in type(exc).__mro__)
