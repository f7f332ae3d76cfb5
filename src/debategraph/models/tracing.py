"""OpenTelemetry traces of debates, by the GenAI semantic conventions (the ``otel`` extra).

With the extra installed and an OTLP endpoint named by the standard variables
(``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT``, with
``OTEL_EXPORTER_OTLP_PROTOCOL``, ``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_SERVICE_NAME``;
``OTEL_SDK_DISABLED=true`` turns it off), :func:`enable_tracing` makes every run emit
one tree of spans:

* ``invoke_workflow {pattern}``: the run of a pattern's graph (``gen_ai.conversation.id``
  is the thread id), found by the tag :func:`pattern_tag` its compiled graph carries;
  it ends with the run's ``debategraph.termination_reason``;
* ``round {n}``: each round of the run, from its first agent turn to its last;
* ``invoke_agent {agent}``: each turn of an agent (:func:`turn`, around an agent's call
  steps), under its round, with ``gen_ai.agent.name`` and the turn's tokens;
* ``chat {model}``: each model call, with the provider, the endpoint, the request's
  parameters and what the reply reports (model, finish reason, tokens);
* ``execute_tool {tool}``: each call of an agent's tool (``gen_ai.tool.name``).

Every span carries ``debategraph.pattern``, ``debategraph.round`` (the round the node ran
in) and the thread id; the turn's spans also the agent's name. With
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` the spans hold content too:
the run's question and answer, each turn's reply, each model call's prompt and reply,
each tool call's arguments and result. What each span says, and under which names, is
:mod:`debategraph.models.genai`'s; a call's span is :mod:`debategraph.models.call_spans`'s;
where spans go (the provider, the viewer's project, the exporter) is
:mod:`debategraph.models.otlp`'s.

The model calls' spans are written here, at the seam every call goes through
(:func:`~debategraph.models.steps.tagged`): the OpenTelemetry project's OpenAI
instrumentation wraps ``chat.completions.create``, which neither the lean client nor a
``json_schema`` request (``parse``) calls; OpenInference's LangChain spans use other
conventions, and Traceloop's write every node's whole state. What LangChain tells its
callbacks as a chat model starts (the provider, the request's parameters) is written
on the call's span by this module's callback handler.

The CLI (every command) and ``debategraph serve``'s server call :func:`enable_tracing`;
a program using the graphs calls ``debategraph.enable_tracing()`` once. Without the
variables it returns ``False`` having imported nothing: this module imports only the
standard library, and the run's hot path reads one module global (:data:`TRACER`).
An endpoint that does not take the spans costs the run nothing but one warning line.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast
from uuid import UUID

from debategraph.models import genai
from debategraph.models.call_spans import answered, call_span, failed

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import Runnable
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Span, Tracer

    from debategraph.models.steps import Steps

#: The prefix of the tag a pattern's compiled graph carries (``debategraph.pattern:NAME``).
PATTERN_TAG = "debategraph.pattern:"
PATTERN = "debategraph.pattern"
ROUND = "debategraph.round"
CONVERSATION = "gen_ai.conversation.id"
AGENT = "gen_ai.agent.name"
OPERATION = "gen_ai.operation.name"
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")

#: The tracer once tracing is on (``None``: off); the hot path reads only this.
TRACER: Tracer | None = None
#: Whether spans hold message content (:func:`debategraph.models.genai.capture_content`,
#: read when tracing is turned on).
CONTENT = False
_LOCK = threading.Lock()
#: The model call in flight in this context: its span and its model (for the callback
#: LangChain calls as the model starts, which knows the provider and the parameters).
_CALL: ContextVar[tuple[Span, BaseChatModel] | None] = ContextVar("debategraph_call", default=None)


def pattern_tag(pattern: str) -> str:
    """The tag a pattern's compiled graph carries, which names its run's span.

    Args:
        pattern: The pattern's registry name.

    Returns:
        ``debategraph.pattern:NAME``.
    """
    return PATTERN_TAG + pattern


def endpoint() -> str | None:
    """The OTLP endpoint the variables name, or ``None`` (also when ``OTEL_SDK_DISABLED``)."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    for name in ENDPOINT_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def enable_tracing(exporter: SpanExporter | None = None) -> bool:
    """Send OpenTelemetry spans of every debate run from now on (see the module's docstring).

    Call it once, before the runs (a second call does nothing). Without an OTLP endpoint
    in the environment (or with ``OTEL_SDK_DISABLED=true``) and no ``exporter`` it does
    nothing and imports nothing. A tracer provider set already (by the program, or by the
    server) is used as it is, and exports our spans wherever it exports its own. Whether
    spans hold message content is read now, from
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``.

    Args:
        exporter: Export the spans here too (each span as it ends), whatever the
            environment says: an in-memory exporter in tests, or the program's own.

    Returns:
        Whether runs are traced.
    """
    global TRACER, CONTENT
    where = endpoint()
    if exporter is None and where is None:
        return False
    with _LOCK:
        if TRACER is not None:
            return True
        from debategraph.models import otlp

        try:
            from langchain_core.tracers.context import register_configure_hook
            from opentelemetry import trace
            from opentelemetry.sdk.trace import TracerProvider

            current = trace.get_tracer_provider()
            provider = current if isinstance(current, TracerProvider) else otlp.provider()
            processor = otlp.processor(exporter, where or "", provider is current)
        except ImportError as exc:
            otlp.warn(
                f"traces are not being sent: the otel extra is not installed ({exc.name} is "
                "missing): pip install 'debategraph[otel]'"
            )
            return False
        if processor is False:
            return False
        if not _SWITCH.installed:
            # LangChain calls hook.get() on every run's configure: our handler while on
            register_configure_hook(cast("ContextVar[Any]", _SWITCH), inheritable=True)
            _SWITCH.installed = True
        if processor is not None:
            provider.add_span_processor(processor)
        if provider is not current:
            trace.set_tracer_provider(provider)
        CONTENT = genai.capture_content()
        TRACER = provider.get_tracer("debategraph")
        _SWITCH.handler = _handler_class()(TRACER)
        return True


