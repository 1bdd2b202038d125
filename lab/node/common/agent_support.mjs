// What every Node host of the lab shares (the scripted host.mjs and the profiles' own
// agent_host.mjs): the scenario it plays (LAB_SCENARIO, from scenarios.mjs), the lab server's
// environment, starting the server over Streamable HTTP (a child process on a free port) or its
// command line over stdio (LAB_TRANSPORT), and waiting for the server to exit so that it flushes
// its spans. Importing this module loads no library: a host imports it first, then switches the
// profile on (instrument.mjs), then imports its library.
import path from "node:path";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { SCENARIOS, AGENT } from "./scenarios.mjs";

export { AGENT };
const name = process.env.LAB_SCENARIO;
export const scenario = SCENARIOS[name];
if (!scenario) throw new Error(`unknown LAB_SCENARIO ${name}; one of ${Object.keys(SCENARIOS).join(", ")}`);
export const TURNS = scenario.turns;
// the tools whose calls the scenario approves
export const APPROVED = new Set(TURNS.flatMap((t) => t.calls.filter((c) => c.approve).map((c) => c.tool)));
export const MODEL = "scripted-agent-model-1";
export const PROMPT = "Check stock for SKU-1001 and act on it.";
export const hex = (n) => randomBytes(n).toString("hex");
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A scenario with propagation off: the host installs no propagator (instrument.mjs reads
// LAB_PROPAGATION). Called before the profile is switched on.
export function switchPropagation() {
  if (scenario.propagation === "off") process.env.LAB_PROPAGATION = "off";
}

const here = path.dirname(fileURLToPath(import.meta.url));
export const transportKind = process.env.LAB_TRANSPORT || "stdio";
export const serverEnv = {
  PATH: process.env.PATH,
  LAB_SINK: process.env.LAB_SINK,
  LAB_EXPORT: process.env.LAB_EXPORT || "json",
  LAB_TRANSPORT: transportKind,
  LAB_SERVER_VARIANT: scenario.server || "structured",
  ...(process.env.LAB_MCP_REVISION ? { LAB_MCP_REVISION: process.env.LAB_MCP_REVISION } : {}),
};
// The server over stdio: the command line a stdio client transport starts.
export const serverCommand = { command: process.execPath, args: [path.join(here, "server.mjs")], env: serverEnv };

// The server over Streamable HTTP: started here, once it listens -> { proc, url } (url: its MCP endpoint).
export async function startHttpServer() {
  const proc = spawn(process.execPath, [path.join(here, "server.mjs")], { env: serverEnv, stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    let buf = "";
    proc.stdout.on("data", (d) => {
      buf += d;
      const m = buf.match(/LISTENING (\d+)/);
      if (m) resolve(m[1]);
    });
    proc.on("exit", (c) => reject(new Error(`server exited ${c} before listening`)));
  });
  return { proc, url: `http://127.0.0.1:${port}/mcp` };
}

// After the client closed: waits (up to 10 s) for the stdio server process `pid` to exit (the server
// flushes its spans when its stdin closes, so nothing is cut off), or stops the HTTP server `proc`.
export async function stopServer({ pid, proc } = {}) {
  if (pid) {
    for (let i = 0; i < 100; i++) {
      try {
        process.kill(pid, 0);
      } catch {
        break;
      }
      await sleep(100);
    }
  }
  if (proc) {
    proc.kill("SIGTERM");
    await new Promise((r) => proc.on("exit", r));
  }
}
