//! `report conversations`: per `gen_ai.conversation.id` (inherited down the stitched tree), the
//! traces, agent runs and agents, model calls, tool calls and tool errors, and the time span.
//!
//! Spans with no conversation anywhere above them are counted in a note, not dropped silently.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{ms, Owned, Report};
use crate::model::{Model, TraceId};

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
struct Acc {
    traces: usize,
    agent_runs: usize,
    agents: BTreeSet<String>,
    model_calls: usize,
    tool_calls: usize,
    tool_errors: usize,
    start: Option<i64>,
    end: Option<i64>,
}

/// The report's tallies over the spans and calls counted so far (one model, or window after
/// window): one row per conversation.
#[derive(Default)]
pub struct Totals {
    acc: BTreeMap<String, Acc>,
    loose_spans: usize,
    loose_traces: usize,
}

/// Builds the report.
pub fn build(model: &Model) -> Report<ConversationRow> {
    let mut t = Totals::default();
    t.add(model, &Owned::all());
    t.finish()
}

impl Totals {
    /// Counts the spans and calls (by anchor) of `model` that `owned` selects. A trace's spans
    /// are all owned by one window, so the distinct traces of a window add up across windows.
    pub fn add(&mut self, model: &Model, owned: &Owned) {
        let mut traces: BTreeMap<&str, BTreeSet<TraceId>> = BTreeMap::new();
        let mut loose_traces = BTreeSet::new();
        for (i, s) in model.spans.iter().enumerate() {
            if !owned.span(i) {
                continue;
            }
            let Some(conv) = model.conversation[i].as_deref() else {
                self.loose_spans += 1;
                loose_traces.insert(s.trace_id);
                continue;
            };
            traces.entry(conv).or_default().insert(s.trace_id);
            let a = entry(&mut self.acc, conv);
            if s.is_agent_run() {
                a.agent_runs += 1;
                if let Some(name) = s.agent_name.as_deref() {
                    if !a.agents.contains(name) {
                        a.agents.insert(name.to_string());
                    }
                }
            }
            if s.is_model_call() {
                a.model_calls += 1;
            }
            a.start = Some(a.start.map_or(s.start_ns, |v| v.min(s.start_ns)));
            a.end = Some(a.end.map_or(s.end_ns, |v| v.max(s.end_ns)));
        }
        for (conv, t) in traces {
            entry(&mut self.acc, conv).traces += t.len();
        }
        self.loose_traces += loose_traces.len();
        for call in model.calls.iter().filter(|c| c.is_tool()) {
            if !owned.span(call.anchor) {
                continue;
            }
            // The conversation's row exists in the whole store (its spans make it), if perhaps
            // not yet in the windows read so far.
            if let Some(c) = model.call_conversation(call) {
                let a = entry(&mut self.acc, c);
                a.tool_calls += 1;
                if call.is_error == Some(true) {
                    a.tool_errors += 1;
                }
            }
        }
    }

    /// The rows, sorted by start, and the notes.
    pub fn finish(self) -> Report<ConversationRow> {
        let mut rows: Vec<ConversationRow> = self
            .acc
            .into_iter()
            .map(|(id, a)| {
                let start = a.start.unwrap_or(0);
                ConversationRow {
                    conversation_id: id,
                    traces: a.traces,
                    agent_runs: a.agent_runs,
                    agents: a.agents.into_iter().collect(),
                    model_calls: a.model_calls,
                    tool_calls: a.tool_calls,
                    tool_errors: a.tool_errors,
                    started: rfc3339(start),
                    duration_ms: ms(a.end.unwrap_or(start).saturating_sub(start)),
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            (&a.started, &a.conversation_id).cmp(&(&b.started, &b.conversation_id))
        });
        let mut notes = Vec::new();
        if self.loose_spans > 0 {
            notes.push(format!(
                "{} spans in {} traces belong to no conversation (no gen_ai.conversation.id on them or above them)",
                self.loose_spans, self.loose_traces
            ));
        }
        Report { rows, notes }
    }
}

/// The row of conversation `id`, made on first sight (without allocating the id again).
fn entry<'a>(acc: &'a mut BTreeMap<String, Acc>, id: &str) -> &'a mut Acc {
    if !acc.contains_key(id) {
        acc.insert(id.to_string(), Acc::default());
    }
    acc.get_mut(id).expect("inserted above")
}

fn rfc3339(ns: i64) -> String {
    chrono::DateTime::from_timestamp_nanos(ns).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