def disable_tracing() -> None:
    """Stop tracing runs (spans already made are still exported); for tests."""
    global TRACER
    with _LOCK:
        TRACER = None
        _SWITCH.handler = None


class _Switch:
    """What LangChain's configure hook reads (``get()``): the run handler while tracing is on."""

    installed = False
    handler: Any = None

    def get(self) -> Any:
        """The handler, or ``None`` (off: LangChain adds none)."""
        return self.handler


_SWITCH = _Switch()


@dataclass
class _Top:
    """A pattern graph's run: its span and its rounds' spans, each started when needed.

    The run's span starts (back-dated to the run's start) when its first turn needs it:
    an invocation in which no agent speaks (the CLI's recording of a new thread's input,
    a resume that only closes) leaves no span. A round's span starts with its first turn
    and ends, when the run does, as its last turn ended.
    """

    tracer: Tracer
    pattern: str
    attributes: dict[str, Any]
    asked: dict[str, Any] = field(default_factory=dict)
    started_ns: int = field(default_factory=time.time_ns)
    span: Span | None = None
    rounds: dict[int, Span] = field(default_factory=dict)
    ended_ns: dict[int, int] = field(default_factory=dict)

    def _opened(self) -> Span:
        """The run's span, started now if it was not (call holding the lock)."""
        if self.span is None:
            self.span = self.tracer.start_span(
                f"invoke_workflow {self.pattern}",
                attributes={
                    OPERATION: "invoke_workflow",
                    genai.SPAN_KIND: "CHAIN",
                    **self.attributes,
                    **self.asked,
                },
                start_time=self.started_ns,
            )
        return self.span

    def parent(self, rnd: int | None) -> Span:
        """The span a turn of round ``rnd`` goes under: its round's (the run's: no round)."""
        from opentelemetry import trace

        with _LOCK:
            top = self._opened()
            if rnd is None:
                return top
            span = self.rounds.get(rnd)
            if span is None:
                span = self.rounds[rnd] = self.tracer.start_span(
                    f"round {rnd}",
                    context=trace.set_span_in_context(top),
                    attributes={genai.SPAN_KIND: "CHAIN", **self.attributes, ROUND: rnd},
                )
            return span

    def turn_ended(self, rnd: int | None) -> None:
        """Note that a turn of round ``rnd`` ended now (its round ends no earlier)."""
        if rnd is not None:
            with _LOCK:
                self.ended_ns[rnd] = time.time_ns()

    def close(self, said: Mapping[str, Any], error: BaseException | None) -> None:
        """End the rounds' spans and the run's (``error``: it failed); ``said`` on the run's."""
        with _LOCK:
            for rnd, span in sorted(self.rounds.items()):
                span.end(end_time=self.ended_ns.get(rnd))
            self.rounds.clear()
            top, self.span = self.span, None
        if top is None:
            return
        top.set_attributes(dict(said))
        if error is not None:
            failed(top, error)
        top.end()


@dataclass
class _Run:
    """A chain run in a debate's run: that run (``top``), and this one's attributes."""

    top: _Top
    attributes: dict[str, Any]
    root: bool = False


