#!/usr/bin/env python3
"""Derives the ground truth of every lab recording from what its spans show, not from what the
scenario meant: a problem the spans do not show is labelled *not observable* for its rule, never
healthy. Writes lab/labels.json (all recordings) and <recording>/ground_truth.json (the shared
recordings' shape: `expected_findings` with the same ids, so the same test code can read both).

Run with the lab tools venv (lab/record does): it needs opentelemetry-proto for `.pb` bodies.
"""
import json
import os
import re
import sys
import tomllib

LAB = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, LAB)
import spans as spanlib  # noqa: E402

HOST_SCOPE = "lab.scripted_host"
# Scopes of host spans: the scripted host's, Pydantic AI's own agent instrumentation where the
# host is a Pydantic AI agent (profile pydantic-ai-mcp), and Strands' tracer where the host is a
# Strands agent (profile strands-py).
HOST_SCOPES = {HOST_SCOPE, "pydantic-ai", "strands.telemetry.tracer"}
# OpenAI Agents SDK agent traced by OpenInference's processor (profile openai-agents-py): its spans
# are host spans too (see the section "OpenAI Agents SDK + OpenInference" below).
OAI_SCOPE = "openinference.instrumentation.openai_agents"
HOST_SCOPES = HOST_SCOPES | {OAI_SCOPE}
# Vercel AI SDK (profile vercel-ai-js): the host is an AI SDK agent, its spans in tracer scope "ai"
# (see the Vercel AI SDK section below).
AI_SDK_SCOPE = "ai"
HOST_SCOPES.add(AI_SDK_SCOPE)
# Mastra (profile mastra-js): the host is a Mastra agent, its AI tracing exported by
# @mastra/otel-exporter in scope "@mastra/otel" (see the Mastra section below).
MASTRA_SCOPE = "@mastra/otel"
HOST_SCOPES.add(MASTRA_SCOPE)
# Pydantic AI: an execute_tool span of a call deferred for approval (nothing executed; the call runs
# in a later agent run with the same tool call id once approved).
DEFERRAL = "pydantic_ai.tool.deferral.name"
HOST_SERVICE = "warehouse-agent-host"  # everything else is the server process (whatever it names itself)
RULE_OF = {
    "structured_output_missing": "TL001",
    "write_without_confirmation": "TL002",
    "broken_trace_propagation": "TL004",
    "tool_call_outside_allowlist": "TL005",
    "deprecated_gen_ai_system": "TL007",
    "tool_error_retry_loop": "TL008",
    "tool_error_masked": "TL009",
    "exfiltration_chain": "TL010",
    "annotation_policy_mismatch": "TL006",
}
SCORED = sorted(set(RULE_OF.values()) | {"TL003"})
# Label ids the shared recordings do not use: kept out of ground_truth.json's expected_findings
# (code that reads the shared shape rejects unknown ids) and listed under lab_extra_findings.
LAB_ONLY = {"tool_error_masked", "annotation_policy_mismatch"}
# Attributes that carry a whole CallToolResult (or the JSON-RPC response holding one).
FULL_RESULT = ["gen_ai.tool.call.result", "output.value", "mcp.response.value", "mcp.response.payload", "response",
               "ai.toolCall.result"]  # Vercel AI SDK: the MCP client's CallToolResult, as JSON
# Attributes that carry a lossy summary of a result (first text block, is_error flag).
SUMMARY_RESULT = ["traceloop.entity.output"]
DEPRECATED = ["gen_ai.system", "gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens"]
# deprecated name -> its replacement: deprecated when the replacement is not sent next to it
RENAMED = {"gen_ai.usage.cache_creation.input_tokens": "gen_ai.usage.cache_write.input_tokens"}

# --- Microsoft AutoGen AgentChat (profile autogen-py) ------------------------------------------
# AutoGen's built-in tracing (tracer `autogen-core`, autogen_core._telemetry) is the host: a
# parentless CLIENT `create_agent {agent}` when the AssistantAgent is built, a CLIENT root
# `invoke_agent {agent}` per run, and INTERNAL `execute_tool {tool}` under it (BaseTool.run_json:
# gen_ai.tool.name, gen_ai.tool.description, gen_ai.tool.call.id; McpWorkbench.call_tool's own span
# (recordings -mcp-workbench) has no description; gen_ai.system=autogen on every span, no
# gen_ai.provider.name). No model call span, no arguments, no results, no conversation id.
# mcp_server_tools' adapters raise on an isError result, so that call's execute_tool span has status
# ERROR, error.type=Exception and an exception event; McpWorkbench returns it and the span stays UNSET. AutoGen 0.7.5's MCP tools need mcp 1.x,
# which has no telemetry: no MCP client or server span, no trace context in params._meta.
AUTOGEN_SCOPE = "autogen-core"
HOST_SCOPES.add(AUTOGEN_SCOPE)


def autogen_not_observable(spans, calls, nob):
    """What AutoGen's spans cannot show (called by derive() for recordings with autogen-core spans)."""
    if not any(s["scope"] == AUTOGEN_SCOPE for s in spans):
        return
    nob("TL005", "AutoGen records no model call: no span carries the tools shown to the model (no chat span, no gen_ai.tool.definitions; "
        "invoke_agent has gen_ai.agent.name / description only), and a call of a tool the agent does not have is answered "
        "`Error: tool ... not found in any workbench` without any span")
    if calls and not any(c["client"] or c["server"] for c in calls):
        nob("TL004", "mcp 1.30 (the MCP SDK autogen-ext 0.7.5 works with) has no telemetry: neither the host's MCP client nor the server "
            "emits a span, and no trace context is sent in params._meta")
        nob("TL001", "AutoGen's execute_tool spans carry no result (gen_ai.tool.name, gen_ai.tool.call.id, and gen_ai.tool.description from "
            "mcp_server_tools' adapters only), and no MCP span exists: the CallToolResult is not recorded")
    unset = [c for c in calls if c["exec"]["scope"] == AUTOGEN_SCOPE and c["exec"]["status"] == "UNSET"]
    if unset:
        nob("TL009", f"AutoGen: {len(unset)} execute_tool span(s) with status UNSET and no result: an isError result shows only where autogen-ext "
            "raises it (mcp_server_tools' adapters: status ERROR, error.type=Exception, an exception event holding the content blocks); "
            "McpWorkbench hands it to the agent as ToolResult.is_error and leaves the span UNSET, so whether these calls failed is not observable")
# --- end Microsoft AutoGen ---------------------------------------------------------------------


# --- Google ADK (profile google-adk-py) -------------------------------------------------------
# ADK's own tracer `gcp.vertex.agent` is the host (telemetry schema v2, content on): INTERNAL
# `invoke_workflow` > `invoke_agent` > `generate_content {model}` (its model call: operation
# `generate_content`, not `chat`, with gen_ai.tool.definitions) and `execute_tool {tool}`, whose
# gen_ai.tool.call.result is the whole CallToolResult ADK's McpTool got (content, structuredContent,
# isError). Its tool confirmation leaves an execute_tool span whose result is the pause notice
# (nothing sent to the server); the confirmed call runs in the next invocation (another trace) as
# an execute_tool span of the same gen_ai.tool.call.id. ADK's execute_tool spans carry no
# gen_ai.conversation.id: it is on the invoke_agent span above them.
ADK_SCOPE = "gcp.vertex.agent"
HOST_SCOPES = HOST_SCOPES | {ADK_SCOPE}
ADK_PAUSED = "This tool call requires confirmation"  # McpTool.run_async's result while it waits
ADK_REJECTED = "This tool call is rejected."         # ... and after the user said no


# ADK's legacy telemetry schema 1 (ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1, the `-adk-schema1`
# recordings): `invocation` > `invoke_agent` > `call_llm` (gen_ai.system=gcp.vertex.agent, the
# whole request in gcp.vertex.agent.llm_request: the tools shown are its
# config.tools[].function_declarations) > `generate_content {model}` (no tool definitions), and
# `execute_tool {tool}` with the arguments in gcp.vertex.agent.tool_call_args and the
# CallToolResult in gcp.vertex.agent.tool_response.
ADK_V1_RESULT = "gcp.vertex.agent.tool_response"
ADK_V1_ARGS = "gcp.vertex.agent.tool_call_args"
FULL_RESULT = FULL_RESULT + [ADK_V1_RESULT]


def adk_tool_result(s):
    return jload(s["attrs"].get("gen_ai.tool.call.result", s["attrs"].get(ADK_V1_RESULT)))


def adk_confirmation_notice(s):
    """An ADK execute_tool span that ran nothing: the tool-confirmation request (or the rejection)
    ADK's McpTool returned instead of calling the server. Only visible with content capture on."""
    if s["scope"] != ADK_SCOPE:
        return False
    d = adk_tool_result(s)
    return isinstance(d, dict) and set(d) == {"error"} and isinstance(d["error"], str) and (
        d["error"].startswith(ADK_PAUSED) or d["error"] == ADK_REJECTED)


def adk_paused(s):
    return adk_confirmation_notice(s) and adk_tool_result(s)["error"].startswith(ADK_PAUSED)


def adk_model_call(s, byid):
    """ADK's model call: `call_llm` (schema 1; its `generate_content` child is not another one), or
    `generate_content` (schema 2)."""
    if s["scope"] != ADK_SCOPE:
        return False
    if s["name"] == "call_llm":
        return True
    parent = byid.get(s["parent"])
    return s["attrs"].get("gen_ai.operation.name") == "generate_content" and not (parent and parent["name"] == "call_llm")


def shown_tool_names(ch):
    """Names of the tools a model call was shown: gen_ai.tool.definitions, or (ADK schema 1) the
    function declarations of the request in gcp.vertex.agent.llm_request."""
    if "gen_ai.tool.definitions" in ch["attrs"] or ch["scope"] != ADK_SCOPE:
        return [d.get("name") for d in jload(ch["attrs"].get("gen_ai.tool.definitions")) or []]
    req = jload(ch["attrs"].get("gcp.vertex.agent.llm_request")) or {}
    return [f.get("name") for t in ((req.get("config") or {}).get("tools") or []) for f in (t.get("function_declarations") or [])]


def adk_result_span(s):
    """ADK's execute_tool span of an MCP tool: its gen_ai.tool.call.result is the CallToolResult."""
    return s["scope"] == ADK_SCOPE and s["attrs"].get("gen_ai.tool.type") == "McpTool"
# --- end Google ADK ----------------------------------------------------------------------------


def jload(v):
    if not isinstance(v, str):
        return None
    try:
        return json.loads(v)
    except ValueError:
        return None


def tool_of(s):
    a = s["attrs"]
    if s["scope"] in HOST_SCOPES:
        return None
    if a.get("mcp.method.name") not in (None, "tools/call"):
        return None
    if a.get("gen_ai.tool.name"):
        return a["gen_ai.tool.name"]
    if a.get("traceloop.span.kind") == "tool":
        return a.get("traceloop.entity.name")
    req = jload(a.get("request"))  # Logfire: the whole request object as JSON
    if isinstance(req, dict) and req.get("method") == "tools/call":
        return (req.get("params") or {}).get("name")
    if a.get("mcp.event_type") == "mcp:tools/call" and a.get("mcp.resource_name"):
        return a["mcp.resource_name"]
    if a.get("mcp.operation.name") == "tools_call" and a.get("mcp.tool.name"):
        return a["mcp.tool.name"]
    if a.get("mcp.operation.name") == "tools_call":
        # OpenLIT Python: no mcp.tool.name when the tool is passed positionally; the request
        # payload holds the wrapped call's arguments: {"method": "call_tool", "params": {"args":
        # [name, arguments]}}. Without them (the decorator registration span) it is no call.
        name, _ = openlit_call(a)
        if name:
            return name
    if a.get("mcp.operation.name") == "transport_request":
        # OpenLIT Python's BaseSession.send_request span: the request as a Python repr.
        m = re.search(r"CallToolRequest\(method='tools/call', params=CallToolRequestParams\(.*?\bname='([^']+)'", str(a.get("mcp.request.payload", "")))
        if m:
            return m.group(1)
    if a.get("openinference.span.kind") == "TOOL":
        return a.get("tool.name") or s["name"]
    m = re.match(r"^tools/call (\S+)$", s["name"])
    return m.group(1) if m else None


