"""Profile fastmcp-native: FastMCP (PyPI `fastmcp`, the standalone framework) with its built-in
OpenTelemetry on both sides, switched on as its docs say: FastMCP uses only the OpenTelemetry API
and emits its spans (server SERVER spans per request, client CLIENT spans per call, W3C context in
params._meta) once an SDK TracerProvider with an exporter is installed, which is all this does
(OTLP/HTTP protobuf to the sink, no resource detectors). fastmcp runs on the official `mcp` 2.x
SDK, whose own built-in OpenTelemetry is switched on by the same TracerProvider (`MCP send ...`
client spans under FastMCP's). The server is this profile's server.py (a FastMCP server), the
host agent_host.py (the scripted host calling tools through fastmcp.Client)."""
import otel_setup


def setup(role):
    otel_setup.start("warehouse-agent-host" if role == "client" else "warehouse-mcp-server", role)
