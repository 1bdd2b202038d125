"""Agent host of profile llamaindex-openinference-py: instead of the lab's scripted host (host.py),
a real LlamaIndex agent (`FunctionAgent` of `llama_index.core.agent.workflow`, the agent LlamaIndex's
docs recommend, run as a workflow) whose tools are the lab server's MCP tools loaded by
`llama-index-tools-mcp` (`McpToolSpec(BasicMCPClient(...)).to_tool_list_async()`; BasicMCPClient
opens a new MCP session, over stdio a new server process, for every list_tools / call_tool),
traced by OpenInference's LlamaIndex instrumentor (lab_profile.py).

The model is scripted: LlamaIndex's own test model `MockFunctionCallingLLM` with a response
generator that answers turn n with turn n's tool calls (`ToolCallBlock`s), then a final text; no
LLM, no API key, no network. Two members are overridden: `metadata` names the model (the mock names none), and
`_prepare_chat_with_tools`, to do what a
real function-calling LLM (e.g. llama-index-llms-openai) does there: turn the tools into their
OpenAI tool schemas (`ToolMetadata.to_openai_tool()`) passed as `tools=` to the chat call (the mock
passes the BaseTool objects); and it keeps the tools the scenario's turn `allow`s, so a hidden tool
is one the model was not shown (the agent still holds it and runs it by name).

Approved writes go through LlamaIndex workflows' human-in-the-loop, as its docs show for tools:
the approved tool is a FunctionTool (same name, description and schema as the MCP one) whose
function takes the workflow `Context` and waits with `ctx.wait_for_event(HumanResponseEvent,
waiter_event=InputRequiredEvent(...))` before calling the MCP tool through the same client; the
host, streaming the run's events, answers each InputRequiredEvent with HumanResponseEvent
(response "yes"). A tool error (isError) comes back as an ordinary CallToolResult: McpToolSpec
does not raise on it."""
import json

from agent_support import AGENT, APPROVED, MODEL, PROMPT, TURNS, run, setup_profile

setup_profile()

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage, LLMMetadata, MessageRole, ToolCallBlock  # noqa: E402
from llama_index.core.llms.mock import MockFunctionCallingLLM  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
from llama_index.core.workflow import Context, HumanResponseEvent, InputRequiredEvent  # noqa: E402
from llama_index.tools.mcp import BasicMCPClient, McpToolSpec  # noqa: E402


def turn_of(messages):
    """The scenario turn the model is on: how many model responses the conversation has had."""
    return sum(1 for m in messages if m.role == MessageRole.ASSISTANT)


def respond(messages, **kwargs):
    turn = turn_of(messages)
    if turn < len(TURNS):
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[
            ToolCallBlock(tool_call_id=f"call_{turn}_{i}", tool_name=c["tool"], tool_kwargs=c["args"])
            for i, c in enumerate(TURNS[turn]["calls"])])
    return ChatMessage(role=MessageRole.ASSISTANT, content="Done.")


class ScriptedFunctionCallingLLM(MockFunctionCallingLLM):
    """MockFunctionCallingLLM playing the scenario, shown the turn's tools as OpenAI tool schemas."""

    @property
    def metadata(self) -> LLMMetadata:  # the mock names no model; a real LLM names its own
        return LLMMetadata(is_function_calling_model=True, is_chat_model=True, model_name=MODEL)

    def _prepare_chat_with_tools(self, tools, user_msg=None, chat_history=None, verbose=False,
                                 allow_parallel_tool_calls=False, tool_required=False, **kwargs):
        messages = list(chat_history or [])
        if user_msg:
            messages.append(ChatMessage(role=MessageRole.USER, content=user_msg) if isinstance(user_msg, str) else user_msg)
        allow = TURNS[min(turn_of(messages), len(TURNS) - 1)]["allow"]
        return {"messages": messages,
                "tools": [t.metadata.to_openai_tool() for t in tools if t.metadata.name in allow]}


def needs_approval(client, tool):
    """The MCP tool behind a human-in-the-loop confirmation (LlamaIndex workflow events)."""
    name = tool.metadata.name

    async def confirmed_call(ctx: Context, **kwargs):
        question = f"Approve {name}({json.dumps(kwargs, sort_keys=True)})?"
        answer = await ctx.wait_for_event(
            HumanResponseEvent, waiter_id=question,
            waiter_event=InputRequiredEvent(prefix=question, tool_name=name))
        if answer.response.strip().lower() != "yes":
            return f"The user rejected {name}."
        return await client.call_tool(name, kwargs)

    return FunctionTool.from_defaults(async_fn=confirmed_call, tool_metadata=tool.metadata)


async def play(client):
    tools = await McpToolSpec(client=client).to_tool_list_async()
    tools = [needs_approval(client, t) if t.metadata.name in APPROVED else t for t in tools]
    llm = ScriptedFunctionCallingLLM(response_generator=respond)
    agent = FunctionAgent(name=AGENT, description="Warehouse assistant", tools=tools, llm=llm,
                          system_prompt="You manage warehouse stock.")
    handler = agent.run(user_msg=PROMPT)
    async for event in handler.stream_events():
        if isinstance(event, InputRequiredEvent):
            # the end user approves every pending call (the scenario marks which calls need it)
            handler.ctx.send_event(HumanResponseEvent(response="yes"))
    await handler


async def over_stdio(command, args, env):
    await play(BasicMCPClient(command, args=args, env=env))


async def over_http(url):
    await play(BasicMCPClient(url))


run(over_stdio, over_http)
