"""Agent host of profile langgraph-openinference-py: instead of the lab's scripted host (host.py),
a real LangChain/LangGraph agent (`langchain.agents.create_agent`, the agent builder LangGraph's
docs now point to) whose tools are the lab server's MCP tools loaded by `langchain-mcp-adapters`
(`MultiServerMCPClient(...).get_tools()`, over stdio or Streamable HTTP), traced by OpenInference's
LangChain instrumentor (lab_profile.py). The model is scripted: a small `BaseChatModel` subclass
whose `bind_tools` binds the tools' OpenAI schemas as a real chat model does (so they reach the
model call's invocation parameters) and whose responses are the scenario's turns as
`AIMessage(tool_calls=...)`, then a final text; no LLM, no API key, no network. What the model is
shown per turn is the scenario's `allow` list (a `wrap_model_call` middleware overriding the
request's tools, LangChain's documented way to filter tools per call), so a hidden tool is one the
model was not shown (the agent's tool node still holds it). Approved writes go through LangChain's
human-in-the-loop: `HumanInTheLoopMiddleware(interrupt_on={tool: True})` for the calls the
scenario approves, with an `InMemorySaver` checkpointer; the run stops with an interrupt and the
host resumes the thread with `Command(resume={"decisions": [{"type": "approve"}]})`. A tool error
(isError) comes back to the model as a ToolMessage with status error (the adapters'
`handle_tool_errors=True` default)."""
from typing import Any

from agent_support import AGENT, APPROVED, MODEL, PROMPT, TURNS, run, setup_profile

setup_profile()

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware  # noqa: E402
from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from langchain_mcp_adapters.client import MultiServerMCPClient  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.types import Command  # noqa: E402


def turn_of(messages):
    """The scenario turn the model is on: how many model responses the conversation has had."""
    return sum(1 for m in messages if isinstance(m, AIMessage))


class ScriptedChatModel(BaseChatModel):
    """Plays the scenario: turn n answers with turn n's tool calls, then a final text."""

    model_name: str = MODEL

    @property
    def _llm_type(self) -> str:
        return "scripted-chat"

    def bind_tools(self, tools, *, tool_choice=None, **kwargs: Any):
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        turn = turn_of(messages)
        if turn < len(TURNS):
            calls = [{"name": c["tool"], "args": c["args"], "id": f"call_{turn}_{i}", "type": "tool_call"}
                     for i, c in enumerate(TURNS[turn]["calls"])]
            msg = AIMessage(content="", tool_calls=calls)
        else:
            msg = AIMessage(content="Done.")
        msg.usage_metadata = {"input_tokens": 300 + 120 * turn, "output_tokens": 40, "total_tokens": 340 + 120 * turn}
        return ChatResult(generations=[ChatGeneration(message=msg)])


class ShowTurnTools(AgentMiddleware):
    """Shows the model only the tools the scenario's turn allows."""

    def _filter(self, request):
        turn = min(turn_of(request.messages), len(TURNS) - 1)
        return request.override(tools=[t for t in request.tools if getattr(t, "name", None) in TURNS[turn]["allow"]])

    def wrap_model_call(self, request, handler):
        return handler(self._filter(request))

    async def awrap_model_call(self, request, handler):
        return await handler(self._filter(request))


async def play(connection):
    client = MultiServerMCPClient({"warehouse-inventory": connection})
    tools = await client.get_tools()
    middleware = [ShowTurnTools()]
    if APPROVED:
        middleware.append(HumanInTheLoopMiddleware(interrupt_on={name: True for name in APPROVED}))
    agent = create_agent(ScriptedChatModel(), tools=tools, middleware=middleware, checkpointer=InMemorySaver(), name=AGENT)
    config = {"configurable": {"thread_id": "lab-thread-1"}}
    result = await agent.ainvoke({"messages": [{"role": "user", "content": PROMPT}]}, config)
    while result.get("__interrupt__"):
        # the end user approves every pending call (the scenario marks which calls need it)
        decisions = [{"type": "approve"} for i in result["__interrupt__"] for _ in i.value["action_requests"]]
        result = await agent.ainvoke(Command(resume={"decisions": decisions}), config)


async def over_stdio(command, args, env):
    await play({"transport": "stdio", "command": command, "args": args, "env": env})


async def over_http(url):
    await play({"transport": "streamable_http", "url": url})


run(over_stdio, over_http)
