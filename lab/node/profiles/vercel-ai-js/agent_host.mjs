// Agent host of profile vercel-ai-js: instead of the lab's scripted host (host.mjs), a real
// Vercel AI SDK agent (`ToolLoopAgent` of `ai` 6.x) with the AI SDK's own OpenTelemetry telemetry
// switched on as its docs say (`experimental_telemetry: { isEnabled, recordInputs, recordOutputs,
// functionId }`), driving the lab's MCP server through the AI SDK's MCP client (`createMCPClient`
// of @ai-sdk/mcp; stdio: its `Experimental_StdioMCPTransport`, Streamable HTTP: `{ type: "http" }`)
// whose `tools()` become the agent's tools. The model is scripted: the SDK's own mock model
// (`MockLanguageModelV3` from `ai/test`) answers each step with the scenario turn's tool calls,
// then a final text, so there is no LLM, no API key and no network. What the model is shown per
// turn is the scenario's `allow` list (`prepareStep` -> `activeTools`). An approved write goes
// through the AI SDK 6 tool-execution approval: the scenario's approved tools get
// `needsApproval: true`, the run stops with a `tool-approval-request`, and the host resumes the
// conversation with a `tool-approval-response` (approved) in a second `generate` call.
// The MCP session (initialize, tools/list) is opened outside the agent run, as real hosts do.
import { AGENT, MODEL, PROMPT, TURNS, APPROVED, transportKind, serverCommand, hex, switchPropagation, startHttpServer, stopServer } from "./agent_support.mjs";

switchPropagation();
const { setup } = await import("./instrument.mjs");
const lab = await setup("client");

const { ToolLoopAgent, stepCountIs } = await import("ai");
const { MockLanguageModelV3 } = await import("ai/test");
const { createMCPClient } = await import("@ai-sdk/mcp");
const { Experimental_StdioMCPTransport } = await import("@ai-sdk/mcp/mcp-stdio");

let server;
let transport;
if (transportKind === "stdio") {
  transport = new Experimental_StdioMCPTransport({ ...serverCommand, stderr: "inherit" });
} else {
  server = await startHttpServer();
  transport = { type: "http", url: server.url };
}

const mcp = await createMCPClient({ transport, name: "warehouse-agent-host" });
const tools = await mcp.tools();
for (const t of APPROVED) tools[t] = { ...tools[t], needsApproval: true };

// The scenario turn the model is on: how many model responses the conversation has had.
const turnOf = (messages) => messages.filter((m) => m.role === "assistant").length;

let tokensIn = 300;
const model = new MockLanguageModelV3({
  provider: "scripted",
  modelId: MODEL,
  doGenerate: async ({ prompt }) => {
    const turn = turnOf(prompt);
    const calls = turn < TURNS.length ? TURNS[turn].calls : [];
    return {
      content: calls.length
        ? calls.map((c, i) => ({ type: "tool-call", toolCallId: `call_${turn}_${i}`, toolName: c.tool, input: JSON.stringify(c.args) }))
        : [{ type: "text", text: "Done." }],
      finishReason: { unified: calls.length ? "tool-calls" : "stop", raw: calls.length ? "tool_calls" : "stop" },
      usage: {
        inputTokens: { total: (tokensIn += 120), noCache: tokensIn, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 40, text: 40, reasoning: 0 },
      },
      response: { id: `resp_${hex(6)}`, modelId: MODEL, timestamp: new Date() },
      warnings: [],
    };
  },
});

const agent = new ToolLoopAgent({
  id: AGENT,
  model,
  instructions: "You are the warehouse assistant.",
  tools,
  stopWhen: stepCountIs(TURNS.length + 2),
  prepareStep: ({ messages }) => ({ activeTools: TURNS[Math.min(turnOf(messages), TURNS.length - 1)].allow }),
  experimental_telemetry: { isEnabled: true, recordInputs: true, recordOutputs: true, functionId: AGENT },
});

let messages = [{ role: "user", content: PROMPT }];
let result = await agent.generate({ messages });
for (;;) {
  const requests = result.content.filter((p) => p.type === "tool-approval-request");
  if (!requests.length) break;
  // the end user approves every pending call (the scenario marks which tools need it)
  messages = [...messages, ...result.response.messages, { role: "tool", content: requests.map((r) => ({ type: "tool-approval-response", approvalId: r.approvalId, approved: true })) }];
  result = await agent.generate({ messages });
}

const stdioPid = transportKind === "stdio" ? transport.process?.pid : undefined;
await mcp.close();
// closing the transport aborts the child (SIGTERM); the server flushes its spans and exits
await stopServer({ pid: stdioPid, proc: server?.proc });
await lab.shutdown();
