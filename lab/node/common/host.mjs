// Scripted agent host: no LLM. It opens an MCP session (initialize + tools/list, outside any agent
// run, as real hosts do), then plays one scenario from scenarios.mjs as an agent run with the
// GenAI spans a real agent framework emits (invoke_agent > chat > execute_tool, guardrail spans
// for approvals), calling the tools through the MCP TypeScript SDK client (1.x or 2.x: sdk.mjs). The profile's
// instrument.mjs adds the library under test. Host content capture is off: the host records tool
// names, call ids and definitions, never arguments or results, so what is observable about a
// result is what the library records.
import { trace, SpanKind } from "@opentelemetry/api";
import * as sdk from "./sdk.mjs";
import { AGENT, MODEL, scenario, transportKind, serverCommand, hex, sleep, switchPropagation, startHttpServer, stopServer } from "./agent_support.mjs";

switchPropagation();
const { setup } = await import("./instrument.mjs");
const lab = await setup("client", sdk.clientModules);
const tracer = trace.getTracer("lab.scripted_host", "1.0");

let server;
let transport;
if (transportKind === "stdio") {
  transport = new sdk.StdioClientTransport({ ...serverCommand, stderr: "inherit" });
} else {
  server = await startHttpServer();
  transport = new sdk.StreamableHTTPClientTransport(new URL(server.url));
}
if (lab.instrumentClientTransport) lab.instrumentClientTransport(transport);

// LAB_MCP_REVISION pins a protocol revision (2.x only), e.g. 2026-07-28: stateless, server/discover
const revision = process.env.LAB_MCP_REVISION;
if (revision && sdk.generation !== "2.x") throw new Error("LAB_MCP_REVISION needs the 2.x SDK");
const client = new sdk.Client(
  { name: "warehouse-agent-host", version: "1.0.0" },
  revision ? { versionNegotiation: { mode: { pin: revision } } } : undefined,
);
await client.connect(transport);
const listed = (await client.listTools()).tools;

const conv = `conv-${hex(8)}`;
const model = MODEL;
const base = { "gen_ai.provider.name": "scripted", "gen_ai.conversation.id": conv };
const definitions = (allow) =>
  JSON.stringify(
    listed
      .filter((t) => allow.includes(t.name))
      .map((t) => ({ type: "function", name: t.name, description: t.description, parameters: t.inputSchema })),
  );

async function inSpan(spanName, kind, attributes, fn) {
  return tracer.startActiveSpan(spanName, { kind, attributes }, async (span) => {
    try {
      return await fn(span);
    } finally {
      span.end();
    }
  });
}

let tokensIn = 300;

await inSpan(
  `invoke_agent ${AGENT}`,
  SpanKind.INTERNAL,
  { ...base, "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT, "gen_ai.agent.id": "agent-warehouse-1", "gen_ai.request.model": model },
  async () => {
    const turns = [...scenario.turns, { allow: scenario.turns.at(-1).allow, calls: [] }];
    for (const turn of turns) {
      const calls = turn.calls.map((c) => ({ ...c, id: `call_${hex(6)}` }));
      await inSpan(`chat ${model}`, SpanKind.CLIENT, {
        ...base,
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model,
        "gen_ai.response.model": model,
        "gen_ai.response.id": `resp_${hex(6)}`,
        "gen_ai.response.finish_reasons": [calls.length ? "tool_calls" : "stop"],
        "gen_ai.usage.input_tokens": (tokensIn += 120),
        "gen_ai.usage.output_tokens": 40,
        "gen_ai.tool.definitions": definitions(turn.allow),
      }, async () => sleep(5));
      for (const c of calls) {
        const toolAttrs = { ...base, "gen_ai.tool.name": c.tool, "gen_ai.tool.call.id": c.id };
        if (c.approve) {
          await inSpan("guardrail write-approval", SpanKind.INTERNAL, { ...toolAttrs, "guardrail.name": "write-approval", "guardrail.decision": "require_approval" }, async (span) => {
            span.addEvent("approval.requested", { "gen_ai.tool.name": c.tool, "approval.channel": "host-ui" });
            await sleep(10);
            span.addEvent("approval.granted", { "gen_ai.tool.name": c.tool, "approval.actor": "end-user" });
          });
          await inSpan("guardrail write-approval", SpanKind.INTERNAL, { ...toolAttrs, "guardrail.name": "write-approval", "guardrail.decision": "allow" }, async () => {});
        }
        const description = listed.find((t) => t.name === c.tool)?.description;
        await inSpan(`execute_tool ${c.tool}`, SpanKind.INTERNAL, {
          ...toolAttrs,
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.type": "function",
          ...(description ? { "gen_ai.tool.description": description } : {}),
        }, async () => {
          // A tool error is a result, not an exception: the host passes it back to the model.
          await client.callTool({ name: c.tool, arguments: c.args });
        });
      }
    }
  },
);

const stdioPid = transportKind === "stdio" ? transport.pid : undefined;
await client.close();
await stopServer({ pid: stdioPid, proc: server?.proc });
await lab.shutdown();
