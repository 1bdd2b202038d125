"""Profile pydantic-ai-mcp: the host is a Pydantic AI agent (agent_host.py, not the lab's scripted
host) with Pydantic AI's own OpenTelemetry instrumentation, `Agent.instrument_all(
InstrumentationSettings())` (defaults: content on, data format version 5), on the plain OTel SDK
exporting OTLP/HTTP protobuf to the sink. Pydantic AI 2.x's MCP client is FastMCP's, on the
official `mcp` 2.x SDK, so both processes run mcp 2.3.0: the server is the lab's server on
MCPServer, whose built-in OpenTelemetry (as in mcp2-native) is switched on by the TracerProvider,
and so is the client's (`MCP send ...` spans, W3C context in params._meta)."""
import otel_setup


def setup(role):
    otel_setup.start("warehouse-agent-host" if role == "client" else "warehouse-mcp-server", role)
    if role == "client":
        from pydantic_ai import Agent
        from pydantic_ai.models.instrumented import InstrumentationSettings

        Agent.instrument_all(InstrumentationSettings())
