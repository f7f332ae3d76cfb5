"""Agents' tools: the built-in ones by name, and what an agent's ``tools`` may hold.

An agent's ``tools`` are LangChain tools (any ``BaseTool``, or a plain function, made
one with ``langchain_core.tools.tool``; tools loaded with ``langchain-mcp-adapters``
too), the names of built-in tools, ``module:attribute`` references to tools (what a
roster file or the command line can give), or an MCP server's tools (a mapping naming
its command or URL: :mod:`debategraph.nodes.mcp_tools`). :data:`BUILTIN_TOOLS` is the one
list of built-in tools. A roster file names an agent of one's own the same way
(:func:`import_ref`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from debategraph.registry import load
from debategraph.strategies.calculator import calculate

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool


@functools.cache  # one tool for every agent: it holds no state
def _calculator() -> BaseTool:
    from langchain_core.tools import StructuredTool

    def calculator(expression: str) -> str:
        """Exact arithmetic: evaluate an expression of numbers, + - * / // % ** and ( ).

        Args:
            expression: The expression, e.g. ``(48 + 24) / 3``.
        """
        return calculate(expression)

    return StructuredTool.from_function(calculator)


#: The built-in tools, by the name a roster file or ``--tools`` gives: each makes its tool.
BUILTIN_TOOLS: Mapping[str, Callable[[], BaseTool]] = {"calculator": _calculator}


def builtin_tool_names() -> str:
    """The built-in tools' names, for errors and help."""
    return ", ".join(sorted(BUILTIN_TOOLS))


def import_ref(ref: str, what: str, kind: str) -> Any:
    """The object a ``module:attribute`` reference names (a roster file's tool or agent).

    Args:
        ref: The reference, e.g. ``myagents:researcher``.
        what: Whose it is, for errors (``agent 'ann'``).
        kind: What it should be, for errors (``tool``, ``agent``).

    Returns:
        The object.

    Raises:
        ValueError: One line if the module cannot be imported or has no such attribute.
    """
    module, colon, attribute = ref.partition(":")
    if not colon or not module.strip() or not attribute.strip():
        raise ValueError(f"{what}: {kind} {ref!r} must be 'module:attribute'")
    try:
        return load(ref)
    except ImportError as exc:
        raise ValueError(f"{what}: {kind} {ref!r}: cannot import {module!r} ({exc})") from None
    except AttributeError:
        raise ValueError(
            f"{what}: {kind} {ref!r}: module {module!r} has no {attribute!r}"
        ) from None


def check_tool_names(names: Iterable[Any], what: str) -> None:
    """Refuse names that are no built-in tool, and MCP server entries with a bad field.

    Args:
        names: The names given (an agents file's entries: names, references or MCP
            server mappings).
        what: Whose tools they are, for errors (``--tools``, ``agent 'ann'``).

    Raises:
        ValueError: One line naming the unknown tool and the built-in ones, or the bad
            field of an MCP server entry.
    """
    from debategraph.nodes.mcp_tools import server_of

    for name in names:
        if isinstance(name, Mapping):
            server_of(name, what)  # checked, not started: that happens when a graph is built
            continue
        if not isinstance(name, str):
            raise ValueError(
                f"{what}: tool {name!r} is not a tool's name: give a built-in tool's name "
                f"({builtin_tool_names()}), 'module:attribute' or an MCP server "
                "{command: ..., args: [...]} or {url: ...}"
            )
        if name not in BUILTIN_TOOLS and ":" not in name:
            raise ValueError(
                f"{what}: unknown tool {name!r}: the built-in tools are {builtin_tool_names()}"
            )


def resolve_tools(tools: Iterable[Any], what: str) -> tuple[BaseTool, ...]:
    """An agent's tools as LangChain tools: names looked up, functions wrapped.

    Args:
        tools: Built-in tool names, ``BaseTool`` s, plain functions (with docstrings), or
            MCP server entries (whose tools are listed now).
        what: Whose tools they are, for errors.

    Returns:
        The tools, in order (each runnable blocking and awaited:
        :func:`~debategraph.nodes.mcp_tools.blocking`).

    Raises:
        ValueError: On an unknown name, a value that is no tool, an MCP server that
            cannot be reached or lacks a tool named, or two tools of one name.
    """
    from langchain_core.tools import BaseTool, tool

    from debategraph.nodes.mcp_tools import blocking, load_tools, server_of

    out: list[BaseTool] = []
    for given in tools:
        item = import_ref(given, what, "tool") if isinstance(given, str) and ":" in given else given
        if isinstance(item, str):
            check_tool_names([item], what)
            out.append(BUILTIN_TOOLS[item]())
        elif isinstance(item, Mapping):
            out.extend(load_tools(server_of(item, what), what))
        elif isinstance(item, BaseTool):
            out.append(blocking(item))
        elif callable(item):
            out.append(tool(item))
        else:
            raise ValueError(
                f"{what}: tool {given!r} is not a tool: give a LangChain tool, a function, "
                f"'module:attribute', an MCP server or a built-in tool's name "
                f"({builtin_tool_names()})"
            )
    names = [t.name for t in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"{what}: two tools are named {twice[0]!r}: give each tool once")
    return tuple(out)
