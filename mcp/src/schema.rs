//! The JSON Schemas of the tools: what each accepts (`inputSchema`) and what its
//! `structuredContent` holds (`outputSchema`), declared once here and served by `tools/list`.
//!
//! The output schemas of `check` and `report` describe the analyzer's JSON documents
//! (docs/json-output.md and `tripline report --format json`), whose fields are only ever added:
//! so objects leave `additionalProperties` open, and name as `required` only what the contract
//! promises. Input schemas are closed (`additionalProperties: false`): a misspelt argument is an
//! error the caller sees, not a filter silently ignored.

use serde_json::{json, Value};

/// Default and ceiling of `query`'s `limit`.
pub const QUERY_DEFAULT_ROWS: u64 = 200;
pub const QUERY_MAX_ROWS: u64 = 10_000;
/// Default and ceiling of `trace`'s `max_spans`.
pub const TRACE_DEFAULT_SPANS: u64 = 2_000;
pub const TRACE_MAX_SPANS: u64 = 20_000;

/// Default and ceiling of `check`'s `max_findings`.
pub const CHECK_DEFAULT_FINDINGS: u64 = 1_000;
pub const CHECK_MAX_FINDINGS: u64 = 10_000;
/// Default and ceiling of `report`'s `max_rows`.
pub const REPORT_DEFAULT_ROWS: u64 = 1_000;
pub const REPORT_MAX_ROWS: u64 = 10_000;

/// The report kinds the `report` tool serves (as `tripline report KIND`).
pub const REPORT_KINDS: &[&str] = &[
    "tools",
    "conversations",
    "guardrails",
    "skills",
    "propagation",
];

fn filter_properties() -> Value {
    json!({
        "since": {"type": "string", "description": "Only spans that started at or after this time: RFC 3339 (2026-11-30T08:00:00Z) or relative (90s, 30m, 24h, 7d, 2w)."},
        "until": {"type": "string", "description": "Only spans that started at or before this time (RFC 3339 or relative)."},
        "service": {"type": "string", "description": "Only spans of this service.name."},
        "trace": {"type": "string", "description": "Only spans of this trace (32 hex digits)."}
    })
}

fn with_filters(mut properties: Value) -> Value {
    if let (Some(p), Value::Object(f)) = (properties.as_object_mut(), filter_properties()) {
        p.extend(f);
    }
    properties
}

const POLICY_DESCRIPTION: &str = "Path of a host tool registry (TOML policy file: tool policies, tags, agent allowlists, task scopes, [limits]). It must lie under one of the server's policy roots (its working directory, or --policy-root); without it the server's --policy is used, if any.";

pub fn check_input() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": with_filters(json!({
            "rules": {"type": "array", "items": {"type": "string"}, "description": "Run only these rule codes (e.g. [\"TL002\", \"TL004\"]); all rules when absent. The `explain` tool documents each."},
            "policy": {"type": "string", "description": POLICY_DESCRIPTION},
            "max_calls_per_tool": {"type": "integer", "minimum": 1, "description": "TL014: flag an agent run that calls one tool more than N times (overrides the policy's [limits]; default 10)."},
            "max_model_turns": {"type": "integer", "minimum": 1, "description": "TL014: flag an agent run with more than N model turns (overrides [limits]; default 25)."},
            "max_findings": {"type": "integer", "minimum": 1, "maximum": CHECK_MAX_FINDINGS, "default": CHECK_DEFAULT_FINDINGS, "description": "Most findings returned, the first in report order (most severe first); `truncated` and `total_findings` say when there were more. Coverage always covers every finding."}
        }))
    })
}