def _round_of(inputs: Any) -> int | None:
    """The round a node's input holds (its state's or its task's ``round``), if any."""
    value = inputs.get("round") if isinstance(inputs, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@functools.cache
def _handler_class() -> Any:
    """The LangChain callback handler that opens a run's span (defined on first use)."""
    from langchain_core.callbacks import BaseCallbackHandler
    from langgraph.errors import GraphBubbleUp

    class Runs(BaseCallbackHandler):
        """Opens ``invoke_workflow {pattern}`` for a pattern's graph run; knows each node's round.

        Registered for every LangChain run while tracing is on; it acts only on runs
        tagged with :func:`pattern_tag` and the runs under them, and on the chat models
        a turn's call spans are open for.
        """

        run_inline = True

        def __init__(self, tracer: Tracer) -> None:
            self.tracer = tracer
            self.runs: dict[UUID, _Run] = {}

        def on_chain_start(
            self,
            serialized: dict[str, Any] | None,
            inputs: Any,
            *,
            run_id: UUID,
            parent_run_id: UUID | None = None,
            tags: list[str] | None = None,
            metadata: dict[str, Any] | None = None,
            **kwargs: Any,
        ) -> None:
            parent = self.runs.get(parent_run_id) if parent_run_id is not None else None
            if parent is not None:
                rnd = _round_of(inputs)
                known = parent.attributes if rnd is None else {**parent.attributes, ROUND: rnd}
                self.runs[run_id] = _Run(parent.top, known)
                return
            patterns = [t[len(PATTERN_TAG) :] for t in tags or () if t.startswith(PATTERN_TAG)]
            if not patterns:
                return
            attributes: dict[str, Any] = {PATTERN: patterns[0]}
            thread = (metadata or {}).get("thread_id")
            if thread is not None:
                attributes[CONVERSATION] = str(thread)
            asked = genai.run_input(patterns[0], inputs) if CONTENT else {}
            top = _Top(self.tracer, patterns[0], attributes, asked)
            self.runs[run_id] = _Run(top, attributes, root=True)

        def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
            run = self.runs.pop(run_id, None)
            if run is not None and run.root:
                said = genai.run_output(outputs, CONTENT)
                if CONTENT:
                    said.update(genai.run_input(run.top.pattern, outputs))
                run.top.close(said, None)

        def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            run = self.runs.pop(run_id, None)
            if run is not None and run.root:  # a pause (an interrupt) is no failure
                run.top.close({}, None if isinstance(error, GraphBubbleUp) else error)

        def on_chat_model_start(
            self,
            serialized: dict[str, Any] | None,
            messages: list[list[Any]],
            *,
            run_id: UUID,
            metadata: dict[str, Any] | None = None,
            invocation_params: dict[str, Any] | None = None,
            **kwargs: Any,
        ) -> None:
            call = _CALL.get()
            if call is not None:
                span, chat = call
                span.set_attributes(
                    genai.request_attributes(chat, metadata or {}, invocation_params or {})
                )

    return Runs


def _node_run() -> _Run | None:
    """The debate run the calling node belongs to (from its LangGraph config), if any."""
    from langchain_core.runnables.config import var_child_runnable_config

    config = var_child_runnable_config.get() or {}
    parent = getattr(config.get("callbacks"), "parent_run_id", None)
    handler = _SWITCH.handler
    run: _Run | None = None if handler is None else handler.runs.get(parent)
    return run


def turn(steps: Steps[Any], agent: str, metadata: dict[str, Any]) -> Steps[Any]:
    """An agent's call steps inside an ``invoke_agent {agent}`` span (tracing is on).

    The span goes under the span of the turn's round (or the run's). Each model call
    and tool call it yields has a span under it (``chat {model}``, ``execute_tool
    {tool}``), current while the call runs; with content on, the turn's span holds its
    last reply.

    Args:
        steps: The agent's call steps.
        agent: The agent's name.
        metadata: Added to every model call's config (as :func:`~debategraph.models.steps.tagged`).

    Returns:
        The same steps; they return what ``steps`` return.
    """
    from opentelemetry import trace

    from debategraph.models.steps import tagged

    tracer = TRACER
    if tracer is None:  # off since the call began: the steps as they are
        return (yield from tagged(steps, metadata))
    run = _node_run()
    attributes = {**(run.attributes if run is not None else {}), AGENT: agent}
    rnd = attributes.get(ROUND)
    parent = trace.set_span_in_context(run.top.parent(rnd)) if run is not None else None
    span = tracer.start_span(
        f"invoke_agent {agent}",
        context=parent,
        attributes={OPERATION: "invoke_agent", genai.SPAN_KIND: "AGENT", **attributes},
    )
    replies: list[Any] = []

    @contextlib.contextmanager
    def around(runnable: Runnable[Any, Any], given: Any) -> Iterator[Callable[[Any], None]]:
        from opentelemetry import context

        call, chat = call_span(tracer, span, runnable, given, attributes, CONTENT)
        token = context.attach(trace.set_span_in_context(call or span))
        calling = _CALL.set((call, chat) if call is not None and chat is not None else None)
        try:
            yield functools.partial(answered, call, chat is not None, CONTENT, replies)
        except Exception as exc:
            if call is not None:
                failed(call, exc)
            raise
        finally:
            _CALL.reset(calling)
            context.detach(token)
            if call is not None:
                call.end()

    try:
        result = yield from tagged(steps, metadata, around)
        usage = getattr(result, "usage", None)
        if usage is not None:
            span.set_attribute("gen_ai.usage.input_tokens", int(usage.prompt_tokens))
            span.set_attribute("gen_ai.usage.output_tokens", int(usage.completion_tokens))
        if CONTENT and replies:
            said = genai.reply_attributes(replies[-1], True)
            span.set_attributes(
                {k: v for k, v in said.items() if k.startswith(("gen_ai.output", "output."))}
            )
        return result
    except Exception as exc:
        failed(span, exc)
        raise
    finally:
        span.end()
        if run is not None:
            run.top.turn_ended(rnd)
