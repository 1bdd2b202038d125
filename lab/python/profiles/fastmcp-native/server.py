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
from mcp.types import ToolAnnotations  # noqa: E402
from pydantic import BaseModel  # noqa: E402

variant = os.environ.get("LAB_SERVER_VARIANT", "structured")
port = int(os.environ.get("LAB_PORT", "0") or 0)
mcp = FastMCP("warehouse-inventory")

STOCK = {"SKU-1001": {"sku": "SKU-1001", "on_hand": 42, "reserved": 5, "bin": "A-03-2"}}
SUPPLIERS = {"SKU-1001": {"sku": "SKU-1001", "supplier": "Northwind Fasteners", "lead_time_days": 6}}
READ = ToolAnnotations(readOnlyHint=True, openWorldHint=False)


class Stock(BaseModel):
    sku: str
    on_hand: int
    reserved: int
    bin: str


class Supplier(BaseModel):
    sku: str
    supplier: str
    lead_time_days: int


class Adjusted(BaseModel):
    sku: str
    on_hand: int


class Orders(BaseModel):
    sku: str
    orders: list[str]


if variant != "text":
    @mcp.tool(description="Units on hand and reserved for one SKU, with its bin location.", annotations=READ)
    def get_stock_level(sku: str) -> Stock:
        return Stock(**STOCK.get(sku, {"sku": sku, "on_hand": 0, "reserved": 0, "bin": "-"}))
else:
    @mcp.tool(description="Units on hand and reserved for one SKU, with its bin location.", annotations=READ, output_schema=None)
    def get_stock_level(sku: str) -> str:
        return json.dumps(STOCK.get(sku, {"sku": sku, "on_hand": 0, "reserved": 0, "bin": "-"}))


@mcp.tool(description="The supplier and lead time for one SKU.", annotations=READ)
def lookup_supplier(sku: str) -> Supplier:
    if sku not in SUPPLIERS:
        raise ToolError(f"Unknown SKU {sku}: no supplier on file")
    return Supplier(**SUPPLIERS[sku])


@mcp.tool(description="Books a stock correction (write-off or found units) for one SKU. Needs a human confirmation.",
          # variant `agree`: not destructive, so the annotations imply requires_approval like the policy
          annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=variant != "agree", idempotentHint=False, openWorldHint=False))
def adjust_stock(sku: str, delta: int, reason: str) -> Adjusted:
    return Adjusted(sku=sku, on_hand=STOCK.get(sku, {}).get("on_hand", 0) + delta)


@mcp.tool(description="Open customer orders waiting for one SKU.", annotations=READ)
def list_pending_orders(sku: str) -> Orders:
    return Orders(sku=sku, orders=["PO-7731", "PO-7740"])


if __name__ == "__main__":
    if os.environ.get("LAB_TRANSPORT", "stdio") == "stdio":
        mcp.run("stdio", show_banner=False, log_level="WARNING")
    else:
        mcp.run("http", host="127.0.0.1", port=port, path="/mcp", show_banner=False, log_level="WARNING")
