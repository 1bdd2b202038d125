// Warehouse-inventory MCP server on the MCP TypeScript SDK (McpServer; 1.x or 2.x through the
// profile's sdk.mjs), over stdio or
// Streamable HTTP (LAB_TRANSPORT=stdio|http). LAB_SERVER_VARIANT=text drops get_stock_level's
// outputSchema and returns its data as a JSON text block only; =agree annotates adjust_stock as
// not destructive. The profile's instrument.mjs
// decides what telemetry the process emits.
import { z } from "zod";
import * as sdk from "./sdk.mjs";
import { setup } from "./instrument.mjs";

const { McpServer } = sdk;
const lab = await setup("server", sdk.serverModules);
const variant = process.env.LAB_SERVER_VARIANT || "structured";

const STOCK = { "SKU-1001": { sku: "SKU-1001", on_hand: 42, reserved: 5, bin: "A-03-2" } };
const SUPPLIERS = { "SKU-1001": { sku: "SKU-1001", supplier: "Northwind Fasteners", lead_time_days: 6 } };

function build() {
  // LAB_MCP_REVISION (2.x only): also offer that revision, e.g. 2026-07-28 via server/discover
  const revision = process.env.LAB_MCP_REVISION;
  const server = new McpServer(
    { name: "warehouse-inventory", version: "1.0.0" },
    revision ? { supportedProtocolVersions: [...sdk.SUPPORTED_PROTOCOL_VERSIONS, revision] } : undefined,
  );
  const tool = (name, fn) => (lab.wrapTool ? lab.wrapTool(name, fn) : fn);
  const stockShape = { sku: z.string(), on_hand: z.number().int(), reserved: z.number().int(), bin: z.string() };
  server.registerTool(
    "get_stock_level",
    {
      title: "Stock level",
      description: "Units on hand and reserved for one SKU, with its bin location.",
      inputSchema: { sku: z.string().describe("SKU, e.g. SKU-1001") },
      ...(variant !== "text" ? { outputSchema: stockShape } : {}),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    tool("get_stock_level", async ({ sku }) => {
      const row = STOCK[sku] || { sku, on_hand: 0, reserved: 0, bin: "-" };
      const text = JSON.stringify(row);
      return variant !== "text"
        ? { content: [{ type: "text", text }], structuredContent: row }
        : { content: [{ type: "text", text }] };
    }),
  );
  server.registerTool(
    "lookup_supplier",
    {
      title: "Supplier lookup",
      description: "The supplier and lead time for one SKU.",
      inputSchema: { sku: z.string() },
      outputSchema: { sku: z.string(), supplier: z.string(), lead_time_days: z.number().int() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    tool("lookup_supplier", async ({ sku }) => {
      const row = SUPPLIERS[sku];
      if (!row) return { content: [{ type: "text", text: `Unknown SKU ${sku}: no supplier on file` }], isError: true };
      return { content: [{ type: "text", text: JSON.stringify(row) }], structuredContent: row };
    }),
  );
  server.registerTool(
    "adjust_stock",
    {
      title: "Adjust stock",
      description: "Books a stock correction (write-off or found units) for one SKU. Needs a human confirmation.",
      inputSchema: { sku: z.string(), delta: z.number().int(), reason: z.string() },
      outputSchema: { sku: z.string(), on_hand: z.number().int() },
      // variant `agree`: not destructive, so the annotations imply requires_approval like the policy
      annotations: { readOnlyHint: false, destructiveHint: variant !== "agree", idempotentHint: false, openWorldHint: false },
    },
    tool("adjust_stock", async ({ sku, delta }) => {
      const row = { sku, on_hand: (STOCK[sku]?.on_hand ?? 0) + delta };
      return { content: [{ type: "text", text: JSON.stringify(row) }], structuredContent: row };
    }),
  );
  server.registerTool(
    "list_pending_orders",
    {
      title: "Pending orders",
      description: "Open customer orders waiting for one SKU.",
      inputSchema: { sku: z.string() },
      outputSchema: { sku: z.string(), orders: z.array(z.string()) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    tool("list_pending_orders", async ({ sku }) => {
      const row = { sku, orders: ["PO-7731", "PO-7740"] };
      return { content: [{ type: "text", text: JSON.stringify(row) }], structuredContent: row };
    }),
  );
  if (lab.wrapServer) lab.wrapServer(server);
  return server;
}

let stopping = false;
async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  try {
    await lab.shutdown();
  } finally {
    process.exit(code);
  }
}
process.on("SIGTERM", () => stop(0));
process.on("SIGINT", () => stop(0));

if ((process.env.LAB_TRANSPORT || "stdio") === "stdio") {
  process.stdin.on("end", () => stop(0));
  await sdk.serveStdio(build, lab.instrumentServerTransport);
} else {
  sdk.listenHttp(build, lab.instrumentServerTransport, (port) => process.stdout.write(`LISTENING ${port}\n`));
}
