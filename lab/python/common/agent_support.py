"""What every Python host of the lab shares (the scripted host.py and the profiles' own
agent_host.py): the scenario it plays (lab/scenarios.json, LAB_SCENARIO; a scenario with
propagation off sets OTEL_PROPAGATORS=none here, before the profile is switched on), switching the
profile on for the host, starting the lab server over the chosen transport (LAB_TRANSPORT), and
the scripted agent run of host.py (also played by fastmcp-native's host). A host imports this
module first, then calls setup_profile(), then imports its library."""
import asyncio
import json
import os
import secrets

from lab_server import COMMAND, http_server, server_env

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = json.load(open(os.path.join(HERE, "scenarios.json")))
SCENARIO = DOC["scenarios"][os.environ["LAB_SCENARIO"]]
if SCENARIO.get("propagation") == "off":
    os.environ["OTEL_PROPAGATORS"] = "none"

AGENT = DOC["agent"]
TRANSPORT = os.environ.get("LAB_TRANSPORT", "stdio")
TURNS = SCENARIO["turns"]
# the tools whose calls the scenario approves
APPROVED = {c["tool"] for t in TURNS for c in t["calls"] if c.get("approve")}
MODEL = "scripted-agent-model-1"
PROMPT = "Check stock for SKU-1001 and act on it."


def setup_profile():
    """Switches the library under test on for the host (lab_profile.setup("client")); returns
    what the profile's setup returns."""
    import lab_profile

    return lab_profile.setup("client")


async def serve(over_stdio, over_http):
    """Runs the host against the lab server: over stdio `await over_stdio(command, args, env)`
    (the host starts the server), over Streamable HTTP `await over_http(url)` while the server
    runs (lab_server.http_server)."""
    if TRANSPORT == "stdio":
        await over_stdio(COMMAND[0], COMMAND[1:], server_env(TRANSPORT, SCENARIO))
        return
    with http_server(TRANSPORT, SCENARIO) as url:
        await over_http(url)


def serve_sync(over_stdio, over_http):
    """serve() for a host whose client is synchronous (strands-py)."""
    if TRANSPORT == "stdio":
        over_stdio(COMMAND[0], COMMAND[1:], server_env(TRANSPORT, SCENARIO))
        return
    with http_server(TRANSPORT, SCENARIO) as url:
        over_http(url)


def run(over_stdio, over_http):
    """serve() to its end, then shuts the global tracer provider down (flushing its spans)."""
    asyncio.run(serve(over_stdio, over_http))
    from opentelemetry import trace

    trace.get_tracer_provider().shutdown()


async def play_scripted(listed, call_tool):
    """The scripted agent run (no LLM) over an open MCP session: `listed` = the server's tools
    (listed outside the run), `call_tool(name, args)` calls one. GenAI host spans, scope
    lab.scripted_host: invoke_agent > chat (gen_ai.tool.definitions of the turn's `allow`) >
    execute_tool, a guardrail require_approval -> allow pair before an approved call. Host content
    capture is off: no arguments or results in host spans."""
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind

    tracer = trace.get_tracer("lab.scripted_host", "1.0")
    conv = f"conv-{secrets.token_hex(8)}"
    base = {"gen_ai.provider.name": "scripted", "gen_ai.conversation.id": conv}

    def definitions(allow):
        return json.dumps([{"type": "function", "name": t.name, "description": t.description, "parameters": getattr(t, "inputSchema", None) or getattr(t, "input_schema", None)}
                           for t in listed if t.name in allow])

    tokens = 300
    with tracer.start_as_current_span(f"invoke_agent {AGENT}", kind=SpanKind.INTERNAL, attributes={
            **base, "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT, "gen_ai.agent.id": "agent-warehouse-1",
            "gen_ai.request.model": MODEL}):
        turns = TURNS + [{"allow": TURNS[-1]["allow"], "calls": []}]
        for turn in turns:
            calls = [dict(c, id=f"call_{secrets.token_hex(6)}") for c in turn["calls"]]
            tokens += 120
            with tracer.start_as_current_span(f"chat {MODEL}", kind=SpanKind.CLIENT, attributes={
                    **base, "gen_ai.operation.name": "chat", "gen_ai.request.model": MODEL, "gen_ai.response.model": MODEL,
                    "gen_ai.response.id": f"resp_{secrets.token_hex(6)}",
                    "gen_ai.response.finish_reasons": ["tool_calls" if calls else "stop"],
                    "gen_ai.usage.input_tokens": tokens, "gen_ai.usage.output_tokens": 40,
                    "gen_ai.tool.definitions": definitions(turn["allow"])}):
                await asyncio.sleep(0.005)
            for c in calls:
                tool_attrs = {**base, "gen_ai.tool.name": c["tool"], "gen_ai.tool.call.id": c["id"]}
                if c.get("approve"):
                    with tracer.start_as_current_span("guardrail write-approval", attributes={
                            **tool_attrs, "guardrail.name": "write-approval", "guardrail.decision": "require_approval"}) as g:
                        g.add_event("approval.requested", {"gen_ai.tool.name": c["tool"], "approval.channel": "host-ui"})
                        await asyncio.sleep(0.01)
                        g.add_event("approval.granted", {"gen_ai.tool.name": c["tool"], "approval.actor": "end-user"})
                    with tracer.start_as_current_span("guardrail write-approval", attributes={
                            **tool_attrs, "guardrail.name": "write-approval", "guardrail.decision": "allow"}):
                        pass
                desc = next((t.description for t in listed if t.name == c["tool"]), None)
                with tracer.start_as_current_span(f"execute_tool {c['tool']}", attributes={
                        **tool_attrs, "gen_ai.operation.name": "execute_tool", "gen_ai.tool.type": "function",
                        **({"gen_ai.tool.description": desc} if desc else {})}):
                    # A tool error is a result, not an exception: the host passes it back to the model.
                    await call_tool(c["tool"], c["args"])
