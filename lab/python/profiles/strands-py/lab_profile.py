"""Profile strands-py: the host is an AWS Strands Agents agent (agent_host.py, not the lab's scripted
host) with Strands' built-in OpenTelemetry switched on as its docs say:
`StrandsTelemetry().setup_otlp_exporter(endpoint=...)` (its own SDK TracerProvider, set as the
global one, with the W3C baggage + tracecontext propagators; OTLP/HTTP protobuf to the sink).
Strands builds the resource itself (`Resource.create` with `service.name` from OTEL_SERVICE_NAME,
`service.version` = the strands-agents version, telemetry.sdk.*; the SDK's default `otel` detector
only, which reads OTEL_RESOURCE_ATTRIBUTES: no host, process or cloud detector), so the lab's names
go in through the environment. GenAI semantic conventions are Strands' default (no
OTEL_SEMCONV_STABILITY_OPT_IN). Strands pins `mcp<2.2`: both processes run mcp 2.1.1, whose
built-in OpenTelemetry emits the client's `MCP send ...` spans and the server's spans (as
mcp2-native) once a TracerProvider exists. The server is the lab's server with the plain OTel SDK
set-up (otel_setup), as mcp2-native."""
import os

import otel_setup


def setup(role):
    if role != "client":
        otel_setup.start("warehouse-mcp-server", role)
        return
    os.environ["OTEL_SERVICE_NAME"] = "warehouse-agent-host"
    os.environ["OTEL_RESOURCE_ATTRIBUTES"] = "lab.role=client"
    from strands.telemetry import StrandsTelemetry

    telemetry = StrandsTelemetry().setup_otlp_exporter(endpoint=os.environ["LAB_SINK"] + "/v1/traces")
    if os.environ.get("OTEL_PROPAGATORS") == "none":
        # StrandsTelemetry installs its own propagators (baggage + tracecontext) whatever
        # OTEL_PROPAGATORS says: the lab host turns propagation off for W8 after it.
        from opentelemetry import propagate
        from opentelemetry.propagators.composite import CompositePropagator

        propagate.set_global_textmap(CompositePropagator([]))
    return telemetry
