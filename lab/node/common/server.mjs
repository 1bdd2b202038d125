// Warehouse-inventory MCP server on the MCP TypeScript SDK 1.x (McpServer), over stdio or
// Streamable HTTP (LAB_TRANSPORT=stdio|http). LAB_SERVER_VARIANT=text drops get_stock_level's
// outputSchema and returns its data as a JSON text block only. The profile's instrument.mjs
// decides what telemetry the process emits.
import http from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import * as serverIndex from "@modelcontextprotocol/sdk/server/index.js";
import * as serverStdio from "@modelcontextprotocol/sdk/server/stdio.js";
import * as serverHttp from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { setup } from "./instrument.mjs";

const lab = await setup("server", { serverIndex, serverStdio, serverHttp });
const variant = process.env.LAB_SERVER_VARIANT || "structured";

const STOCK = { "SKU-1001": { sku: "SKU-1001", on_hand: 42, reserved: 5, bin: "A-03-2" } };
const SUPPLIERS = { "SKU-1001": { sku: "SKU-1001", supplier: "Northwind Fasteners", lead_time_days: 6 } };

function build() {
  const server = new McpServer({ name: "warehouse-inventory", version: "1.0.0" });
  const tool = (name, fn) => (lab.wrapTool ? lab.wrapTool(name, fn) : fn);
  const stockShape = { sku: z.string(), on_hand: z.number().int(), reserved: z.number().int(), bin: z.string() };
  server.registerTool(
    "get_stock_level",
    {
      title: "Stock level",
      description: "Units on hand and reserved for one SKU, with its bin location.",
      inputSchema: { sku: z.string().describe("SKU, e.g. SKU-1001") },
      ...(variant === "structured" ? { outputSchema: stockShape } : {}),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    tool("get_stock_level", async ({ sku }) => {
      const row = STOCK[sku] || { sku, on_hand: 0, reserved: 0, bin: "-" };
      const text = JSON.stringify(row);
      return variant === "structured"
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
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
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
  const transport = new serverStdio.StdioServerTransport();
  if (lab.instrumentServerTransport) lab.instrumentServerTransport(transport);
  process.stdin.on("end", () => stop(0));
  await build().connect(transport);
} else {
  const sessions = new Map();
  const srv = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const sid = req.headers["mcp-session-id"];
    let transport = sid ? sessions.get(sid) : undefined;
    if (!transport) {
      transport = new serverHttp.StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      if (lab.instrumentServerTransport) lab.instrumentServerTransport(transport);
      await build().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  srv.listen(0, "127.0.0.1", () => {
    process.stdout.write(`LISTENING ${srv.address().port}\n`);
  });
}
