"""Scripted agent host (Python twin of lab/node/common/host.mjs): no LLM; opens an MCP session
(initialize + tools/list outside any agent run), then plays one scenario of lab/scenarios.json as
an agent run with GenAI host spans (agent_support.play_scripted: invoke_agent > chat >
execute_tool, guardrail spans for approvals), calling tools through the official Python SDK's
ClientSession. Host content capture is off. The profile module (lab_profile.py) adds the library
under test."""
import agent_support as lab

lab.setup_profile()

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402


async def play(session):
    await session.initialize()
    await lab.play_scripted((await session.list_tools()).tools, session.call_tool)


async def over_stdio(command, args, env):
    async with stdio_client(StdioServerParameters(command=command, args=args, env=env)) as (r, w):
        async with ClientSession(r, w) as session:
            await play(session)


async def over_http(url):
    from mcp.client.streamable_http import streamable_http_client

    # mcp 1.x yields (read, write, get_session_id), mcp 2.x (read, write)
    async with streamable_http_client(url) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await play(session)


lab.run(over_stdio, over_http)
