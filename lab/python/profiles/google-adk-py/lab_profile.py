"""Profile google-adk-py: the host is a Google ADK agent (agent_host.py, not the lab's scripted
host) with ADK's built-in OpenTelemetry tracing (tracer `gcp.vertex.agent`; its spans are no-ops
until a TracerProvider exists). No ADK telemetry helper is used (`maybe_set_otel_providers` /
Google Cloud exporters would read OTel env vars or call Cloud endpoints): our own plain
TracerProvider (lab resource only, no detectors) exporting OTLP/HTTP protobuf to the sink, as
ADK's docs allow ("If the TracerProvider was already set outside of ADK ... we rely on user
setup"). ADK's default telemetry schema (v2, GenAI-semconv aligned) with span content switched on
by the OTel knob `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY` (set by
agent_host.py before ADK is imported); lab/record's `-adk-schema1` variants set
`ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1`, ADK's legacy format (call_llm, gcp.vertex.agent.* content). ADK's MCP client is the official `mcp` SDK (2.3.0 here;
ADK allows mcp>=1.24,<3), so both processes also emit the SDK's built-in spans (as mcp2-native):
the lab server on MCPServer, and the client's `MCP send ...` spans."""
import otel_setup


def setup(role):
    otel_setup.start("warehouse-agent-host" if role == "client" else "warehouse-mcp-server", role)
