"""Profile adot-mcp1: the MCP instrumentation of the AWS Distro for OpenTelemetry Python
(amazon.opentelemetry.distro.instrumentation.mcp.McpInstrumentor, unmodified), on mcp 1.x (the
distro supports `mcp >= 1.10, < 2` only). Applied the way `opentelemetry-instrument` applies it
(BaseInstrumentor.instrument()) but on the plain OTel SDK, not the distro's configurator: the
configurator's EC2/ECS/EKS resource detectors would call cloud metadata endpoints and its default
exporters target AWS. Client and server sides are both instrumented; it records
gen_ai.tool.call.result, error.type=tool_error and W3C context in params._meta."""
import otel_setup
from amazon.opentelemetry.distro.instrumentation.mcp import McpInstrumentor


def setup(role):
    otel_setup.start("warehouse-agent-host" if role == "client" else "warehouse-mcp-server", role)
    McpInstrumentor().instrument()