/// Shared definitions: a finding, a rule's coverage, what a scan read.
fn defs() -> Value {
    json!({
        "finding": {
            "type": "object",
            "required": ["rule", "name", "severity", "trace_id", "span_id", "conversation_id", "tool", "message", "related"],
            "properties": {
                "rule": {"type": "string"},
                "name": {"type": "string"},
                "severity": {"enum": ["info", "warning", "error", "critical"]},
                "trace_id": {"type": "string"},
                "span_id": {"type": "string"},
                "conversation_id": {"type": ["string", "null"]},
                "tool": {"type": ["string", "null"]},
                "message": {"type": "string"},
                "related": {"type": "array", "items": {"type": "string"}}
            }
        },
        "coverage": {
            "type": "object",
            "required": ["rule", "examined", "not_observable", "reasons"],
            "properties": {
                "rule": {"type": "string"},
                "examined": {"type": "integer", "minimum": 0},
                "not_observable": {"type": "integer", "minimum": 0},
                "reasons": {"type": "array", "items": {"type": "string"}}
            }
        },
        "scanned": {
            "type": "object",
            "description": "What the store scan read: readable part files, spans (after the filters, WAL spans included), spans still in the WAL, files skipped as unreadable.",
            "required": ["files", "spans", "wal_spans", "unreadable_files"],
            "properties": {
                "files": {"type": "integer", "minimum": 0},
                "spans": {"type": "integer", "minimum": 0},
                "wal_spans": {"type": "integer", "minimum": 0},
                "unreadable_files": {"type": "array", "items": {
                    "type": "object",
                    "required": ["path", "error"],
                    "properties": {"path": {"type": "string"}, "error": {"type": "string"}}
                }}
            }
        }
    })
}

/// `check`: the document `tripline check --format json` prints (docs/json-output.md).
pub fn check_output() -> Value {
    json!({
        "type": "object",
        "required": ["findings", "coverage", "scanned", "truncated", "total_findings"],
        "properties": {
            "findings": {"type": "array", "items": {"$ref": "#/$defs/finding"}, "description": "One per problem, most severe first (the first max_findings)."},
            "truncated": {"type": "boolean", "description": "More findings than max_findings: only the first are in `findings`."},
            "total_findings": {"type": "integer", "minimum": 0, "description": "Findings of the whole check."},
            "coverage": {"type": "array", "items": {"$ref": "#/$defs/coverage"}, "description": "One per rule that ran: examined 0 means the rule saw nothing to judge."},
            "scanned": {"$ref": "#/$defs/scanned"}
        },
        "$defs": defs()
    })
}

pub fn query_input() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["sql"],
        "properties": {
            "sql": {"type": "string", "description": "One read-only statement over the table `spans` (DataFusion SQL): SELECT / WITH / VALUES, DESCRIBE spans, or EXPLAIN [ANALYZE] SELECT. Ids are binary: encode(trace_id, 'hex')."},
            "limit": {"type": "integer", "minimum": 1, "maximum": QUERY_MAX_ROWS, "default": QUERY_DEFAULT_ROWS, "description": "Most rows returned; `truncated` says when there were more."}
        }
    })
}

pub fn query_output() -> Value {
    json!({
        "type": "object",
        "required": ["columns", "rows", "row_count", "truncated", "limit", "scanned"],
        "properties": {
            "columns": {"type": "array", "items": {
                "type": "object",
                "required": ["name", "type"],
                "properties": {"name": {"type": "string"}, "type": {"type": "string", "description": "Arrow data type"}}
            }},
            "rows": {"type": "array", "items": {"type": "object"}, "description": "One object per row, column name to value; null values are left out (as `tripline query --format json`)."},
            "row_count": {"type": "integer", "minimum": 0},
            "truncated": {"type": "boolean", "description": "More rows matched than were returned (the row limit, or the response size cap)."},
            "truncated_reason": {"type": ["string", "null"]},
            "limit": {"type": "integer", "minimum": 1},
            "elapsed_ms": {"type": "number"},
            "scanned": {"$ref": "#/$defs/scanned"}
        },
        "$defs": defs()
    })
}

pub fn trace_input() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["trace_id"],
        "properties": {
            "trace_id": {"type": "string", "description": "The trace id, 32 hex digits (findings carry it as trace_id)."},
            "policy": {"type": "string", "description": POLICY_DESCRIPTION},
            "max_spans": {"type": "integer", "minimum": 1, "maximum": TRACE_MAX_SPANS, "default": TRACE_DEFAULT_SPANS, "description": "Most span nodes returned in `roots` (the text rendering is cut the same way)."}
        }
    })
}

