"""Host of profile fastmcp-native: the lab's scripted host (the same scenario play as host.py,
agent_support.play_scripted: the same invoke_agent > chat > execute_tool and guardrail spans,
scope lab.scripted_host), calling the tools through FastMCP's client (`fastmcp.Client` on a
StdioTransport or StreamableHttpTransport) instead of the mcp SDK's ClientSession. Tools come from
`client.list_tools()` (a list, not a ListToolsResult) and a call is
`client.call_tool(name, args, raise_on_error=False)` (FastMCP raises ToolError on an isError result
by default; the scripted host hands a tool error back to the model as a result). The session
(initialize, tools/list) opens outside the agent run, as in host.py."""
import agent_support as lab

lab.setup_profile()

from fastmcp import Client  # noqa: E402
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport  # noqa: E402


async def play(transport):
    async with Client(transport) as client:
        await lab.play_scripted(await client.list_tools(), lambda name, args: client.call_tool(name, args, raise_on_error=False))


async def over_stdio(command, args, env):
    await play(StdioTransport(command=command, args=args, env=env, keep_alive=False))


async def over_http(url):
    await play(StreamableHttpTransport(url))


lab.run(over_stdio, over_http)
