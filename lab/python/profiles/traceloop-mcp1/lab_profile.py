"""Profile traceloop-mcp1: Traceloop's opentelemetry-instrumentation-mcp (OpenLLMetry, Python) on
mcp 1.30.0 (it fails to instrument mcp 2.x), with its defaults (content tracing on), on the plain
OTel SDK: McpInstrumentor().instrument() in host and server."""
import otel_setup
from opentelemetry.instrumentation.mcp import McpInstrumentor


def setup(role):
    otel_setup.start("warehouse-agent-host" if role == "client" else "warehouse-mcp-server", role)
    McpInstrumentor().instrument()
