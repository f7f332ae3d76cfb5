"""An MCP server's tools for an agent: the entry an agents file writes, loaded as LangChain tools.

An agent's ``tools`` may name an MCP server beside built-in tools and ``module:attribute``
references: a mapping (:class:`McpServer`) with the server's ``command`` (and ``args``),
run over stdio, or its streamable-HTTP ``url``, and which of its ``tools`` the agent gets
(all of them when it names none)::

    - name: solver_1
      model: gpt-4o-mini@https://api.openai.com/v1
      tools:
        - calculator
        - {command: python, args: [weather.py], tools: [forecast]}
        - {url: "http://127.0.0.1:8000/mcp", tools: [search]}

The tools are listed with ``langchain-mcp-adapters`` when the graph is built (one session,
then closed); each call opens a session of its own, so nothing stays open between turns.
They run in the agent's bounded tool loop like any tool
(:func:`~debategraph.models.loops.tool_steps`), each call and result a transcript record.
A tool that can only be awaited (any tool ``langchain-mcp-adapters`` loads, an agent's
``tools`` given in Python too) gets a blocking way to run (:func:`blocking`), so a graph
run with ``invoke`` calls it as one run with ``ainvoke`` does.

``debategraph serve`` never takes an agent's tools from a client: a client names models
only (:mod:`debategraph.serve.models`), so no request starts a process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

T = TypeVar("T")


class McpServer(BaseModel):
    """An MCP server whose tools an agent uses (an entry of its ``tools``).

    Unknown fields are refused.

    Attributes:
        command: The program that serves MCP over stdio (``python``, ``npx``...).
        args: Its arguments.
        url: The server's streamable-HTTP endpoint instead (``http://HOST/mcp``).
        tools: The tools the agent gets, by name (empty: every tool the server lists).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    command: str | None = Field(default=None, min_length=1)
    args: tuple[str, ...] = ()
    url: str | None = Field(default=None, pattern=r"^https?://\S+$")
    tools: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        if (self.command is None) == (self.url is None):
            raise ValueError("give the server's command (stdio) or its url (streamable HTTP)")
        if self.url is not None and self.args:
            raise ValueError("args are a command's: a url takes none")
        return self

    def label(self) -> str:
        """The server as a message names it: its command line or its URL."""
        return self.url or " ".join((str(self.command), *self.args))

    def connection(self) -> dict[str, Any]:
        """The server as ``langchain-mcp-adapters`` connects to it."""
        if self.url is not None:
            return {"transport": "streamable_http", "url": self.url}
        return {"transport": "stdio", "command": self.command, "args": list(self.args)}


def server_of(value: Mapping[str, Any], what: str) -> McpServer:
    """An agent's MCP server entry, checked.

    Args:
        value: The entry (a mapping, as an agents file gives it).
        what: Whose tools they are, for errors (``agent 'ann'``).

    Returns:
        The server.

    Raises:
        ValueError: One line naming the agent and what is wrong with the entry.
    """
    try:
        return McpServer.model_validate(dict(value))
    except ValidationError as exc:
        from debategraph.datafiles import first_problem

        if any(e["type"] == "extra_forbidden" for e in exc.errors()):
            raise ValueError(f"{what}: MCP server entry: {first_problem(exc, McpServer)}") from None
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        where = f" field {field!r}" if field else ""
        message = str(error["msg"]).removeprefix("Value error, ")
        raise ValueError(f"{what}: MCP server entry{where}: {message}") from None


def run_coroutine(make: Callable[[], Awaitable[T]]) -> T:
    """Await a coroutine from blocking code, whether or not this thread runs an event loop.

    Args:
        make: Makes the coroutine (called where it is run).

    Returns:
        Its result.
    """

    async def awaited() -> T:
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(awaited())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # a loop runs here: another thread
        return pool.submit(asyncio.run, awaited()).result()


def blocking(tool: BaseTool) -> BaseTool:
    """A tool that can only be awaited, given a blocking way to run (others as they are).

    Args:
        tool: The tool.

    Returns:
        The tool, or a copy whose blocking call awaits its coroutine.
    """
    from langchain_core.tools import StructuredTool

    if not isinstance(tool, StructuredTool) or tool.func is not None or tool.coroutine is None:
        return tool
    coroutine = tool.coroutine

    def call(*args: Any, **kwargs: Any) -> Any:
        return run_coroutine(lambda: coroutine(*args, **kwargs))

    copy: StructuredTool = tool.model_copy(update={"func": call})
    return copy


def load_tools(server: McpServer, what: str) -> tuple[BaseTool, ...]:
    """The tools of an MCP server an agent uses, listed now (a session opened and closed).

    Args:
        server: The server.
        what: Whose tools they are, for errors.

    Returns:
        The tools it names (all the server lists where it names none), in the server's
        order, each runnable blocking or awaited; an MCP tool's error is raised (so the
        tool loop records it as the call's error).

    Raises:
        ValueError: One line: the server cannot be reached, or lists no tool of a name
            the entry gives.
    """
    try:
        from langchain_mcp_adapters.tools import load_mcp_tools
        from mcp.shared.exceptions import McpError
    except ImportError:
        raise ValueError(
            f"{what}: an MCP server's tools need langchain-mcp-adapters: "
            "pip install 'debategraph[mcp]'"
        ) from None

    async def listed() -> list[BaseTool]:
        return await load_mcp_tools(
            None,
            connection=server.connection(),  # type: ignore[arg-type]  # a Connection TypedDict
            handle_tool_errors=False,
        )

    try:
        found = run_coroutine(listed)
    except (OSError, McpError, ExceptionGroup) as exc:
        raise ValueError(
            f"{what}: MCP server {server.label()!r} did not list its tools: {_cause(exc)}"
        ) from None
    by_name = {t.name: t for t in found}
    missing = [name for name in server.tools if name not in by_name]
    if missing:
        raise ValueError(
            f"{what}: MCP server {server.label()!r} has no tool {missing[0]!r}: it has "
            f"{', '.join(by_name) or 'none'}"
        )
    chosen = [by_name[name] for name in server.tools] if server.tools else found
    return tuple(blocking(t) for t in chosen)


def _cause(exc: BaseException) -> str:
    """The innermost error of an exception group, in one line."""
    from debategraph.words import one_line

    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return one_line(f"{type(exc).__name__}: {exc}")


__all__ = ["McpServer", "blocking", "load_tools", "run_coroutine", "server_of"]
