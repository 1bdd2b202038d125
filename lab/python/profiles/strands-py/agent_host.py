"""Agent host of profile strands-py: instead of the lab's scripted host (host.py), a real AWS
Strands Agents agent with Strands' own OpenTelemetry (lab_profile.py: StrandsTelemetry), driving the
lab's MCP server through Strands' MCP client (`strands.tools.mcp.MCPClient` over stdio or
Streamable HTTP). The model is scripted: a small subclass of `strands.models.Model` that streams
the scenario's turns (turn n = the n-th assistant message: its tool calls as toolUse blocks, then a
final text), so there is no LLM, no API key and no network. The tools shown to the model are the
scenario's `allow` list (MCPClient `tool_filters`), so a hidden tool is one the agent does not have.
An approved write goes through Strands' interrupts: a hook on BeforeToolCallEvent calls
`event.interrupt("write-approval", ...)` for the scenario's approved calls, the agent stops with
stop_reason `interrupt`, and the host resumes it with an `interruptResponse` approving each one.
A tool error (isError) comes back to the model as a tool result with status error; the scripted
model goes on with the next turn."""
import json

from agent_support import AGENT, APPROVED, MODEL, PROMPT, TURNS, serve_sync, setup_profile

telemetry = setup_profile()

from mcp import StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from strands import Agent  # noqa: E402
from strands.hooks import BeforeToolCallEvent, HookProvider, HookRegistry  # noqa: E402
from strands.models import Model  # noqa: E402
from strands.tools.mcp import MCPClient  # noqa: E402

ALLOW = sorted({n for t in TURNS for n in t["allow"]})


class ScriptedModel(Model):
    """Plays the scenario: the n-th model call answers with turn n's tool calls, then with text."""

    def __init__(self):
        self.config = {"model_id": MODEL}

    def update_config(self, **model_config):
        self.config.update(model_config)

    def get_config(self):
        return self.config

    async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):
        raise NotImplementedError("the scripted model has no structured output")
        yield  # pragma: no cover

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        turn = sum(1 for m in messages if m["role"] == "assistant")
        yield {"messageStart": {"role": "assistant"}}
        calls = TURNS[turn]["calls"] if turn < len(TURNS) else []
        for i, c in enumerate(calls):
            yield {"contentBlockStart": {"start": {"toolUse": {"name": c["tool"], "toolUseId": f"call_{turn}_{i}"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(c["args"])}}}}
            yield {"contentBlockStop": {}}
        if not calls:
            yield {"contentBlockDelta": {"delta": {"text": "Done."}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use" if calls else "end_turn"}}
        yield {"metadata": {"usage": {"inputTokens": 300 + 120 * turn, "outputTokens": 40, "totalTokens": 340 + 120 * turn},
                            "metrics": {"latencyMs": 5}}}


class WriteApproval(HookProvider):
    """Human approval of the scenario's approved writes through Strands' interrupts."""

    def register_hooks(self, registry: HookRegistry, **kwargs):
        registry.add_callback(BeforeToolCallEvent, self.approve)

    def approve(self, event: BeforeToolCallEvent):
        if event.tool_use["name"] not in APPROVED:
            return
        answer = event.interrupt("write-approval", reason={"tool": event.tool_use["name"], "input": event.tool_use["input"]})
        if answer != "approve":
            event.cancel_tool = "the user did not approve this write"


def play(client):
    agent = Agent(model=ScriptedModel(), name=AGENT, tools=client.list_tools_sync(), hooks=[WriteApproval()], callback_handler=None)
    result = agent(PROMPT)
    while result.stop_reason == "interrupt":
        # the end user approves every pending call (the scenario marks which calls need it)
        result = agent([{"interruptResponse": {"interruptId": i.id, "response": "approve"}} for i in result.interrupts])


FILTERS = {"allowed": ALLOW}


def over_stdio(command, args, env):
    params = StdioServerParameters(command=command, args=args, env=env)
    with MCPClient(lambda: stdio_client(params), tool_filters=FILTERS) as client:
        play(client)


def over_http(url):
    with MCPClient(url=url, tool_filters=FILTERS) as client:
        play(client)


serve_sync(over_stdio, over_http)
telemetry.tracer_provider.shutdown()
