"""Sign-in tokens stay out of URLs: refused in a query string, masked in the server's logs.

A token sent as a query parameter (``?api_key=...``) lands in every access log, proxy log
and browser history on its way. The server never reads one there (a token signs in
only from the ``Authorization`` or ``X-Api-Key`` header), so a request carrying one is
refused with a 400 and one line (:func:`token_in_query`, called by the app's request
check), and the logs that write a request's URL (uvicorn's access log, Aegra's structlog
access log) show such a parameter's value as ``***`` (:func:`install_log_filters`,
called when the server starts).

The parameters are :data:`TOKEN_PARAMETERS`, in any case, ``-`` and ``_`` alike. On the
store's item route ``key`` is the item's key (Agent Protocol's ``GET /store/items?key=``),
so it is not refused there; it is masked in the logs everywhere.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import parse_qsl

from debategraph.redaction import mask_parameters, parameter_name

#: Query parameters a client may put a sign-in token in (lower case, ``-`` as ``_``).
TOKEN_PARAMETERS = frozenset({"api_key", "apikey", "token", "access_token", "key", "x_api_key"})
#: The route whose ``key`` parameter is a store item's key, not a token.
STORE_ITEMS_ROUTE = re.compile(r"^/store/items/?$")
#: The one line a request with a token in its query string gets (with a 400).
REFUSAL = "send your token in the Authorization or X-Api-Key header, never in the URL"
#: The loggers that write a request's URL, query string included.
ACCESS_LOGGERS = ("uvicorn.access", "app.access_logs")


def _token_name(name: str) -> bool:
    """Whether a parameter's name (as :func:`parameter_name` reads it) is one a token goes in."""
    return name.replace("-", "_") in TOKEN_PARAMETERS


def token_in_query(query_string: bytes, path: str = "") -> str | None:
    """Why a request may not be served, if its query string carries a sign-in token.

    Args:
        query_string: The request's raw query string (ASGI's ``scope["query_string"]``).
        path: The request's path (on the store's item route, ``key`` is the item's).

    Returns:
        :data:`REFUSAL` when a parameter of :data:`TOKEN_PARAMETERS` is there (whatever
        its value), else ``None``.
    """
    if not query_string:
        return None
    item_key = STORE_ITEMS_ROUTE.match(path) is not None
    for raw, _ in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
        name = parameter_name(raw)
        if _token_name(name) and not (item_key and name == "key"):
            return REFUSAL
    return None


def mask_tokens(text: str) -> str:
    """``text`` with the value of every token parameter of a URL in it shown as ``***``.

    Args:
        text: A log message or a logged URL.

    Returns:
        The text, masked (the same object when nothing was).
    """
    return mask_parameters(text, _token_name)


def _masked(value: Any) -> Any:
    """A log record's message or argument, every string in it masked (dicts, lists too)."""
    if isinstance(value, str):
        return mask_tokens(value)
    if isinstance(value, dict):
        return {key: _masked(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(_masked(item) for item in value)
    if isinstance(value, list):
        return [_masked(item) for item in value]
    return value


class TokenMask(logging.Filter):
    """A logging filter that masks token parameters in a record's message and arguments.

    structlog's records (Aegra's) carry their event as a dict in ``msg``; uvicorn's access
    log puts the URL in ``args``. Every record passes, masked.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Mask the record in place.

        Args:
            record: The record.

        Returns:
            ``True``: the record is written.
        """
        record.msg = _masked(record.msg)
        if isinstance(record.args, tuple | dict):
            record.args = _masked(record.args)
        return True


def install_log_filters() -> None:
    """Mask token parameters in the access loggers and in every handler of the root logger.

    A filter on a logger sees only what is logged on it; one on the root's handlers (where
    Aegra sends every log) sees what reaches them from any logger. Installing twice adds
    nothing.
    """
    targets: list[logging.Filterer] = [logging.getLogger(name) for name in ACCESS_LOGGERS]
    targets += logging.getLogger().handlers
    for target in targets:
        if not any(isinstance(f, TokenMask) for f in target.filters):
            target.addFilter(TokenMask())
