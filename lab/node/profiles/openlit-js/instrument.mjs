// Profile openlit-js: OpenLIT's Node SDK (`openlit`), which owns the OpenTelemetry set-up as its
// users let it: Openlit.init({ otlpEndpoint, applicationName, instrumentations: { mcp: <SDK> } }),
// the documented manual patch for ESM. Metrics and events off (traces only), pricing from an
// empty local file (the default fetches a price list from the internet). OpenLIT exports OTLP/HTTP
// JSON only. It wraps Client.callTool / listTools (client spans with mcp.* attributes, the result's
// content blocks, isError as an error message); it injects no trace context.
import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { trace } from "@opentelemetry/api";
import openlit from "openlit";

export async function setup(role, mods) {
  const pricing = path.join(os.tmpdir(), "tripline-lab-openlit-pricing.json");
  writeFileSync(pricing, "{}");
  const Openlit = openlit.default ?? openlit.Openlit ?? openlit;
  const sdk = {
    ...(mods.clientIndex || {}),
    ...(mods.serverIndex || {}),
    ...(mods.clientStdio || {}),
    ...(mods.serverStdio || {}),
    ...(mods.clientHttp || {}),
    ...(mods.serverHttp || {}),
  };
  Openlit.init({
    applicationName: role === "client" ? "warehouse-agent-host" : "warehouse-mcp-server",
    environment: "lab",
    otlpEndpoint: process.env.LAB_SINK,
    disableMetrics: true,
    disableEvents: true,
    pricingJson: pricing,
    instrumentations: { mcp: sdk },
  });
  return {
    shutdown: async () => {
      const p = trace.getTracerProvider();
      await (p.getDelegate ? p.getDelegate() : p).shutdown?.();
    },
  };
}
