"""Agent host of profile google-adk-py: instead of the lab's scripted host (host.py), a real Google
ADK agent (`LlmAgent` run by an `InMemoryRunner`) with ADK's built-in OpenTelemetry tracing,
driving the lab's MCP server through ADK's MCP client (`McpToolset` with `StdioConnectionParams`
or `StreamableHTTPConnectionParams`). The model is scripted: a small subclass of ADK's `BaseLlm`
that plays the scenario's turns (one model response per turn, its calls as `FunctionCall` parts,
then a final text), so there is no LLM, no API key and no network. What the model is shown per
turn is the scenario's `allow` list (the toolset's `tool_filter` predicate), so a hidden tool is
one the model was not shown. An approved write goes through ADK's own tool confirmation: the
toolset's `require_confirmation` callable answers true for the scenario's approved calls, ADK
pauses the run with an `adk_request_confirmation` function call, and the host (the end user)
answers it with a `FunctionResponse` carrying `{"confirmed": true}`, upon which ADK runs the
call. Content capture: `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`."""
import os

from agent_support import AGENT, MODEL, PROMPT, TURNS, run, setup_profile

# the OTel GenAI content knob ADK reads (its v2 schema records tool arguments and results on the
# execute_tool span, messages and tool definitions on the inference span, only with it)
os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")

setup_profile()

from typing import AsyncGenerator  # noqa: E402

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_request import LlmRequest  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.adk.tools.mcp_tool import McpToolset, StdioConnectionParams, StreamableHTTPConnectionParams  # noqa: E402
from google.genai import types  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402

CONFIRM = "adk_request_confirmation"
# call id -> tool name of every call the model makes, and the ids of the approved ones
CALLS = {f"call_{t}_{i}": c["tool"] for t, turn in enumerate(TURNS) for i, c in enumerate(turn["calls"])}
APPROVED = {f"call_{t}_{i}" for t, turn in enumerate(TURNS) for i, c in enumerate(turn["calls"]) if c.get("approve")}
STATE = {"turn": 0}  # model responses given so far = the scenario turn the model is on


class ScriptedModel(BaseLlm):
    """One response per scenario turn: the turn's calls as function calls, then a final text."""

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        turn = STATE["turn"]
        STATE["turn"] += 1
        if turn < len(TURNS):
            parts = [types.Part(function_call=types.FunctionCall(id=f"call_{turn}_{i}", name=c["tool"], args=c["args"]))
                     for i, c in enumerate(TURNS[turn]["calls"])]
        else:
            parts = [types.Part(text="Done.")]
        yield LlmResponse(content=types.Content(role="model", parts=parts))


def allowed(tool, readonly_context=None):
    turn = min(STATE["turn"], len(TURNS) - 1)
    return tool.name in TURNS[turn]["allow"]


def needs_approval(tool_context, **_args):
    return tool_context.function_call_id in APPROVED


async def play(params):
    toolset = McpToolset(connection_params=params, tool_filter=allowed, require_confirmation=needs_approval)
    agent = LlmAgent(name=AGENT.replace("-", "_"), description="Warehouse inventory assistant (lab).",
                     model=ScriptedModel(model=MODEL), tools=[toolset])
    runner = InMemoryRunner(agent=agent, app_name="lab")
    session = await runner.session_service.create_session(app_name="lab", user_id="lab-user")
    message = types.Content(role="user", parts=[types.Part(text=PROMPT)])
    try:
        while message is not None:
            pending = []
            async for event in runner.run_async(user_id="lab-user", session_id=session.id, new_message=message):
                pending += [fc for fc in event.get_function_calls() if fc.name == CONFIRM]
            # the end user approves every pending call (the scenario marks which calls need it)
            message = types.Content(role="user", parts=[
                types.Part(function_response=types.FunctionResponse(id=fc.id, name=CONFIRM, response={"confirmed": True}))
                for fc in pending]) if pending else None
    finally:
        await runner.close()
        await toolset.close()


async def over_stdio(command, args, env):
    await play(StdioConnectionParams(server_params=StdioServerParameters(command=command, args=args, env=env), timeout=20))


async def over_http(url):
    await play(StreamableHTTPConnectionParams(url=url, timeout=20))


run(over_stdio, over_http)
