//! `report conversations`: per `gen_ai.conversation.id` (inherited down the stitched tree), the
//! traces, agent runs and agents, model calls, tool calls and tool errors, and the time span.
//!
//! Spans with no conversation anywhere above them are counted in a note, not dropped silently.
//!
//! Why rows are finished as the windows go by: a store holds a conversation per few dozen spans
//! (712,095 at 10M spans), so a tally that holds every row until the end grows with the store.
//! A conversation's spans are all in the windows that read a trace of its group (pass 1 joins a
//! conversation's traces into one group, and a model only resolves a conversation id from a span
//! that carries it), so once the last of those windows ([`Place::settled_by`]) has been counted
//! its row is final; and once no unfinished or later conversation can start before it (the next
//! window's first core start, the earliest start among the rows still counting), it goes to the
//! [`RowSink`] in report order. What is held is the conversations still counting and the
//! finished rows waiting for an earlier one: about a window's worth, more only while a long
//! conversation is still read by later windows.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{ms, Owned, Report};
use crate::model::{Model, TraceId};
use crate::window::Place;

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
    /// A span carrying the id was counted: the conversation's own group has been read.
    explicit: bool,
    /// The last window that can add to the row ([`Place::settled_by`]).
    settled_by: u32,
    /// The windows that counted its agent runs (`report html` reads them again to list them).
    run_windows: Vec<u32>,
}

/// Where finished rows go, in report order (by start, then id).
pub trait RowSink {
    /// One row, with the windows (numbers) that own its agent runs.
    fn row(&mut self, row: ConversationRow, run_windows: &[u32]);
}

impl RowSink for Vec<ConversationRow> {
    fn row(&mut self, row: ConversationRow, _: &[u32]) {
        self.push(row);
    }
}

/// The report's tallies over the spans and calls counted so far (one model, or window after
/// window): one row per conversation, finished rows passed on ([`Totals::settle`]).
#[derive(Default)]
pub struct Totals {
    /// Conversations still counting.
    acc: BTreeMap<String, Acc>,
    /// Finished rows, by (started, id), waiting for the rows before them.
    done: BTreeMap<(String, String), (ConversationRow, Vec<u32>)>,
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
        self.add_at(model, owned, Place::whole());
    }

    /// [`Totals::add`] for the window at `place`; [`Totals::settle`] then passes on the rows it
    /// finished.
    pub fn add_at(&mut self, model: &Model, owned: &Owned, place: Place) {
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
            a.settled_by = a.settled_by.max(place.settled_by);
            a.explicit |= s.conversation_id.as_deref() == Some(conv);
            if s.is_agent_run() {
                a.agent_runs += 1;
                if a.run_windows.last() != Some(&place.number) {
                    a.run_windows.push(place.number);
                }
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

    /// After the window at `place` was counted: finishes the rows no later window can add to,
    /// and passes to `sink`, in report order, those no unfinished or later row can come before.
    pub fn settle(&mut self, place: Place, sink: &mut dyn RowSink) {
        let mut finished = Vec::new();
        self.acc.retain(|id, a| {
            let last = a.explicit && a.settled_by <= place.number;
            if last {
                finished.push((id.clone(), std::mem::take(a)));
            }
            !last
        });
        for (id, a) in finished {
            self.finish_row(id, a);
        }
        // Rows still counting start at their earliest span so far or later; rows not seen yet
        // start in a later window's core.
        let floor = self
            .acc
            .values()
            .filter_map(|a| a.start)
            .fold(place.later_from_ns, i64::min);
        if floor == i64::MAX {
            return self.drain(sink);
        }
        // A later row's `started` is at least the floor's (the same millisecond sorts by id).
        let floor = rfc3339(floor);
        while let Some(entry) = self.done.first_entry() {
            if entry.key().0 >= floor {
                break;
            }
            let (row, windows) = entry.remove();
            sink.row(row, &windows);
        }
    }

    /// Rows held: conversations still counting and finished rows not yet passed on.
    pub fn held(&self) -> usize {
        self.acc.len() + self.done.len()
    }

    /// Every row still held to `sink`, in report order, and the notes.
    pub fn finish_into(mut self, sink: &mut dyn RowSink) -> Vec<String> {
        for (id, a) in std::mem::take(&mut self.acc) {
            self.finish_row(id, a);
        }
        self.drain(sink);
        let mut notes = Vec::new();
        if self.loose_spans > 0 {
            notes.push(format!(
                "{} spans in {} traces belong to no conversation (no gen_ai.conversation.id on them or above them)",
                self.loose_spans, self.loose_traces
            ));
        }
        notes
    }

    /// The rows, sorted by start, and the notes.
    pub fn finish(self) -> Report<ConversationRow> {
        let mut rows = Vec::new();
        let notes = self.finish_into(&mut rows);
        Report { rows, notes }
    }

    fn finish_row(&mut self, id: String, a: Acc) {
        let start = a.start.unwrap_or(0);
        let row = ConversationRow {
            conversation_id: id.clone(),
            traces: a.traces,
            agent_runs: a.agent_runs,
            agents: a.agents.into_iter().collect(),
            model_calls: a.model_calls,
            tool_calls: a.tool_calls,
            tool_errors: a.tool_errors,
            started: rfc3339(start),
            duration_ms: ms(a.end.unwrap_or(start).saturating_sub(start)),
        };
        self.done
            .insert((row.started.clone(), id), (row, a.run_windows));
    }

    fn drain(&mut self, sink: &mut dyn RowSink) {
        for (_, (row, windows)) in std::mem::take(&mut self.done) {
            sink.row(row, &windows);
        }
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
