// The MCP TypeScript SDK 1.x surface the lab's host and server use (copied as sdk.mjs into the
// profiles built on @modelcontextprotocol/sdk 1.x).
import http from "node:http";
import { randomUUID } from "node:crypto";
import * as clientIndex from "@modelcontextprotocol/sdk/client/index.js";
import * as clientStdio from "@modelcontextprotocol/sdk/client/stdio.js";
import * as clientHttp from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import * as serverIndex from "@modelcontextprotocol/sdk/server/index.js";
import * as serverStdio from "@modelcontextprotocol/sdk/server/stdio.js";
import * as serverHttp from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

export const generation = "1.x";
export const clientModules = { clientIndex, clientStdio, clientHttp };
export const serverModules = { serverIndex, serverStdio, serverHttp };
export { McpServer };
export const SUPPORTED_PROTOCOL_VERSIONS = undefined; // 1.x: not needed (no revision pinning)
export const Client = clientIndex.Client;
export const StdioClientTransport = clientStdio.StdioClientTransport;
export const StreamableHTTPClientTransport = clientHttp.StreamableHTTPClientTransport;
export const StdioServerTransport = serverStdio.StdioServerTransport;

export async function serveStdio(build, instrument) {
  const transport = new serverStdio.StdioServerTransport();
  instrument?.(transport);
  await build().connect(transport);
}

// Streamable HTTP, stateful: one transport + server per session. Calls back with the port.
export function listenHttp(build, instrument, onListening) {
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
      instrument?.(transport);
      await build().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  srv.listen(0, "127.0.0.1", () => onListening(srv.address().port));
}
