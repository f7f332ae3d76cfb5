"""Salvaging a model's structured output: lenient parsing, closing cut-off JSON, repair.

:func:`repair` coerces and clamps a reply's arguments towards a pydantic schema's
constraints, so that a confidence of 980 is clamped rather than costing a retry;
:func:`~debategraph.models.calls.structured_call` uses the helpers here on replies that
did not validate, or that stopped at the token limit mid-JSON.
"""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import annotated_types
from langchain_core.messages import AIMessage
from pydantic import BaseModel, ValidationError

from debategraph.models.spec import StructuredMethod

if TYPE_CHECKING:
    import openai

S = TypeVar("S", bound=BaseModel)


def json_in_text(text: str) -> str:
    """The JSON object a reply's text holds, whatever words a model put around it.

    Inside a code fence if there is one, then from its first ``{`` to its last ``}``.

    Args:
        text: The reply's text.

    Returns:
        The object's text (the text itself where no object shows).
    """
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else text.strip()


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def _raw_arguments(raw: object, method: StructuredMethod) -> Any:
    if not isinstance(raw, AIMessage):
        return None
    if method == "function_calling":
        if raw.tool_calls:
            return raw.tool_calls[0]["args"]
        if raw.invalid_tool_calls:
            return _loads_lenient(raw.invalid_tool_calls[0].get("args") or "")
        return None
    if method == "json_text":
        return _loads_lenient(json_in_text(raw.text))
    return _loads_lenient(raw.content if isinstance(raw.content, str) else "")


def _cut_off_reply(exc: openai.LengthFinishReasonError) -> AIMessage:
    """The partial reply and usage of a completion that stopped at its token limit."""
    completion = exc.completion
    content = completion.choices[0].message.content if completion.choices else None
    usage = completion.usage
    return AIMessage(
        content=_close_json(content or ""),
        usage_metadata={
            "input_tokens": usage.prompt_tokens,
            "output_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        }
        if usage is not None
        else None,
    )


def _close_json(text: str) -> str:
    """Close a JSON text cut off mid-way, dropping a trailing member that cannot be kept."""
    for _ in range(8):
        closed = _close_brackets(text)
        try:
            json.loads(closed)
        except json.JSONDecodeError:
            if "," not in text:
                return closed
            text = text[: text.rfind(",")]  # drop the member that was being written
            continue
        return closed
    return _close_brackets(text)


def _close_brackets(text: str) -> str:
    """Close the string, arrays and objects left open at the end of ``text``."""
    stack: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]" and stack:
            stack.pop()
    if in_string:
        text += ("\\" if escaped else "") + '"'
    return text.rstrip().rstrip(",") + "".join(reversed(stack))


def _loads_lenient(text: str) -> Any:
    """Parse JSON, or the outermost ``{...}`` inside ``text``; ``None`` if neither works."""
    for candidate in (text, text[text.find("{") : text.rfind("}") + 1]):
        if not candidate:
            continue
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    return None


def _try_repair(schema: type[S], raw: object, method: StructuredMethod) -> S | None:
    data = _raw_arguments(raw, method)
    if not isinstance(data, dict):
        return None
    try:
        return schema.model_validate(repair(schema, data))
    except ValidationError:
        return None


def repair(schema: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    """Coerce and clamp ``data`` towards ``schema``'s constraints.

    Numbers given as text are parsed, numbers outside ``ge``/``le`` bounds are clamped
    (a confidence of 980 becomes 1.0), over-long strings and lists are cut, literal
    choices are matched case-insensitively; nested models and lists of models are
    repaired recursively. Fields it cannot fix are left for validation to reject.

    Args:
        schema: The target model.
        data: The raw arguments.

    Returns:
        The repaired arguments.
    """
    out = dict(data)
    for name, field in schema.model_fields.items():
        key = field.alias or name
        if key not in out:
            continue
        out[key] = _repair_value(field.annotation, field.metadata, out[key])
    return out


def _repair_value(annotation: Any, metadata: Sequence[Any], value: Any) -> Any:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        non_none = [a for a in args if a is not type(None)]
        if value is None or len(non_none) != 1:
            return value
        return _repair_value(non_none[0], metadata, value)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return repair(annotation, value) if isinstance(value, dict) else value
    if origin is Literal and isinstance(value, str):
        for choice in args:
            if isinstance(choice, str) and choice.lower() == value.strip().lower():
                return choice
        return value
    if origin in (list, tuple) and isinstance(value, list):
        item_type = args[0] if args else Any
        value = [_repair_value(item_type, (), v) for v in value]
    if annotation in (int, float):
        value = _coerce_number(value, annotation)
    if annotation is str and isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    return _apply_bounds(metadata, value)


def _coerce_number(value: Any, kind: type) -> Any:
    if isinstance(value, str):
        try:
            value = float(value.strip().rstrip("%").replace(",", ""))
        except ValueError:
            return value
    if isinstance(value, float) and kind is int:
        return round(value)
    return value


def _apply_bounds(metadata: Sequence[Any], value: Any) -> Any:
    for rule in metadata:
        if isinstance(value, int | float) and not isinstance(value, bool):
            if isinstance(rule, annotated_types.Ge) and value < rule.ge:  # type: ignore[operator]
                value = rule.ge
            elif isinstance(rule, annotated_types.Le) and value > rule.le:  # type: ignore[operator]
                value = rule.le
        if isinstance(rule, annotated_types.MaxLen) and isinstance(value, str | list):
            value = value[: rule.max_length]
    return value
