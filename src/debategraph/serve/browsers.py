"""What a browser may do: only the names and origins the operator allows.

- **Hosts** (:func:`foreign_host`): a request's ``Host`` must be a loopback name, the
  server's ``--host`` or a name given with ``--allowed-host``. A web page whose name was
  rebound to this machine's address (DNS rebinding) sends its own name, so it cannot
  drive a loopback server that nobody signs in to.
- **Origins** (:func:`foreign_origin`): no cross-origin request but from the origins
  the config's ``http.cors`` allows (none by default). Aegra's CORS answers preflights;
  a request a browser sends without one (a form's ``text/plain`` POST) is refused here.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]

#: The environment variable naming the ``Host`` names a server answers to, comma-separated
#: (``debategraph serve`` sets it from ``--host`` and ``--allowed-host``).
ALLOWED_HOSTS_ENV = "DEBATEGRAPH_ALLOWED_HOSTS"
#: The names a server always answers to: this machine's loopback.
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def host_name(host: str) -> str:
    """A ``Host`` header's name: without its port, brackets or a trailing dot, lower case."""
    host = host.strip().lower()
    if host.startswith("["):  # [::1]:8000
        return host[1:].partition("]")[0]
    if host.count(":") == 1:
        host = host.partition(":")[0]
    return host.rstrip(".")


def foreign_host(scope: Scope, allowed: frozenset[str]) -> str | None:
    """The ``Host`` of a request to a name the server does not answer to, if so.

    A web page whose name was rebound to this machine's address (DNS rebinding) reaches
    a loopback server with its own name in ``Host`` (and in ``Origin``, so the origin
    check alone lets it through): answering only the operator's names stops it.

    Args:
        scope: The request.
        allowed: The names (``*``: any), loopback ones always among them.

    Returns:
        The refused ``Host``, or ``None``.
    """
    if "*" in allowed:
        return None
    headers: dict[bytes, bytes] = {k.lower(): v for k, v in scope["headers"]}
    host = headers.get(b"host")
    if host is None:
        return None  # no Host (HTTP/1.0): no browser sends such a request
    text = host.decode("latin-1")
    name = host_name(text)
    return None if name in LOOPBACK_HOSTS or name in allowed else text


def foreign_origin(scope: Scope, allowed: frozenset[str]) -> str | None:
    """The ``Origin`` of a cross-origin request the config does not allow, if so.

    Args:
        scope: The request.
        allowed: The origins ``http.cors.allow_origins`` lists (``*``: any).

    Returns:
        The refused origin, or ``None`` (no ``Origin``, the server's own, or allowed).
    """
    if scope["type"] != "http" or "*" in allowed:
        return None
    headers: dict[bytes, bytes] = {k.lower(): v for k, v in scope["headers"]}
    origin = headers.get(b"origin", b"").decode("latin-1")
    if not origin or origin in allowed:
        return None
    host = headers.get(b"host", b"").decode("latin-1")
    if origin.split("://", 1)[-1] == host:
        return None  # the server's own page
    return origin
