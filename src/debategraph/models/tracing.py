"""OpenTelemetry traces of debates, by the GenAI semantic conventions (the ``otel`` extra).

With the extra installed and an OTLP endpoint named by the standard variables
(``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT``, with
``OTEL_EXPORTER_OTLP_PROTOCOL``, ``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_SERVICE_NAME``;
``OTEL_SDK_DISABLED=true`` turns it off), :func:`enable_tracing` makes every run emit:

* ``invoke_workflow {pattern}``: the run of a pattern's graph (``gen_ai.conversation.id``
  is the thread id), found by the tag :func:`pattern_tag` its compiled graph carries;
* ``invoke_agent {agent}``: each turn of an agent (:func:`turn`, around an agent's call
  steps), with ``gen_ai.agent.name`` and the turn's tokens;
* ``chat {model}``: each model call (``gen_ai.request.model``, ``gen_ai.usage.input_tokens``
  and ``gen_ai.usage.output_tokens`` as the endpoint reports them);
* ``execute_tool {tool}``: each call of an agent's tool (``gen_ai.tool.name``).

Every span carries ``debategraph.pattern``, ``debategraph.round`` (the round the node ran
in) and the thread id; the turn's spans also the agent's name.

The model calls' spans are written here, at the seam every call goes through
(:func:`~debategraph.models.steps.tagged`): the OpenTelemetry project's OpenAI
instrumentation wraps ``chat.completions.create``, which neither the lean client nor a
``json_schema`` request (``parse``) calls; OpenInference's LangChain spans use other
conventions, and Traceloop's write every node's whole state.

The CLI (every command) and ``debategraph serve``'s server call :func:`enable_tracing`;
a program using the graphs calls ``debategraph.enable_tracing()`` once. Without the
variables it returns ``False`` having imported nothing: this module imports only the
standard library, and the run's hot path reads one module global (:data:`TRACER`).
An endpoint that does not take the spans costs the run nothing but one warning line.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast
from uuid import UUID

from debategraph.words import one_line

if TYPE_CHECKING:
    from collections.abc import Sequence

    from langchain_core.runnables import Runnable
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
    from opentelemetry.trace import Span, Tracer

    from debategraph.models.steps import Steps

#: The prefix of the tag a pattern's compiled graph carries (``debategraph.pattern:NAME``).
PATTERN_TAG = "debategraph.pattern:"
PATTERN = "debategraph.pattern"
ROUND = "debategraph.round"
CONVERSATION = "gen_ai.conversation.id"
AGENT = "gen_ai.agent.name"
OPERATION = "gen_ai.operation.name"
#: Seconds spans are dropped after an export failed, before the next try (a dead endpoint
#: then does not hold the run's exit for the exporter's retries).
RETRY_AFTER_S = 30.0
#: The loggers of the OTLP exporters and the SDK's batch processor: each failed export
#: would log a warning per retry (with a traceback); one line of ours says it instead.
NOISY_LOGGERS = ("opentelemetry.exporter", "opentelemetry.sdk._shared_internal")
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")

#: The tracer once tracing is on (``None``: off); the hot path reads only this.
TRACER: Tracer | None = None
_LOCK = threading.Lock()


def pattern_tag(pattern: str) -> str:
    """The tag a pattern's compiled graph carries, which names its run's span.

    Args:
        pattern: The pattern's registry name.

    Returns:
        ``debategraph.pattern:NAME``.
    """
    return PATTERN_TAG + pattern


def warn(message: str) -> None:
    """Print one warning line on stderr, in the CLI's style."""
    sys.stderr.write(f"debategraph: warning: {one_line(message)}\n")
    sys.stderr.flush()


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
    server) is used as it is, and exports our spans wherever it exports its own.

    Args:
        exporter: Export the spans here too (each span as it ends), whatever the
            environment says: an in-memory exporter in tests, or the program's own.

    Returns:
        Whether runs are traced.
    """
    global TRACER
    where = endpoint()
    if exporter is None and where is None:
        return False
    with _LOCK:
        if TRACER is not None:
            return True
        try:
            from langchain_core.tracers.context import register_configure_hook
            from opentelemetry import trace
            from opentelemetry.sdk.trace import TracerProvider

            current = trace.get_tracer_provider()
            provider = current if isinstance(current, TracerProvider) else _provider()
            processor = _processor(exporter, where or "", provider is current)
        except ImportError as exc:
            warn(
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
        TRACER = provider.get_tracer("debategraph")
        _SWITCH.handler = _sdk_classes().Runs(TRACER)
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


def _provider() -> TracerProvider:
    """A tracer provider whose resource is the variables' (``debategraph`` by default)."""
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider

    named = os.environ.get("OTEL_SERVICE_NAME", "").strip()
    return TracerProvider(resource=Resource.create({} if named else {SERVICE_NAME: "debategraph"}))


