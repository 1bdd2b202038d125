"""Warehouse-inventory MCP server on FastMCP (PyPI `fastmcp`, the standalone framework; replaces
the lab's common server.py in this profile's run directory): the same four tools as
lab/python/common/server.py, over stdio or Streamable HTTP (LAB_TRANSPORT). Tools return pydantic
models, so FastMCP derives an outputSchema and sends structuredContent; LAB_SERVER_VARIANT=text
makes get_stock_level return a JSON string with no output schema (one text block); =agree
annotates adjust_stock as not destructive. A tool error is raised as FastMCP's ToolError, which
FastMCP turns into a result with isError: true. Telemetry: FastMCP's built-in OpenTelemetry, on
once lab_profile.setup installs the TracerProvider."""
import json
import os

import lab_profile

lab_profile.setup("server")

from fastmcp import FastMCP  # noqa: E402
from fastmcp.exceptions import ToolError  # noqa: E402
from warehouse import (ADJUST_DESCRIPTION, ORDERS_DESCRIPTION, READ, STOCK_DESCRIPTION, SUPPLIER_DESCRIPTION,  # noqa: E402
                       Adjusted, Orders, Stock, Supplier, adjust_annotations, adjusted, pending_orders, stock_of, supplier_of)

variant = os.environ.get("LAB_SERVER_VARIANT", "structured")
port = int(os.environ.get("LAB_PORT", "0") or 0)
mcp = FastMCP("warehouse-inventory")

if variant != "text":
    @mcp.tool(description=STOCK_DESCRIPTION, annotations=READ)
    def get_stock_level(sku: str) -> Stock:
        return Stock(**stock_of(sku))
else:
    @mcp.tool(description=STOCK_DESCRIPTION, annotations=READ, output_schema=None)
    def get_stock_level(sku: str) -> str:
        return json.dumps(stock_of(sku))


@mcp.tool(description=SUPPLIER_DESCRIPTION, annotations=READ)
def lookup_supplier(sku: str) -> Supplier:
    return supplier_of(sku, ToolError)


@mcp.tool(description=ADJUST_DESCRIPTION, annotations=adjust_annotations(variant))
def adjust_stock(sku: str, delta: int, reason: str) -> Adjusted:
    return adjusted(sku, delta)


@mcp.tool(description=ORDERS_DESCRIPTION, annotations=READ)
def list_pending_orders(sku: str) -> Orders:
    return pending_orders(sku)


if __name__ == "__main__":
    if os.environ.get("LAB_TRANSPORT", "stdio") == "stdio":
        mcp.run("stdio", show_banner=False, log_level="WARNING")
    else:
        mcp.run("http", host="127.0.0.1", port=port, path="/mcp", show_banner=False, log_level="WARNING")
