// The MCP TypeScript SDK 2.x surface the lab's host and server use (copied as sdk.mjs into the
// profiles built on @modelcontextprotocol/client + /server 2.x). 2.x has no Node HTTP server
// transport of its own: the web-standard one is bridged to node:http here.
import http from "node:http";
import { Readable } from "node:stream";
import { randomUUID } from "node:crypto";
import * as client from "@modelcontextprotocol/client";
import * as clientStdioMod from "@modelcontextprotocol/client/stdio";
import * as server from "@modelcontextprotocol/server";
import * as serverStdioMod from "@modelcontextprotocol/server/stdio";

export const generation = "2.x";
export const clientModules = { clientIndex: client, clientStdio: clientStdioMod, clientHttp: client };
export const serverModules = { serverIndex: server, serverStdio: serverStdioMod, serverHttp: server };
export const SUPPORTED_PROTOCOL_VERSIONS = server.SUPPORTED_PROTOCOL_VERSIONS;
export const McpServer = server.McpServer;
export const Client = client.Client;
export const StdioClientTransport = clientStdioMod.StdioClientTransport;
export const StreamableHTTPClientTransport = client.StreamableHTTPClientTransport;
export const StdioServerTransport = serverStdioMod.StdioServerTransport;

// serveStdio owns the era decision (legacy initialize or 2026-07-28 server/discover) and serves
// both from the factory; the wire transport is ours so it can be instrumented.
export function serveStdio(build, instrument) {
  const transport = new serverStdioMod.StdioServerTransport();
  instrument?.(transport);
  return serverStdioMod.serveStdio(build, { transport });
}

export function listenHttp(build, instrument, onListening) {
  const sessions = new Map();
  const srv = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const url = `http://127.0.0.1${req.url}`;
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
    const request = new Request(url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    const sid = req.headers["mcp-session-id"];
    let transport = sid ? sessions.get(sid) : undefined;
    if (!transport) {
      transport = new server.WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      instrument?.(transport);
      await build().connect(transport);
    }
    const response = await transport.handleRequest(request);
    res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
    if (response.body) Readable.fromWeb(response.body).pipe(res);
    else res.end();
  });
  srv.listen(0, "127.0.0.1", () => onListening(srv.address().port));
}