def _processor(exporter: SpanExporter | None, where: str, shared: bool) -> Any:
    """The span processor that exports: ``None`` (a shared provider exports), or ``False``.

    ``False`` means the variables name a protocol this cannot send (said in one line).
    """
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    if exporter is not None:
        return SimpleSpanProcessor(exporter)
    if shared:
        return None
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    otlp: SpanExporter
    if protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        otlp = OTLPSpanExporter()
    elif protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcSpanExporter,
        )

        otlp = GrpcSpanExporter()
    else:
        warn(
            f"traces are not being sent: OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r} is not "
            "supported (use http/protobuf or grpc)"
        )
        return False
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    return BatchSpanProcessor(_sdk_classes().Reporting(otlp, where))


@dataclass
class _Top:
    """A pattern graph's run: its span, started (back-dated) when its first turn needs it.

    An invocation in which no agent speaks (the CLI's recording of a new thread's input,
    a resume that only closes) leaves no span.
    """

    tracer: Tracer
    pattern: str
    attributes: dict[str, Any]
    started_ns: int = field(default_factory=time.time_ns)
    span: Span | None = None

    def opened(self) -> Span:
        """The run's span, started now if it was not (as of the run's start)."""
        with _LOCK:
            if self.span is None:
                self.span = self.tracer.start_span(
                    f"invoke_workflow {self.pattern}",
                    attributes={OPERATION: "invoke_workflow", **self.attributes},
                    start_time=self.started_ns,
                )
            return self.span


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
def _sdk_classes() -> Any:
    """The classes that extend OpenTelemetry's and LangChain's (defined on first use).

    ``Reporting``, an exporter that says once, in one line, that spans are not getting
    through; ``Runs``, the LangChain callback handler that opens a run's span.
    """
    from langchain_core.callbacks import BaseCallbackHandler
    from langgraph.errors import GraphBubbleUp
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class Reporting(SpanExporter):
        """Exports; after a failure, warns once and drops spans for a while (see above)."""

        def __init__(self, inner: SpanExporter, where: str) -> None:
            self.inner = inner
            self.where = where
            self.failed_at: float | None = None
            self.warned = False

        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            if self.failed_at is not None and time.monotonic() - self.failed_at < RETRY_AFTER_S:
                return SpanExportResult.FAILURE
            why = "is the receiver running?"
            try:
                result = self.inner.export(spans)
            except Exception as exc:  # noqa: BLE001 - a bad endpoint's error: said in one line
                why, result = f"{type(exc).__name__}: {exc}", SpanExportResult.FAILURE
            if result is SpanExportResult.SUCCESS:
                self.failed_at = None
                return result
            self.failed_at = time.monotonic()
            if not self.warned:
                self.warned = True
                warn(
                    f"traces are not being sent: the OTLP endpoint {self.where} did not take "
                    f"them ({why}); the run goes on"
                )
            return result

        def shutdown(self) -> None:
            self.inner.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return bool(self.inner.force_flush(timeout_millis))

    class Runs(BaseCallbackHandler):
        """Opens ``invoke_workflow {pattern}`` for a pattern's graph run; knows each node's round.

        Registered for every LangChain run while tracing is on; it acts only on runs
        tagged with :func:`pattern_tag` and the runs under them.
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
            top = _Top(self.tracer, patterns[0], attributes)
            self.runs[run_id] = _Run(top, attributes, root=True)

        def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
            self._end(run_id, None)

        def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            self._end(run_id, error)

        def _end(self, run_id: UUID, error: BaseException | None) -> None:
            run = self.runs.pop(run_id, None)
            if run is None or not run.root or run.top.span is None:
                return
            if error is not None and not isinstance(error, GraphBubbleUp):  # not a pause
                _failed(run.top.span, error)
            run.top.span.end()

    return types.SimpleNamespace(Reporting=Reporting, Runs=Runs)


def _failed(span: Span, error: BaseException) -> None:
    """Mark ``span`` as failed by ``error``."""
    from opentelemetry.trace import Status, StatusCode

    span.record_exception(error)
    span.set_status(Status(StatusCode.ERROR, one_line(str(error))[:200]))
    span.set_attribute("error.type", type(error).__qualname__)


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

    Each model call and tool call it yields has a span under it (``chat {model}``,
    ``execute_tool {tool}``), current while the call runs.

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
    parent = trace.set_span_in_context(run.top.opened()) if run is not None else None
    span = tracer.start_span(
        f"invoke_agent {agent}",
        context=parent,
        attributes={OPERATION: "invoke_agent", **attributes},
    )

    @contextlib.contextmanager
    def around(runnable: Runnable[Any, Any]) -> Iterator[Callable[[Any], None]]:
        from opentelemetry import context

        call = _call_span(tracer, span, runnable, attributes)
        token = context.attach(trace.set_span_in_context(call or span))
        try:
            yield functools.partial(_answered, call)
        except Exception as exc:
            if call is not None:
                _failed(call, exc)
            raise
        finally:
            context.detach(token)
            if call is not None:
                call.end()

    try:
        result = yield from tagged(steps, metadata, around)
        usage = getattr(result, "usage", None)
        if usage is not None:
            span.set_attribute("gen_ai.usage.input_tokens", int(usage.prompt_tokens))
            span.set_attribute("gen_ai.usage.output_tokens", int(usage.completion_tokens))
        return result
    except Exception as exc:
        _failed(span, exc)
        raise
    finally:
        span.end()


def _call_span(
    tracer: Tracer, turn: Span, runnable: Runnable[Any, Any], attributes: dict[str, Any]
) -> Span | None:
    """The span of one call of a turn: ``chat {model}``, ``execute_tool {tool}``, or none.

    A call of the agent's own agent (a runnable of the user's) has none: the turn's span
    is current while it runs, for spans of its own.
    """
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import RunnableBinding
    from langchain_core.tools import BaseTool
    from opentelemetry import trace

    under = trace.set_span_in_context(turn)
    # A call bound to its config (a request's tools, a tag) is its runnable's.
    chat = runnable.bound if isinstance(runnable, RunnableBinding) else runnable
    if isinstance(chat, BaseTool):
        tool = {OPERATION: "execute_tool", "gen_ai.tool.name": chat.name, **attributes}
        return tracer.start_span(f"execute_tool {chat.name}", context=under, attributes=tool)
    if not isinstance(chat, BaseChatModel):
        return None
    model = str(getattr(chat, "model_name", None) or getattr(chat, "model", None) or "")
    named: dict[str, Any] = {OPERATION: "chat", **attributes}
    if model:
        named["gen_ai.request.model"] = model
    if "openai" in type(chat).__module__:  # langchain_openai's, or ours built on it
        named["gen_ai.provider.name"] = "openai"
    return tracer.start_span(
        f"chat {model}".strip(), context=under, kind=trace.SpanKind.CLIENT, attributes=named
    )


def _answered(span: Span | None, reply: Any) -> None:
    """Write what a model's reply reports on its call's span: tokens, model, finish reason."""
    if span is None:
        return
    usage = getattr(reply, "usage_metadata", None)
    if usage:
        span.set_attribute("gen_ai.usage.input_tokens", int(usage.get("input_tokens", 0)))
        span.set_attribute("gen_ai.usage.output_tokens", int(usage.get("output_tokens", 0)))
    meta = getattr(reply, "response_metadata", None) or {}
    if meta.get("model_name"):
        span.set_attribute("gen_ai.response.model", str(meta["model_name"]))
    if meta.get("finish_reason"):
        span.set_attribute("gen_ai.response.finish_reasons", [str(meta["finish_reason"])])
