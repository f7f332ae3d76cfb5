"""The patterns as MCP tools: one tool per registry line, whichever door serves them.

:func:`mcp_server` makes the MCP server (the ``mcp`` SDK's low-level server) both doors
serve: ``debategraph mcp`` over stdio (:mod:`debategraph.cli.mcp`) and ``/mcp`` on
``debategraph serve`` over streamable HTTP (:mod:`debategraph.serve.mcp`). Each
registered pattern is a tool named after it and described by its registry line; its
input (:func:`tool_input`) is the pattern's text field (the question, topic, document
or task: its ``Schemas.text``) and the few settings the door lets a caller choose
(:class:`Offer`); its result is an :class:`~debategraph.runs.account.Answered` (the
structured output, and the answer with its account as text). Each custom event of the
run is read by an :class:`~debategraph.runs.account.Account`, and each step it makes
goes to the caller as an MCP progress notification (``round 2 of 3: votes 18 x3``)
where the call carried a ``progressToken``.

A door says only how a call runs (:data:`Runs`): the stdio door through the run
lifecycle of :mod:`debategraph.runs` on its SQLite database, ``serve`` through its own
Agent Protocol on behalf of the caller. A bad input or a run that cannot start comes
back as the tool's error, in one line; the server goes on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from debategraph import registry
from debategraph.datafiles import first_problem
from debategraph.errors import DebategraphError
from debategraph.runs.account import Account, Answered
from debategraph.runs.start import served_settings

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

#: The settings a caller may choose, as a tool's input names them, and the factory's.
ROUNDS, AGENTS, MODEL = "rounds", "agents", "model"
SETTING_OF = {ROUNDS: "max_rounds", AGENTS: "agents"}
#: What the server tells a client about its tools.
INSTRUCTIONS = (
    "Each tool runs one debategraph pattern (a panel of agents that debate, discuss or "
    "meet) on the given text and returns its answer, how it was reached and the thread "
    "id; progress comes round by round."
)


@dataclass(frozen=True)
class Offer:
    """What a door lets a caller choose besides the text.

    Attributes:
        settings: Whether ``rounds`` (and ``agents``, where a pattern counts its agents)
            may be chosen.
        models: The model names a caller may choose from (``None``: any name the door
            checks itself; empty: none may be chosen).
        model_help: What ``model`` means on this door.
    """

    settings: bool
    models: tuple[str, ...] | None
    model_help: str


@dataclass(frozen=True)
class Call:
    """One tool call, its input checked against its schema.

    Attributes:
        pattern: The pattern (the tool's name).
        text: The question, topic, document or task.
        rounds: The most rounds (``None``: the pattern's default).
        agents: How many agents (``None``: the pattern's default).
        model: The model, by name (``None``: the door's default).
    """

    pattern: str
    text: str
    rounds: int | None = None
    agents: int | None = None
    model: str | None = None

    def settings(self) -> dict[str, Any]:
        """The run's settings: the pattern's as served, with what the caller chose."""
        settings = served_settings(self.pattern)
        for name, setting in SETTING_OF.items():
            value = getattr(self, name)
            if value is not None:
                settings[setting] = value
        return settings

    def graph_input(self) -> dict[str, Any]:
        """The graph's input: the text in the pattern's text field."""
        return {registry.entry(self.pattern).schemas().text: self.text}


#: A door's way to run a call: given the call and where each custom event of the run
#: goes, it runs the pattern to its end and returns the thread's id; what cannot run
#: raises a ``DebategraphError`` or ``ValueError`` with one line.
Runs = Callable[[Call, Callable[[Any], Awaitable[None]]], Awaitable[str]]


def counts_agents(pattern: str) -> bool:
    """Whether a pattern's ``agents`` setting may be a number (a solver debate's)."""
    return isinstance(served_settings(pattern).get(SETTING_OF[AGENTS]), int)


def tool_input(pattern: str, offer: Offer) -> type[BaseModel]:
    """The input schema of a pattern's tool: its text, and what the door offers.

    Args:
        pattern: The pattern's name.
        offer: What the door lets a caller choose.

    Returns:
        A pydantic model (unknown fields refused; only the text required).
    """
    entry = registry.entry(pattern)
    text = entry.schemas().text
    settings = served_settings(pattern)
    word = registry.described(pattern).round_word
    fields: dict[str, Any] = {
        text: (str, Field(description=f"The {text} the panel works on (plain text or Markdown).")),
    }
    if offer.settings:
        cap = settings.get("max_rounds")
        default = f" (default {cap})" if isinstance(cap, int) else ""
        fields[ROUNDS] = (
            int | None,
            Field(None, ge=1, description=f"The most {word}s the run takes{default}."),
        )
        if counts_agents(pattern):
            fields[AGENTS] = (
                int | None,
                Field(
                    None,
                    ge=1,
                    description=f"How many agents take part (default {settings['agents']}).",
                ),
            )
    if offer.models is None or offer.models:
        names = offer.models
        kind: Any = str if names is None else Literal[names]
        fields[MODEL] = (kind | None, Field(None, description=offer.model_help))
    return create_model(
        f"{pattern}_input",
        __config__=ConfigDict(extra="forbid", title=f"{pattern} input"),
        **fields,
    )


def tool_call(pattern: str, schema: type[BaseModel], arguments: dict[str, Any]) -> Call:
    """A tool call's arguments, checked against its schema.

    Args:
        pattern: The tool's pattern.
        schema: Its input schema (:func:`tool_input`).
        arguments: The arguments as the client sent them.

    Returns:
        The call.

    Raises:
        ValueError: One line naming the bad argument and what is allowed.
    """
    try:
        given = schema.model_validate(arguments).model_dump()
    except ValidationError as exc:
        raise ValueError(f"{pattern}: {first_problem(exc, schema)}") from None
    text = registry.entry(pattern).schemas().text
    return Call(
        pattern,
        given[text],
        given.get(ROUNDS),
        given.get(AGENTS),
        given.get(MODEL),
    )


def mcp_server(name: str, offer: Offer, runs: Runs) -> Server[Any, Any]:
    """The MCP server of every registered pattern, for a door.

    Args:
        name: The server's name, as clients list it.
        offer: What callers may choose besides the text.
        runs: How the door runs a call.

    Returns:
        The server (run it over stdio, or serve it over streamable HTTP).
    """
    import mcp.types as types
    from mcp.server.lowlevel import Server

    from debategraph.words import one_line

    server: Server[Any, Any] = Server(name, instructions=INSTRUCTIONS)
    schemas = {e.name: tool_input(e.name, offer) for e in registry.entries()}

    @server.list_tools()  # type: ignore[no-untyped-call, untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        return [
            types.Tool(
                name=entry.name,
                description=entry.description or entry.help,
                inputSchema=schemas[entry.name].model_json_schema(),
                outputSchema=Answered.model_json_schema(),
            )
            for entry in registry.entries()
            if entry.name in schemas
        ]

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(tool: str, arguments: dict[str, Any]) -> Any:
        context = server.request_context
        token = context.meta.progressToken if context.meta is not None else None
        try:
            answered = await _answer(tool, arguments, schemas, runs, context, token)
        except (DebategraphError, ValueError) as exc:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=one_line(str(exc)))], isError=True
            )
        text = f"{answered.answer}\n\n({answered.account}; thread {answered.thread_id})"
        return [types.TextContent(type="text", text=text)], answered.model_dump()

    return server


async def _answer(
    tool: str,
    arguments: dict[str, Any],
    schemas: dict[str, type[BaseModel]],
    runs: Runs,
    context: Any,
    token: str | int | None,
) -> Answered:
    """Run one tool call through the door, its progress reported; its result."""
    from debategraph.errors import UsageError

    if tool not in schemas:
        raise UsageError(f"unknown tool {tool!r}: the tools are {', '.join(schemas)}")
    call = tool_call(tool, schemas[tool], arguments)
    account = Account(tool, registry.described(tool).last_round(call.settings()))

    async def feed(event: Any) -> None:
        step = account.read(event)
        if step is not None and token is not None:
            await context.session.send_progress_notification(
                token,
                step.progress,
                step.total,
                step.message,
                related_request_id=context.request_id,
            )

    thread_id = await runs(call, feed)
    return account.answered(thread_id)
