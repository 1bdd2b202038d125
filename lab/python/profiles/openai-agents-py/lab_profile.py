"""Profile openai-agents-py: the host is an OpenAI Agents SDK agent (`openai-agents`; agent_host.py,
not the lab's scripted host) connected to the lab server through the SDK's own MCP client
(`MCPServerStdio` / `MCPServerStreamableHttp`), traced with OpenInference's instrumentor for the
SDK (`openinference-instrumentation-openai-agents`): `OpenAIAgentsInstrumentor().instrument(
tracer_provider=...)` registers an OpenInference TracingProcessor that turns the SDK's own trace
and spans (agent, response, function, mcp_tools) into OTel spans on the plain OTel SDK, exporting
OTLP/HTTP protobuf to the sink. By default (exclusive_processor=True) it *replaces* the SDK's
processors, so the SDK's default exporter to OpenAI's trace ingest is gone: nothing is sent to
OpenAI (`set_tracing_disabled(True)` is not used: it would stop the SDK's tracing, and with it
every span the processor receives).

OpenInference's MCP docs, whose example is an OpenAI Agents SDK client over MCPServerStdio, also
switch on `openinference-instrumentation-mcp` (`MCPInstrumentor().instrument()`) in the client and
the server process; so does this profile. It makes no spans: it wraps the MCP transports to write
the current context into `params._meta` of every request and restores it around the server's
handlers. The server switches it on before importing mcp (SETUP_BEFORE_MCP_IMPORT), as
openinference-py found necessary (it wraps `mcp.server.stdio.stdio_server` by module attribute).

openai-agents 0.24 allows mcp >=1.19,<3; pip resolves mcp 2.3.0, whose built-in OpenTelemetry is
switched on by the TracerProvider in both processes (client `MCP send ...` spans, server
`tools/call {tool}` spans, W3C context in params._meta), as in mcp2-native and pydantic-ai-mcp."""
import otel_setup

SETUP_BEFORE_MCP_IMPORT = True


def setup(role):
    provider = otel_setup.start("warehouse-agent-host" if role == "client" else "warehouse-mcp-server", role)
    from openinference.instrumentation.mcp import MCPInstrumentor

    MCPInstrumentor().instrument(tracer_provider=provider)
    if role == "client":
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