def openlit_call(a):
    """(tool, arguments) from OpenLIT Python's mcp.request.payload of a call_tool span."""
    d = jload(a.get("mcp.request.payload"))
    if not isinstance(d, dict) or d.get("method") != "call_tool" or not isinstance(d.get("params"), dict):
        return None, None
    p = d["params"]
    args = p.get("args")
    if isinstance(args, list) and args and isinstance(args[0], str):
        return args[0], (args[1] if len(args) > 1 and isinstance(args[1], dict) else p.get("arguments"))
    if isinstance(p.get("name"), str):
        return p["name"], p.get("arguments")
    return None, None


def tool_from_repr(v):
    """One tool of a tools/list result rendered as a Python repr (OpenLIT Python: `name='x' title=None
    description='...' inputSchema={...} outputSchema={...} icons=None annotations=ToolAnnotations(
    title=None, readOnlyHint=True, destructiveHint=None, ...) meta=None execution=None`): its name,
    whether inputSchema is there, and the annotation hints. None unless it has that shape."""
    if not isinstance(v, str):
        return None
    m = re.match(r"^name='([^']+)' ", v)
    if not m or not re.search(r" inputSchema=\{", v):
        return None
    t = {"name": m.group(1), "inputSchema": "repr"}
    ann = re.search(r" annotations=ToolAnnotations\(([^()]*)\)", v)
    if ann:
        t["annotations"] = {k: {"True": True, "False": False}[val] for k, val in re.findall(r"\b(\w+Hint)=(True|False)\b", ann.group(1))}
    elif not re.search(r" annotations=None\b", v):
        return None
    return t


def from_repr(v):
    """A CallToolResult rendered as a Python repr (`meta=None content=[...] structuredContent=None
    isError=True`), as the AWS distro records it: the facts are there, in another syntax."""
    if not isinstance(v, str) or "content=[" not in v or "isError=" not in v:
        return None
    return {"content": "repr", "structuredContent": None if re.search(r"\bstructuredContent=None\b", v) else "present",
            "isError": bool(re.search(r"\bisError=True\b", v))}


def call_result(s):
    """(kind, parsed, attribute) of the result payload a span carries: kind full|summary|None."""
    for k in FULL_RESULT:
        d = jload(s["attrs"].get(k)) or from_repr(s["attrs"].get(k))
        if isinstance(d, dict) and isinstance(d.get("result"), dict) and "content" in d["result"]:
            d = d["result"]  # a whole JSON-RPC response
        if isinstance(d, dict) and "content" in d:
            return "full", d, k
    for k in SUMMARY_RESULT:
        d = jload(s["attrs"].get(k))
        if isinstance(d, dict):
            return "summary", d, k
    return None, None, None


def call_args(s):
    a = s["attrs"]
    if "gen_ai.tool.call.arguments" in a:
        return jload(a["gen_ai.tool.call.arguments"]), "gen_ai.tool.call.arguments"
    if "ai.toolCall.args" in a:  # Vercel AI SDK
        return jload(a["ai.toolCall.args"]), "ai.toolCall.args"
    if s["scope"] == MASTRA_SCOPE and "gen_ai.tool.input" in a:  # Mastra
        return jload(a["gen_ai.tool.input"]), "gen_ai.tool.input"
    if a.get("mcp.operation.name") == "tools_call":
        _, args = openlit_call(a)
        if isinstance(args, dict):
            return args, "mcp.request.payload"
    if ADK_V1_ARGS in a:  # Google ADK, telemetry schema 1
        return jload(a[ADK_V1_ARGS]), ADK_V1_ARGS
    d = jload(a.get("traceloop.entity.input"))
    if isinstance(d, dict) and "arguments" in d:
        return d["arguments"], "traceloop.entity.input"
    req = jload(a.get("request"))
    if isinstance(req, dict) and isinstance(req.get("params"), dict) and "arguments" in req["params"]:
        return req["params"]["arguments"], "request"
    d = jload(a.get("input.value"))
    if isinstance(d, list) and d and isinstance(d[0], dict):
        return d[0], "input.value"
    if isinstance(d, dict):
        return d, "input.value"
    return None, None


# --- Strands Agents (profile strands-py) -------------------------------------------------------
# Strands' default (legacy) GenAI conventions put content in span *events*, not attributes: the
# execute_tool span's `gen_ai.tool.message` event holds the arguments (`content`, JSON) and its
# `gen_ai.choice` event only the result's content blocks (`message`: no structuredContent, no
# isError); the parent `execute_event_loop_cycle` span's `gen_ai.choice` event (`tool.result`) and
# later cycle / chat spans' `gen_ai.tool.message` events hold the whole ToolResult Strands' MCP
# client made of the CallToolResult: `{"toolResult": {"status", "toolUseId", "content": [{"text"}],
# "structuredContent" (when the server sent one), "metadata" (the result's _meta), "isError"}}`.
# Chat spans carry no tool definitions; the invoke_agent span's `gen_ai.agent.tools` lists the
# names of the tools the agent (and so the model) has. A BeforeToolCallEvent interrupt (the
# approval) ends an agent invocation with a `gen_ai.choice` event on `invoke_agent` whose
# finish_reason is `interrupt` and whose `message` is the Python repr of the interrupts, each id
# `v1:before_tool_call:{toolUseId}:{uuid}`; the approved call runs in the next invocation. With the
# opt-in conventions (OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental; recordings
# -semconv-latest) arguments and content blocks move to gen_ai.tool.call.arguments / .result
# attributes and `gen_ai.client.inference.operation.details` events, whose messages carry only the
# content blocks of a ToolResult (no structuredContent, no isError), and the interrupts are a text
# part of gen_ai.output.messages with finish_reason `interrupt`.
STRANDS_SCOPE = "strands.telemetry.tracer"


def strands_event_attr(s, event, key):
    return [e["attrs"].get(key) for e in s["events"] if e["name"] == event and key in e["attrs"]]


def strands_tool_result(spans, byid, e):
    """(payload, attribute, span) of the ToolResult of Strands execute_tool span `e`: from the parent
    cycle span's gen_ai.choice `tool.result`, else any Strands span's gen_ai.tool.message `content`."""
    cid = e["attrs"].get("gen_ai.tool.call.id")
    parent = byid.get(e["parent"])
    cands = ([(parent, "gen_ai.choice", "tool.result")] if parent else []) + [
        (s, "gen_ai.tool.message", "content") for s in spans if s["scope"] == STRANDS_SCOPE and s["start"] >= e["start"]]
    for s, ev, key in cands:
        for v in strands_event_attr(s, ev, key):
            for block in jload(v) or []:
                r = block.get("toolResult") if isinstance(block, dict) else None
                # only a result of the MCP client carries isError (Strands' own, e.g. "Unknown tool", does not)
                if isinstance(r, dict) and r.get("toolUseId") == cid and "content" in r and "isError" in r:
                    return r, f"event {ev} attribute {key} (Strands ToolResult of tool call {cid})", s
    return None, None, None


def strands_call_args(e):
    for v in strands_event_attr(e, "gen_ai.tool.message", "content"):
        d = jload(v)
        if isinstance(d, dict):
            return d, "event gen_ai.tool.message content"
    return None, None


def strands_agent_tools(ch, byid):
    """Tool names the model of Strands chat span `ch` was given: its invoke_agent's gen_ai.agent.tools."""
    s = ch
    while s is not None:
        if s["attrs"].get("gen_ai.operation.name") == "invoke_agent" and "gen_ai.agent.tools" in s["attrs"]:
            return jload(s["attrs"]["gen_ai.agent.tools"]), s
        s = byid.get(s["parent"])
    return None, None


def strands_interrupted_calls(spans):
    """{toolUseId: invoke_agent span} of tool calls a BeforeToolCallEvent interrupt stopped."""
    out = {}
    for s in spans:
        if s["scope"] != STRANDS_SCOPE or s["attrs"].get("gen_ai.operation.name") != "invoke_agent":
            continue
        for e in s["events"]:
            texts = []
            if e["name"] == "gen_ai.choice" and e["attrs"].get("finish_reason") == "interrupt":  # default conventions
                texts.append(str(e["attrs"].get("message", "")))
            for m in jload(e["attrs"].get("gen_ai.output.messages")) or []:  # opt-in conventions: a text part
                if isinstance(m, dict) and m.get("finish_reason") == "interrupt":
                    texts += [str(p.get("content", "")) for p in m.get("parts") or [] if isinstance(p, dict)]
            for text in texts:
                for cid in re.findall(r"'id': 'v1:before_tool_call:([^:']+):", text):
                    out[cid] = s
    return out


# ---- Vercel AI SDK (profile vercel-ai-js) --------------------------------------------------------
# The host is a Vercel AI SDK agent (ai 6.x, experimental_telemetry on). Its spans (scope "ai", all
# INTERNAL): `ai.generateText` per agent run (`ai.prompt` = the run's input messages as JSON),
# `ai.generateText.doGenerate` per model call (`ai.prompt.tools` = the tools shown, a list of JSON
# strings {type, name, description, inputSchema}; `ai.response.toolCalls` = the calls the model
# asked for), `ai.toolCall` per executed tool (`ai.toolCall.name`, `ai.toolCall.id`,
# `ai.toolCall.args`, `ai.toolCall.result`). No gen_ai.operation.name, no conversation id. A call
# that needs approval (`needsApproval`) is not executed in the run where the model asks for it: the
# run ends, and the call executes in a second `ai.generateText` (another trace) whose `ai.prompt`
# holds the assistant's `tool-approval-request` {approvalId, toolCallId} and the host's
# `tool-approval-response` {approvalId, approved}.
def ai_sdk_exec(s):
    return s["scope"] == AI_SDK_SCOPE and s["attrs"].get("ai.operationId") == "ai.toolCall"


def ai_sdk_chat(s):
    return s["scope"] == AI_SDK_SCOPE and s["attrs"].get("ai.operationId") in ("ai.generateText.doGenerate", "ai.streamText.doStream")


def ai_sdk_shown(ch):
    """Names of the tools a doGenerate span shows the model (ai.prompt.tools)."""
    tools = ch["attrs"].get("ai.prompt.tools")
    tools = tools if isinstance(tools, list) else (jload(tools) or [])
    return [d.get("name") for d in (jload(t) if isinstance(t, str) else t for t in tools) if isinstance(d, dict)]


def ai_sdk_requested(ch):
    """[(toolCallId, toolName)] a doGenerate span's model response asked for."""
    return [(c.get("toolCallId"), c.get("toolName")) for c in jload(ch["attrs"].get("ai.response.toolCalls")) or [] if isinstance(c, dict)]


def ai_sdk_approval(e, byid):
    """(run span, approvalId) when the agent run that executed ai.toolCall span e was given, in its
    input (ai.prompt), a tool-approval-request for e's toolCallId answered approved: true."""
    run = byid.get(e["parent"])
    prompt = jload(run["attrs"].get("ai.prompt")) if run else None
    msgs = prompt.get("messages") if isinstance(prompt, dict) else None
    parts = [p for m in msgs or [] if isinstance(m, dict) and isinstance(m.get("content"), list) for p in m["content"] if isinstance(p, dict)]
    cid = e["attrs"].get("ai.toolCall.id")
    asked = {p.get("approvalId") for p in parts if p.get("type") == "tool-approval-request" and p.get("toolCallId") == cid}
    granted = [p.get("approvalId") for p in parts if p.get("type") == "tool-approval-response" and p.get("approvalId") in asked and p.get("approved") is True]
    return (run, granted[0]) if granted else None


