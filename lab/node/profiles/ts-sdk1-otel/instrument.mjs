// Hand instrumentation per the OTel MCP semantic conventions: see semconv-hand.mjs.
export { setup } from "./semconv-hand.mjs";
