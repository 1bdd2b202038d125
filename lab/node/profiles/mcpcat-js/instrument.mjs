// Profile mcpcat-js: mcpcat (now renamed agentcat; 0.1.17 is the last mcpcat), a server-side MCP
// analytics SDK with its own OTLP exporter: mcpcat.track(server, null, { exporters: { otlp } })
// with no project id (nothing goes to mcpcat's service) and diagnostics off. It writes one
// OTLP/HTTP JSON request per event, with trace ids of its own. The host is plain OpenTelemetry JS
// (its agent spans only: the MCP client is not instrumented, as mcpcat has no client side).
import { startOtel } from "./otel.mjs";

const GRACE_MS = 1500; // mcpcat has no flush API; its queue drains in the background

export async function setup(role) {
  if (role === "client") {
    const otel = await startOtel({ serviceName: "warehouse-agent-host", role });
    return { shutdown: otel.shutdown };
  }
  process.env.DISABLE_DIAGNOSTICS = "true";
  const mcpcat = await import("mcpcat");
  return {
    wrapServer(server) {
      mcpcat.track(server, null, {
        disableDiagnostics: true,
        exporters: { otlp: { type: "otlp", endpoint: `${process.env.LAB_SINK}/v1/traces` } },
      });
    },
    shutdown: () => new Promise((r) => setTimeout(r, GRACE_MS)),
  };
}
