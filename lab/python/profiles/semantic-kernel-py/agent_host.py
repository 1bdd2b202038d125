"""Agent host of profile semantic-kernel-py: instead of the lab's scripted host (host.py), a real
Microsoft Semantic Kernel `ChatCompletionAgent` with SK's own OpenTelemetry (lab_profile.py),
driving the lab's MCP server through SK's MCP plugin (`semantic_kernel.connectors.mcp`:
`MCPStdioPlugin` over stdio, `MCPStreamableHttpPlugin` over Streamable HTTP), added to the agent's
kernel as plugin `warehouse` (SK names its functions `warehouse-<tool>`).

The model is scripted: a small subclass of SK's `ChatCompletionClientBase` whose
`_inner_get_chat_message_contents` answers the n-th model request (n = assistant messages so far)
with turn n's tool calls as `FunctionCallContent`, then with a final text; no LLM, no network. It
is decorated with SK's own `trace_chat_completion` as SK's connectors (OpenAI, Azure, Ollama...)
decorate theirs, so its `chat` spans are SK's. SK's auto function invocation runs the calls. The
tools shown to the model are the scenario's `allow` list (FunctionChoiceBehavior.Auto filters
`included_functions`): SK refuses a call outside it itself.

Approvals: SK's human-in-the-loop mechanism is an auto function invocation filter
(FilterTypes.AUTO_FUNCTION_INVOCATION); ours asks the end user (scripted: approves) for the
scenario's approved writes and only then lets the call run (`await next(context)`); a write the
scenario does not approve runs without asking (W4). SK emits nothing for a filter."""
import json
import secrets

from agent_support import AGENT, APPROVED, MODEL, PROMPT, TURNS, run, setup_profile

setup_profile()

from semantic_kernel import Kernel  # noqa: E402
from semantic_kernel.agents import ChatCompletionAgent  # noqa: E402
from semantic_kernel.connectors.ai.chat_completion_client_base import ChatCompletionClientBase  # noqa: E402
from semantic_kernel.connectors.ai.completion_usage import CompletionUsage  # noqa: E402
from semantic_kernel.connectors.ai.function_choice_behavior import FunctionChoiceBehavior  # noqa: E402
from semantic_kernel.connectors.mcp import MCPStdioPlugin, MCPStreamableHttpPlugin  # noqa: E402
from semantic_kernel.contents import ChatMessageContent, FunctionCallContent  # noqa: E402
from semantic_kernel.contents.utils.author_role import AuthorRole  # noqa: E402
from semantic_kernel.contents.utils.finish_reason import FinishReason  # noqa: E402
from semantic_kernel.filters import AutoFunctionInvocationContext, FilterTypes  # noqa: E402
from semantic_kernel.utils.telemetry.model_diagnostics.decorators import trace_chat_completion  # noqa: E402

PLUGIN = "warehouse"
ALLOW = sorted({n for t in TURNS for n in t["allow"]})


class ScriptedChat(ChatCompletionClientBase):
    """Plays the scenario: the n-th model request answers with turn n's tool calls, then text."""

    SUPPORTS_FUNCTION_CALLING = True

    @trace_chat_completion("scripted")
    async def _inner_get_chat_message_contents(self, chat_history, settings):
        turn = sum(1 for m in chat_history.messages if m.role == AuthorRole.ASSISTANT)
        calls = TURNS[turn]["calls"] if turn < len(TURNS) else []
        meta = {"id": f"resp_{secrets.token_hex(6)}",
                "usage": CompletionUsage(prompt_tokens=300 + 120 * turn, completion_tokens=40)}
        if calls:
            items = [FunctionCallContent(id=f"call_{turn}_{i}", name=f"{PLUGIN}-{c['tool']}", arguments=json.dumps(c["args"]))
                     for i, c in enumerate(calls)]
            return [ChatMessageContent(role=AuthorRole.ASSISTANT, items=items, finish_reason=FinishReason.TOOL_CALLS,
                                       ai_model_id=MODEL, metadata=meta)]
        return [ChatMessageContent(role=AuthorRole.ASSISTANT, content="Done.", finish_reason=FinishReason.STOP,
                                   ai_model_id=MODEL, metadata=meta)]


async def play(plugin):
    kernel = Kernel()
    kernel.add_plugin(plugin)

    @kernel.filter(FilterTypes.AUTO_FUNCTION_INVOCATION)
    async def write_approval(context: AutoFunctionInvocationContext, next):
        # Human in the loop: the end user is asked before an approved write runs (scripted: yes).
        if context.function.name in APPROVED:
            answer = "approve"
            if answer != "approve":
                context.terminate = True
                return
        await next(context)

    agent = ChatCompletionAgent(
        kernel=kernel, name=AGENT, service=ScriptedChat(ai_model_id=MODEL),
        function_choice_behavior=FunctionChoiceBehavior.Auto(filters={"included_functions": [f"{PLUGIN}-{n}" for n in ALLOW]}))
    await agent.get_response(messages=PROMPT)


async def over_stdio(command, args, env):
    async with MCPStdioPlugin(name=PLUGIN, command=command, args=args, env=env, load_prompts=False) as plugin:
        await play(plugin)


async def over_http(url):
    async with MCPStreamableHttpPlugin(name=PLUGIN, url=url, load_prompts=False) as plugin:
        await play(plugin)


run(over_stdio, over_http)
