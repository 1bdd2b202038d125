// Profile mastra-js: the host is a Mastra agent (agent_host.mjs, not the lab's scripted host.mjs).
// Mastra traces with its own AI tracing (Mastra spans, not OpenTelemetry API spans) and exports
// them as OTLP through @mastra/otel-exporter's `OtelExporter` with the `custom` provider
// (`endpoint`, `protocol: 'http/json' | 'http/protobuf'`), as its README says; the exporter builds
// its own resource (service.name from the tracing config, telemetry.sdk.* of the exporter) and no
// resource detectors. The host process needs no OpenTelemetry SDK of its own: Mastra's MCP client
// (@mastra/mcp MCPClient) puts nothing in params._meta, and its spans never enter the OTel context.
// The server is the lab's Node server with the hand instrumentation per the OTel MCP semantic
// conventions that ts-sdk1-otel uses (SERVER span per request, parent extracted from
// params._meta), so whether Mastra's MCP client carries trace context can be seen.
import { setup as semconvSetup } from "./semconv-hand.mjs";

export async function setup(role) {
  if (role === "server") return semconvSetup("server");
  const sink = process.env.LAB_SINK;
  if (!sink) throw new Error("LAB_SINK (the recording sink's base URL) is not set");
  const { OtelExporter } = await import("@mastra/otel-exporter");
  const exporter = new OtelExporter({
    provider: {
      custom: {
        endpoint: `${sink}/v1/traces`,
        protocol: process.env.LAB_EXPORT === "proto" ? "http/protobuf" : "http/json",
      },
    },
    resourceAttributes: { "service.version": "lab-1", "lab.role": "client" },
  });
  return { exporter, serviceName: "warehouse-agent-host" };
}
