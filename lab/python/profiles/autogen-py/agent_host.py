"""Agent host of profile autogen-py: instead of the lab's scripted host (host.py), a real Microsoft
AutoGen AgentChat `AssistantAgent` with AutoGen's built-in OpenTelemetry tracing (lab_profile.py),
driving the lab's MCP server through autogen-ext's MCP tools: `mcp_server_tools(params, session)`
over one shared `create_mcp_server_session` (`StdioServerParams` or `StreamableHttpServerParams`).
The model is AutoGen's own `ReplayChatCompletionClient` (autogen_ext.models.replay) replaying the
scenario's turns (turn n: a CreateResult whose content is turn n's `FunctionCall`s, then a final
text), so there is no LLM, no API key and no network; `max_tool_iterations` lets the agent loop
model -> tools -> model over every turn in one run. The tools given to the agent are the
scenario's `allow` list (the adapters of those tools), so a hidden tool is one the agent does not
have: AutoGen answers the call `Error: tool '...' not found in any workbench` without running it.
With LAB_AUTOGEN_TOOLS=workbench (the `-mcp-workbench` recordings) the agent's tools are an
`McpWorkbench(params)` instead, autogen-ext's other MCP entry point (its own session actor): it
offers every tool the server lists (McpWorkbench 0.7.5 has no filter, only renaming overrides),
so in W7 the model is given list_pending_orders too and the call runs.

Approvals: AgentChat 0.7.5 has no approval mechanism for tool calls (`approval_func` exists only
for CodeExecutorAgent's code blocks; `UserProxyAgent` / handoffs hand the whole conversation over,
not one call), so the approved writes get the lab host's `guardrail write-approval` spans
(require_approval, then allow; scope lab.scripted_host) as agent_support.play_scripted emits them,
from a StaticWorkbench subclass that runs them right before AutoGen's own tool call."""
import asyncio
import json
import os
import secrets

from agent_support import AGENT, APPROVED, PROMPT, TURNS, run, setup_profile

setup_profile()

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_core import FunctionCall  # noqa: E402
from autogen_core.models import CreateResult, RequestUsage  # noqa: E402
from autogen_core.tools import StaticWorkbench  # noqa: E402
from autogen_ext.models.replay import ReplayChatCompletionClient  # noqa: E402
from autogen_ext.tools.mcp import McpWorkbench, StdioServerParams, StreamableHttpServerParams, create_mcp_server_session, mcp_server_tools  # noqa: E402
from opentelemetry import trace  # noqa: E402

ALLOW = sorted({n for t in TURNS for n in t["allow"]})
# AutoGen requires an agent name that is a Python identifier
NAME = AGENT.replace("-", "_")


def script():
    """The scenario's model responses: turn n's calls as FunctionCalls, then a final text."""
    out = []
    for n, t in enumerate(TURNS):
        calls = [FunctionCall(id=f"call_{n}_{i}", name=c["tool"], arguments=json.dumps(c["args"])) for i, c in enumerate(t["calls"])]
        out.append(CreateResult(finish_reason="function_calls", content=calls,
                                usage=RequestUsage(prompt_tokens=300 + 120 * n, completion_tokens=40), cached=False))
    out.append("Done.")
    return out


async def approve(name, call_id):
    """Before a call the scenario approves, the lab host's guardrail spans (as
    agent_support.play_scripted): require_approval, the end user's approval, then allow."""
    if name not in APPROVED:
        return
    tracer = trace.get_tracer("lab.scripted_host", "1.0")
    attrs = {"gen_ai.provider.name": "scripted", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id or f"call_{secrets.token_hex(6)}",
             "guardrail.name": "write-approval"}
    with tracer.start_as_current_span("guardrail write-approval", attributes={**attrs, "guardrail.decision": "require_approval"}) as g:
        g.add_event("approval.requested", {"gen_ai.tool.name": name, "approval.channel": "host-ui"})
        await asyncio.sleep(0.01)
        g.add_event("approval.granted", {"gen_ai.tool.name": name, "approval.actor": "end-user"})
    with tracer.start_as_current_span("guardrail write-approval", attributes={**attrs, "guardrail.decision": "allow"}):
        pass


class ApprovalWorkbench(StaticWorkbench):
    """AutoGen's StaticWorkbench (what AssistantAgent makes of a tool list) with the approval first."""

    async def call_tool(self, name, arguments=None, cancellation_token=None, call_id=None):
        await approve(name, call_id)
        return await super().call_tool(name, arguments, cancellation_token, call_id)


class ApprovalMcpWorkbench(McpWorkbench):
    """autogen-ext's McpWorkbench with the approval first."""

    async def call_tool(self, name, arguments=None, cancellation_token=None, call_id=None):
        await approve(name, call_id)
        return await super().call_tool(name, arguments, cancellation_token, call_id)


async def play(params):
    if os.environ.get("LAB_AUTOGEN_TOOLS") == "workbench":
        async with ApprovalMcpWorkbench(params) as workbench:
            agent = AssistantAgent(NAME, model_client=ReplayChatCompletionClient(script()), workbench=workbench,
                                   max_tool_iterations=len(TURNS) + 1)
            await agent.run(task=PROMPT)
        return
    async with create_mcp_server_session(params) as session:
        await session.initialize()
        tools = [t for t in await mcp_server_tools(params, session=session) if t.name in ALLOW]
        agent = AssistantAgent(NAME, model_client=ReplayChatCompletionClient(script()), workbench=ApprovalWorkbench(tools),
                               max_tool_iterations=len(TURNS) + 1)
        await agent.run(task=PROMPT)


async def over_stdio(command, args, env):
    await play(StdioServerParams(command=command, args=args, env=env))


async def over_http(url):
    await play(StreamableHttpServerParams(url=url))


run(over_stdio, over_http)
