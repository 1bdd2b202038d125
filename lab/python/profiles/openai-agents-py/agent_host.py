"""Agent host of profile openai-agents-py: instead of the lab's scripted host (host.py), a real
OpenAI Agents SDK agent (`agents.Agent`, `Runner.run`) driving the lab's MCP server through the
SDK's own MCP client (`MCPServerStdio`, or `MCPServerStreamableHttp` over Streamable HTTP),
connected (initialize) before the agent run; the SDK lists the tools inside each run.

The model is scripted: `ScenarioModel`, a small subclass of the SDK's model interface
(`agents.models.interface.Model`) that returns the scenario's tool calls turn by turn (one
`function_call` output item per call, then a final text message), so there is no LLM, no API key
and no network. Like the SDK's default model (`OpenAIResponsesModel`) it records its call in a
`response_span` (the only model span the OpenAI Responses path makes): `span_data.input` = the
input items it was given and `span_data.response` = a Responses API `Response` whose `tools` are
the tools the SDK handed the model, converted with the SDK's own `Converter.convert_tools` (what
OpenAIResponsesModel sends, and what the API echoes back), `model`, `instructions`, `output`
and synthetic `usage`.

What the model is shown is the scenario's `allow` list (the MCP server's `tool_filter`, a static
allow-list: every scenario's turns share one list), so a hidden tool is one the model was not
shown. An approved write goes through the SDK's own human-in-the-loop approval: the MCP server is
created with `require_approval` = "always" for the tools the scenario approves, the run stops with
`result.interruptions` (a `ToolApprovalItem` per pending call), and the host approves each one on
`result.to_state()` (`RunState.approve`) and resumes with `Runner.run(agent, state)`. A tool
result with `isError: true` is passed to the model as the tool's output text (the SDK's MCP client
does not raise for it), so W5's three identical failing calls play without any retry setting.
`use_structured_content` stays at its default (False: the model gets the content blocks, which
FastMCP fills with the same JSON as structuredContent)."""
import json
import secrets
import sys
import time

from agent_support import AGENT, APPROVED, MODEL, PROMPT, TURNS, run, setup_profile

setup_profile()

from agents import Agent, Runner  # noqa: E402
from agents.exceptions import ModelBehaviorError  # noqa: E402
from agents.items import ModelResponse  # noqa: E402
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp, create_static_tool_filter  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.models.openai_responses import Converter  # noqa: E402
from agents.tracing import response_span  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import Response, ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402

ALLOW = TURNS[0]["allow"]
assert all(t["allow"] == ALLOW for t in TURNS), "one allow-list per scenario (a static tool filter)"


def turn_of(input_items):
    """The scenario turn the model is on: one past the highest turn of the tool calls it already
    made in this conversation (call ids are `call_{turn}_{index}`)."""
    if isinstance(input_items, str):
        return 0
    done = [int(i["call_id"].split("_")[1]) for i in input_items
            if isinstance(i, dict) and i.get("type") == "function_call" and str(i.get("call_id", "")).startswith("call_")]
    return max(done) + 1 if done else 0


class ScenarioModel(Model):
    """Scripted model: the scenario's tool calls, turn by turn; then a final text."""

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, *,
                           previous_response_id, conversation_id, prompt):
        turn = turn_of(input)
        with response_span(disabled=tracing.is_disabled()) as span:
            if turn < len(TURNS):
                output = [ResponseFunctionToolCall(type="function_call", id=f"fc_{secrets.token_hex(8)}", call_id=f"call_{turn}_{i}",
                                                   name=c["tool"], arguments=json.dumps(c["args"]), status="completed")
                          for i, c in enumerate(TURNS[turn]["calls"])]
            else:
                output = [ResponseOutputMessage(type="message", id=f"msg_{secrets.token_hex(8)}", role="assistant", status="completed",
                                                content=[ResponseOutputText(type="output_text", text="Done.", annotations=[])])]
            input_tokens = 300 + 120 * turn
            usage = Usage(requests=1, input_tokens=input_tokens, output_tokens=40, total_tokens=input_tokens + 40)
            response = Response.model_validate({
                "id": f"resp_{secrets.token_hex(12)}", "object": "response", "created_at": time.time(), "model": MODEL,
                "instructions": system_instructions, "status": "completed", "parallel_tool_calls": True, "tool_choice": "auto",
                "tools": Converter.convert_tools(tools, handoffs).tools, "output": [o.model_dump() for o in output],
                "usage": {"input_tokens": input_tokens, "output_tokens": 40, "total_tokens": input_tokens + 40,
                          "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
            })
            if tracing.include_data():
                span.span_data.response = response
                span.span_data.input = input
        return ModelResponse(output=output, usage=usage, response_id=response.id)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError("the lab runs the agent with Runner.run (no streaming)")


async def play(server):
    agent = Agent(name=AGENT, instructions="You manage warehouse stock. Use the tools.", model=ScenarioModel(), mcp_servers=[server])
    try:
        result = await Runner.run(agent, PROMPT)
    except ModelBehaviorError as e:
        # W7: the model called a tool it was not shown; the SDK ends the run with this error
        # ("Tool ... not found in agent ...") and executes nothing. The host carries on.
        print(f"agent run ended: {e}", file=sys.stderr)
        return
    while result.interruptions:
        # the end user approves every pending call (the scenario marks which calls need it)
        state = result.to_state()
        for item in result.interruptions:
            state.approve(item)
        result = await Runner.run(agent, state)


def server_options():
    return {"name": "warehouse-inventory", "tool_filter": create_static_tool_filter(allowed_tool_names=ALLOW),
            "require_approval": {t: "always" for t in sorted(APPROVED)} or None}


async def over_stdio(command, args, env):
    async with MCPServerStdio({"command": command, "args": args, "env": env}, **server_options()) as server:
        await play(server)


async def over_http(url):
    async with MCPServerStreamableHttp({"url": url}, **server_options()) as server:
        await play(server)


run(over_stdio, over_http)
