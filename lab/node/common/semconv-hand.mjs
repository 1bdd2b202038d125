// Profiles ts-sdk1-otel and ts-sdk2-otel: the MCP TypeScript SDK (1.x and 2.x) has no OpenTelemetry of its own, so this is
// hand instrumentation following the OpenTelemetry MCP semantic conventions, at the transport:
// one CLIENT span per outgoing request (`{mcp.method.name} [{gen_ai.tool.name}]`), W3C trace
// context injected into `params._meta` through the global propagator, and one SERVER span per
// incoming request, its parent extracted from `params._meta`. Attributes: mcp.method.name,
// jsonrpc.request.id, mcp.session.id (HTTP), mcp.protocol.version, network.transport,
// gen_ai.tool.name and gen_ai.operation.name=execute_tool for tools/call; error.type=tool_error and
// status ERROR for an `isError` result, error.type and rpc.response.status_code for a JSON-RPC
// error. Opt-in content (on): gen_ai.tool.call.arguments / gen_ai.tool.call.result on the client span.
import { trace, context, propagation, SpanKind, SpanStatusCode, ROOT_CONTEXT } from "@opentelemetry/api";
import { startOtel } from "./otel.mjs";

const tracer = () => trace.getTracer("lab.mcp-semconv-hand", "1.0.0");

function spanName(msg) {
  const tool = msg.method === "tools/call" ? msg.params?.name : undefined;
  return tool ? `${msg.method} ${tool}` : msg.method;
}

function requestAttributes(msg, transport, networkTransport) {
  const a = { "mcp.method.name": msg.method, "jsonrpc.request.id": String(msg.id), "network.transport": networkTransport };
  if (transport.sessionId) a["mcp.session.id"] = transport.sessionId;
  if (msg.method === "tools/call") {
    a["gen_ai.tool.name"] = msg.params?.name;
    a["gen_ai.operation.name"] = "execute_tool";
  }
  if (msg.method === "initialize" && msg.params?.protocolVersion) a["mcp.protocol.version"] = msg.params.protocolVersion;
  // MCP 2026-07-28 (stateless): the revision travels in every request's _meta
  const rev = msg.params?._meta?.["io.modelcontextprotocol/protocolVersion"];
  if (rev) a["mcp.protocol.version"] = rev;
  return a;
}

function finish(span, msg, captureResult) {
  if (msg.error) {
    span.setAttribute("error.type", String(msg.error.code));
    span.setAttribute("rpc.response.status_code", String(msg.error.code));
    span.setStatus({ code: SpanStatusCode.ERROR, message: msg.error.message });
  } else if (msg.result?.isError) {
    span.setAttribute("error.type", "tool_error");
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  if (captureResult && msg.result !== undefined) span.setAttribute("gen_ai.tool.call.result", JSON.stringify(msg.result));
  span.end();
}

// Wraps whatever handler the SDK assigns to transport.onmessage. The Node Streamable HTTP server
// transport forwards onmessage to an inner web-standard transport, which is the one that calls it.
function hookOnMessage(outer, wrap) {
  const transport = outer._webStandardTransport ?? outer;
  let inner = transport.onmessage;
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    get: () => (inner ? (m, extra) => wrap(m, extra, inner) : undefined),
    set: (fn) => {
      inner = fn;
    },
  });
}

function isRequest(m) {
  return m && typeof m.method === "string" && m.id !== undefined;
}
function isResponse(m) {
  return m && m.method === undefined && m.id !== undefined && ("result" in m || "error" in m);
}

export async function setup(role) {
  const otel = await startOtel({ serviceName: role === "client" ? "warehouse-agent-host" : "warehouse-mcp-server", role });
  const networkTransport = (process.env.LAB_TRANSPORT || "stdio") === "stdio" ? "pipe" : "tcp";
  return {
    shutdown: otel.shutdown,
    instrumentClientTransport(transport) {
      const pending = new Map();
      const send = transport.send.bind(transport);
      transport.send = (msg, opts) => {
        if (isRequest(msg)) {
          const attrs = requestAttributes(msg, transport, networkTransport);
          if (msg.method === "tools/call" && msg.params?.arguments) attrs["gen_ai.tool.call.arguments"] = JSON.stringify(msg.params.arguments);
          const span = tracer().startSpan(spanName(msg), { kind: SpanKind.CLIENT, attributes: attrs });
          const meta = { ...(msg.params?._meta || {}) };
          propagation.inject(trace.setSpan(context.active(), span), meta);
          if (Object.keys(meta).length) msg = { ...msg, params: { ...(msg.params || {}), _meta: meta } };
          pending.set(msg.id, { span, tool: msg.method === "tools/call" });
        }
        return send(msg, opts);
      };
      hookOnMessage(transport, (m, extra, inner) => {
        if (isResponse(m) && pending.has(m.id)) {
          const { span, tool } = pending.get(m.id);
          pending.delete(m.id);
          finish(span, m, tool);
        }
        return inner(m, extra);
      });
    },
    instrumentServerTransport(transport) {
      const pending = new Map();
      hookOnMessage(transport, (m, extra, inner) => {
        if (isRequest(m)) {
          const parent = propagation.extract(ROOT_CONTEXT, m.params?._meta || {});
          const span = tracer().startSpan(spanName(m), { kind: SpanKind.SERVER, attributes: requestAttributes(m, transport, networkTransport) }, parent);
          pending.set(m.id, span);
          return context.with(trace.setSpan(parent, span), () => inner(m, extra));
        }
        return inner(m, extra);
      });
      const send = transport.send.bind(transport);
      transport.send = (msg, opts) => {
        if (isResponse(msg) && pending.has(msg.id)) {
          const span = pending.get(msg.id);
          pending.delete(msg.id);
          finish(span, msg, false);
        }
        return send(msg, opts);
      };
    },
  };
}
