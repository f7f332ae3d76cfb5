"""Generated blocks of the README and ``docs/``: the one way a tool writes into them.

A block is the text between a marker pair, on lines of their own::

    <!-- generated:KEY -->
    ...written by a tool, never by hand...
    <!-- /generated:KEY -->

``benchmarks/report.py`` (``make bench``) writes the figure blocks and the suite block from
its JSON record (``docs/benchmarks.json``); ``benchmarks/readme.py`` (``make readme``) writes
the ones made from the code (the CLI synopsis, the roster table, the notebooks, the table of
contents). ``tests/test_readme_claims.py`` renders them again and compares.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_BLOCK = re.compile(
    r"^<!-- generated:(?P<key>[\w.-]+) -->\n(?P<body>.*?)^<!-- /generated:(?P=key) -->$",
    re.DOTALL | re.MULTILINE,
)
_OPENING = re.compile(r"^<!-- generated:([\w.-]+) -->$", re.MULTILINE)


def find(text: str) -> list[tuple[str, str]]:
    """Every block of ``text``, in order.

    Args:
        text: A Markdown file's text.

    Returns:
        ``(key, body)`` of each block; the body without its markers, ending in a newline
        (or empty).

    Raises:
        ValueError: If an opening marker has no closing one.
    """
    found = [(m["key"], m["body"]) for m in _BLOCK.finditer(text)]
    opened = _OPENING.findall(text)
    if len(opened) != len(found):
        unclosed = sorted(set(opened) - {key for key, _ in found}) or opened
        raise ValueError(f"generated block {unclosed[0]!r} has no closing marker")
    return found


def fill(text: str, rendered: Mapping[str, str]) -> str:
    """``text`` with the body of each block named in ``rendered`` replaced.

    Blocks ``rendered`` does not name are left as they are.

    Args:
        text: A Markdown file's text.
        rendered: New bodies by key (a trailing newline is added where missing).

    Returns:
        The new text.
    """

    def body(match: re.Match[str]) -> str:
        key = match["key"]
        if key not in rendered:
            return match[0]
        new = rendered[key]
        if new and not new.endswith("\n"):
            new += "\n"
        return f"<!-- generated:{key} -->\n{new}<!-- /generated:{key} -->"

    return _BLOCK.sub(body, text)


def strip(text: str) -> str:
    """``text`` without its generated blocks (what was written by hand).

    Args:
        text: A Markdown file's text.

    Returns:
        The text, each block (markers included) replaced by an empty line.
    """
    return _BLOCK.sub("", text)
