// Profile vercel-ai-js: the host is a Vercel AI SDK agent (agent_host.mjs, not the lab's scripted
// host.mjs). The AI SDK's telemetry needs nothing but a registered OpenTelemetry tracer provider
// (its spans come from `trace.getTracer("ai")` of @opentelemetry/api) and, per call,
// `experimental_telemetry: { isEnabled: true, ... }` (set in agent_host.mjs), as its docs say. So
// the host process runs the lab's OTel JS set-up (NodeSDK, OTLP/HTTP JSON or protobuf) and
// nothing else. The AI SDK's MCP client (@ai-sdk/mcp) has no telemetry of its own.
// The server is the lab's Node server with the hand instrumentation per the OTel MCP semantic
// conventions that ts-sdk1-otel uses (SERVER span per request, parent extracted from
// params._meta), so whether the AI SDK's MCP client carries trace context can be seen.
import { startOtel } from "./otel.mjs";
import { setup as semconvSetup } from "./semconv-hand.mjs";

export async function setup(role) {
  if (role === "server") return semconvSetup("server");
  const otel = await startOtel({ serviceName: "warehouse-agent-host", role });
  return { shutdown: otel.shutdown };
}
