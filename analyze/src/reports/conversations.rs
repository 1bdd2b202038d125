//! `report conversations`: per `gen_ai.conversation.id` (inherited down the stitched tree), the
//! traces, agent runs and agents, model calls, tool calls and tool errors, and the time span.
//!
//! Spans with no conversation anywhere above them are counted in a note, not dropped silently.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{ms, Report};
use crate::model::Model;

/// One row of `report conversations`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConversationRow {
    pub conversation_id: String,
    pub traces: usize,
    pub agent_runs: usize,
    pub agents: Vec<String>,
    pub model_calls: usize,
    pub tool_calls: usize,
    pub tool_errors: usize,
    /// First span start, RFC 3339 (UTC).
    pub started: String,
    /// From the first span's start to the last span's end.
    pub duration_ms: f64,
}

#[derive(Default)]
struct Acc<'a> {
    traces: BTreeSet<crate::model::TraceId>,
    agent_runs: usize,
    agents: BTreeSet<&'a str>,
    model_calls: usize,
    tool_calls: usize,
    tool_errors: usize,
    start: Option<i64>,
    end: Option<i64>,
}

/// Builds the report.
pub fn build(model: &Model) -> Report<ConversationRow> {
    let mut acc: BTreeMap<&str, Acc> = BTreeMap::new();
    let mut loose_spans = 0;
    let mut loose_traces = BTreeSet::new();
    for (i, s) in model.spans.iter().enumerate() {
        let Some(conv) = model.conversation[i].as_deref() else {
            loose_spans += 1;
            loose_traces.insert(s.trace_id);
            continue;
        };
        let a = acc.entry(conv).or_default();
        a.traces.insert(s.trace_id);
        if s.is_agent_run() {
            a.agent_runs += 1;
            if let Some(name) = s.agent_name.as_deref() {
                a.agents.insert(name);
            }
        }
        if s.is_model_call() {
            a.model_calls += 1;
        }
        a.start = Some(a.start.map_or(s.start_ns, |v| v.min(s.start_ns)));
        a.end = Some(a.end.map_or(s.end_ns, |v| v.max(s.end_ns)));
    }
    for call in model.calls.iter().filter(|c| c.is_tool()) {
        if let Some(a) = model.call_conversation(call).and_then(|c| acc.get_mut(c)) {
            a.tool_calls += 1;
            if call.is_error == Some(true) {
                a.tool_errors += 1;
            }
        }
    }
    let mut rows: Vec<ConversationRow> = acc
        .into_iter()
        .map(|(id, a)| {
            let start = a.start.unwrap_or(0);
            ConversationRow {
                conversation_id: id.to_string(),
                traces: a.traces.len(),
                agent_runs: a.agent_runs,
                agents: a.agents.iter().map(|s| s.to_string()).collect(),
                model_calls: a.model_calls,
                tool_calls: a.tool_calls,
                tool_errors: a.tool_errors,
                started: rfc3339(start),
                duration_ms: ms(a.end.unwrap_or(start).saturating_sub(start)),
            }
        })
        .collect();
    rows.sort_by(|a, b| (&a.started, &a.conversation_id).cmp(&(&b.started, &b.conversation_id)));
    let mut notes = Vec::new();
    if loose_spans > 0 {
        notes.push(format!(
            "{loose_spans} spans in {} traces belong to no conversation (no gen_ai.conversation.id on them or above them)",
            loose_traces.len()
        ));
    }
    Report { rows, notes }
}

fn rfc3339(ns: i64) -> String {
    chrono::DateTime::from_timestamp_nanos(ns).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