def exec_tool(e):
    if e["scope"] == "semantic_kernel.functions.kernel_function":  # Semantic Kernel: {plugin}-{tool}
        return sk_local(e["attrs"].get("gen_ai.tool.name"))
    return e["attrs"].get("gen_ai.tool.name") or e["attrs"].get("ai.toolCall.name")


def exec_call_id(e):
    return e["attrs"].get("gen_ai.tool.call.id") or e["attrs"].get("ai.toolCall.id")
# ---- end Vercel AI SDK ----------------------------------------------------------------------------


# ---- Mastra (profile mastra-js) ------------------------------------------------------------------
# The host is a Mastra agent (@mastra/core 0.24, AI tracing exported by @mastra/otel-exporter, scope
# "@mastra/otel"). Spans, each with `mastra.span.type`: `agent.{agent}` (agent_run, kind SERVER) per
# agent.stream / resumed run, `chat {model}` (model_generation, CLIENT; one per run, not per model
# call; gen_ai.prompt / gen_ai.completion, gen_ai.system; no tool definitions), `step: N`
# (model_step, INTERNAL; output = {text, toolCalls: [{toolCallId, toolName, args}]}), `chunk: '...'`
# (model_chunk, CLIENT; e.g. `chunk: 'tool-result'` output = {args, toolCallId, toolName, result},
# `chunk: 'tool-call-approval'` output = {toolCallId, toolName, args}), and `tool.execute {tool}`
# (tool_call, INTERNAL; gen_ai.operation.name=tool.execute, gen_ai.tool.name, gen_ai.tool.input =
# the arguments JSON, gen_ai.tool.output = what Mastra's MCP client returned: the CallToolResult's
# structuredContent alone when the server sent one, else the whole CallToolResult JSON; no tool call
# id, status OK for an isError result). A tool with requireApproval stops the run at a
# `tool-call-approval` chunk; agent.approveToolCall resumes it in a new trace (another agent span),
# where the call executes. The approval answer itself is recorded by no span: a call that needs
# approval executes only once approved (declineToolCall does not run it).
def mastra_exec(s):
    return s["scope"] == MASTRA_SCOPE and s["attrs"].get("mastra.span.type") == "tool_call"


def mastra_result(s):
    """(kind, parsed, attribute) of gen_ai.tool.output on a Mastra tool span: full when it is a
    whole CallToolResult (has content), else None (structuredContent alone: not the CallToolResult)."""
    d = jload(s["attrs"].get("gen_ai.tool.output"))
    if isinstance(d, dict) and "content" in d:
        return "full", d, "gen_ai.tool.output"
    return None, None, None


def mastra_call_id(e, spans):
    """The tool call id of a Mastra tool.execute span: the `chunk: 'tool-result'` (or the model
    step's toolCalls) under the same step span with the same tool name and arguments."""
    args = jload(e["attrs"].get("gen_ai.tool.input"))
    for s in spans:
        if s["scope"] != MASTRA_SCOPE or s["parent"] != e["parent"]:
            continue
        d = jload(s["attrs"].get("output"))
        cands = [d] if s["attrs"].get("mastra.span.type") == "model_chunk" else (d or {}).get("toolCalls") or [] if isinstance(d, dict) else []
        for c in cands:
            if isinstance(c, dict) and c.get("toolName") == e["attrs"].get("gen_ai.tool.name") and c.get("args") == args and c.get("toolCallId"):
                return c["toolCallId"]
    return None


def mastra_approval(e, spans):
    """The `chunk: 'tool-call-approval'` span that asked approval for tool.execute span e's call
    (same toolCallId, tool and arguments) in an earlier agent run (another trace): e runs in the
    resumed run, which only agent.approveToolCall starts for that call."""
    cid = mastra_call_id(e, spans)
    args = jload(e["attrs"].get("gen_ai.tool.input"))
    for s in spans:
        if s["scope"] == MASTRA_SCOPE and s["name"] == "chunk: 'tool-call-approval'" and s["start"] <= e["start"] and s["trace_id"] != e["trace_id"]:
            d = jload(s["attrs"].get("output")) or {}
            if d.get("toolCallId") == cid and d.get("toolName") == e["attrs"].get("gen_ai.tool.name") and d.get("args") == args:
                return s
    return None
# ---- end Mastra ----------------------------------------------------------------------------------


def classified_error(s):
    return s["status"] == "ERROR" or "error.type" in s["attrs"]


# ---- OpenAI Agents SDK + OpenInference (profile openai-agents-py) -------------------------------
# OpenInference's TracingProcessor turns the SDK's spans into OTel spans with OpenInference
# attributes only (no gen_ai.*): a function span (`openinference.span.kind=TOOL`, named for the
# tool, `tool.name`, `input.value` = the arguments JSON, `output.value` = the tool output handed to
# the model) per tool call, a response span (`LLM`, `llm.tools.{i}.tool.json_schema` = the tools
# shown to the model, `llm.output_messages.{i}.message.tool_calls.{j}.tool_call.function.name`)
# per model call, all under the root `Agent workflow` span of the run's trace. No span carries a
# tool call id or a conversation id: the conversation is the trace. The helpers below view these
# spans as the lab's host model (execute_tool, chat) for derive(); the views are copies whose
# attrs add the lab's gen_ai keys, and every label citing them names the real attributes.


def oai_children(spans):
    out = {}
    for s in spans:
        out.setdefault(s["parent"], []).append(s)
    return out


def oai_tool_names(s):
    """Names of the tools a response span says the model was shown (llm.tools.N.tool.json_schema)."""
    names = []
    for k in sorted((k for k in s["attrs"] if re.match(r"^llm\.tools\.\d+\.tool\.json_schema$", k)), key=lambda k: int(k.split(".")[2])):
        d = jload(s["attrs"][k]) or {}
        names.append(((d.get("function") or {}).get("name")) or d.get("name"))
    return names


def oai_model_calls(s):
    """(call id, tool name) of the tool calls a response span's output messages hold."""
    a = s["attrs"]
    out = []
    for k in sorted(a):
        m = re.match(r"^llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\.tool_call\.function\.name$", k)
        if m:
            out.append((a.get(f"llm.output_messages.{m.group(1)}.message.tool_calls.{m.group(2)}.tool_call.id"), a[k]))
    return out


def oai_views(spans):
    """(execs, pending, chats) of an OpenAI Agents SDK run traced by OpenInference.
    execs: function spans of tool calls that ran (they carry output.value, or have a child span:
    the MCP client span); pending: function spans of calls that did not run (no output.value, no
    child): the SDK's human-in-the-loop interruption, a call waiting for approval (with
    `require_approval`, the SDK opens the function span, finds the call needs approval and ends
    the run with result.interruptions: nothing executes); chats: response spans."""
    kids = oai_children(spans)
    execs, pending, chats = [], [], []
    for s in spans:
        if s["scope"] != OAI_SCOPE:
            continue
        a = s["attrs"]
        base = {"gen_ai.conversation.id": s["trace_id"]}
        if a.get("openinference.span.kind") == "TOOL" and a.get("tool.name"):
            v = dict(s, attrs={**a, **base, "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": a["tool.name"]}, oai=True)
            (execs if "output.value" in a or kids.get(s["span_id"]) else pending).append(v)
        elif a.get("openinference.span.kind") == "LLM":
            chats.append(dict(s, attrs={**a, **base, "gen_ai.operation.name": "chat",
                                        "gen_ai.tool.definitions": json.dumps([{"name": n} for n in oai_tool_names(s)])}, oai=True))
    return execs, pending, chats


def oai_notes(spans, execs, pending, byid):
    """Library behaviour of the OpenAI Agents SDK + OpenInference worth a note (not findings)."""
    notes = []
    ran = {e["attrs"]["tool.name"] for e in execs} | {p["attrs"]["tool.name"] for p in pending}
    for s in spans:
        if s["scope"] == OAI_SCOPE and s["attrs"].get("openinference.span.kind") == "LLM":
            shown = oai_tool_names(s)
            for cid, name in oai_model_calls(s):
                if name not in ran:
                    err = [x for x in spans if x["scope"] == OAI_SCOPE and x["status"] == "ERROR" and x["trace_id"] == s["trace_id"]]
                    notes.append(f"response span {s['span_id']}: the model called {name} (tool call {cid})"
                                 + ("" if name in shown else ", a tool it was not shown (not in llm.tools)")
                                 + "; no function span ran it" + (f"; span `{err[0]['name']}` {err[0]['span_id']} has status ERROR `{err[0]['status_message']}`" if err else ""))
    for p in pending:
        later = [s for s in spans if s["service"] == HOST_SERVICE and s["start"] > p["start"] and s["attrs"].get("mcp.method.name") == "tools/call"
                 and s["name"].endswith(" " + p["attrs"]["tool.name"]) and s["trace_id"] != p["trace_id"]]
        notes.append(f"function span {p['span_id']} `{p['name']}` has input.value and no output.value and no child span: the call was not executed in this run "
                     "(the SDK's approval interruption)" + (
                         f"; the tool runs later only in MCP SDK spans outside the agent's trace: `{later[0]['name']}` {later[0]['span_id']} "
                         f"({'no parent' if not later[0]['parent'] else 'parent ' + later[0]['parent']}, trace {later[0]['trace_id']}): the resumed run "
                         "(Runner.run(agent, state) after RunState.approve) is not traced by OpenInference (the SDK reattaches the trace without "
                         "on_trace_start, and the processor drops spans of traces it did not see start)" if later else ""))
    return notes


# ---- LangChain / LangGraph agent + OpenInference (profile langgraph-openinference-py) -------------
# OpenInference's LangChain instrumentor (scope openinference.instrumentation.langchain) turns the
# agent's LangChain runs into OTel spans with OpenInference attributes only (no gen_ai.*): the graph
# root `warehouse-assistant` (CHAIN, `session.id` = the LangGraph thread id), per step a `model` node
# (CHAIN) > the chat model's LLM span (`llm.tools.{i}.tool.json_schema` = the tools bound for this
# call, `llm.output_messages.*.tool_calls.*`), a `tools` node (CHAIN, `input.value` = the tool calls
# [{name, args, id}]) > one TOOL span per call (`tool.name`, `input.value` = the tool's input string:
# the bare value for a one-argument tool, `output.value` = the ToolMessage JSON, `metadata` = the run
# metadata merged with the tool's metadata, which langchain-mcp-adapters fills with the MCP
# annotations). The adapters turn the CallToolResult into that ToolMessage: content blocks as
# LangChain blocks, `artifact.structured_content` = structuredContent (null when absent), status
# `error` for isError (raised inside, so no artifact then). Human-in-the-loop approvals: the
# `HumanInTheLoopMiddleware.after_model` span of the interrupted run has an `exception` event
# `langgraph.errors.GraphInterrupt` whose message (a Python repr) lists the action_requests (tool
# name and args, no tool call id); the resumed run is a new trace whose root's `input.value` is the
# `Command` with `resume.decisions`, same `session.id`. The views below are copies of these spans
# with the lab's gen_ai keys added for derive(); labels citing them name the real attributes.
LC_SCOPE = "openinference.instrumentation.langchain"
HOST_SCOPES.add(LC_SCOPE)
LC_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def lc_tool_message(s):
    """The ToolMessage a LangChain TOOL span's output.value holds (its `data`), or None."""
    d = jload(s["attrs"].get("output.value"))
    return d["data"] if isinstance(d, dict) and d.get("type") == "tool" and isinstance(d.get("data"), dict) else None


