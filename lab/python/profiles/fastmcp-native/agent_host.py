"""Host of profile fastmcp-native: the lab's scripted host (host.py: the same scenario play, the
same invoke_agent > chat > execute_tool and guardrail spans, scope lab.scripted_host), calling the
tools through FastMCP's client (`fastmcp.Client` on a StdioTransport or StreamableHttpTransport)
instead of the mcp SDK's ClientSession. host.py runs its scenario when imported, so its play()
is repeated here unchanged but for the two session calls: tools come from `client.list_tools()`
(a list, not a ListToolsResult) and a call is `client.call_tool(name, args, raise_on_error=False)`
(FastMCP raises ToolError on an isError result by default; the scripted host hands a tool error
back to the model as a result). The session (initialize, tools/list) opens outside the agent run,
as in host.py."""
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

import lab_profile  # noqa: E402

lab_profile.setup("client")

from fastmcp import Client  # noqa: E402
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.trace import SpanKind  # noqa: E402

tracer = trace.get_tracer("lab.scripted_host", "1.0")
MODEL = "scripted-agent-model-1"
AGENT = DOC["agent"]
TRANSPORT = os.environ.get("LAB_TRANSPORT", "stdio")


async def play(client):
    listed = await client.list_tools()
    conv = f"conv-{secrets.token_hex(8)}"
    base = {"gen_ai.provider.name": "scripted", "gen_ai.conversation.id": conv}

    def definitions(allow):
        return json.dumps([{"type": "function", "name": t.name, "description": t.description, "parameters": t.inputSchema}
                           for t in listed if t.name in allow])

    tokens = 300
    with tracer.start_as_current_span(f"invoke_agent {AGENT}", kind=SpanKind.INTERNAL, attributes={
            **base, "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT, "gen_ai.agent.id": "agent-warehouse-1",
            "gen_ai.request.model": MODEL}):
        turns = SCENARIO["turns"] + [{"allow": SCENARIO["turns"][-1]["allow"], "calls": []}]
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
                    await client.call_tool(c["tool"], c["args"], raise_on_error=False)


async def main():
    if TRANSPORT == "stdio":
        transport = StdioTransport(command=COMMAND[0], args=COMMAND[1:], env=server_env(TRANSPORT, SCENARIO), keep_alive=False)
        async with Client(transport) as client:
            await play(client)
        return
    with http_server(TRANSPORT, SCENARIO) as url:
        async with Client(StreamableHttpTransport(url)) as client:
            await play(client)


asyncio.run(main())
trace.get_tracer_provider().shutdown()
