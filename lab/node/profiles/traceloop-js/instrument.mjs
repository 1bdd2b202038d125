// Profile traceloop-js: @traceloop/instrumentation-mcp (OpenLLMetry JS), applied with
// manuallyInstrument({ Client }) in the host and ({ Server }) in the server, as its docs show for
// ESM. Defaults kept: content tracing on. It wraps Client.connect (a long-lived
// `mcp.client.session` span), Client.request (`{tool}.tool` / `{method}.mcp` spans parented on the
// session span) and Server.request (server-to-client requests only). It injects no trace context.
import { McpInstrumentation } from "@traceloop/instrumentation-mcp";
import { startOtel } from "./otel.mjs";

export async function setup(role, mods) {
  const mcp = new McpInstrumentation();
  const otel = await startOtel({
    serviceName: role === "client" ? "warehouse-agent-host" : "warehouse-mcp-server",
    role,
    instrumentations: [mcp],
  });
  mcp.manuallyInstrument(role === "client" ? { Client: mods.clientIndex.Client } : { Server: mods.serverIndex.Server });
  return { shutdown: otel.shutdown };
}
