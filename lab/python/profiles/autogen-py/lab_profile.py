"""Profile autogen-py: the host is a Microsoft AutoGen AgentChat agent (agent_host.py, not the lab's
scripted host) with AutoGen's built-in OpenTelemetry tracing (autogen_core._telemetry: GenAI
`create_agent` / `invoke_agent` / `execute_tool` spans, tracer `autogen-core`), which is a no-op
until a TracerProvider exists: as its docs say, the host only installs one (the plain OTel SDK,
OTLP/HTTP protobuf to the sink, no resource detectors; otel_setup). autogen-ext 0.7.5's MCP tools
import `mcp.shared.context.RequestContext`, which mcp 2.x no longer has, so both processes run
mcp 1.30.0: the SDK has no telemetry of its own there (no client or server spans, no trace context
in params._meta). The server process installs the same TracerProvider; it has nothing to emit."""
import otel_setup


def setup(role):
    otel_setup.start("warehouse-agent-host" if role == "client" else "warehouse-mcp-server", role)