def lc_tool_result(s):
    """The CallToolResult as the adapters' ToolMessage renders it: (kind, parsed, attribute, span)."""
    m = lc_tool_message(s)
    if m is None or not isinstance(m.get("content"), list):
        return None
    art = m.get("artifact") if isinstance(m.get("artifact"), dict) else {}
    return ("full", {"content": m["content"], "structuredContent": art.get("structured_content"), "isError": m.get("status") == "error"},
            "output.value (ToolMessage: content, artifact.structured_content, status)", s)


def lc_views(spans, byid):
    """(execs, chats) of a LangChain agent traced by OpenInference: TOOL spans as execute_tool (tool
    call id from the ToolMessage, arguments from the parent `tools` node's input.value), LLM spans
    as chat (the tools shown from llm.tools)."""
    execs, chats = [], []
    for s in spans:
        if s["scope"] != LC_SCOPE:
            continue
        a = s["attrs"]
        base = {"gen_ai.conversation.id": a.get("session.id") or s["trace_id"]}
        if a.get("openinference.span.kind") == "TOOL" and a.get("tool.name"):
            m = lc_tool_message(s) or {}
            cid = m.get("tool_call_id")
            extra = {**base, "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": a["tool.name"]}
            if cid:
                extra["gen_ai.tool.call.id"] = cid
            node = byid.get(s["parent"])
            for tc in (jload(node["attrs"].get("input.value")) if node else None) or []:
                if isinstance(tc, dict) and tc.get("id") == cid and isinstance(tc.get("args"), dict):
                    extra["gen_ai.tool.call.arguments"] = json.dumps(tc["args"])
                    extra["lc.args_from"] = f"input.value of the `{node['name']}` span {node['span_id']} (tool call {cid})"
            execs.append(dict(s, attrs={**a, **extra}, lc=True))
        elif a.get("openinference.span.kind") == "LLM":
            chats.append(dict(s, attrs={**a, **base, "gen_ai.operation.name": "chat",
                                        "gen_ai.tool.definitions": json.dumps([{"name": n} for n in oai_tool_names(s)])}, lc=True))
    return execs, chats


def lc_interrupts(spans):
    """HumanInTheLoopMiddleware interrupts: (span, session.id, [(tool, args)]) from the GraphInterrupt
    exception event's message (the Interrupt repr)."""
    import ast
    out = []
    for s in spans:
        if s["scope"] != LC_SCOPE:
            continue
        for ev in s["events"]:
            if ev["name"] == "exception" and ev["attrs"].get("exception.type") == "langgraph.errors.GraphInterrupt":
                reqs = []
                for name, args in re.findall(r"\{'name': '([^']+)', 'args': (\{[^{}]*\})", ev["attrs"].get("exception.message", "")):
                    try:
                        reqs.append((name, ast.literal_eval(args)))
                    except (ValueError, SyntaxError):
                        reqs.append((name, None))
                out.append((s, s["attrs"].get("session.id"), reqs))
    return out


def lc_approval(e, spans, byid):
    """Evidence that a LangChain tool call ran after a human-in-the-loop approval, else None: an
    earlier interrupt in the same session (thread) requested this tool with these arguments, and the
    run that executed it was resumed with decisions all `approve`."""
    root = e
    while root["parent"] in byid:
        root = byid[root["parent"]]
    cmd = jload(root["attrs"].get("input.value"))
    decisions = ((cmd or {}).get("resume") or {}).get("decisions") if isinstance(cmd, dict) and isinstance(cmd.get("resume"), dict) else None
    if not decisions or not all(isinstance(d, dict) and d.get("type") == "approve" for d in decisions):
        return None
    args = jload(e["attrs"].get("gen_ai.tool.call.arguments"))
    for s, sess, reqs in lc_interrupts(spans):
        if sess == e["attrs"].get("session.id") and s["start"] <= e["start"] and any(n == e["attrs"]["tool.name"] and (a is None or a == args) for n, a in reqs):
            return (f"`{s['name']}` span {s['span_id']} (trace {s['trace_id']}) has a GraphInterrupt exception event whose action_requests name "
                    f"{e['attrs']['tool.name']} with these arguments; the run that executed it (root `{root['name']}` {root['span_id']}, trace {root['trace_id']}, "
                    f"same session.id) has input.value resume.decisions {decisions}")
    return None


def lc_annotations(spans):
    """{tool: (span, annotations)} from the TOOL spans' `metadata` (the adapters put the MCP tool's
    annotations, model_dump'ed, into the LangChain tool's metadata, which the run metadata merges)."""
    out = {}
    for s in spans:
        if s["scope"] == LC_SCOPE and s["attrs"].get("openinference.span.kind") == "TOOL":
            md = jload(s["attrs"].get("metadata"))
            if isinstance(md, dict) and all(h in md for h in LC_HINTS):
                out[s["attrs"].get("tool.name")] = (s, {h: md[h] for h in LC_HINTS if md[h] is not None})
    return out
# ---- end LangChain / LangGraph + OpenInference --------------------------------------------------


# ---- LlamaIndex agent + OpenInference (profile llamaindex-openinference-py) -----------------------
# OpenInference's LlamaIndex instrumentor (scope openinference.instrumentation.llama_index) turns
# LlamaIndex's dispatcher spans into OTel spans (all INTERNAL, OpenInference attributes only, no
# gen_ai.*, no session id): the workflow root `FunctionAgent.run` (CHAIN), per step
# `BaseWorkflowAgent.run_agent_step` > the LLM's `..._prepare_chat_with_tools` (LLM, no tools) and
# `...astream_chat` (LLM: `llm.tools.{i}.tool.json_schema` = the tools given to the chat call,
# `llm.output_messages.0.message.tool_calls.*`), per tool call `BaseWorkflowAgent.call_tool` (CHAIN,
# `input.value` = {"ctx": ..., "ev": "ToolCall(tool_name='..', tool_kwargs={..}, tool_id='..')"}, a
# Python repr) > `FunctionTool.acall` (TOOL: `tool.name`, `tool.description`, `tool.parameters`,
# `input.value` = {"kwargs": the arguments}, `output.value` = the ToolOutput JSON whose `raw_output`
# is the CallToolResult llama-index-tools-mcp returned, dumped by mcp 2.x with its Python field names:
# `content`, `structured_content` (absent when none), `is_error`; the ToolOutput's own `is_error`
# stays false and the span OK for an isError result) > the mcp SDK's client spans. The workflow
# human-in-the-loop (a tool waiting on `ctx.wait_for_event(HumanResponseEvent, ...)`) leaves a
# `FunctionTool.acall` TOOL span with status ERROR, no output.value, and an `exception` event
# `workflows.runtime.types.results.WaitingForEvent` ("Waiting for event <class
# 'workflows.events.HumanResponseEvent'>"), under a `call_tool` span of the same ToolCall; the
# step then runs again once the response arrives and a second `call_tool` > `FunctionTool.acall`
# of the same tool_id executes it. The human's response itself is in no span.
LI_SCOPE = "openinference.instrumentation.llama_index"
HOST_SCOPES.add(LI_SCOPE)
LI_WAITING = "workflows.runtime.types.results.WaitingForEvent"


def li_tool_span(s):
    return s["scope"] == LI_SCOPE and s["attrs"].get("openinference.span.kind") == "TOOL" and bool(s["attrs"].get("tool.name"))


def li_waiting(s):
    """The exception event of a TOOL span that paused for a human response (HumanResponseEvent), or None."""
    for ev in s["events"]:
        if ev["name"] == "exception" and ev["attrs"].get("exception.type") == LI_WAITING and "HumanResponseEvent" in ev["attrs"].get("exception.message", ""):
            return ev
    return None


def li_call_id(s, byid):
    """The ToolCall's tool_id from the parent `call_tool` span's input.value (the event's repr)."""
    p = byid.get(s["parent"])
    ev = ((jload(p["attrs"].get("input.value")) or {}) if p else {}).get("ev")
    m = re.search(r"\btool_id='([^']*)'", ev) if isinstance(ev, str) else None
    return m.group(1) if m else None


def li_args(s):
    """The arguments in the TOOL span's input.value kwargs, without the workflow Context a
    context-taking tool is given (its repr `<workflows.context.context.Context object at 0x..>`)."""
    d = jload(s["attrs"].get("input.value"))
    kw = d.get("kwargs") if isinstance(d, dict) else None
    if not isinstance(kw, dict):
        return None
    return {k: v for k, v in kw.items() if not (isinstance(v, str) and v.startswith("<workflows.context."))}


def li_tool_result(s):
    """The CallToolResult in the TOOL span's output.value raw_output: (kind, parsed, attribute, span)."""
    d = jload(s["attrs"].get("output.value"))
    raw = d.get("raw_output") if isinstance(d, dict) else None
    if not isinstance(raw, dict) or not isinstance(raw.get("content"), list):
        return None
    return ("full", {"content": raw["content"], "structuredContent": raw.get("structured_content", raw.get("structuredContent")),
                     "isError": raw.get("is_error", raw.get("isError")) is True},
            "output.value raw_output (CallToolResult with mcp's Python field names: content, structured_content, is_error)", s)


def li_views(spans, byid):
    """(execs, waits, chats) of a LlamaIndex agent traced by OpenInference: TOOL spans that ran as
    execute_tool (tool call id from the parent call_tool span, arguments from input.value kwargs,
    conversation = the workflow run's trace), TOOL spans that paused for a human response, LLM spans
    that made the chat call as chat (the tools shown from llm.tools)."""
    execs, waits, chats = [], [], []
    for s in spans:
        if s["scope"] != LI_SCOPE:
            continue
        a = s["attrs"]
        base = {"gen_ai.conversation.id": s["trace_id"]}
        if li_tool_span(s):
            extra = {**base, "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": a["tool.name"]}
            cid = li_call_id(s, byid)
            if cid:
                extra["gen_ai.tool.call.id"] = cid
            args = li_args(s)
            if args is not None:
                extra["gen_ai.tool.call.arguments"] = json.dumps(args)
            view = dict(s, attrs={**a, **extra}, li=True)
            (waits if li_waiting(s) else execs).append(view)
        elif a.get("openinference.span.kind") == "LLM" and any(k.startswith(("llm.tools.", "llm.input_messages.")) for k in a):
            chats.append(dict(s, attrs={**a, **base, "gen_ai.operation.name": "chat",
                                        "gen_ai.tool.definitions": json.dumps([{"name": n} for n in oai_tool_names(s)])}, li=True))
    return execs, waits, chats


def li_approval(e, waits):
    """Evidence that a LlamaIndex tool call ran after a human-in-the-loop wait, else None: an earlier
    TOOL span of the same tool call (tool_id) in the same workflow run paused waiting for a
    HumanResponseEvent, and the call then ran."""
    cid = e["attrs"].get("gen_ai.tool.call.id")
    for w in waits:
        if cid and w["attrs"].get("gen_ai.tool.call.id") == cid and w["attrs"]["tool.name"] == e["attrs"]["tool.name"] \
                and w["trace_id"] == e["trace_id"] and w["start"] <= e["start"]:
            return (f"TOOL span {w['span_id']} `{w['name']}` ({w['attrs']['tool.name']}, tool call {cid}) ended ERROR with an exception event "
                    f"{LI_WAITING} ({li_waiting(w)['attrs'].get('exception.message')!r}); the same tool call then ran in TOOL span {e['span_id']} "
                    "(the human's response itself is in no span)")
    return None
# ---- end LlamaIndex + OpenInference ---------------------------------------------------------------


