// OpenTelemetry JS set-up shared by every Node profile: one NodeSDK per process, exporting to the
// recording sink as OTLP/HTTP JSON or protobuf (LAB_EXPORT=json|proto). No resource detectors: the
// recordings must not carry this machine's host name, user or paths, so the resource is only what
// is written here. LAB_PROPAGATION=off installs no propagator (what OTEL_PROPAGATORS=none does).
import { NodeSDK } from "@opentelemetry/sdk-node";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

async function batchProcessor(exporter) {
  for (const mod of ["@opentelemetry/sdk-trace", "@opentelemetry/sdk-trace-base"]) {
    try {
      const m = await import(mod);
      if (!m.BatchSpanProcessor) continue;
      // sdk-trace 3.x takes one options object with the exporter in it; sdk-trace-base 2.x
      // takes (exporter, options).
      return mod === "@opentelemetry/sdk-trace"
        ? new m.BatchSpanProcessor({ exporter, scheduledDelayMillis: 500 })
        : new m.BatchSpanProcessor(exporter, { scheduledDelayMillis: 500 });
    } catch {
      // not installed in this profile: try the next name
    }
  }
  throw new Error("no BatchSpanProcessor found (install @opentelemetry/sdk-trace or sdk-trace-base)");
}

export async function startOtel({ serviceName, role, instrumentations = [] }) {
  const sink = process.env.LAB_SINK;
  if (!sink) throw new Error("LAB_SINK (the recording sink's base URL) is not set");
  const url = `${sink}/v1/traces`;
  const proto = process.env.LAB_EXPORT === "proto";
  const { OTLPTraceExporter } = proto
    ? await import("@opentelemetry/exporter-trace-otlp-proto")
    : await import("@opentelemetry/exporter-trace-otlp-http");
  const exporter = new OTLPTraceExporter({ url });
  const propagationOff = role === "client" && process.env.LAB_PROPAGATION === "off";
  const sdk = new NodeSDK({
    autoDetectResources: false,
    resource: resourceFromAttributes({
      "service.name": serviceName,
      "service.version": "lab-1",
      "lab.role": role,
    }),
    spanProcessors: [await batchProcessor(exporter)],
    textMapPropagator: propagationOff ? null : new W3CTraceContextPropagator(),
    instrumentations,
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
