// The warehouse-inventory scenarios (lab/scenarios.json, shared with the Python host). Each turn is
// one model call (a `chat` span advertising `allow` as gen_ai.tool.definitions) followed by the
// tool calls it requested; `approve: true` puts a guardrail require_approval -> allow pair before
// the call; `server: "text"` runs the server's text-only variant; `propagation: "off"` installs no
// propagator in the host.
import { readFileSync } from "node:fs";

const doc = JSON.parse(readFileSync(new URL("./scenarios.json", import.meta.url), "utf8"));
export const AGENT = doc.agent;
export const SCENARIOS = doc.scenarios;