def annotation_mismatch(policy, name, a, span, where):
    """TL006 for one tool whose annotations `a` a span shows: the class they imply (readOnlyHint:
    automatic; destructiveHint false: requires_approval; else prohibited, the MCP defaults) against
    the policy's; the finding when they differ, else None. `where` names the span and attribute
    for the evidence line."""
    implied = "automatic" if a.get("readOnlyHint") else ("requires_approval" if a.get("destructiveHint") is False else "prohibited")
    want = policy.get(name, {}).get("policy")
    if want and want != implied:
        return {"id": "annotation_policy_mismatch", "tool": name, "call_span_ids": [span["span_id"]],
                "evidence": f"{where}: {name} annotations {a} imply {implied}, policy says {want}"}
    return None


# ---- Semantic Kernel (profile semantic-kernel-py) ------------------------------------------------
# A Semantic Kernel ChatCompletionAgent with SK's built-in OpenTelemetry (SEMANTICKERNEL_EXPERIMENTAL_
# GENAI_ENABLE_OTEL_DIAGNOSTICS[_SENSITIVE]): `invoke_agent {agent}` (gen_ai.tool.definitions = every
# function of the kernel, chat-completions shape, no annotations) > `AutoFunctionInvocationLoop`
# (sk.available_functions: the fully qualified functions the model is offered, comma-separated) >
# `chat {model}` (no tool definitions; gen_ai.system, no gen_ai.provider.name) and `execute_tool
# {plugin}-{tool}` (gen_ai.tool.name = SK's fully qualified name, e.g. warehouse-adjust_stock;
# gen_ai.tool.call.arguments JSON; gen_ai.tool.call.result = str() of the list of SK TextContent the
# MCP plugin made of the CallToolResult's content blocks: structuredContent and isError dropped).
# SK's MCP plugin runs on mcp 1.x, which emits no span; an approval is an auto function invocation
# filter, which emits nothing either.
SK_SCOPES = {"semantic_kernel.functions.kernel_function", "semantic_kernel.utils.telemetry.model_diagnostics.decorators",
             "semantic_kernel.utils.telemetry.agent_diagnostics.decorators", "semantic_kernel.connectors.ai.chat_completion_client_base"}
HOST_SCOPES |= SK_SCOPES
SK_FUNCTION_SCOPE = "semantic_kernel.functions.kernel_function"


def sk_exec(s):
    return s["scope"] == SK_FUNCTION_SCOPE and s["attrs"].get("gen_ai.operation.name") == "execute_tool"


def sk_local(name):
    """The MCP tool of SK's fully qualified function name `{plugin}-{function}` (the lab's plugin
    is `warehouse`; SK keeps MCP tool names that need no normalisation as they are)."""
    return name.split("-", 1)[1] if isinstance(name, str) and "-" in name else name


def sk_shown(ch, byid):
    """The tools offered to the model of an SK chat span: sk.available_functions of the
    AutoFunctionInvocationLoop span above it (None when there is none)."""
    p = byid.get(ch["parent"])
    if not p or "sk.available_functions" not in p["attrs"]:
        return None, p
    return [sk_local(n) for n in p["attrs"]["sk.available_functions"].split(",") if n], p
# ---- end Semantic Kernel -------------------------------------------------------------------------


