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
# Scopes of host spans: the scripted host's, and Pydantic AI's own agent instrumentation where the
# host is a Pydantic AI agent (profile pydantic-ai-mcp).
HOST_SCOPES = {HOST_SCOPE, "pydantic-ai"}
# Vercel AI SDK (profile vercel-ai-js): the host is an AI SDK agent, its spans in tracer scope "ai"
# (see the Vercel AI SDK section below).
AI_SDK_SCOPE = "ai"
HOST_SCOPES.add(AI_SDK_SCOPE)
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
    if a.get("mcp.operation.name") == "tools_call":
        _, args = openlit_call(a)
        if isinstance(args, dict):
            return args, "mcp.request.payload"
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
    return e["attrs"].get("gen_ai.tool.name") or e["attrs"].get("ai.toolCall.name")


def exec_call_id(e):
    return e["attrs"].get("gen_ai.tool.call.id") or e["attrs"].get("ai.toolCall.id")
# ---- end Vercel AI SDK ----------------------------------------------------------------------------


def classified_error(s):
    return s["status"] == "ERROR" or "error.type" in s["attrs"]


def derive(rec_dir, policy):
    spans = spanlib.load(rec_dir)
    byid = {s["span_id"]: s for s in spans}
    host = [s for s in spans if s["scope"] in HOST_SCOPES]
    execs = [s for s in host if (s["attrs"].get("gen_ai.operation.name") == "execute_tool" and DEFERRAL not in s["attrs"]) or ai_sdk_exec(s)]
    deferrals = [s for s in host if s["attrs"].get(DEFERRAL) == "ApprovalRequired"]
    chats = [s for s in host if s["attrs"].get("gen_ai.operation.name") == "chat" or ai_sdk_chat(s)]
    guards = [s for s in host if "guardrail.decision" in s["attrs"]]
    lib_tool = [s for s in spans if tool_of(s)]

    def ancestors(s):
        seen = []
        while s and s["parent"] in byid:
            s = byid[s["parent"]]
            seen.append(s["span_id"])
        return seen

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
    findings, not_obs, notes = [], {}, []

    def nob(rule, why):
        not_obs.setdefault(rule, [])
        if why not in not_obs[rule]:
            not_obs[rule].append(why)

    for c in calls:
        lib = c["client"] + c["server"]
        # Vercel AI SDK: the host's own ai.toolCall span carries the MCP client's CallToolResult
        carriers = lib + ([c["exec"]] if ai_sdk_exec(c["exec"]) else [])
        c["payloads"] = [(k, d, a, s) for s in carriers for (k, d, a) in [call_result(s)] if k]
        full = [p for p in c["payloads"] if p[0] == "full"]
        c["error_shown"] = any(p[1].get("isError") is True or p[1].get("is_error") is True for p in c["payloads"])
        c["error_classified"] = [s for s in lib + [c["exec"]] if classified_error(s)]
        c["args"] = None
        for s in lib + [c["exec"]]:
            args, attr = call_args(s)
            if args is not None:
                c["args"], c["args_attr"] = args, f"{attr} on span {s['span_id']}"
                break
        c["full"] = full

    # TL001: a fully captured result without structuredContent.
    for c in calls:
        if not c["full"]:
            kinds = sorted({p[2] for p in c["payloads"]})
            fn_out = [s for s in c["client"] + c["server"] if "output.value" in s["attrs"]]
            host_out = "gen_ai.tool.call.result" in c["exec"]["attrs"]
            nob("TL001", f"{c['tool']}: result " + (f"only summarised ({', '.join(kinds)}: first text block, no structuredContent field)" if kinds
                                                    else f"not captured: output.value on span `{fn_out[0]['name']}` is the tool function's return value, not the CallToolResult (no content, no structuredContent field)" if fn_out
                                                    else "not captured: gen_ai.tool.call.result on the host's execute_tool span is the value Pydantic AI hands the model (structuredContent, or the parsed text), not the CallToolResult" if host_out
                                                    else "not captured by any span"))
            continue
        k, d, attr, s = c["full"][0]
        if d.get("structuredContent") is None and not d.get("isError"):
            findings.append({
                "id": "structured_output_missing", "tool": c["tool"],
                "execute_tool_span_id": c["exec"]["span_id"],
                "call_span_ids": [c["exec"]["span_id"]] + [x["span_id"] for x in c["client"] + c["server"]],
                "evidence": f"span {s['span_id']} `{s['name']}` attribute {attr}: content is a single text block, no structuredContent",
            })

    # TL002 / TL003: writes without an approval before them (host spans).
    for c in calls:
        cls = policy.get(c["tool"], {}).get("policy")
        if cls not in ("requires_approval", "prohibited"):
            continue
        e = c["exec"]
        conv = e["attrs"].get("gen_ai.conversation.id")
        prior = [g for g in guards if g["attrs"].get("gen_ai.tool.name") == c["tool"] and g["attrs"].get("gen_ai.conversation.id") == conv and g["start"] <= e["start"] and g["span_id"] != e["span_id"]]
        decisions = [g["attrs"]["guardrail.decision"] for g in prior]
        approved = "require_approval" in decisions and decisions[-1] == "allow"
        # Pydantic AI: the same tool call (gen_ai.tool.call.id) was deferred for approval earlier in the
        # conversation and is executed now: only an approval (DeferredToolResults) runs it.
        cid = e["attrs"].get("gen_ai.tool.call.id")
        deferred = [d for d in deferrals if cid and d["attrs"].get("gen_ai.tool.call.id") == cid and d["attrs"].get("gen_ai.tool.name") == c["tool"]
                    and d["attrs"].get("gen_ai.conversation.id") == conv and d["start"] <= e["start"]]
        approved = approved or bool(deferred)
        # Vercel AI SDK: the agent run that executed the call was given the approval in its input
        ai_ok = ai_sdk_approval(e, byid) if ai_sdk_exec(e) else None
        approved = approved or bool(ai_ok)
        if cls == "prohibited" or not approved:
            findings.append({
                # the shared recordings' convention: one id, TL003 where the registry says prohibited
                "id": "write_without_confirmation", "rule": "TL002" if cls == "requires_approval" else "TL003",
                "tool": c["tool"], "execute_tool_span_id": e["span_id"], "call_span_ids": [e["span_id"]],
                "evidence": f"host span {e['span_id']} `{e['name']}` (policy {cls}) has no guardrail require_approval -> allow for {c['tool']} before it in {conv}"
                + ("" if e["scope"] == HOST_SCOPE
                   else f", and its agent run's ai.prompt holds no tool-approval-request for tool call {exec_call_id(e)} answered approved: true" if ai_sdk_exec(e)
                   else f", and no earlier execute_tool span deferring tool call {cid} for approval ({DEFERRAL})"),
            })

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
        names = ai_sdk_shown(ch) if ai_sdk_chat(ch) else [d.get("name") for d in jload(ch["attrs"].get("gen_ai.tool.definitions")) or []]
        if c["tool"] not in names:
            findings.append({
                "id": "tool_call_outside_allowlist", "tool": c["tool"], "execute_tool_span_id": e["span_id"], "call_span_ids": [e["span_id"]],
                "evidence": (f"model call span {ch['span_id']} `{ch['name']}` ai.prompt.tools = {names}; its ai.response.toolCalls call {c['tool']}, executed by ai.toolCall span {e['span_id']}"
                             if ai_sdk_chat(ch) else f"chat span {ch['span_id']} gen_ai.tool.definitions = {names}; next execute_tool span {e['span_id']} calls {c['tool']}"),
            })

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
        conv = e["attrs"].get("gen_ai.conversation.id")
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
            + ("" if conv else " (no conversation id: one agent conversation per recording)"),
        })
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
    if host_only:
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
        if shown:
            for name, (s, t) in sorted(shown.items()):
                a = t["annotations"]
                implied = "automatic" if a.get("readOnlyHint") else ("requires_approval" if a.get("destructiveHint") is False else "prohibited")
                want = policy.get(name, {}).get("policy")
                if want and want != implied:
                    findings.append({"id": "annotation_policy_mismatch", "tool": name, "call_span_ids": [s["span_id"]],
                                     "evidence": f"span {s['span_id']} `{s['name']}` model_request_parameters.function_tools: {name} annotations {a} imply {implied}, policy says {want}"})
            unseen = sorted(set(policy) - set(shown))
            if unseen:
                nob("TL006", f"annotations of {', '.join(unseen)} not observed: no tools/list result is captured, and the model requests' model_request_parameters list only the tools shown to the model")
        else:
            nob("TL006", "no span carries a complete tools/list result (with inputSchema and annotations)")
            if any(ai_sdk_chat(ch) for ch in chats):
                # Vercel AI SDK: its MCP client records nothing; the model call's tool list drops annotations
                nob("TL006", "Vercel AI SDK: its MCP client emits no span (no tools/list), and ai.prompt.tools lists each shown tool's name, description and inputSchema only: the MCP annotations, kept in the AI SDK tool's metadata, are not recorded")
    else:
        s, k, tools = listed
        for t in tools:
            a = t.get("annotations") or {}
            implied = "automatic" if a.get("readOnlyHint") else ("requires_approval" if a.get("destructiveHint") is False else "prohibited")
            want = policy.get(t["name"], {}).get("policy")
            if want and want != implied:
                findings.append({"id": "annotation_policy_mismatch", "tool": t["name"], "call_span_ids": [s["span_id"]],
                                 "evidence": f"span {s['span_id']} {k}: {t['name']} annotations {a} imply {implied}, policy says {want}"})

    # TL007: deprecated GenAI names without their replacement.
    dep = [s for s in spans if any(k in s["attrs"] for k in DEPRECATED) and "gen_ai.provider.name" not in s["attrs"]]
    if dep:
        findings.append({"id": "deprecated_gen_ai_system", "span_ids": [s["span_id"] for s in dep], "count": len(dep),
                         "evidence": "; ".join(f"span {s['span_id']} `{s['name']}` carries {[k for k in DEPRECATED if k in s['attrs']]}" for s in dep)})

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
            m = re.match(r"^(W\d+-[a-z-]+?)(-http)?(-proto)?(-mcp(\d{4}-\d{2}-\d{2}))?$", rec)
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
