"""Plain OpenTelemetry Python SDK set-up shared by the Python profiles: a TracerProvider with only
the resource written here (no host, process or cloud detectors: recordings must not carry this
machine's names, and cloud detectors would call metadata endpoints), exporting OTLP/HTTP protobuf
to the recording sink (LAB_SINK). Propagators come from OTEL_PROPAGATORS as in any OTel app
(lab sets it to `none` in the host for the propagation-off scenarios)."""
import os

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor


def start(service_name, role):
    provider = TracerProvider(resource=Resource({"service.name": service_name, "service.version": "lab-1", "lab.role": role}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=os.environ["LAB_SINK"] + "/v1/traces"), schedule_delay_millis=500))
    trace.set_tracer_provider(provider)
    return provider
