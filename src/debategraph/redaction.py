"""Secrets in text that is shown or logged: the values of named parameters, masked.

One reading of ``name=value`` parameters, shared by what hides a database password
(:func:`debategraph.checkpoints.savers.redact_url`) and what hides a sign-in token in a
logged URL (:mod:`debategraph.serve.query_tokens`): a URL's query parameters (after ``?``
or ``&``, up to the next ``&``, as libpq and Python read them) and a ``key=value``
connection string's (after whitespace, a value in quotes whole).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from urllib.parse import unquote_plus

#: What a hidden value is shown as.
MASK = "***"
#: A parameter, its name and its value.
_PARAMETER = re.compile(
    r"(?P<head>(?:^|[?&\s])(?P<name>[^=?&\s#]+)\s*=\s*)"
    r"(?P<value>'(?:[^'\\]|\\.)*'|[^&\s#]*)"
)


def parameter_name(name: str) -> str:
    """A parameter's name as a server reads it: percent-decoded, lower case."""
    return unquote_plus(name).strip().lower()


def parameters(text: str) -> Iterator[tuple[str, str]]:
    """The parameters in ``text``, in order.

    Args:
        text: A URL, a connection string, a log message.

    Yields:
        ``(name, value)``: the name as :func:`parameter_name` reads it, the value as
        written (quotes and escapes kept).
    """
    for found in _PARAMETER.finditer(text):
        yield parameter_name(found.group("name")), found.group("value")


def mask_parameters(text: str, secret: Callable[[str], bool]) -> str:
    """``text`` with the value of every parameter whose name is ``secret`` shown as ``***``.

    Args:
        text: A URL, a connection string, a log message.
        secret: Whether a name (as :func:`parameter_name` reads it) holds a secret.

    Returns:
        The text, masked.
    """
    if "=" not in text:
        return text
    return _PARAMETER.sub(
        lambda m: m.group("head") + MASK if secret(parameter_name(m.group("name"))) else m[0],
        text,
    )
