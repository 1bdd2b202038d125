"""One agent tool call over MCP Streamable HTTP, with the official Python MCP SDK (mcp 2.x) on both
sides, for test_mcp_http_headers.py. Run as a separate process per side, because each sets its own
global OpenTelemetry tracer provider (exporting OTLP/HTTP protobuf to a tripline collector):

    python mcp_http_headers_scenario.py server PORT   # MCP_SPANS=on|off
    python mcp_http_headers_scenario.py client URL

The server is wrapped in OpenTelemetry's ASGI instrumentation, which captures the request headers
named in OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_SERVER_REQUEST (the test sets `mcp-method,
mcp-name`) as `http.request.header.mcp_method` / `..mcp_name`. With MCP_SPANS=off the SDK's own
OpenTelemetry middleware is removed, so the only server spans are HTTP spans: what a server with
HTTP instrumentation and no MCP instrumentation emits. The client's HTTP layer is not
instrumented, so no `traceparent` header is sent: the trace context travels only in the request's
`params._meta` (the MCP client SDK injects it).
"""

from __future__ import annotations

import os
import sys

import anyio
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor


def install_provider(service: str) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=os.environ["OTLP_TRACES_URL"])))
    trace.set_tracer_provider(provider)
    return provider


def server(port: int) -> None:
    install_provider("inventory-mcp")
    import uvicorn
    from mcp.server.mcpserver import MCPServer
    from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware

    mcp = MCPServer("inventory", log_level="WARNING")

    @mcp.tool(description="Units on hand for one SKU.")
    def get_stock_level(sku: str) -> dict:
        return {"sku": sku, "on_hand": 42}

    if os.environ.get("MCP_SPANS", "on") == "off":
        mcp._lowlevel_server.middleware = []  # the SDK's OpenTelemetryMiddleware
    app = OpenTelemetryMiddleware(mcp.streamable_http_app())
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


async def client(url: str) -> None:
    from mcp import Client

    provider = install_provider("agent-host")
    tracer = trace.get_tracer("tripline.test.host")
    run = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "inventory-agent",
           "gen_ai.conversation.id": "conv-headers-1"}
    with tracer.start_as_current_span("invoke_agent inventory-agent", attributes=run):
        # MCP 2026-07-28 (stateless, server/discover): the revision whose requests carry the
        # standard headers.
        async with Client(url, mode="2026-07-28") as session:
            call = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_stock_level",
                    "gen_ai.tool.call.id": "call-1"}
            with tracer.start_as_current_span("execute_tool get_stock_level", attributes=call):
                result = await session.call_tool("get_stock_level", {"sku": "SKU-1"})
                assert not result.is_error, result
    provider.shutdown()


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server(int(sys.argv[2]))
    else:
        anyio.run(client, sys.argv[2])
