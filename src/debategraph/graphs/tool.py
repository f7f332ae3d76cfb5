"""A pattern's graph as a LangChain tool, for a ReAct agent or a ``ToolNode``.

:func:`as_tool` wraps a compiled pattern graph: the tool's arguments are the pattern's
input (its question, topic, document or task, and the rest of its input fields), its
result is the run's outcome (the last of its ``messages``), and its artifact the run's
output as JSON (the transcript, usage and the pattern's typed results). Input the
pattern refuses, and a run that fails (a model that stopped answering, a spent budget:
the package's :mod:`~debategraph.errors`), come back as the tool's error (a
``ToolMessage`` with ``status="error"``), one line, so the calling agent reads it and
may call again; neither raises into the parent graph. Inside a parent graph the
run is the parent's subgraph: its checkpointer, callbacks and streams cover it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NotRequired, get_type_hints

from langchain_core.runnables import RunnableConfig  # resolved at run time: the tool injects it

from debategraph import registry
from debategraph.errors import DebategraphError, UsageError
from debategraph.graphs.inputs import check_input
from debategraph.graphs.schemas import field_descriptions

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool, ToolException
    from pydantic import ValidationError

#: What a tool's name may hold (OpenAI's rule for function names).
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def as_tool(graph: Any, *, name: str | None = None, description: str | None = None) -> BaseTool:
    """Make a compiled pattern graph a LangChain tool.

    Example:
        ```python
        from langchain_openai import ChatOpenAI
        from langgraph.prebuilt import create_react_agent

        from debategraph import as_tool, build_solver_debate

        model = ChatOpenAI(model="gpt-4o-mini", timeout=60)
        panel = build_solver_debate(model, max_rounds=2).compile(name="panel")
        agent = create_react_agent(
            model, [as_tool(panel, description="Ask a panel of solvers a math question.")]
        )
        agent.invoke({"messages": [("user", "What is 17 * 23? Ask the panel.")]})
        ```

    Args:
        graph: A graph a debategraph factory built, compiled (``compile(name=...)``).
        name: The tool's name (default: the compiled graph's name); letters, digits,
            ``_`` and ``-``, at most 64.
        description: What the tool does, for the calling model (default: the pattern's
            registry description).

    Returns:
        A ``StructuredTool`` with a sync and an async path, ``response_format=
        "content_and_artifact"``: its content is the run's outcome, its artifact the
        run's output as JSON (``messages`` left out).

    Raises:
        ValueError: If ``graph`` was not built by a debategraph factory and compiled,
            or the name is not a valid tool name.
    """
    from langchain_core.tools import StructuredTool

    from debategraph.graphs.skeleton import PatternGraph

    builder = getattr(graph, "builder", None)
    if not isinstance(builder, PatternGraph) or not hasattr(graph, "invoke"):
        raise ValueError(
            f"as_tool takes a compiled graph a debategraph factory built "
            f"(build_...(...).compile(name=...)), got {type(graph).__name__}"
        )
    pattern = builder.pattern
    tool_name = name or getattr(graph, "name", None) or pattern
    if not TOOL_NAME.match(tool_name):
        raise ValueError(
            f"tool name {tool_name!r} is not allowed: use 1 to 64 letters, digits, _ or -"
        )
    known = pattern in {e.name for e in registry.entries()}
    schemas = builder.pattern_schemas
    text = schemas.text if schemas is not None else ""
    args = _arguments(builder.input_schema, text)

    def _values(arguments: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in arguments.items() if v is not None}

    def _refused(values: Mapping[str, Any]) -> str | None:
        if not known:
            return None
        try:
            check_input(pattern, values)
        except ValueError as exc:
            return str(exc)
        return None

    def run(config: RunnableConfig, **arguments: Any) -> tuple[str, dict[str, Any]]:
        values = _values(arguments)
        if (line := _refused(values)) is not None:
            raise _failed(line)
        try:
            return _result(graph.invoke(values, config))
        except (ValueError, DebategraphError) as exc:  # refused at its start, or a model failed
            raise _failed(str(exc)) from exc

    async def arun(config: RunnableConfig, **arguments: Any) -> tuple[str, dict[str, Any]]:
        values = _values(arguments)
        if (line := _refused(values)) is not None:
            raise _failed(line)
        try:
            return _result(await graph.ainvoke(values, config))
        except (ValueError, DebategraphError) as exc:
            raise _failed(str(exc)) from exc

    return StructuredTool.from_function(
        run,
        coroutine=arun,
        name=tool_name,
        description=description or _description(pattern),
        args_schema=args,
        response_format="content_and_artifact",
        handle_validation_error=_one_line,
        handle_tool_error=True,
    )


def _arguments(schema: type[Any], text: str) -> type[Any]:
    """The tool's argument model: the input fields but ``messages``, ``text`` required."""
    from pydantic import ConfigDict, Field, create_model

    hints = get_type_hints(schema)
    raw = get_type_hints(schema, include_extras=True)
    described = field_descriptions(schema)
    fields: dict[str, Any] = {}
    for key, kind in hints.items():
        if key == "messages":
            continue
        about = described.get(key, f"The {key.replace('_', ' ')}.")
        optional = key != text and (
            getattr(raw[key], "__origin__", None) is NotRequired
            or key in getattr(schema, "__optional_keys__", ())
        )
        if optional:
            fields[key] = (kind | None, Field(default=None, description=about))
        else:
            fields[key] = (kind, Field(description=about))
    return create_model(  # type: ignore[no-any-return]
        f"{schema.__name__}Arguments",
        __config__=ConfigDict(extra="forbid"),
        **fields,
    )


def _description(pattern: str) -> str:
    """The pattern's registry description (its help line when it has none)."""
    try:
        entry = registry.entry(pattern)
    except UsageError:
        return f"Run the {pattern} graph."
    return entry.description or entry.help


def _result(output: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool's content (the outcome) and artifact (the output as JSON)."""
    from pydantic_core import to_jsonable_python

    messages = output.get("messages") or []
    content = messages[-1].text if messages else str(output.get("termination_reason"))
    artifact = {k: v for k, v in output.items() if k != "messages"}
    return content, to_jsonable_python(artifact, fallback=str)


def _failed(reason: str) -> ToolException:
    """A failed call's error: its first line, the tool's result for the calling model.

    Raised, it comes back as LangChain tools return a handled error (``handle_tool_error``):
    a ``ToolMessage`` with ``status="error"`` and the line as its content, so the calling
    agent reads it and may call again; nothing raises into its graph.
    """
    from langchain_core.tools import ToolException

    return ToolException((reason.strip().splitlines() or ["failed"])[0])


def _one_line(error: ValidationError) -> str:
    """A tool-argument error as one line: the field, what is wrong, what was given."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "arguments"
    return f"argument {where!r}: {first['msg']}"
