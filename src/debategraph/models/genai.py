"""What a run's spans say: the GenAI semantic conventions, and OpenInference's names.

:mod:`debategraph.models.tracing` makes the spans; this module writes what they hold:

* a model call (``chat {model}``): ``gen_ai.provider.name`` (OpenTelemetry's name of
  the provider LangChain reports: ``openai`` for every OpenAI-compatible endpoint, the
  package's own client included; LangChain's own name where OpenTelemetry has none),
  ``server.address`` and ``server.port`` (the endpoint the model object is set to),
  the request parameters (``gen_ai.request.temperature``, ``max_tokens``, ``top_p``,
  ``seed``, ``stop_sequences``), and the reply's model, id, finish reason and tokens;
* content, only where ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` asks for it
  (:func:`capture_content`): a model call's prompt and reply as
  ``gen_ai.input.messages`` and ``gen_ai.output.messages`` (span attributes holding the
  JSON of the conventions' message schema: roles, text, tool call and tool response
  parts), an agent turn's last reply, and a run's question and answer;
* a run's ending (``debategraph.termination_reason``), whatever the opt-in says.

Beside each content attribute it writes OpenInference's ``input.value`` and
``output.value`` (and every span's ``openinference.span.kind``): Arize Phoenix shows
those in its span list and a span's Input and Output panes, and Langfuse reads them
as an observation's input and output; Phoenix turns the ``gen_ai.*`` messages into its
own chat view, LangSmith reads them as a run's inputs and outputs.

The module imports only the standard library until a span asks.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeGuard
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

#: The standard opt-in for a GenAI span's message content (OpenTelemetry's instrumentations').
CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
#: Its values that put content on spans (``true``; OpenTelemetry's GenAI utilities' modes).
CONTENT_ON = frozenset({"true", "span_only", "span_and_event"})
#: Its values that keep content off them (``event_only``: this package writes no events).
CONTENT_OFF = frozenset({"", "false", "no_content", "event_only"})

PROVIDER = "gen_ai.provider.name"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
INPUT_VALUE = "input.value"
OUTPUT_VALUE = "output.value"
#: OpenInference's kind of a span, which Phoenix files it under.
SPAN_KIND = "openinference.span.kind"
#: Why a run ended (its state's ``termination_reason``).
TERMINATION = "debategraph.termination_reason"

#: LangChain's provider names (``ls_provider``) that OpenTelemetry's conventions name
#: otherwise; any other is written as LangChain has it.
PROVIDERS = {
    "azure": "azure.ai.openai",
    "bedrock": "aws.bedrock",
    "amazon_bedrock": "aws.bedrock",
    "google_genai": "gcp.gen_ai",
    "google_vertexai": "gcp.vertex_ai",
    "mistral": "mistral_ai",
    "mistralai": "mistral_ai",
    "xai": "x_ai",
    "ibm": "ibm.watsonx.ai",
}
#: A LangChain message's ``type`` -> the conventions' role.
ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
#: Finish reasons a provider spells otherwise -> the conventions' (``tool_call``).
FINISH_REASONS = {"tool_calls": "tool_call", "function_call": "tool_call"}
#: A model object's fields that hold its endpoint, by provider package.
ENDPOINT_FIELDS = ("openai_api_base", "base_url", "anthropic_api_url", "endpoint")
#: Where a provider's client goes when no endpoint is set on the model.
DEFAULT_ENDPOINTS = {"openai": "https://api.openai.com/v1"}
#: The request parameters a call's ``invocation_params`` may hold, by convention name.
REQUEST_PARAMETERS = {
    "top_p": "gen_ai.request.top_p",
    "seed": "gen_ai.request.seed",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
}


def capture_content() -> bool:
    """Whether spans hold message content: :data:`CONTENT_VARIABLE` says so.

    A value neither on nor off is said in one warning line (content stays off).

    Returns:
        Whether to record prompts, replies, questions and answers.
    """
    from debategraph.models.otlp import warn

    raw = os.environ.get(CONTENT_VARIABLE, "")
    value = raw.strip().lower()
    if value in CONTENT_ON:
        return True
    if value not in CONTENT_OFF:
        warn(
            f"{CONTENT_VARIABLE}={raw!r} is not one of true, false, span_only, "
            "span_and_event, event_only, no_content: message content is not recorded"
        )
    return False


def number(value: Any) -> TypeGuard[int | float]:
    """Whether ``value`` is a number a span attribute takes (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def endpoint_attributes(chat: BaseChatModel, provider: str) -> dict[str, Any]:
    """``server.address`` and ``server.port`` of the endpoint a model object calls.

    Args:
        chat: The chat model.
        provider: Its provider, by LangChain's name (``openai``: the OpenAI API by
            default).

    Returns:
        The attributes; empty where the model names no URL.
    """
    url = next(
        (str(v) for f in ENDPOINT_FIELDS if isinstance(v := getattr(chat, f, None), str) and v),
        DEFAULT_ENDPOINTS.get(provider, ""),
    )
    try:
        parts = urlsplit(url)
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    except ValueError:  # not a URL: nothing to say
        return {}
    if not parts.hostname:
        return {}
    return {"server.address": parts.hostname, **({"server.port": port} if port else {})}


def request_attributes(
    chat: BaseChatModel | None, metadata: Mapping[str, Any], invocation: Mapping[str, Any]
) -> dict[str, Any]:
    """What a model call's request says: provider, endpoint and request parameters.

    Read from what LangChain hands its callbacks when a chat model starts: the
    ``ls_*`` metadata (provider, temperature, max tokens, stop sequences, the model's
    own or the call's) and the call's ``invocation_params``.

    Args:
        chat: The model object called (its endpoint), if known.
        metadata: The run's metadata.
        invocation: The call's ``invocation_params``.

    Returns:
        The attributes.
    """
    named = str(metadata.get("ls_provider") or "")
    found: dict[str, Any] = {PROVIDER: PROVIDERS.get(named, named)} if named else {}
    if chat is not None:
        found.update(endpoint_attributes(chat, named))
    if number(temperature := metadata.get("ls_temperature")):
        found["gen_ai.request.temperature"] = float(temperature)
    if number(most := metadata.get("ls_max_tokens")):
        found["gen_ai.request.max_tokens"] = int(most)
    stop = metadata.get("ls_stop")
    if isinstance(stop, str):
        stop = [stop]
    if isinstance(stop, list) and stop and all(isinstance(s, str) for s in stop):
        found["gen_ai.request.stop_sequences"] = stop
    for key, attribute in REQUEST_PARAMETERS.items():
        if number(value := invocation.get(key)):
            found[attribute] = value
    return found


def message_json(message: BaseMessage, finish_reason: str | None = None) -> dict[str, Any]:
    """A LangChain message by the conventions' message schema.

    Args:
        message: The message.
        finish_reason: A reply's finish reason (an output message's); ``None``: an input's.

    Returns:
        ``{"role", "parts"}`` (and ``name``, ``finish_reason`` where there is one).
    """
    role = ROLES.get(message.type, message.type)
    parts: list[dict[str, Any]] = []
    if role == "tool":
        call = getattr(message, "tool_call_id", None)
        parts.append({"type": "tool_call_response", "id": call, "response": message.text})
    else:
        if message.text:
            parts.append({"type": "text", "content": message.text})
        for call in getattr(message, "tool_calls", None) or ():
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": call.get("name"),
                    "arguments": call.get("args"),
                }
            )
    out: dict[str, Any] = {"role": role, "parts": parts}
    if message.name:
        out["name"] = message.name
    if finish_reason is not None:
        out["finish_reason"] = finish_reason
    return out


