// The warehouse-inventory scenarios the scripted host plays. Each turn is one model call (a `chat`
// span advertising `allow` as gen_ai.tool.definitions) followed by the tool calls it requested.
// `approve: true` puts a guardrail require_approval -> allow pair before the call.
export const AGENT = "warehouse-assistant";

const READ = ["get_stock_level", "lookup_supplier"];
const WITH_WRITE = ["get_stock_level", "lookup_supplier", "adjust_stock"];

export const SCENARIOS = {
  "W1-structured-healthy": {
    doc: "get_stock_level(SKU-1001) on the structured server: read-only, outputSchema, structuredContent.",
    turns: [{ allow: READ, calls: [{ tool: "get_stock_level", args: { sku: "SKU-1001" } }] }],
  },
  "W2-text-only": {
    doc: "The same read on the text server variant: get_stock_level returns only a text block holding JSON.",
    server: "text",
    turns: [{ allow: READ, calls: [{ tool: "get_stock_level", args: { sku: "SKU-1001" } }] }],
  },
  "W3-write-confirmed": {
    doc: "get_stock_level, then adjust_stock(SKU-1001, -3) after an approval (guardrail require_approval -> allow).",
    turns: [
      { allow: WITH_WRITE, calls: [{ tool: "get_stock_level", args: { sku: "SKU-1001" } }] },
      { allow: WITH_WRITE, calls: [{ tool: "adjust_stock", args: { sku: "SKU-1001", delta: -3, reason: "damaged in transit" }, approve: true }] },
    ],
  },
  "W4-write-unconfirmed": {
    doc: "get_stock_level, then adjust_stock(SKU-1001, -3) with no approval.",
    turns: [
      { allow: WITH_WRITE, calls: [{ tool: "get_stock_level", args: { sku: "SKU-1001" } }] },
      { allow: WITH_WRITE, calls: [{ tool: "adjust_stock", args: { sku: "SKU-1001", delta: -3, reason: "damaged in transit" } }] },
    ],
  },
  "W5-error-retry": {
    doc: "lookup_supplier(SKU-404) returns isError; the host repeats the identical call twice more (3 errors).",
    turns: [
      { allow: READ, calls: [{ tool: "lookup_supplier", args: { sku: "SKU-404" } }] },
      { allow: READ, calls: [{ tool: "lookup_supplier", args: { sku: "SKU-404" } }] },
      { allow: READ, calls: [{ tool: "lookup_supplier", args: { sku: "SKU-404" } }] },
    ],
  },
  "W6-error-corrected": {
    doc: "lookup_supplier(SKU-404) returns isError; the model corrects the argument: lookup_supplier(SKU-1001) succeeds.",
    turns: [
      { allow: READ, calls: [{ tool: "lookup_supplier", args: { sku: "SKU-404" } }] },
      { allow: READ, calls: [{ tool: "lookup_supplier", args: { sku: "SKU-1001" } }] },
    ],
  },
  "W7-hidden-tool": {
    doc: "The model is shown get_stock_level and lookup_supplier only; the host calls list_pending_orders (read-only, listed by the server) anyway.",
    turns: [
      { allow: READ, calls: [{ tool: "get_stock_level", args: { sku: "SKU-1001" } }] },
      { allow: READ, calls: [{ tool: "list_pending_orders", args: { sku: "SKU-1001" } }] },
    ],
  },
  "W8-propagation-off": {
    doc: "W1's read plus lookup_supplier(SKU-1001), with the host's propagator off: no trace context in params._meta.",
    propagation: "off",
    turns: [
      { allow: READ, calls: [{ tool: "get_stock_level", args: { sku: "SKU-1001" } }] },
      { allow: READ, calls: [{ tool: "lookup_supplier", args: { sku: "SKU-1001" } }] },
    ],
  },
};