pub fn trace_output() -> Value {
    let mut defs = defs();
    defs["node"] = json!({
        "type": "object",
        "required": ["span_id", "trace_id", "parent_span_id", "name", "service", "kind", "status", "start_time", "duration_ms", "stitched", "attributes", "findings", "children"],
        "properties": {
            "span_id": {"type": "string"},
            "trace_id": {"type": "string"},
            "parent_span_id": {"type": ["string", "null"]},
            "name": {"type": "string"},
            "service": {"type": ["string", "null"]},
            "kind": {"type": "string"},
            "status": {"type": "string"},
            "start_time": {"type": "string", "description": "RFC 3339, UTC"},
            "duration_ms": {"type": "number"},
            "stitched": {"type": "boolean", "description": "This server span is the root of another trace, stitched under the host span of its call: the trace context did not cross the MCP boundary (the broken edge of TL004)."},
            "attributes": {"type": "object", "additionalProperties": {"type": ["string", "boolean"]}, "description": "The GenAI / MCP facts of the span: operation, tool, mcp.method, jsonrpc id, conversation, guardrail decision, error.type, isError."},
            "findings": {"type": "array", "items": {"type": "string"}, "description": "Rule codes of the findings on this span (details in the top-level `findings`)."},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            "omitted_children": {"type": "integer", "minimum": 0, "description": "Children left out by the span or depth limit."}
        }
    });
    json!({
        "type": "object",
        "required": ["trace_id", "stitched_traces", "span_count", "shown_spans", "truncated", "roots", "findings", "text", "scanned"],
        "properties": {
            "trace_id": {"type": "string"},
            "stitched_traces": {"type": "array", "items": {"type": "string"}, "description": "Other traces joined to this one through broken edges."},
            "span_count": {"type": "integer", "minimum": 0},
            "shown_spans": {"type": "integer", "minimum": 0},
            "truncated": {"type": "boolean"},
            "roots": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            "findings": {"type": "array", "items": {"$ref": "#/$defs/finding"}, "description": "Every finding on a span of the tree."},
            "text": {"type": "string", "description": "The tree as `tripline trace` prints it."},
            "scanned": {"$ref": "#/$defs/scanned"}
        },
        "$defs": defs
    })
}

pub fn report_input() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["kind"],
        "properties": with_filters(json!({
            "kind": {"enum": REPORT_KINDS, "description": "tools: per tool and MCP server, calls, errors, latency, structured results, approvals. conversations: per conversation, traces, agent runs, model and tool calls. guardrails: decisions by guardrail and skill. skills: per skill, invocations, tool and model calls, guardrail decisions. propagation: per MCP client -> server service pair, requests, how many kept the host's trace and how (params._meta, HTTP header only, re-rooted by a gateway, none), the libraries on each side and the fix."},
            "max_rows": {"type": "integer", "minimum": 1, "maximum": REPORT_MAX_ROWS, "default": REPORT_DEFAULT_ROWS, "description": "Most rows returned, the first in report order; `truncated` and `total_rows` say when there were more (narrow with since/until/service/trace to see the others)."}
        }))
    })
}

