"""Profile openinference-py: Arize OpenInference's Python MCP instrumentation
(`openinference-instrumentation-mcp`, MCPInstrumentor().instrument(), for mcp >= 1.24) on mcp
1.30.0 (FastMCP server, ClientSession host), on the plain OTel SDK. The library emits NO spans: it
wraps the transports (stdio, Streamable HTTP) to inject W3C trace context into params._meta of
every request and to restore it around the server's handlers (ServerSession's incoming stream).
Server-side spans therefore come from the tool code, traced the OpenInference way (the Python twin
of lab/node/profiles/openinference-js's traceTool): each tool function wrapped with the `tool`
decorator of an `OITracer` (openinference-instrumentation), which makes an INTERNAL span named for
the function with `openinference.span.kind=TOOL`, `tool.name`/`tool.description`/`tool.parameters`,
`input.value` (the bound arguments as JSON) and `output.value` (the function's return value).

The instrumentor wraps `mcp.server.stdio.stdio_server` by module attribute (wrapt post-import
hook), and FastMCP binds that name when mcp.server.fastmcp is imported, which any `import mcp...`
does (mcp/__init__ pulls it in). Switched on after an `mcp` import, the server's stdio transport
stays unwrapped and no context reaches the tools (seen in a first recording: every stdio server
span a root, Streamable HTTP fine, since StreamableHTTPServerTransport.connect is patched on the
class). So the server switches it on before importing mcp (SETUP_BEFORE_MCP_IMPORT), as the host
does anyway."""
import otel_setup
from openinference.instrumentation import OITracer, TraceConfig
from openinference.instrumentation.mcp import MCPInstrumentor
from opentelemetry import trace

SETUP_BEFORE_MCP_IMPORT = True
_tracer = None


def setup(role):
    global _tracer
    otel_setup.start("warehouse-agent-host" if role == "client" else "warehouse-mcp-server", role)
    MCPInstrumentor().instrument()
    if role == "server":
        _tracer = OITracer(trace.get_tracer("warehouse-inventory.tools"), config=TraceConfig())


def wrap_tool(fn):
    return _tracer.tool(fn)