def dumped(value: Any) -> str:
    """``value`` as the JSON a span attribute holds (unicode kept, anything else as text)."""
    return json.dumps(value, ensure_ascii=False, default=str)


def prompt_attributes(prompt: Any) -> dict[str, Any]:
    """A model call's prompt as content attributes (call only where content is on).

    Args:
        prompt: The call's input, as a chat model takes it (messages, a prompt value,
            a string).

    Returns:
        ``gen_ai.input.messages`` and ``input.value`` (the same JSON); empty for an
        input no chat model would read as messages (the call then fails on its own).
    """
    from langchain_core.messages import HumanMessage, convert_to_messages

    try:
        messages = (
            [HumanMessage(prompt)] if isinstance(prompt, str) else convert_to_messages(prompt)
        )
    except (ValueError, TypeError, NotImplementedError):
        return {}
    text = dumped([message_json(m) for m in messages])
    return {INPUT_MESSAGES: text, INPUT_VALUE: text, "input.mime_type": "application/json"}


def reply_attributes(reply: Any, content: bool) -> dict[str, Any]:
    """What a model's reply reports: tokens, model, id, finish reason (and, opted in, itself).

    Args:
        reply: The call's reply (an ``AIMessage``; anything else says nothing).
        content: Whether content is recorded.

    Returns:
        The attributes.
    """
    found: dict[str, Any] = {}
    usage = getattr(reply, "usage_metadata", None)
    if usage:
        found["gen_ai.usage.input_tokens"] = int(usage.get("input_tokens", 0))
        found["gen_ai.usage.output_tokens"] = int(usage.get("output_tokens", 0))
    meta = getattr(reply, "response_metadata", None) or {}
    if meta.get("model_name"):
        found["gen_ai.response.model"] = str(meta["model_name"])
    if meta.get("id"):
        found["gen_ai.response.id"] = str(meta["id"])
    said = str(meta.get("finish_reason") or "")
    reason = FINISH_REASONS.get(said, said)
    if said:
        found["gen_ai.response.finish_reasons"] = [reason]
    if content and getattr(reply, "type", None) == "ai":
        reason = reason or ("tool_call" if getattr(reply, "tool_calls", None) else "stop")
        found[OUTPUT_MESSAGES] = dumped([message_json(reply, reason)])
        if reply.text:
            found.update(said_attributes(reply.text))
        else:  # a structured reply: its tool calls
            found.update(said_attributes(dumped(reply.tool_calls), "application/json"))
    return found