pub fn report_output() -> Value {
    let mut defs = defs();
    let int = json!({"type": "integer", "minimum": 0});
    let ms = json!({"type": ["number", "null"]});
    let text = json!({"type": "string"});
    let opt_text = json!({"type": ["string", "null"]});
    let texts = json!({"type": "array", "items": {"type": "string"}});
    defs["tools_row"] = json!({
        "type": "object",
        "required": ["tool", "server", "calls", "tool_errors", "protocol_errors", "p50_ms", "p95_ms", "p99_ms", "results_observed", "results_structured", "approvals_asked", "approvals_granted"],
        "properties": {"tool": text, "server": opt_text, "calls": int, "tool_errors": int, "protocol_errors": int,
            "p50_ms": ms, "p95_ms": ms, "p99_ms": ms, "results_observed": int, "results_structured": int,
            "approvals_asked": int, "approvals_granted": int}
    });
    defs["conversations_row"] = json!({
        "type": "object",
        "required": ["conversation_id", "traces", "agent_runs", "agents", "model_calls", "tool_calls", "tool_errors", "started", "duration_ms"],
        "properties": {"conversation_id": text, "traces": int, "agent_runs": int, "agents": texts,
            "model_calls": int, "tool_calls": int, "tool_errors": int, "started": text, "duration_ms": {"type": "number"}}
    });
    defs["guardrails_row"] = json!({
        "type": "object",
        "required": ["guardrail", "skill", "allow", "require_approval", "block", "other", "approvals_granted", "tools"],
        "properties": {"guardrail": text, "skill": opt_text, "allow": int, "require_approval": int, "block": int,
            "other": int, "approvals_granted": int, "tools": texts}
    });
    defs["skills_row"] = json!({
        "type": "object",
        "required": ["skill", "conversations", "agents", "tool_calls", "tool_errors", "model_calls", "guardrail_decisions"],
        "properties": {"skill": text, "conversations": int, "agents": texts, "tool_calls": int,
            "tool_errors": int, "model_calls": int, "guardrail_decisions": int}
    });
    let count = |what: &str| json!({"type": "integer", "minimum": 0, "description": what});
    defs["propagation_row"] = json!({
        "type": "object",
        "required": ["client", "server", "client_libraries", "server_libraries", "calls", "stitched", "how", "unstitched_tool_calls", "fix"],
        "properties": {
            "client": {"type": ["string", "null"], "description": "service.name of the calling side; null when no host span of these requests is in the store."},
            "server": {"type": ["string", "null"], "description": "service.name of the MCP server; null when the server exported no span of these requests."},
            "client_libraries": {"type": "array", "items": text, "description": "Instrumentation scopes (name and version) on the client side."},
            "server_libraries": {"type": "array", "items": text, "description": "Instrumentation scopes (name and version) on the server side."},
            "calls": count("MCP requests between the two."),
            "stitched": count("Requests whose server span is in the host's trace."),
            "how": {
                "type": "object",
                "required": ["params_meta", "http_header_only", "via_gateway", "rerooted_by_gateway", "none", "not_observable"],
                "description": "How each request's context crossed; the counts add up to calls.",
                "properties": {
                    "params_meta": count("Stitched: W3C trace context in params._meta."),
                    "http_header_only": count("Stitched: only the HTTP traceparent header carried it."),
                    "via_gateway": count("Stitched through a span of a third service."),
                    "rerooted_by_gateway": count("Not stitched: the server's parent is absent from the store, in another trace."),
                    "none": count("Not stitched: the server span is a root."),
                    "not_observable": count("Only one side of the request is in the store.")
                }
            },
            "unstitched_tool_calls": count("tools/call requests whose server span is not in the host's trace (TL004's findings)."),
            "fix": {"type": "string", "description": "What to change for the requests that did not cross."}
        }
    });
    let rows: Vec<Value> = REPORT_KINDS
        .iter()
        .map(|k| json!({"$ref": format!("#/$defs/{k}_row")}))
        .collect();
    json!({
        "type": "object",
        "required": ["kind", "rows", "notes", "scanned", "truncated", "total_rows"],
        "properties": {
            "kind": {"enum": REPORT_KINDS},
            "truncated": {"type": "boolean", "description": "More rows than max_rows: only the first are in `rows` (a note says how many)."},
            "total_rows": {"type": "integer", "minimum": 0, "description": "Rows of the whole report."},
            "rows": {"type": "array", "items": {"anyOf": rows}, "description": "The rows of `tripline report KIND --format json`; their fields depend on `kind`."},
            "notes": {"type": "array", "items": {"type": "string"}, "description": "What could not be observed: an empty column is never a zero."},
            "scanned": {"$ref": "#/$defs/scanned"}
        },
        "$defs": defs
    })
}

pub fn explain_input() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["code"],
        "properties": {
            "code": {"type": "string", "description": "A rule code, e.g. TL004 (findings carry it as `rule`)."}
        }
    })
}

pub fn explain_output() -> Value {
    json!({
        "type": "object",
        "required": ["code", "name", "severity", "run_by", "what", "why", "example", "fix", "text"],
        "properties": {
            "code": {"type": "string"},
            "name": {"type": "string"},
            "severity": {"enum": ["info", "warning", "error", "critical"]},
            "run_by": {"enum": ["check", "diff"], "description": "The command that runs the rule: `check` (the check tool), or `tripline diff` for catalog drift."},
            "what": {"type": "string", "description": "What it detects."},
            "why": {"type": "string", "description": "Why it matters."},
            "example": {"type": "string"},
            "fix": {"type": "string", "description": "How to fix it."},
            "text": {"type": "string", "description": "As `tripline explain CODE` prints it."}
        }
    })
}
