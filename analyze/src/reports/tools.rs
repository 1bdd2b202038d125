//! `report tools`: per tool and MCP server, calls, tool errors vs protocol errors, latency
//! percentiles, share of results with `structuredContent` (where a span carried the result) and
//! approvals asked / granted.
//!
//! Definitions (also in the notes of every report):
//! - a call is a logical tool call (host `execute_tool` + MCP client + MCP server spans once);
//! - server = `service.name` of the call's MCP server span, `-` when no server span was seen;
//! - tool error = the result said `isError: true` (or `error.type=tool_error`); protocol error =
//!   not a tool error, but a span of the call has status ERROR, an `error.type` or a JSON-RPC
//!   response status code (the request itself failed);
//! - latency = the call's anchor span duration (the host's view when the host is instrumented);
//!   percentiles are nearest-rank;
//! - approvals asked = guardrail `require_approval` decisions for the tool + answered MCP
//!   `input_required` rounds; granted = calls that ran with a matching approval before them
//!   (the same matching TL002 uses).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{ms, percentile, Owned, Report};
use crate::model::approvals::Approvals;
use crate::model::{McpRole, Model, StatusCode};

/// One row of `report tools`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolRow {
    pub tool: String,
    /// `service.name` of the MCP server span; None when no server span was seen.
    pub server: Option<String>,
    pub calls: usize,
    pub tool_errors: usize,
    pub protocol_errors: usize,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// Calls whose result was captured by some span (so `structuredContent` is observable).
    pub results_observed: usize,
    /// Of those, results with `structuredContent`.
    pub results_structured: usize,
    pub approvals_asked: usize,
    pub approvals_granted: usize,
}

#[derive(Default)]
struct Acc {
    calls: usize,
    tool_errors: usize,
    protocol_errors: usize,
    /// Every call's latency (8 bytes a call): the percentiles need them all.
    durations: Vec<f64>,
    observed: usize,
    structured: usize,
    asked: usize,
    granted: usize,
}

/// The report's tallies over the calls and spans counted so far (one model, or window after
/// window): what grows is one row per (tool, server) and one latency per call.
#[derive(Default)]
pub struct Totals {
    acc: BTreeMap<(String, Option<String>), Acc>,
    /// Guardrail require_approval decisions per tool.
    asked_by_tool: BTreeMap<String, usize>,
    unnamed: usize,
}

/// Builds the report.
pub fn build(model: &Model) -> Report<ToolRow> {
    let mut t = Totals::default();
    t.add(model, &Owned::all());
    t.finish()
}

impl Totals {
    /// Counts the calls (by their anchor span) and spans of `model` that `owned` says are
    /// counted here. Every named tool call of the model consumes approvals in start order, owned
    /// or not (as TL002: a call of a window's overlap may take an approval before a core call).
    pub fn add(&mut self, model: &Model, owned: &Owned) {
        let mut approvals = Approvals::collect(model);
        for call in model.calls.iter().filter(|c| c.is_tool()) {
            let Some(tool) = call.tool.as_deref().map(str::to_string) else {
                if owned.span(call.anchor) {
                    self.unnamed += 1;
                }
                continue;
            };
            let granted = approvals.consume(model, call);
            if !owned.span(call.anchor) {
                continue;
            }
            let server = call
                .members
                .iter()
                .find(|&&m| model.roles[m] == Some(McpRole::Server))
                .and_then(|&m| model.spans[m].service_name.as_deref().map(str::to_string));
            let a = self.acc.entry((tool, server)).or_default();
            a.calls += 1;
            if call.is_error == Some(true) {
                a.tool_errors += 1;
            } else if call.members.iter().any(|&m| {
                let s = &model.spans[m];
                s.status() == StatusCode::Error
                    || s.error_type.is_some()
                    || s.rpc_response_status_code().is_some()
            }) {
                a.protocol_errors += 1;
            }
            a.durations.push(ms(model.spans[call.anchor].duration_ns()));
            if let Some(structured) = call.has_structured_content {
                a.observed += 1;
                if structured {
                    a.structured += 1;
                }
            }
            if call.input_required {
                a.asked += 1;
            }
            if granted {
                a.granted += 1;
            }
        }
        // Guardrail require_approval decisions name a tool, not a server: counted on every row
        // of that tool (a note says so when a tool runs on several servers).
        for (i, s) in model.spans.iter().enumerate() {
            if s.guardrail_decision.as_deref() == Some("require_approval") && owned.span(i) {
                if let Some(t) = s.tool_name.as_deref() {
                    match self.asked_by_tool.get_mut(t) {
                        Some(n) => *n += 1,
                        None => {
                            self.asked_by_tool.insert(t.to_string(), 1);
                        }
                    }
                }
            }
        }
    }

    /// The rows, sorted, and the notes.
    pub fn finish(self) -> Report<ToolRow> {
        let Totals {
            mut acc,
            asked_by_tool,
            unnamed,
        } = self;
        let mut rows: Vec<ToolRow> = acc
            .iter_mut()
            .map(|((tool, server), a)| {
                a.durations.sort_by(f64::total_cmp);
                let d = &a.durations;
                ToolRow {
                    tool: tool.clone(),
                    server: server.clone(),
                    calls: a.calls,
                    tool_errors: a.tool_errors,
                    protocol_errors: a.protocol_errors,
                    p50_ms: percentile(d, 50.0),
                    p95_ms: percentile(d, 95.0),
                    p99_ms: percentile(d, 99.0),
                    results_observed: a.observed,
                    results_structured: a.structured,
                    approvals_asked: a.asked
                        + asked_by_tool.get(tool.as_str()).copied().unwrap_or(0),
                    approvals_granted: a.granted,
                }
            })
            .collect();
        let mut servers_per_tool: BTreeMap<&str, BTreeSet<Option<&str>>> = BTreeMap::new();
        for (tool, server) in acc.keys() {
            servers_per_tool
                .entry(tool.as_str())
                .or_default()
                .insert(server.as_deref());
        }
        rows.sort_by(|a, b| (b.calls, &a.tool, &a.server).cmp(&(a.calls, &b.tool, &b.server)));
        let mut notes = Vec::new();
        let calls: usize = rows.iter().map(|r| r.calls).sum();
        let observed: usize = rows.iter().map(|r| r.results_observed).sum();
        if calls > observed {
            notes.push(format!(
                "structuredContent not observable on {} of {calls} calls (no span carried the result)",
                calls - observed
            ));
        }
        let no_server = rows
            .iter()
            .filter(|r| r.server.is_none())
            .map(|r| r.calls)
            .sum::<usize>();
        if no_server > 0 {
            notes.push(format!(
                "no MCP server span seen for {no_server} calls (server -): local tools, or the server does not export"
            ));
        }
        let multi: Vec<&str> = servers_per_tool
            .iter()
            .filter(|(_, s)| s.len() > 1)
            .map(|(t, _)| *t)
            .collect();
        if !multi.is_empty() {
            notes.push(format!(
                "guardrail approvals name tools, not servers: {} run on several servers and show the tool's total on each row",
                multi.join(", ")
            ));
        }
        if unnamed > 0 {
            notes.push(format!(
                "{unnamed} tool calls without a tool name are not listed"
            ));
        }
        Report { rows, notes }
    }
}