def derive(rec_dir, policy):
    spans = spanlib.load(rec_dir)
    byid = {s["span_id"]: s for s in spans}
    host = [s for s in spans if s["scope"] in HOST_SCOPES]
    execs = [s for s in host if (s["attrs"].get("gen_ai.operation.name") == "execute_tool" and DEFERRAL not in s["attrs"]
                                 and not adk_confirmation_notice(s)) or ai_sdk_exec(s) or mastra_exec(s)]
    deferrals = [s for s in host if s["attrs"].get(DEFERRAL) == "ApprovalRequired"]
    deferrals += [s for s in host if adk_paused(s)]  # Google ADK: a tool confirmation request
    chats = [s for s in host if s["attrs"].get("gen_ai.operation.name") == "chat" or adk_model_call(s, byid) or ai_sdk_chat(s)]
    guards = [s for s in host if "guardrail.decision" in s["attrs"]]
    oai_execs, oai_pending, oai_chats = oai_views(spans)  # OpenAI Agents SDK + OpenInference
    execs += oai_execs
    chats += oai_chats
    lc_execs, lc_chats = lc_views(spans, byid)  # LangChain / LangGraph + OpenInference
    execs += lc_execs
    chats += lc_chats
    li_execs, li_waits, li_chats = li_views(spans, byid)  # LlamaIndex + OpenInference
    execs += li_execs
    chats += li_chats
    lib_tool = [s for s in spans if tool_of(s)]
    strands_interrupts = strands_interrupted_calls(spans)

    def ancestors(s):
        seen = []
        while s and s["parent"] in byid:
            s = byid[s["parent"]]
            seen.append(s["span_id"])
        return seen

    def conv_of(s):
        """gen_ai.conversation.id of a span, else of its nearest ancestor carrying one (Google ADK
        puts it on invoke_agent, not on execute_tool)."""
        while s:
            if "gen_ai.conversation.id" in s["attrs"]:
                return s["attrs"]["gen_ai.conversation.id"]
            s = byid.get(s["parent"])
        return None

    # Match library spans of each tool call to the host's execute_tool span: by ancestry where
    # the trace is joined, else by order (the scenarios call tools one at a time).
    calls = []
    for e in execs:
        calls.append({"exec": e, "tool": exec_tool(e), "client": [], "server": []})
    for side, pick in (("client", lambda s: s["service"] == HOST_SERVICE), ("server", lambda s: s["service"] != HOST_SERVICE)):
        side_spans = [s for s in lib_tool if pick(s)]
        # one span per call per side: the outermost tool span
        outer = [s for s in side_spans if not (set(ancestors(s)) & {x["span_id"] for x in side_spans})]
        for tool in {c["tool"] for c in calls}:
            cs = [c for c in calls if c["tool"] == tool]
            ss = [s for s in outer if tool_of(s) == tool]
            for c, s in zip(cs, ss):
                c[side].append(s)
                inner = [x for x in side_spans if s["span_id"] in ancestors(x)]
                c[side] += inner
    # OpenAI Agents SDK + OpenInference: the library's client spans of a call are the spans below its
    # function span (the MCP SDK's `MCP send tools/call {tool}`, which carries no gen_ai.tool.name).
    for c in calls:
        if c["exec"].get("oai") or c["exec"].get("li"):  # (LlamaIndex + OpenInference: the same, below its TOOL span)
            have = {x["span_id"] for x in c["client"]}
            c["client"] += [x for x in spans if c["exec"]["span_id"] in ancestors(x) and x["span_id"] not in have]
    findings, not_obs, notes = [], {}, []

    def nob(rule, why):
        not_obs.setdefault(rule, [])
        if why not in not_obs[rule]:
            not_obs[rule].append(why)

    for c in calls:
        lib = c["client"] + c["server"]
        # Google ADK: the host's execute_tool span carries the CallToolResult itself; so does the
        # Vercel AI SDK's own ai.toolCall span (the MCP client's CallToolResult)
        carriers = lib + ([c["exec"]] if adk_result_span(c["exec"]) or ai_sdk_exec(c["exec"]) else [])
        c["payloads"] = [(k, d, a, s) for s in carriers for (k, d, a) in [call_result(s)] if k]
        if mastra_exec(c["exec"]):  # Mastra: gen_ai.tool.output, when it is the whole CallToolResult
            k, d, a = mastra_result(c["exec"])
            if k:
                c["payloads"].append((k, d, a, c["exec"]))
        if c["exec"]["scope"] == STRANDS_SCOPE:  # Strands: the ToolResult in span events
            d, a, s = strands_tool_result(spans, byid, c["exec"])
            if d is not None:
                c["payloads"].append(("full", d, a, s))
        full = [p for p in c["payloads"] if p[0] == "full"]
        c["error_shown"] = any(p[1].get("isError") is True or p[1].get("is_error") is True for p in c["payloads"])
        c["error_classified"] = [s for s in lib + [c["exec"]] if classified_error(s)]
        c["args"] = None
        for s in lib + [c["exec"]]:
            args, attr = call_args(s)
            if args is None and s["scope"] == STRANDS_SCOPE:
                args, attr = strands_call_args(s)
            if args is not None:
                c["args"], c["args_attr"] = args, f"{attr} on span {s['span_id']}"
                break
        if c["exec"].get("lc"):  # LangChain + OpenInference: the adapters' ToolMessage on the TOOL span
            p = lc_tool_result(c["exec"])
            if p:
                c["payloads"].append(p)
                full = [p for p in c["payloads"] if p[0] == "full"]
                c["error_shown"] = c["error_shown"] or p[1]["isError"]
            if c["args"] is not None and c["exec"]["attrs"].get("lc.args_from") and c["args_attr"].endswith(c["exec"]["span_id"]):
                c["args_attr"] = c["exec"]["attrs"]["lc.args_from"]
        if c["exec"].get("li"):  # LlamaIndex + OpenInference: the CallToolResult in the TOOL span's output.value raw_output
            p = li_tool_result(c["exec"])
            if p:
                c["payloads"].append(p)
                full = [p for p in c["payloads"] if p[0] == "full"]
                c["error_shown"] = c["error_shown"] or p[1]["isError"]
            if c["args"] is not None and c["args_attr"].endswith(c["exec"]["span_id"]):
                c["args_attr"] = f"input.value kwargs of TOOL span {c['exec']['span_id']}"
        c["full"] = full

    # TL001: a fully captured result without structuredContent.
    for c in calls:
        if c["exec"]["scope"] == STRANDS_SCOPE and not c["client"] and not c["server"] and not c["payloads"] and c["exec"]["status"] == "ERROR":
            continue  # Strands refused the call itself (e.g. "Unknown tool"): no MCP request, no CallToolResult
        if not c["full"]:
            kinds = sorted({p[2] for p in c["payloads"]})
            fn_out = [s for s in c["client"] + c["server"] if "output.value" in s["attrs"]]
            host_out = "gen_ai.tool.call.result" in c["exec"]["attrs"]
            if c["exec"]["scope"] == ADK_SCOPE and not adk_result_span(c["exec"]):
                # Google ADK refused the call (a tool the model was not shown): nothing reached the server
                nob("TL001", f"{c['tool']}: no CallToolResult: ADK refused the call itself (execute_tool span {c['exec']['span_id']}, "
                    f"gen_ai.tool.type={c['exec']['attrs'].get('gen_ai.tool.type')}, error.type={c['exec']['attrs'].get('error.type')}), nothing was sent to the server")
                continue
            if sk_exec(c["exec"]):  # Semantic Kernel: str() of the SK contents made of the content blocks
                nob("TL001", f"{c['tool']}: result not captured as a CallToolResult: gen_ai.tool.call.result on `{c['exec']['name']}` is str() of the "
                    "list of Semantic Kernel TextContent its MCP plugin made of the result's content blocks (a Python repr; structuredContent and "
                    "isError are dropped by the plugin), and mcp 1.x emits no span that could carry the result")
                continue
            if mastra_exec(c["exec"]):  # Mastra: its MCP client returns structuredContent in place of the CallToolResult
                nob("TL001", f"{c['tool']}: result not captured as a CallToolResult: gen_ai.tool.output on `{c['exec']['name']}` is what Mastra's MCP client "
                    "returned, the result's structuredContent alone when the server sent one (no content, no isError); no other span carries the result")
                continue
            if c["exec"].get("oai"):  # OpenAI Agents SDK + OpenInference
                nob("TL001", f"{c['tool']}: result not captured: output.value on the function span `{c['exec']['name']}` is the tool output the SDK hands "
                    "the model (the first content block as {\"type\": \"text\", \"text\": ...}; no structuredContent, no isError), not the CallToolResult")
                continue
            nob("TL001", f"{c['tool']}: result " + (f"only summarised ({', '.join(kinds)}: first text block, no structuredContent field)" if kinds
                                                    else f"not captured: output.value on span `{fn_out[0]['name']}` is the tool function's return value, not the CallToolResult (no content, no structuredContent field)" if fn_out
                                                    else "not captured: gen_ai.tool.call.result on Strands' execute_tool span (opt-in conventions) is the result's content blocks only ([{\"text\": ...}]), and no event carries the ToolResult with structuredContent / isError" if host_out and c["exec"]["scope"] == STRANDS_SCOPE
                                                    else "not captured: gen_ai.tool.call.result on the host's execute_tool span is the value Pydantic AI hands the model (structuredContent, or the parsed text), not the CallToolResult" if host_out
                                                    else "not captured by any span"))
            continue
        k, d, attr, s = c["full"][0]
        if d.get("structuredContent") is None and not d.get("isError"):
            findings.append({
                "id": "structured_output_missing", "tool": c["tool"],
                "execute_tool_span_id": c["exec"]["span_id"],
                "call_span_ids": [c["exec"]["span_id"]] + [x["span_id"] for x in c["client"] + c["server"]]
                # (Strands: the span whose event holds the ToolResult is the execute_tool's parent cycle span)
                + ([s["span_id"]] if s["span_id"] not in [x["span_id"] for x in [c["exec"]] + c["client"] + c["server"]] else []),
                "evidence": f"span {s['span_id']} `{s['name']}` attribute {attr}: content is a single text block, no structuredContent",
            })

    # TL002 / TL003: writes without an approval before them (host spans).
    for c in calls:
        cls = policy.get(c["tool"], {}).get("policy")
        if cls not in ("requires_approval", "prohibited"):
            continue
        e = c["exec"]
        conv = conv_of(e)
        prior = [g for g in guards if g["attrs"].get("gen_ai.tool.name") == c["tool"] and conv_of(g) == conv and g["start"] <= e["start"] and g["span_id"] != e["span_id"]]
        decisions = [g["attrs"]["guardrail.decision"] for g in prior]
        approved = "require_approval" in decisions and decisions[-1] == "allow"
        # Pydantic AI: the same tool call (gen_ai.tool.call.id) was deferred for approval earlier in the
        # conversation and is executed now: only an approval (DeferredToolResults) runs it.
        cid = e["attrs"].get("gen_ai.tool.call.id")
        deferred = [d for d in deferrals if cid and d["attrs"].get("gen_ai.tool.call.id") == cid and d["attrs"].get("gen_ai.tool.name") == c["tool"]
                    and conv_of(d) == conv and d["start"] <= e["start"]]
        approved = approved or bool(deferred)
        # Strands: the same tool call was stopped by a BeforeToolCallEvent interrupt in an earlier
        # invocation and runs now: it runs only once the interrupt is answered.
        interrupted = strands_interrupts.get(cid) if e["scope"] == STRANDS_SCOPE else None
        approved = approved or bool(interrupted and interrupted["start"] <= e["start"])
        # Vercel AI SDK: the agent run that executed the call was given the approval in its input
        ai_ok = ai_sdk_approval(e, byid) if ai_sdk_exec(e) else None
        approved = approved or bool(ai_ok)
        # LangChain: a HumanInTheLoopMiddleware interrupt for this call, resumed with approve
        lc_ok = lc_approval(e, spans, byid) if e.get("lc") else None
        approved = approved or bool(lc_ok)
        # Mastra: an earlier run stopped at a tool-call-approval chunk for this call; it runs in the resumed run
        mastra_ok = mastra_approval(e, spans) if mastra_exec(e) else None
        approved = approved or bool(mastra_ok)
        # LlamaIndex: the same tool call paused earlier waiting for a HumanResponseEvent, then ran
        li_ok = li_approval(e, li_waits) if e.get("li") else None
        approved = approved or bool(li_ok)
        if cls == "prohibited" or not approved:
            if sk_exec(e):  # Semantic Kernel: an approval is an auto function invocation filter, which emits no span
                nob("TL002" if cls == "requires_approval" else "TL003",
                    f"{c['tool']}: Semantic Kernel records no approval: its human-in-the-loop mechanism is an auto function invocation filter "
                    f"(FilterTypes.AUTO_FUNCTION_INVOCATION), which emits no span, event or attribute; execute_tool span {e['span_id']} `{e['name']}` "
                    "looks the same whether the filter asked the user or not, so whether this write was confirmed cannot be read from the spans")
                continue
            if e.get("oai"):  # OpenAI Agents SDK + OpenInference: no approval is recorded by any span
                findings.append({
                    "id": "write_without_confirmation", "rule": "TL002" if cls == "requires_approval" else "TL003",
                    "tool": c["tool"], "execute_tool_span_id": e["span_id"], "call_span_ids": [e["span_id"]] + [x["span_id"] for x in c["client"] + c["server"]],
                    "evidence": f"function span {e['span_id']} `{e['name']}` (tool.name {c['tool']}, policy {cls}) ran in the agent's trace "
                    f"{e['trace_id']} (output.value set, MCP client span below it) with no earlier function span of {c['tool']} left unexecuted "
                    "(an approval interruption) in that trace",
                })
                continue
            findings.append({
                # the shared recordings' convention: one id, TL003 where the registry says prohibited
                "id": "write_without_confirmation", "rule": "TL002" if cls == "requires_approval" else "TL003",
                "tool": c["tool"], "execute_tool_span_id": e["span_id"], "call_span_ids": [e["span_id"]],
                "evidence": f"host span {e['span_id']} `{e['name']}` (policy {cls}) has no guardrail require_approval -> allow for {c['tool']} before it in {conv}"
                + ("" if e["scope"] == HOST_SCOPE
                   else f", and no earlier execute_tool span of tool call {cid} whose result (gen_ai.tool.call.result, or gcp.vertex.agent.tool_response on schema 1) is ADK's tool-confirmation request" if e["scope"] == ADK_SCOPE
                   else f", and no earlier invoke_agent span ending with a BeforeToolCallEvent interrupt of tool call {cid} (gen_ai.choice finish_reason=interrupt)" if e["scope"] == STRANDS_SCOPE
                   else f", and its agent run's ai.prompt holds no tool-approval-request for tool call {exec_call_id(e)} answered approved: true" if ai_sdk_exec(e)
                   else f", and no earlier HumanInTheLoopMiddleware GraphInterrupt (exception event) requesting it in session {conv} answered by a resume with decisions approve" if e.get("lc")
                   else f", and no earlier TOOL span of tool call {cid} paused on {LI_WAITING} (a wait for a HumanResponseEvent) in this workflow run" if e.get("li")
                   else f", and no earlier agent run stopped at a `chunk: 'tool-call-approval'` span for tool call {mastra_call_id(e, spans)} with these arguments" if mastra_exec(e)
                   else f", and no earlier execute_tool span deferring tool call {cid} for approval ({DEFERRAL})"),
            })

    # OpenAI Agents SDK + OpenInference: a write interrupted for approval (a function span that did not
    # run), and then run by the resumed run, which OpenInference does not trace: no span records the
    # approval, and the execution shows only as MCP SDK spans outside the agent's trace.
    for p in oai_pending:
        cls = policy.get(p["attrs"]["tool.name"], {}).get("policy")
        if cls in ("requires_approval", "prohibited"):
            nob("TL002" if cls == "requires_approval" else "TL003",
                f"{p['attrs']['tool.name']}: the SDK's approval is recorded by no span: function span `{p['name']}` has input.value and no output.value "
                "(the interruption), RunState.approve leaves nothing, and the approved call runs in the resumed run, which OpenInference does not trace "
                "(only parentless MCP SDK client spans show it): whether the executed write was confirmed cannot be read from the spans")

    # TL005: a tool absent from the definitions of the model call before it.
    for c in calls:
        e = c["exec"]
        before = [ch for ch in chats if ch["start"] <= e["start"] and ch["trace_id"] == e["trace_id"]]
        if ai_sdk_exec(e):
            # Vercel AI SDK: the model call whose response asked for this tool call (an approved call
            # runs in a later agent run, another trace); start times are only millisecond-precise
            before = [ch for ch in chats if ai_sdk_chat(ch) and (exec_call_id(e), c["tool"]) in ai_sdk_requested(ch)]
        if not before:
            continue
        ch = before[-1]
        if ch["scope"] == MASTRA_SCOPE and "gen_ai.tool.definitions" not in ch["attrs"]:
            # Mastra: the model_generation span records the prompt messages only, no tool list
            nob("TL005", "the tools shown to the model are recorded by no span: Mastra's `chat {model}` span (model_generation) carries gen_ai.prompt "
                "(messages only), its `step: N` spans the model's tool calls, and nothing the tools given to the model (activeTools / the agent's tools)")
            continue
        if ai_sdk_chat(ch):  # Vercel AI SDK: ai.prompt.tools
            names = ai_sdk_shown(ch)
        else:
            names = shown_tool_names(ch)  # gen_ai.tool.definitions (Google ADK schema 1: its llm_request)
        shown_by = f"chat span {ch['span_id']} " + ("gen_ai.tool.definitions" if "gen_ai.tool.definitions" in ch["attrs"] or ch["scope"] != ADK_SCOPE
                                                    else f"`{ch['name']}` gcp.vertex.agent.llm_request config.tools")
        if ch["scope"] == STRANDS_SCOPE and "gen_ai.tool.definitions" not in ch["attrs"]:
            # Strands: no definitions on the chat span; the agent's tool names on its invoke_agent
            names, agent = strands_agent_tools(ch, byid)
            if names is None:
                nob("TL005", "the tools given to the model are not recorded (no gen_ai.tool.definitions, no gen_ai.agent.tools)")
                continue
            shown_by = f"invoke_agent span {agent['span_id']} gen_ai.agent.tools (chat span {ch['span_id']} carries no definitions)"
        if ch["scope"] in SK_SCOPES:
            # Semantic Kernel: no definitions on the chat span; the functions offered to the model are
            # sk.available_functions on the AutoFunctionInvocationLoop span above it (gen_ai.tool.definitions
            # on invoke_agent is the kernel's every function, not what the model was offered)
            names, loop = sk_shown(ch, byid)
            if names is None:
                nob("TL005", "the tools offered to the model are not recorded (no sk.available_functions above the chat span)")
                continue
            shown_by = f"AutoFunctionInvocationLoop span {loop['span_id']} sk.available_functions (chat span {ch['span_id']} carries no definitions)"
        if c["tool"] not in names:
            findings.append({
                "id": "tool_call_outside_allowlist", "tool": c["tool"], "execute_tool_span_id": e["span_id"], "call_span_ids": [e["span_id"]],
                "evidence": f"model call span {ch['span_id']} `{ch['name']}` ai.prompt.tools = {names}; its ai.response.toolCalls call {c['tool']}, executed by ai.toolCall span {e['span_id']}" if ai_sdk_chat(ch)
                else f"LLM span {ch['span_id']} `{ch['name']}` llm.tools.*.tool.json_schema names {names}; next TOOL span {e['span_id']} `{e['name']}` (tool.name {c['tool']}) runs it" if ch.get("li")
                else f"response span {ch['span_id']} llm.tools.*.tool.json_schema names {names}; next function span {e['span_id']} calls {c['tool']}" if ch.get("oai") or ch.get("lc")
                else f"{shown_by} = {names}; next execute_tool span {e['span_id']} calls {c['tool']}"
                # (Strands refuses an unknown tool itself; Google ADK's refusals keep their own evidence)
                + (f" (status {e['status']} {e['status_message']!r}: no MCP request was sent)" if e["scope"] == STRANDS_SCOPE and not c["client"] and not c["server"] else ""),
            })

    autogen_not_observable(spans, calls, nob)  # Microsoft AutoGen (profile autogen-py)

    # TL004: server-side tool spans that are roots or name an absent parent.
    server_spans = [s for c in calls for s in c["server"][:1]]
    if calls and not server_spans:
        nob("TL004", "the server process emits no span for a tools/call, so propagation cannot be judged")
    def server_root(s):
        """The root above a server span when every span from it up to that root is the server
        process's own (the call hangs under a long-lived server span, e.g. OpenLIT Python's
        `mcp server/run`, in the server's own trace): no context came across MCP either."""
        top = s
        while top["parent"] in byid:
            top = byid[top["parent"]]
            if top["service"] == HOST_SERVICE:
                return None
        return top if top is not s and not top["parent"] else None

    orphans = [s for s in server_spans if not s["parent"] or s["parent"] not in byid or server_root(s)]

    def why(s):
        if not s["parent"]:
            return "has no parent"
        if s["parent"] not in byid:
            return f"names parent {s['parent']}, absent from the recording"
        r = server_root(s)
        return f"descends only from server-process spans, up to the root `{r['name']}` ({r['span_id']}), no host span above it"
    if orphans:
        lonely = [c["exec"] for c in calls if c["server"] and c["server"][0] in orphans]
        findings.append({
            "id": "broken_trace_propagation",
            "server_spans": [{"span_id": s["span_id"], "name": s["name"], "tool": tool_of(s), "trace_id": s["trace_id"]} for s in orphans],
            "host_execute_tool_spans_without_server_child": [{"span_id": e["span_id"], "trace_id": e["trace_id"]} for e in lonely],
            "count": len(orphans),
            "evidence": "; ".join(f"server span {s['span_id']} `{s['name']}` " + why(s) + f", trace {s['trace_id']}" for s in orphans),
        })

    # TL008: an isError result re-issued identically and erroring again.
    by_key = {}
    for c in calls:
        e = c["exec"]
        conv = conv_of(e)
        if not c["error_shown"] and not c["error_classified"]:
            continue
        key = (conv, c["tool"], json.dumps(c["args"], sort_keys=True) if c["args"] is not None else None)
        by_key.setdefault(key, []).append(c)
    for (conv, tool, args), cs in by_key.items():
        if len(cs) < 2:
            continue
        if args is None and len(cs) < 3:
            nob("TL008", f"{tool}: arguments not captured and fewer than three errors")
            continue
        findings.append({
            "id": "tool_error_retry_loop", "tool": tool, "arguments": json.loads(args) if args else None,
            "execute_tool_span_ids": [c["exec"]["span_id"] for c in cs],
            "call_span_ids": [x["span_id"] for c in cs for x in [c["exec"]] + c["client"] + c["server"]],
            "evidence": f"{len(cs)} calls of {tool} in {conv}, each shown as an error ("
            + ", ".join(sorted({(p[2] + ' isError') for c in cs for p in c['payloads'] if p[1].get('isError') or p[1].get('is_error')} | {('status ERROR/error.type on ' + s['scope']) for c in cs for s in c['error_classified']}))
            + ")" + (f"; identical arguments {args} from {cs[0]['args_attr']}" if args else "; arguments not captured")
            # (Vercel AI SDK; Strands has no conversation id either, and its labels keep their wording)
            + ("" if conv or not ai_sdk_exec(cs[0]["exec"]) else " (no conversation id: one agent conversation per recording)"),
        })
    # Semantic Kernel: its MCP plugin turns a CallToolResult into SK contents (content blocks only), so an
    # isError result is an ordinary result: execute_tool keeps status UNSET, no error.type, no isError.
    sk_calls = [c for c in calls if sk_exec(c["exec"]) and not c["payloads"] and not c["error_classified"]]
    if sk_calls:
        nob("TL008", f"{len(sk_calls)} call(s): a tool error is not visible: SK's MCP plugin drops isError (gen_ai.tool.call.result holds the content "
            "blocks as SK TextContent; status UNSET, no error.type) and mcp 1.x emits no client or server span")
    # A call is blind when no library span carries its result or any status/error classification.
    # (Pydantic AI's host execute_tool span carries a result, gen_ai.tool.call.result, and its status:
    # such a call is not blind, though the result there is not a CallToolResult.)
    def host_seen(c):
        return "gen_ai.tool.call.result" in c["exec"]["attrs"] or c["exec"]["status"] != "UNSET"
    errored_hidden = [c for c in calls if not c["payloads"] and not host_seen(c) and not any(
        x["status"] != "UNSET" or "error.type" in x["attrs"] for x in c["client"] + c["server"])]
    if errored_hidden:
        nob("TL008", f"{len(errored_hidden)} call(s) carry neither a result nor an error classification in any span: a tool error would not be visible")

    # TL009: a result showing isError while no span of that call classifies it as an error.
    for c in calls:
        if c["error_shown"] and not c["error_classified"]:
            p = next(p for p in c["payloads"] if p[1].get("isError") or p[1].get("is_error"))
            findings.append({
                "id": "tool_error_masked", "tool": c["tool"], "execute_tool_span_id": c["exec"]["span_id"],
                "call_span_ids": [c["exec"]["span_id"]] + [x["span_id"] for x in c["client"] + c["server"]],
                "evidence": f"span {p[3]['span_id']} `{p[3]['name']}` {p[2]} shows isError: true; status {p[3]['status']}, no error.type on any span of the call",
            })
    if errored_hidden:
        nob("TL009", f"{len(errored_hidden)} call(s): no span carries the result or an error classification")
    # Pydantic AI: calls not classified as errors whose CallToolResult no span carries: whether one
    # had isError is not observable (a call classified as an error cannot be a masked one).
    host_only = [c for c in calls if not c["payloads"] and host_seen(c) and not c["error_classified"]]
    if host_only and all(c["exec"].get("oai") for c in host_only):  # OpenAI Agents SDK + OpenInference
        nob("TL009", f"{len(host_only)} call(s) not classified as errors: no span carries their CallToolResult, so isError is not observable "
            "(the function span's output.value is the tool output handed to the model, which drops isError)")
    elif host_only and all(sk_exec(c["exec"]) for c in host_only):  # Semantic Kernel
        nob("TL009", f"{len(host_only)} call(s) not classified as errors: SK's MCP plugin drops the CallToolResult's isError (gen_ai.tool.call.result "
            "is the content blocks as SK TextContent, status UNSET), and mcp 1.x emits no span: whether a result was an error is not observable")
    elif host_only:
        nob("TL009", f"{len(host_only)} call(s) not classified as errors: no span carries their CallToolResult, so isError is not observable (the host's execute_tool span shows only the value handed to the model)")

    # TL006: annotations from a complete tools/list result against the policy file.
    listed = None
    for s in spans:
        for k in FULL_RESULT + SUMMARY_RESULT:
            d = jload(s["attrs"].get(k))
            if isinstance(d, dict) and isinstance(d.get("result"), dict):
                d = d["result"]
            if isinstance(d, dict) and isinstance(d.get("tools"), list) and d["tools"] and all(isinstance(t, str) for t in d["tools"]):
                parsed = [tool_from_repr(t) for t in d["tools"]]  # OpenLIT Python: each tool a repr
                if all(parsed):
                    listed = (s, k + " (tools as Python reprs)", parsed)
                continue
            if isinstance(d, dict) and isinstance(d.get("tools"), list) and d["tools"] and "inputSchema" in d["tools"][0]:
                listed = (s, k, d["tools"])
    if listed is None:
        # Pydantic AI: no tools/list result, but every model request span's model_request_parameters
        # lists the tools shown to the model with their MCP annotations (metadata.annotations) and
        # input schema: the annotations of those tools are observed, others' are not.
        shown = {}
        for s in spans:
            d = jload(s["attrs"].get("model_request_parameters")) if s["scope"] in HOST_SCOPES else None
            for t in (d or {}).get("function_tools") or []:
                a = (t.get("metadata") or {}).get("annotations")
                if isinstance(a, dict) and "parameters_json_schema" in t:
                    shown[t["name"]] = (s, {"name": t["name"], "inputSchema": t["parameters_json_schema"], "annotations": {k: v for k, v in a.items() if v is not None}})

        def judge_seen(seen, where, unseen_why):
            """TL006 from the annotations spans show for some tools (name -> (span, annotations)),
            `where(span)` naming span and attribute; the policy's other tools are not observed."""
            for name, (s, a) in sorted(seen.items()):
                f = annotation_mismatch(policy, name, a, s, where(s))
                if f:
                    findings.append(f)
            unseen = sorted(set(policy) - set(seen))
            if unseen:
                nob("TL006", f"annotations of {', '.join(unseen)} not observed: {unseen_why}")

        if shown:
            judge_seen({name: (s, t["annotations"]) for name, (s, t) in shown.items()},
                       lambda s: f"span {s['span_id']} `{s['name']}` model_request_parameters.function_tools",
                       "no tools/list result is captured, and the model requests' model_request_parameters list only the tools shown to the model")
        elif lc_annotations(spans):  # LangChain + OpenInference: the executed tools' annotations in their TOOL span's metadata
            judge_seen(lc_annotations(spans),
                       lambda s: f"TOOL span {s['span_id']} `{s['name']}` metadata (the MCP annotations langchain-mcp-adapters put in the tool's metadata)",
                       "no tools/list result is captured, and only an executed tool's TOOL span carries its annotations (in metadata)")
        elif any(s["scope"] == LI_SCOPE for s in spans):  # LlamaIndex + OpenInference
            nob("TL006", "no span carries the tool annotations: llama-index-tools-mcp drops them when it turns MCP tools into FunctionTools "
                "(TOOL spans carry tool.name, tool.description, tool.parameters; llm.tools holds OpenAI function schemas), and the mcp SDK's "
                "tools/list spans carry no result")
        elif any(s["scope"] == OAI_SCOPE and s["name"] == "mcp_tools" for s in spans):  # OpenAI Agents SDK + OpenInference
            nob("TL006", "no span carries the tool annotations: the mcp_tools spans' output.value lists tool names only, and llm.tools on the "
                "response spans holds name, description and parameters (no annotations)")
        else:
            nob("TL006", "no span carries a complete tools/list result (with inputSchema and annotations)")
            if any(s["scope"] in SK_SCOPES for s in spans):
                # Semantic Kernel: its MCP plugin's tools/list leaves no span (mcp 1.x); the kernel's functions are on invoke_agent
                nob("TL006", "Semantic Kernel: gen_ai.tool.definitions on invoke_agent lists the kernel's functions ({type: function, function: "
                    "{name: warehouse-<tool>, description, parameters}}): the MCP annotations, which SK's MCP plugin does not keep, are not recorded")
            if any(s["scope"] == MASTRA_SCOPE for s in spans):
                # Mastra: its MCP client records nothing; tool spans name and describe the tool only
                nob("TL006", "Mastra: its MCP client emits no span (no tools/list), and its tool.execute spans carry gen_ai.tool.name and "
                    "gen_ai.tool.description only: the MCP annotations (dropped by MCPClient when it wraps the tools) are not recorded")
            if any(ai_sdk_chat(ch) for ch in chats):
                # Vercel AI SDK: its MCP client records nothing; the model call's tool list drops annotations
                nob("TL006", "Vercel AI SDK: its MCP client emits no span (no tools/list), and ai.prompt.tools lists each shown tool's name, description and inputSchema only: the MCP annotations, kept in the AI SDK tool's metadata, are not recorded")
    else:
        s, k, tools = listed
        for t in tools:
            a = t.get("annotations") or {}
            f = annotation_mismatch(policy, t["name"], a, s, f"span {s['span_id']} {k}")
            if f:
                findings.append(f)

    # TL007: deprecated GenAI names without their replacement.
    # Renamed names whose replacement is absent (semantic-conventions-genai #440 renamed
    # gen_ai.usage.cache_creation.input_tokens to gen_ai.usage.cache_write.input_tokens; first seen
    # from Strands, on every invoke_agent span, in both of its conventions).
    def renamed(s):
        return [old for old, new in RENAMED.items() if old in s["attrs"] and new not in s["attrs"]]

    def dep_keys(s):
        return ([k for k in DEPRECATED if k in s["attrs"]] if "gen_ai.provider.name" not in s["attrs"] else []) + renamed(s)
    dep = [s for s in spans if dep_keys(s)]
    if dep:
        findings.append({"id": "deprecated_gen_ai_system", "span_ids": [s["span_id"] for s in dep], "count": len(dep),
                         "evidence": "; ".join(f"span {s['span_id']} `{s['name']}` carries {dep_keys(s)}" for s in dep)})

    # Library behaviour worth knowing that is not a finding.
    # A model's tool call that no execute_tool span ran (Pydantic AI refuses a tool the model was not
    # shown: a retry prompt goes back to the model, nothing is executed).
    ran = {e["attrs"].get("gen_ai.tool.call.id") for e in execs} | {d["attrs"].get("gen_ai.tool.call.id") for d in deferrals}
    ran |= {exec_call_id(e) for e in execs if ai_sdk_exec(e)}
    # Vercel AI SDK: a call the model asked for (ai.response.toolCalls) that no ai.toolCall span ran
    # (the AI SDK refuses a tool not among the step's active tools: NoSuchToolError, sent back to
    # the model as a tool error; nothing is executed)
    for ch in chats:
        if not ai_sdk_chat(ch):
            continue
        shown = ai_sdk_shown(ch)
        for cid, tool in ai_sdk_requested(ch):
            if cid not in ran:
                notes.append(f"model call span {ch['span_id']}: the model called {tool} (tool call {cid})"
                             + ("" if tool in shown else ", a tool it was not shown (not in ai.prompt.tools)")
                             + "; no ai.toolCall span ran it")
    for ch in chats:
        shown = [d.get("name") for d in jload(ch["attrs"].get("gen_ai.tool.definitions")) or []]
        for m in jload(ch["attrs"].get("gen_ai.output.messages")) or []:
            for part in (m.get("parts") or []) if isinstance(m, dict) else []:
                if isinstance(part, dict) and part.get("type") == "tool_call" and part.get("id") not in ran:
                    notes.append(f"chat span {ch['span_id']}: the model called {part.get('name')} (tool call {part.get('id')})"
                                 + ("" if part.get("name") in shown else ", a tool it was not shown (not in gen_ai.tool.definitions)")
                                 + "; no execute_tool span ran it")
    # Google ADK: its tool confirmation round, as the spans show it
    for d in deferrals:
        if d["scope"] != ADK_SCOPE:
            continue
        cid = d["attrs"].get("gen_ai.tool.call.id")
        later = [e for e in execs if e["attrs"].get("gen_ai.tool.call.id") == cid and e["start"] >= d["start"]]
        notes.append(f"ADK tool confirmation: execute_tool span {d['span_id']} (tool call {cid}) returned the confirmation request, status {d['status']}, no MCP span under it"
                     + (f"; the same tool call ran in trace {later[0]['trace_id']} (span {later[0]['span_id']}): the confirmation itself (adk_request_confirmation and the user's answer) is in no span"
                        if later else "; it never ran"))
    for e in execs:
        if e["scope"] == ADK_SCOPE and not adk_result_span(e) and e["status"] == "ERROR":
            notes.append(f"ADK refused tool call {e['attrs'].get('gen_ai.tool.call.id')} of {e['attrs'].get('gen_ai.tool.name')} (not among the tools shown to the model) but still "
                         f"emitted execute_tool span {e['span_id']} (gen_ai.tool.type={e['attrs'].get('gen_ai.tool.type')}, error.type={e['attrs'].get('error.type')}, no MCP span under it)")
    notes += oai_notes(spans, oai_execs, oai_pending, byid)  # OpenAI Agents SDK + OpenInference
    # LlamaIndex + OpenInference: the human-in-the-loop pause, and isError left unclassified by the TOOL span
    for w in li_waits:
        ran = [e for e in li_execs if e["attrs"].get("gen_ai.tool.call.id") == w["attrs"].get("gen_ai.tool.call.id") and e["start"] >= w["start"]]
        notes.append(f"LlamaIndex human-in-the-loop: TOOL span {w['span_id']} `{w['name']}` ({w['attrs']['tool.name']}, tool call {w['attrs'].get('gen_ai.tool.call.id')}) "
                     f"is status ERROR with an exception event {LI_WAITING} and no MCP span under it (the tool waited for a HumanResponseEvent)"
                     + (f"; the same tool call ran in TOOL span {ran[0]['span_id']}: the response itself is in no span" if ran else "; it never ran"))
    for c in calls:
        if c["exec"].get("li") and c["error_shown"]:
            others = [s for s in c["error_classified"] if s is not c["exec"]]
            notes.append(f"LlamaIndex TOOL span {c['exec']['span_id']} ({c['tool']}): output.value raw_output shows is_error: true, but the ToolOutput's is_error is false and "
                         f"the span status {c['exec']['status']}" + (f"; only the server's span {others[0]['span_id']} `{others[0]['name']}` classifies the error" if others else ""))
    # Mastra: a run stopped for approval never ends its agent / chat spans, so they are not exported
    # and the spans under them name absent parents
    for s in spans:
        if s["scope"] == MASTRA_SCOPE and s["parent"] and s["parent"] not in byid and s["attrs"].get("mastra.span.type") == "model_step":
            notes.append(f"Mastra span {s['span_id']} `{s['name']}` (trace {s['trace_id']}) names parent {s['parent']}, absent from the recording: the agent run "
                         "that stopped at a tool-call-approval never ended its `agent.*` and `chat *` spans, so they were not exported")
    for c in calls:
        if mastra_exec(c["exec"]) and c["error_shown"] and not classified_error(c["exec"]):
            notes.append(f"Mastra span {c['exec']['span_id']} `{c['exec']['name']}`: gen_ai.tool.output shows isError: true, status {c['exec']['status']}, no error.type")
    # Vercel AI SDK: an isError result is returned (not thrown) by its MCP tools, so ai.toolCall keeps status UNSET
    for c in calls:
        if ai_sdk_exec(c["exec"]) and c["error_shown"] and not classified_error(c["exec"]):
            others = [s for s in c["error_classified"] if s is not c["exec"]]
            notes.append(f"ai.toolCall span {c['exec']['span_id']} ({c['tool']}): ai.toolCall.result shows isError: true, status {c['exec']['status']}, no error.type"
                         + (f"; only the server's span {others[0]['span_id']} `{others[0]['name']}` (trace {others[0]['trace_id']}" + (", not the agent run's" if others[0]['trace_id'] != c['exec']['trace_id'] else "") + ") classifies the error" if others else ""))
    split = [c for c in calls if c["client"] and c["exec"]["span_id"] not in ancestors(c["client"][0])]
    if split:
        s = split[0]["client"][0]
        p = byid.get(s["parent"])
        notes.append(f"client tool spans are not under the host's execute_tool span: e.g. {s['span_id']} `{s['name']}` is in trace {s['trace_id']} under "
                     + (f"`{p['name']}` ({p['span_id']})" if p else "no parent") + f", the agent run is trace {split[0]['exec']['trace_id']}")
    for c in calls:
        for p in c["payloads"]:
            if p[0] == "summary":
                notes.append(f"{p[2]} summarises results (first text block and is_error only): structuredContent is not observable")
                break
    tl_spans = [s for s in spans if s["attrs"].get("mcp.method.name") == "tools/list" or s["name"].startswith("tools/list")]
    for s in tl_spans:
        d = jload(s["attrs"].get("traceloop.entity.output"))
        if isinstance(d, dict) and d.get("tools") and "inputSchema" not in d["tools"][0]:
            notes.append(f"tools/list result captured as a summary on span {s['span_id']} (names and descriptions only, no inputSchema/annotations): tool annotations are not observable")
            break
    for f in findings:
        f.setdefault("rule", RULE_OF[f["id"]])
        f.setdefault("count", 1)
    return spans, calls, findings, not_obs, sorted(set(notes))


