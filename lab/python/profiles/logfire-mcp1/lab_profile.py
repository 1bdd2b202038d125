"""Profile logfire-mcp1: Pydantic Logfire's MCP instrumentation (`logfire.instrument_mcp()`, for
mcp 1.x; with mcp 2 Logfire relies on the SDK's own spans) on mcp 1.30.0. Logfire owns the
OpenTelemetry set-up: `logfire.configure(send_to_logfire=False, ...)` with the lab's OTLP/HTTP
protobuf exporter as an additional span processor, console output off. Logfire puts this
machine's host.name, host.id (the machine id) and kernel version into the resource; its documented
`resource_attributes` (which take precedence) replace them with placeholders, so recordings do not
name this machine."""
import os

import logfire
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import BatchSpanProcessor


def setup(role):
    logfire.configure(
        send_to_logfire=False,
        service_name="warehouse-agent-host" if role == "client" else "warehouse-mcp-server",
        service_version="lab-1",
        console=False,
        resource_attributes={"host.name": "lab-host", "host.id": "lab-host-id", "os.version": "lab"},
        additional_span_processors=[BatchSpanProcessor(OTLPSpanExporter(endpoint=os.environ["LAB_SINK"] + "/v1/traces"), schedule_delay_millis=500)],
    )
    logfire.instrument_mcp()
