// Profile openinference-js: @arizeai/openinference-instrumentation-mcp, applied with
// manuallyInstrument (its auto-instrumentation does not reach ESM imports, as its docs say). The
// library emits NO spans: it patches the transports' send/start to carry W3C trace context in
// params._meta and to restore it around the server's handlers. Server-side spans therefore come
// from the tool code, traced the OpenInference way: each tool handler wrapped with
// @arizeai/openinference-core traceTool (a TOOL span with input.value / output.value).
import { MCPInstrumentation } from "@arizeai/openinference-instrumentation-mcp";
import { traceTool } from "@arizeai/openinference-core";
import { startOtel } from "./otel.mjs";

export async function setup(role, mods) {
  const mcp = new MCPInstrumentation();
  const otel = await startOtel({
    serviceName: role === "client" ? "warehouse-agent-host" : "warehouse-mcp-server",
    role,
    instrumentations: [mcp],
  });
  mcp.manuallyInstrument(
    role === "client"
      ? { clientStdioModule: mods.clientStdio, clientStreamableHTTPModule: mods.clientHttp }
      : { serverStdioModule: mods.serverStdio, serverStreamableHTTPModule: mods.serverHttp },
  );
  return {
    shutdown: otel.shutdown,
    wrapTool: role === "server" ? (name, fn) => traceTool(fn, { name }) : undefined,
  };
}