def tool_input_attributes(arguments: Any) -> dict[str, Any]:
    """A tool call's arguments as content attributes (call only where content is on)."""
    text = dumped(arguments)
    return {
        "gen_ai.tool.call.arguments": text,
        INPUT_VALUE: text,
        "input.mime_type": "application/json",
    }


def tool_output_attributes(result: Any) -> dict[str, Any]:
    """A tool call's result as content attributes (call only where content is on)."""
    text = result.text if hasattr(result, "text") and isinstance(result.text, str) else None
    said = text if text is not None else (result if isinstance(result, str) else dumped(result))
    return {"gen_ai.tool.call.result": said, **said_attributes(said)}


def said_attributes(text: str, mime_type: str = "text/plain") -> dict[str, Any]:
    """OpenInference's output of a span: ``output.value`` and its MIME type."""
    return {OUTPUT_VALUE: text, "output.mime_type": mime_type}


def run_input(pattern: str, values: Any) -> dict[str, Any]:
    """A pattern run's question as its span's input (call only where content is on).

    Args:
        pattern: The pattern's registry name.
        values: The run's input or its final values.

    Returns:
        ``gen_ai.input.messages`` (one user message) and ``input.value``; empty where
        the values hold no question (a resume's command, a pattern this version does
        not know).
    """
    from debategraph import registry
    from debategraph.errors import UsageError

    if not isinstance(values, Mapping):
        return {}
    try:
        question = registry.described(pattern).title(values)
    except UsageError:  # a graph tagged with a pattern no registry line declares
        return {}
    if not question:
        return {}
    asked = [{"role": "user", "parts": [{"type": "text", "content": question}]}]
    return {INPUT_MESSAGES: dumped(asked), INPUT_VALUE: question, "input.mime_type": "text/plain"}


def run_output(outputs: Any, content: bool) -> dict[str, Any]:
    """A finished pattern run's ending (and, opted in, its answer) for its span.

    Args:
        outputs: The run's output values.
        content: Whether content is recorded.

    Returns:
        :data:`TERMINATION`, and with content the outcome message the run ends its
        ``messages`` with (the answer and who stated it) as ``gen_ai.output.messages``
        and ``output.value``.
    """
    if not isinstance(outputs, Mapping):
        return {}
    found: dict[str, Any] = {}
    if isinstance(reason := outputs.get("termination_reason"), str) and reason:
        found[TERMINATION] = reason
    from langchain_core.messages import AIMessage

    messages = outputs.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else None
    if content and isinstance(last, AIMessage) and last.text:
        found[OUTPUT_MESSAGES] = dumped([message_json(last, "stop")])
        found.update(said_attributes(last.text))
    return found
