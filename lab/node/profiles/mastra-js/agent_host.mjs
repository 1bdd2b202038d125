// Agent host of profile mastra-js: instead of the lab's scripted host (host.mjs), a real Mastra
// agent (`Agent` of @mastra/core, registered on a `Mastra` instance whose `observability` config
// exports Mastra's AI tracing through @mastra/otel-exporter, see instrument.mjs), driving the lab's
// MCP server through Mastra's MCP client (`MCPClient` of @mastra/mcp; stdio: `{ command, args, env }`,
// Streamable HTTP: `{ url }`). `getToolsets()` gives the server's tools keyed by their MCP names
// (getTools() would prefix them with the server name), and they become the agent's tools. The model
// is scripted: a small implementation of the AI SDK's LanguageModelV2 interface (the shape of the
// SDK's own `MockLanguageModelV2`, which cannot be used here: `ai/test` of ai 5 imports vitest and
// msw at load time and throws outside a vitest run) streams each step's scenario tool calls, then a
// final text, so there is no LLM, no API key and no network. Mastra 0.24 runs AI SDK v5 (V2) models. What the model is shown per step is the scenario's `allow` list
// (`prepareStep` -> `activeTools`). An approved write goes through Mastra's tool approval: the
// scenario's approved tools get `requireApproval: true`, the stream stops with a
// `tool-call-approval` chunk, and the host resumes the run with `agent.approveToolCall({ runId,
// toolCallId })`; resuming needs the run's snapshot, so the Mastra instance has a storage: core's
// own `InMemoryStore` (nothing written to disk). The MCP session (initialize, tools/list) is opened outside the agent run.
import { AGENT, MODEL, PROMPT, TURNS, APPROVED, transportKind, serverCommand, hex, startHttpServer, stopServer } from "./agent_support.mjs";

// Mastra's MCP client injects no trace context at all, so W8 (propagation off) needs no switch here.
const { setup } = await import("./instrument.mjs");
const lab = await setup("client");

const { Mastra } = await import("@mastra/core");
const { Agent } = await import("@mastra/core/agent");
const { InMemoryStore } = await import("@mastra/core/storage");
const { MCPClient } = await import("@mastra/mcp");

let server;
let serverDef;
if (transportKind === "stdio") {
  serverDef = serverCommand;
} else {
  server = await startHttpServer();
  serverDef = { url: new URL(server.url) };
}

const mcp = new MCPClient({ id: "warehouse-agent-host", servers: { warehouse: serverDef } });
const tools = (await mcp.getToolsets()).warehouse;
for (const t of APPROVED) tools[t].requireApproval = true;

// The scenario turn the model is on: how many times the model has been called. (Counting the
// prompt's assistant messages, as vercel-ai-js does, fails here: the prompt of the step after a
// resumed approval does not show the earlier steps' assistant messages the same way.)
let modelCalls = 0;

// LanguageModelV2 (the interface AI SDK 5 providers implement), as ai/test's MockLanguageModelV2 is.
class ScriptedModelV2 {
  constructor({ provider, modelId, doStream }) {
    this.specificationVersion = "v2";
    this.provider = provider;
    this.modelId = modelId;
    this.supportedUrls = {};
    this.doStream = doStream;
  }
  async doGenerate() {
    throw new Error("the scripted model only streams (Mastra's agent.stream)");
  }
}
const convertArrayToReadableStream = (parts) =>
  new ReadableStream({
    start(controller) {
      for (const p of parts) controller.enqueue(p);
      controller.close();
    },
  });

let tokensIn = 300;
const model = new ScriptedModelV2({
  provider: "scripted",
  modelId: MODEL,
  doStream: async () => {
    const turn = modelCalls++;
    const calls = turn < TURNS.length ? TURNS[turn].calls : [];
    const parts = [
      { type: "stream-start", warnings: [] },
      { type: "response-metadata", id: `resp_${hex(6)}`, modelId: MODEL, timestamp: new Date() },
    ];
    if (calls.length) {
      calls.forEach((c, i) => parts.push({ type: "tool-call", toolCallId: `call_${turn}_${i}`, toolName: c.tool, input: JSON.stringify(c.args) }));
    } else {
      parts.push({ type: "text-start", id: "t0" }, { type: "text-delta", id: "t0", delta: "Done." }, { type: "text-end", id: "t0" });
    }
    parts.push({
      type: "finish",
      finishReason: calls.length ? "tool-calls" : "stop",
      usage: { inputTokens: (tokensIn += 120), outputTokens: 40, totalTokens: tokensIn + 40 },
    });
    return { stream: convertArrayToReadableStream(parts) };
  },
});

const agent = new Agent({ name: AGENT, instructions: "You are the warehouse assistant.", model, tools });
const mastra = new Mastra({
  agents: { warehouseAssistant: agent },
  logger: false,
  storage: new InMemoryStore(),
  observability: { configs: { otel: { serviceName: lab.serviceName, exporters: [lab.exporter] } } },
});
const theAgent = mastra.getAgent("warehouseAssistant");

const options = {
  maxSteps: TURNS.length + 2,
  prepareStep: () => ({ activeTools: TURNS[Math.min(modelCalls, TURNS.length - 1)].allow }),
};

// Plays a stream to its end; returns the approval requests it stopped on.
async function drain(stream) {
  const pending = [];
  for await (const chunk of stream.fullStream) {
    if (chunk.type === "tool-call-approval") pending.push(chunk.payload);
    if (chunk.type === "error") console.error("stream error", chunk.payload?.error);
  }
  return pending;
}

let stream = await theAgent.stream(PROMPT, options);
let pending = await drain(stream);
while (pending.length) {
  // the end user approves every pending call (the scenario marks which tools need it)
  const runId = stream.runId;
  stream = await theAgent.approveToolCall({ ...options, runId, toolCallId: pending[0].toolCallId });
  pending = await drain(stream);
}

await mcp.disconnect();
await stopServer({ proc: server?.proc });
await mastra.shutdown?.();
await lab.exporter.shutdown();
