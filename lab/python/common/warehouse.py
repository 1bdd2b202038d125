"""The warehouse behind the lab's MCP servers (common/server.py on the official SDK, and
fastmcp-native's server.py on FastMCP): its data, the tools' return types (pydantic models, from
which a server derives each tool's outputSchema), descriptions and annotations. The tool functions
stay in each server (their signatures make the input schemas). A server imports this module where
it would import `mcp.types` and pydantic: after the profile is switched on, or before for a
profile that must be switched on after mcp is imported."""
from mcp.types import ToolAnnotations
from pydantic import BaseModel

STOCK = {"SKU-1001": {"sku": "SKU-1001", "on_hand": 42, "reserved": 5, "bin": "A-03-2"}}
SUPPLIERS = {"SKU-1001": {"sku": "SKU-1001", "supplier": "Northwind Fasteners", "lead_time_days": 6}}
READ = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
STOCK_DESCRIPTION = "Units on hand and reserved for one SKU, with its bin location."
SUPPLIER_DESCRIPTION = "The supplier and lead time for one SKU."
ADJUST_DESCRIPTION = "Books a stock correction (write-off or found units) for one SKU. Needs a human confirmation."
ORDERS_DESCRIPTION = "Open customer orders waiting for one SKU."


def adjust_annotations(variant):
    """adjust_stock's annotations: a destructive write, except in variant `agree` (not
    destructive, so the annotations imply requires_approval like the policy)."""
    return ToolAnnotations(readOnlyHint=False, destructiveHint=variant != "agree", idempotentHint=False, openWorldHint=False)


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


def stock_of(sku):
    """get_stock_level's answer as a dict (an unknown SKU has none on hand)."""
    return STOCK.get(sku, {"sku": sku, "on_hand": 0, "reserved": 0, "bin": "-"})


def supplier_of(sku, error):
    """lookup_supplier's answer; an unknown SKU raises `error` (the exception type the server
    turns into an isError result)."""
    if sku not in SUPPLIERS:
        raise error(f"Unknown SKU {sku}: no supplier on file")
    return Supplier(**SUPPLIERS[sku])


def adjusted(sku, delta):
    return Adjusted(sku=sku, on_hand=STOCK.get(sku, {}).get("on_hand", 0) + delta)


def pending_orders(sku):
    return Orders(sku=sku, orders=["PO-7731", "PO-7740"])
