"""Where a run's spans go: the tracer provider, its project, and the OTLP exporter.

:func:`debategraph.models.tracing.enable_tracing` asks this module, once an endpoint is
named, for a tracer provider (:func:`provider`) and the span processor that exports
(:func:`processor`), both from the standard OpenTelemetry variables.

The provider's resource names the viewer's project: ``service.name`` is
``OTEL_SERVICE_NAME`` (``debategraph`` when neither it nor ``OTEL_RESOURCE_ATTRIBUTES``
names one), and ``openinference.project.name``, the resource attribute Arize Phoenix
files a trace's spans under, is the service name unless ``OTEL_RESOURCE_ATTRIBUTES``
sets it. LangSmith takes the project from the ``Langsmith-Project`` header
(``OTEL_EXPORTER_OTLP_HEADERS``), Langfuse from the key pair the ``Authorization``
header holds: neither reads a resource attribute for it.

An endpoint that does not take the spans costs the run one warning line
(:func:`reporting`); the exporters' own warnings (one per retry, with a traceback) are
silenced. The module imports only the standard library until it is asked.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from debategraph.words import one_line

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

#: The resource attribute Arize Phoenix reads a span's project from (OpenInference's).
PROJECT = "openinference.project.name"
#: The service name when the variables name none.
DEFAULT_SERVICE = "debategraph"
#: Seconds spans are dropped after an export failed, before the next try (a dead endpoint
#: then does not hold the run's exit for the exporter's retries).
RETRY_AFTER_S = 30.0
#: The loggers of the OTLP exporters and the SDK's batch processor: each failed export
#: would log a warning per retry (with a traceback); one line of ours says it instead.
NOISY_LOGGERS = ("opentelemetry.exporter", "opentelemetry.sdk._shared_internal")


def warn(message: str) -> None:
    """Print one warning line on stderr, in the CLI's style."""
    sys.stderr.write(f"debategraph: warning: {one_line(message)}\n")
    sys.stderr.flush()


def provider() -> TracerProvider:
    """A tracer provider whose resource names the service and the viewer's project.

    Returns:
        The provider (see the module's docstring for its resource).
    """
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider

    named = Resource.create({})  # the variables' (OTEL_SERVICE_NAME wins, as the SDK says)
    service = str(named.attributes.get(SERVICE_NAME) or "")
    own: dict[str, str] = {}
    if not service or service.startswith("unknown_service"):
        service = own[SERVICE_NAME] = DEFAULT_SERVICE
    if not named.attributes.get(PROJECT):
        own[PROJECT] = service
    return TracerProvider(resource=named.merge(Resource(own)))


def processor(exporter: SpanExporter | None, where: str, shared: bool) -> Any:
    """The span processor that exports: ``None`` (a shared provider exports), or ``False``.

    Args:
        exporter: Export each span here as it ends (the caller's), whatever the variables say.
        where: The endpoint the variables name (for the warning line).
        shared: Whether the provider was set already (by the program or the server),
            which exports the spans wherever it exports its own.

    Returns:
        The processor; ``None`` where the shared provider exports; ``False`` where the
        variables name a protocol this cannot send (said in one line).
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
    return BatchSpanProcessor(reporting()(otlp, where))


@functools.cache
def reporting() -> Callable[[SpanExporter, str], SpanExporter]:
    """The exporter that says once, in one line, that spans are not getting through.

    Defined on first use (it extends the SDK's class). After a failure it drops spans
    for :data:`RETRY_AFTER_S` before it tries again.

    Returns:
        The class: ``Reporting(inner, where)``.
    """
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

    return Reporting
