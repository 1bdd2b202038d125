"""Profile langgraph-openinference-py: the host is a LangChain/LangGraph agent (agent_host.py, not
the lab's scripted host): `langchain.agents.create_agent` (LangGraph's current agent builder;
`langgraph.prebuilt.create_react_agent` is deprecated in LangGraph 1.x in its favour) with the
MCP tools of `langchain-mcp-adapters` (`MultiServerMCPClient(...).get_tools()`), traced with
OpenInference's LangChain instrumentor (`openinference-instrumentation-langchain`,
`LangChainInstrumentor().instrument(tracer_provider=...)`) on the plain OTel SDK, exporting
OTLP/HTTP protobuf to the sink.

langchain-mcp-adapters 0.3.2 requires mcp >=1.24,<2, so both processes run mcp 1.30.0 (FastMCP),
which has no OpenTelemetry of its own. OpenInference's MCP docs switch on
`openinference-instrumentation-mcp` (`MCPInstrumentor().instrument()`) in the client and the
server for context propagation; so does this profile. It makes no spans: it writes the current
context into params._meta of every request and restores it around the server's handlers. Server
spans come from the tool functions traced the OpenInference way, as in openinference-py: each
wrapped with an `OITracer`'s `tool` decorator (INTERNAL span named for the tool,
`openinference.span.kind=TOOL`, `input.value` = the arguments, `output.value` = the function's
return value). The server switches the instrumentor on before importing mcp
(SETUP_BEFORE_MCP_IMPORT): it wraps `mcp.server.stdio.stdio_server` by module attribute."""
import otel_setup

SETUP_BEFORE_MCP_IMPORT = True
_tracer = None


def setup(role):
    global _tracer
    provider = otel_setup.start("warehouse-agent-host" if role == "client" else "warehouse-mcp-server", role)
    from openinference.instrumentation.mcp import MCPInstrumentor

    MCPInstrumentor().instrument(tracer_provider=provider)
    if role == "client":
        from openinference.instrumentation.langchain import LangChainInstrumentor

        LangChainInstrumentor().instrument(tracer_provider=provider)
    else:
        from openinference.instrumentation import OITracer, TraceConfig

        _tracer = OITracer(provider.get_tracer("warehouse-inventory.tools"), config=TraceConfig())


def wrap_tool(fn):
    return _tracer.tool(fn)
