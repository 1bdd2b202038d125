"""Warehouse-inventory MCP server on the official Python SDK (FastMCP of mcp 1.x, or its mcp 2.x
successor MCPServer), the same tools
as lab/node/common/server.mjs, over stdio or Streamable HTTP (LAB_TRANSPORT). LAB_SERVER_VARIANT=text
makes get_stock_level return a JSON text block only (no outputSchema); =agree annotates adjust_stock
as not destructive. A tool error is raised as
an exception, which FastMCP turns into a result with isError: true. The profile module
(lab_profile.py) decides what telemetry the process emits; its optional `wrap_tool(fn)` wraps each
tool function (OpenInference's tool decorator)."""
import json
import os

import lab_profile

# Profiles are switched on after `mcp` is imported (importing mcp.types loads mcp.server.fastmcp),
# except those whose library patches module-level names that FastMCP binds at import time
# (OpenInference wraps mcp.server.stdio.stdio_server): they are switched on first, as their
# users must do.
EARLY = getattr(lab_profile, "SETUP_BEFORE_MCP_IMPORT", False)
if EARLY:
    lab_profile.setup("server")

from warehouse import (ADJUST_DESCRIPTION, ORDERS_DESCRIPTION, READ, STOCK_DESCRIPTION, SUPPLIER_DESCRIPTION,  # noqa: E402
                       Adjusted, Orders, Stock, Supplier, adjust_annotations, adjusted, pending_orders, stock_of, supplier_of)

if not EARLY:
    lab_profile.setup("server")
# A profile may trace the tool functions themselves (e.g. OpenInference's tool decorator); the
# wrapper must keep the function's signature, so the tools' schemas stay the same.
tool = getattr(lab_profile, "wrap_tool", None) or (lambda fn: fn)
variant = os.environ.get("LAB_SERVER_VARIANT", "structured")
port = int(os.environ.get("LAB_PORT", "0") or 0)
try:  # mcp 2.x renamed FastMCP to MCPServer; host and port moved to run()
    from mcp.server.mcpserver import MCPServer

    mcp = MCPServer("warehouse-inventory", log_level="WARNING")
    V2 = True
except ImportError:
    from mcp.server.fastmcp import FastMCP

    mcp = FastMCP("warehouse-inventory", host="127.0.0.1", port=port or 8000, log_level="WARNING")
    V2 = False

if variant != "text":
    @mcp.tool(description=STOCK_DESCRIPTION, annotations=READ)
    @tool
    def get_stock_level(sku: str) -> Stock:
        return Stock(**stock_of(sku))
else:
    @mcp.tool(description=STOCK_DESCRIPTION, annotations=READ, structured_output=False)
    @tool
    def get_stock_level(sku: str) -> str:
        return json.dumps(stock_of(sku))


@mcp.tool(description=SUPPLIER_DESCRIPTION, annotations=READ)
@tool
def lookup_supplier(sku: str) -> Supplier:
    return supplier_of(sku, ValueError)


@mcp.tool(description=ADJUST_DESCRIPTION, annotations=adjust_annotations(variant))
@tool
def adjust_stock(sku: str, delta: int, reason: str) -> Adjusted:
    return adjusted(sku, delta)


@mcp.tool(description=ORDERS_DESCRIPTION, annotations=READ)
@tool
def list_pending_orders(sku: str) -> Orders:
    return pending_orders(sku)


if __name__ == "__main__":
    if os.environ.get("LAB_TRANSPORT", "stdio") == "stdio":
        mcp.run("stdio")
    elif V2:
        mcp.run("streamable-http", host="127.0.0.1", port=port)
    else:
        mcp.run(transport="streamable-http")