def main():
    policy = tomllib.load(open(os.path.join(LAB, "policy.toml"), "rb"))["tools"]
    rec_root = os.path.join(LAB, "recordings")
    meta_all = json.load(open(os.path.join(LAB, "profiles.json")))
    out = {"rules": RULE_OF, "scored_rules": SCORED, "recordings": {}}
    for lib in sorted(os.listdir(rec_root)):
        for rec in sorted(os.listdir(os.path.join(rec_root, lib))):
            d = os.path.join(rec_root, lib, rec)
            if not os.path.exists(os.path.join(d, "requests.jsonl")):
                continue
            spans, calls, findings, not_obs, notes = derive(d, policy)
            # (-adk-schema1: google-adk-py on ADK's legacy telemetry schema 1; -semconv-latest: strands-py
            # with Strands' opt-in GenAI conventions; -mcp-workbench: autogen-py with McpWorkbench)
            m = re.match(r"^(W\d+-[a-z-]+?)(-http)?(-proto)?(-mcp(\d{4}-\d{2}-\d{2}))?(-adk-schema\d)?(-semconv-latest)?(-mcp-workbench)?$", rec)
            exts = {f.split(".", 1)[1] for f in os.listdir(d) if re.match(r"^\d{4}-traces\.", f)}
            name = f"{lib}/{rec}"
            entry = {
                "library": meta_all.get(lib, {}).get("library", lib),
                "versions": meta_all.get(lib, {}).get("versions", {}),
                "scenario": m.group(1) if m else rec,
                "transport": "http" if m and m.group(2) else "stdio",
                "export": "+".join(sorted("protobuf" if e.startswith("pb") else "json" for e in exts)),
                "mcp_revision": (m.group(5) if m and m.group(5) else "negotiated by initialize (2025-11-25 or earlier)"),
                "spans": len(spans),
                "tool_calls": len(calls),
                "negative_control": not findings,
                "expected": {f["rule"]: sum(x["count"] for x in findings if x["rule"] == f["rule"]) for f in findings},
                "expected_findings": findings,
                "not_observable": {r: v for r, v in sorted(not_obs.items())},
                "notes": notes,
            }
            # --- FastMCP (profile fastmcp-native) ---------------------------------------------------
            # fastmcp.Client and the FastMCP server (on mcp 2.x) negotiate MCP revision 2026-07-28 by
            # themselves (`server/discover`, no initialize), which the recording's name does not say;
            # FastMCP's server spans carry the negotiated revision in mcp.protocol.version.
            if lib == "fastmcp-native":
                revs = sorted({s["attrs"]["mcp.protocol.version"] for s in spans if s["scope"] == "fastmcp" and "mcp.protocol.version" in s["attrs"]})
                if revs:
                    entry["mcp_revision"] = ", ".join(revs) + " (negotiated by the client and server, read from the server spans' mcp.protocol.version)"
            # --- end FastMCP -------------------------------------------------------------------------
            out["recordings"][name] = entry
            gt = {"recording": name, "meta": {k: entry[k] for k in ("library", "versions", "scenario", "transport", "export", "mcp_revision")},
                  "expected_findings": [f for f in findings if f["id"] not in LAB_ONLY],
                  "lab_extra_findings": [f for f in findings if f["id"] in LAB_ONLY],
                  "not_observable": entry["not_observable"], "notes": notes}
            with open(os.path.join(d, "ground_truth.json"), "w") as f:
                json.dump(gt, f, indent=1, sort_keys=False)
                f.write("\n")
    with open(os.path.join(LAB, "labels.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    n = len(out["recordings"])
    neg = sum(1 for r in out["recordings"].values() if r["negative_control"])
    print(f"labels: {n} recordings, {neg} negative controls, {sum(len(r['expected_findings']) for r in out['recordings'].values())} labels")


if __name__ == "__main__":
    main()
