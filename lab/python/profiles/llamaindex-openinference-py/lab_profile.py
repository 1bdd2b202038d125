"""Profile llamaindex-openinference-py: the host is a LlamaIndex agent (agent_host.py, not the
lab's scripted host): `llama_index.core.agent.workflow.FunctionAgent` (`llama-index-core`) with
the lab server's MCP tools loaded by `llama-index-tools-mcp` (`McpToolSpec(BasicMCPClient(...))
.to_tool_list_async()`, over stdio or Streamable HTTP), traced with OpenInference's LlamaIndex
instrumentor (`openinference-instrumentation-llama-index`,
`LlamaIndexInstrumentor().instrument(tracer_provider=...)`) on the plain OTel SDK, exporting
OTLP/HTTP protobuf to the sink.

llama-index-tools-mcp 0.6.0 allows mcp 2.x; pip resolves mcp 2.3.0, whose built-in
OpenTelemetry is switched on by the TracerProvider in both processes (client `MCP send ...`
spans, server `tools/call {tool}` spans, W3C context in params._meta), as in mcp2-native.
OpenInference's MCP docs also switch on `openinference-instrumentation-mcp`
(`MCPInstrumentor().instrument()`) in the client and the server for context propagation; so does
this profile. It makes no spans: it writes the current context into params._meta of every request
and restores it around the server's handlers (with mcp 2.x the SDK already does both). The
server switches it on before importing mcp (SETUP_BEFORE_MCP_IMPORT), as openinference-py found
necessary (it wraps `mcp.server.stdio.stdio_server` by module attribute)."""
import otel_setup

SETUP_BEFORE_MCP_IMPORT = True


def setup(role):
    provider = otel_setup.start("warehouse-agent-host" if role == "client" else "warehouse-mcp-server", role)
    from openinference.instrumentation.mcp import MCPInstrumentor

    MCPInstrumentor().instrument(tracer_provider=provider)
    if role == "client":
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

        LlamaIndexInstrumentor().instrument(tracer_provider=provider)
