"""Agent host of profile pydantic-ai-mcp: instead of the lab's scripted host (host.py), a real
Pydantic AI agent with its own OpenTelemetry instrumentation (`Agent.instrument_all()`), driving
the lab's MCP server through Pydantic AI's MCP client (`MCPToolset` on a FastMCP stdio or
Streamable HTTP transport; `MCPServerStdio` is gone from Pydantic AI 2.x). The model is scripted:
a `FunctionModel` that plays the scenario's turns (one model response per turn, its tool calls as
`ToolCallPart`s, then a final text), so there is no LLM, no API key and no network. What the model
is shown per turn is the scenario's `allow` list (`toolset.filtered`), so a hidden tool is one the
model was not shown. An approved write goes through Pydantic AI's own approval flow: the toolset
requires approval for the scenario's approved calls (`approval_required`), the run ends with
`DeferredToolRequests`, and the host resumes the conversation with `DeferredToolResults`
approving them. A tool error comes back to the model as a retry prompt (MCPToolset's default
`tool_error_behavior='retry'`); the tool retry budget is raised from 1 to 3 (`retries={'tools': 3}`)
so that W5's three identical failing calls can be played (with 1 the run aborts at the second).
Content capture is Pydantic AI's default (on)."""
from agent_support import AGENT, APPROVED, MODEL, PROMPT, TURNS, run, setup_profile

setup_profile()

from fastmcp.client.transports import StdioTransport, StreamableHttpTransport  # noqa: E402
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults  # noqa: E402
from pydantic_ai.mcp import MCPToolset  # noqa: E402
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402


def turn_of(messages):
    """The scenario turn the model is on: how many model responses the conversation has had."""
    return sum(1 for m in messages if isinstance(m, ModelResponse))


def scripted_model(messages, info: AgentInfo):
    turn = turn_of(messages)
    if turn < len(TURNS):
        return ModelResponse(parts=[ToolCallPart(c["tool"], c["args"], tool_call_id=f"call_{turn}_{i}") for i, c in enumerate(TURNS[turn]["calls"])])
    return ModelResponse(parts=[TextPart("Done.")])


def allowed(ctx, tool_def):
    turn = min(turn_of(ctx.messages), len(TURNS) - 1)
    return tool_def.name in TURNS[turn]["allow"]


async def play(transport):
    toolset = MCPToolset(transport).filtered(allowed).approval_required(lambda ctx, tool_def, args: tool_def.name in APPROVED)
    agent = Agent(FunctionModel(scripted_model, model_name=MODEL), name=AGENT, toolsets=[toolset],
                  output_type=[str, DeferredToolRequests], retries={"tools": 3})
    async with agent:
        result = await agent.run(PROMPT)
        while isinstance(result.output, DeferredToolRequests):
            # the end user approves every pending call (the scenario marks which calls need it)
            approvals = {c.tool_call_id: True for c in result.output.approvals}
            result = await agent.run(message_history=result.all_messages(), deferred_tool_results=DeferredToolResults(approvals=approvals))


async def over_stdio(command, args, env):
    await play(StdioTransport(command, args, env=env, keep_alive=False))


async def over_http(url):
    await play(StreamableHttpTransport(url))


run(over_stdio, over_http)
