//! The trace model every rule works on: span trees per trace, MCP roles, logical calls, agent
//! runs, conversations, and server spans stitched to their host call when propagation broke.
//!
//! Built once per `check` from the loaded `SpanRow`s; rules only read it.

pub mod approvals;
pub mod calls;
pub mod children;
pub mod list_memo;
mod model_calls;
pub mod roles;
pub mod server_tools;
pub mod span;
pub mod stitch;
pub mod transport;

use std::collections::{BTreeMap, HashMap};

pub use calls::{Call, CallKind};
pub use children::Children;
pub use roles::McpRole;
pub use span::{SpanId, SpanKind, SpanRare, SpanRow, StatusCode, ToolDef, TraceId, TraceSet};
pub use stitch::{Orphan, OrphanMatch};

/// All spans of one load, indexed and linked.
#[derive(Debug, Default)]
pub struct Model {
    pub spans: Vec<SpanRow>,
    /// Every span as (trace, span id, position), sorted ([`Model::index_of`]).
    by_id: SpanIndex,
    /// In-store parent (same trace).
    pub parent: Vec<Option<usize>>,
    /// In-store children (same trace), each span's in start order.
    pub children: Children,
    /// Spans per trace, ordered by start time.
    pub traces: BTreeMap<TraceId, Vec<usize>>,
    pub roles: Vec<Option<McpRole>>,
    /// The spans that are model calls ([`SpanRow::is_model_call`]), in order: the rules that
    /// judge model turns walk these instead of every span (a pass over a window's rows is
    /// mostly waiting for memory: a row is a few hundred bytes).
    pub model_call_spans: Vec<usize>,
    /// The spans that record a guardrail (a name or a decision), in order.
    pub guardrail_spans: Vec<usize>,
    /// Logical calls (tool calls and other MCP requests), ordered by start time.
    pub calls: Vec<Call>,
    /// The call each span belongs to.
    pub call_of_span: Vec<Option<usize>>,
    /// Server-side entry spans whose parent is missing, with the host call matched to them (if any).
    pub orphans: Vec<Orphan>,
    /// Parent across a broken edge: orphan server span -> the host span of its call.
    pub stitched_parent: Vec<Option<usize>>,
    /// The `invoke_agent` span each span runs under (following stitched edges).
    pub agent_run: Vec<Option<usize>>,
    /// The conversation id each span belongs to (own, or inherited from an ancestor); shared, so
    /// a conversation of a thousand spans holds its id once.
    pub conversation: Vec<Option<span::Sym>>,
    /// What the transport demotion cleared, so [`Model::into_rows`] gives the rows as loaded.
    demoted: Vec<transport::Demoted>,
    /// Model calls with tool definitions by agent run and trace, built on first use.
    model_calls: std::sync::OnceLock<model_calls::ModelCallIndex>,
}

impl Model {
    /// Builds the model. Never fails: missing parents become roots, unknown values stay unknown.
    pub fn build(spans: Vec<SpanRow>) -> Self {
        Self::from_parts(vec![spans.into_iter().map(Some).collect()])
    }

    /// Builds the model from the loader's per-partition parts (every slot `Some`), moving each row
    /// exactly once, straight to its place in start order.
    pub fn from_parts(parts: Vec<Vec<Option<SpanRow>>>) -> Self {
        let mut spans = gather_by_start(parts);
        // A span exported twice (retry after a lost ack) is kept once.
        spans.dedup_by(|b, a| a.trace_id == b.trace_id && a.span_id == b.span_id);
        let demoted = transport::demote_transport_spans(&mut spans);
        // One pass over the rows for the trace lists and the span lists the rules walk (the
        // promotion below changes MCP facts only, never an operation or a guardrail). Each row's
        // trace gets a slot and a count first, so every trace's list is allocated once at its
        // size: pushing to lists that grew as they went cost a reallocation per doubling, about
        // 0.4 per row (callgrind, 1M spans, session 51).
        let mut slot_of: HashMap<TraceId, u32, foldhash::fast::RandomState> = HashMap::default();
        let mut counts: Vec<u32> = Vec::new();
        let mut slots: Vec<u32> = Vec::with_capacity(spans.len());
        let (mut model_call_spans, mut guardrail_spans) = (Vec::new(), Vec::new());
        for (i, s) in spans.iter().enumerate() {
            let slot = *slot_of.entry(s.trace_id).or_insert_with(|| {
                counts.push(0);
                u32::try_from(counts.len() - 1).expect("fewer than 2^32 traces in a model")
            });
            counts[slot as usize] += 1;
            slots.push(slot);
            if s.is_model_call() {
                model_call_spans.push(i);
            }
            if s.guardrail_name.is_some() || s.guardrail_decision.is_some() {
                guardrail_spans.push(i);
            }
        }
        let mut lists: Vec<Vec<usize>> = counts
            .iter()
            .map(|&c| Vec::with_capacity(c as usize))
            .collect();
        for (i, &slot) in slots.iter().enumerate() {
            lists[slot as usize].push(i);
        }
        let traces: BTreeMap<TraceId, Vec<usize>> = slot_of
            .into_iter()
            .map(|(trace, slot)| (trace, std::mem::take(&mut lists[slot as usize])))
            .collect();
        let (parent, children, by_id) = link_parents(&spans, &traces);
        let mut demoted = demoted;
        demoted.extend(server_tools::promote(&mut spans, &parent));
        let roles = roles::assign(&spans, &parent);
        let mut model = Self {
            spans,
            model_call_spans,
            guardrail_spans,
            by_id,
            parent,
            children,
            traces,
            roles,
            demoted,
            ..Self::default()
        };
        model.build_calls();
        stitch::stitch(&mut model);
        model.inherit();
        model
    }

    /// The rows back, in start order and as they were loaded (the transport demotion undone):
    /// a windowed `check` carries the rows of traces the next window reads into its model.
    pub fn into_rows(self) -> Vec<SpanRow> {
        let mut spans = self.spans;
        for d in self.demoted {
            let i = d.index;
            d.restore(&mut spans[i]);
        }
        spans
    }

    fn build_calls(&mut self) {
        let n = self.spans.len();
        let mut call_of_anchor: HashMap<usize, usize, foldhash::fast::RandomState> =
            HashMap::default();
        self.call_of_span = vec![None; n];
        for i in 0..n {
            let Some(kind) = calls::call_kind_of(&self.spans[i]) else {
                continue;
            };
            let anchor = calls::anchor_of(&self.spans, &self.parent, &self.roles, i, &kind);
            let ci = *call_of_anchor.entry(anchor).or_insert_with(|| {
                let a = &self.spans[anchor];
                self.calls.push(Call {
                    kind: calls::call_kind_of(a).unwrap_or(kind.clone()),
                    anchor,
                    members: Vec::new(),
                    tool: None,
                    tool_call_id: None,
                    arguments_digest: None,
                    is_error: None,
                    has_structured_content: None,
                    text_is_json_object: None,
                    input_required: false,
                    session_id: None,
                    request_id: None,
                    jsonrpc_error: None,
                    start_ns: a.start_ns,
                    end_ns: a.end_ns,
                });
                self.calls.len() - 1
            });
            self.calls[ci].members.push(i);
            self.call_of_span[i] = Some(ci);
        }
        // Facts: every member, plus the transport spans below the members (Traceloop puts the
        // full result on a `ResponseStreamWriter` child) that belong to no other call.
        // One walk stack for every call (a window has tens of thousands), and each call's
        // members taken out while it absorbs them (absorbing never reads them) instead of copied.
        let mut stack = Vec::new();
        for ci in 0..self.calls.len() {
            let members = std::mem::take(&mut self.calls[ci].members);
            for &m in &members {
                self.absorb_subtree(ci, m, &mut stack);
            }
            self.calls[ci].members = members;
        }
    }

    /// Absorbs span `root`'s facts and those of its descendants that belong to no other call;
    /// `stack` is scratch space (cleared first).
    fn absorb_subtree(&mut self, ci: usize, root: usize, stack: &mut Vec<usize>) {
        stack.clear();
        stack.push(root);
        let mut steps = 0;
        while let Some(i) = stack.pop() {
            steps += 1;
            if steps > 100_000 {
                break;
            }
            if i != root && self.call_of_span[i].is_some_and(|c| c != ci) {
                continue;
            }
            calls::absorb(&mut self.calls[ci], &self.spans[i]);
            stack.extend(self.children[i].iter().copied());
        }
    }

    /// Merges call `from` into call `into` (a stitched orphan server call into its host call).
    pub(crate) fn merge_call(&mut self, into: usize, from: usize) {
        let members = std::mem::take(&mut self.calls[from].members);
        for &m in &members {
            self.call_of_span[m] = Some(into);
        }
        self.calls[into].members.extend(members.iter().copied());
        let mut stack = Vec::new();
        for m in members {
            self.absorb_subtree(into, m, &mut stack);
        }
    }

    /// Drops calls emptied by stitching and re-indexes, ordered by start time.
    pub(crate) fn compact_calls(&mut self) {
        let mut keep: Vec<Call> = std::mem::take(&mut self.calls)
            .into_iter()
            .filter(|c| !c.members.is_empty())
            .collect();
        keep.sort_by_key(|c| (c.start_ns, c.anchor));
        self.call_of_span = vec![None; self.spans.len()];
        for (ci, c) in keep.iter().enumerate() {
            for &m in &c.members {
                self.call_of_span[m] = Some(ci);
            }
        }
        self.calls = keep;
    }

    /// Effective parent: the in-store parent, else the stitched host span.
    pub fn effective_parent(&self, i: usize) -> Option<usize> {
        self.parent[i].or(self.stitched_parent[i])
    }

    /// Conversation and agent run of every span, inherited down the (stitched) tree.
    fn inherit(&mut self) {
        let n = self.spans.len();
        self.agent_run = vec![None; n];
        self.conversation = vec![None; n];
        let mut done = vec![false; n];
        let mut path = Vec::new();
        for start in 0..n {
            if done[start] {
                continue;
            }
            // Walk up to the first resolved ancestor (or the root), then resolve downwards.
            path.clear();
            path.push(start);
            let mut cur = self.effective_parent(start);
            while let Some(p) = cur {
                if done[p] || path.contains(&p) || path.len() > 10_000 {
                    break;
                }
                path.push(p);
                cur = self.effective_parent(p);
            }
            for &i in path.iter().rev() {
                let (mut run, mut conv) = match self.effective_parent(i) {
                    Some(p) if done[p] => (self.agent_run[p], self.conversation[p].clone()),
                    _ => (None, None),
                };
                let s = &self.spans[i];
                if s.is_agent_run() {
                    run = Some(i);
                }
                if let Some(c) = &s.conversation_id {
                    if conv.as_ref() != Some(c) {
                        conv = Some(c.clone());
                    }
                }
                self.agent_run[i] = run;
                self.conversation[i] = conv;
                done[i] = true;
            }
        }
    }

    /// The span `span` of trace `trace` (its earliest copy, should it be in the store twice
    /// with different start times).
    pub fn index_of(&self, trace: TraceId, span: SpanId) -> Option<usize> {
        let at = self
            .by_id
            .partition_point(|&(t, s, _)| (t, s) < (trace, span));
        self.by_id
            .get(at)
            .filter(|&&(t, s, _)| t == trace && s == span)
            .map(|&(_, _, i)| i)
    }

    /// The conversation a call belongs to: its anchor's, else any member's.
    pub fn call_conversation(&self, call: &Call) -> Option<&str> {
        self.call_conversation_id(call).map(span::Sym::as_str)
    }

    /// [`Model::call_conversation`] as the model's shared id.
    fn call_conversation_id(&self, call: &Call) -> Option<&span::Sym> {
        std::iter::once(call.anchor)
            .chain(call.members.iter().copied())
            .find_map(|m| self.conversation[m].as_ref())
    }

    /// The agent run a call belongs to.
    pub fn call_agent_run(&self, call: &Call) -> Option<usize> {
        std::iter::once(call.anchor)
            .chain(call.members.iter().copied())
            .find_map(|m| self.agent_run[m])
    }

    /// The agent run a call belongs to as a key: its `invoke_agent` span, else its anchor's trace
    /// (a trace with no agent span is judged as one run).
    pub fn call_run(&self, call: &Call) -> Run {
        self.call_agent_run(call)
            .map_or(Run::Trace(self.spans[call.anchor].trace_id), Run::Agent)
    }

    /// The agent run of a single span (same rule as [`Model::call_run`]).
    pub fn span_run(&self, i: usize) -> Run {
        self.agent_run[i].map_or(Run::Trace(self.spans[i].trace_id), Run::Agent)
    }

    /// Grouping key for "the same conversation": the conversation id, else the agent run, else
    /// the trace of the anchor.
    pub fn call_scope(&self, call: &Call) -> Scope {
        if let Some(c) = self.call_conversation_id(call) {
            return Scope::Conversation(c.clone());
        }
        if let Some(r) = self.call_agent_run(call) {
            return Scope::AgentRun(r);
        }
        Scope::Trace(self.spans[call.anchor].trace_id)
    }

    /// Grouping key of a single span (same rule as [`Model::call_scope`]).
    pub fn span_scope(&self, i: usize) -> Scope {
        if let Some(c) = &self.conversation[i] {
            return Scope::Conversation(c.clone());
        }
        if let Some(r) = self.agent_run[i] {
            return Scope::AgentRun(r);
        }
        Scope::Trace(self.spans[i].trace_id)
    }

    /// The latest model call (with tool definitions) in the same agent run (or trace when there is
    /// no agent run) that started before the call's anchor: latest by start, then span index,
    /// looked up in an index built on the first call ([`model_calls`]).
    pub fn preceding_model_call(&self, call: &Call) -> Option<usize> {
        let anchor = &self.spans[call.anchor];
        self.model_calls
            .get_or_init(|| model_calls::ModelCallIndex::build(self))
            .latest(self.call_agent_run(call), &anchor.trace_id, anchor.start_ns)
    }

    /// Span `root` and all its in-store descendants.
    pub fn subtree(&self, root: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(i) = stack.pop() {
            if out.len() > 1_000_000 {
                break;
            }
            out.push(i);
            stack.extend(self.children[i].iter().copied());
        }
        out
    }

    /// Tool calls only.
    pub fn tool_calls(&self) -> impl Iterator<Item = (usize, &Call)> {
        self.calls.iter().enumerate().filter(|(_, c)| c.is_tool())
    }
}

/// Every span of a model as (trace, span id, position), sorted.
type SpanIndex = Vec<(TraceId, SpanId, usize)>;

/// Each span's in-store parent (same trace, the earliest span with the parent's id), each
/// span's children in start order, and every span as (trace, span id, position) sorted, the
/// index [`Model::index_of`] searches. Resolved trace by trace: one sort of a trace's span ids,
/// not a store-wide map by (trace, span) (a window's 250,000 entries, each insert and lookup a
/// cache miss: the largest part of building the model, BENCHMARKS.md session 46). `traces` is in
/// trace order, so the traces' sorted runs make one sorted index.
fn link_parents(
    spans: &[SpanRow],
    traces: &BTreeMap<TraceId, Vec<usize>>,
) -> (Vec<Option<usize>>, Children, SpanIndex) {
    let mut parent = vec![None; spans.len()];
    // (parent, child), each trace's children in start order.
    let mut edges: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    let mut by_id: SpanIndex = Vec::with_capacity(spans.len());
    for (&trace, members) in traces {
        let from = by_id.len();
        by_id.extend(members.iter().map(|&i| (trace, spans[i].span_id, i)));
        // By id, then by position: the first entry of an id is its earliest span.
        let ids = &mut by_id[from..];
        ids.sort_unstable();
        for &i in members {
            let Some(p) = spans[i].parent_span_id else {
                continue;
            };
            let at = ids.partition_point(|&(_, id, _)| id < p);
            if let Some(&(_, id, pi)) = ids.get(at) {
                if id == p && pi != i {
                    parent[i] = Some(pi);
                    edges.push((pi, i));
                }
            }
        }
    }
    (parent, Children::from_edges(spans.len(), &edges), by_id)
}

/// Orders spans by (start time, trace id, span id), the order every rule reads them in; among equal
/// keys the load order (part, then position) is kept. Sorts small keys, then moves each row once
/// from its part to its place: rows are a few hundred bytes, and a comparison sort moving them
/// was a tenth of a 1M-span `check`. The keys are (start, load position), 16 bytes compared as
/// integers; the few runs of spans that start in the same nanosecond are then put in id order.
fn gather_by_start(mut parts: Vec<Vec<Option<SpanRow>>>) -> Vec<SpanRow> {
    let total = parts.iter().map(Vec::len).sum();
    // Load position -> (part, index in part); positions ascend in load order.
    let mut at: Vec<(usize, usize)> = Vec::with_capacity(total);
    let mut order: Vec<(i64, usize)> = Vec::with_capacity(total);
    let mut left = vec![0usize; parts.len()];
    for (p, part) in parts.iter().enumerate() {
        for (i, s) in part.iter().enumerate() {
            if let Some(s) = s {
                order.push((s.start_ns, at.len()));
                at.push((p, i));
                left[p] += 1;
            }
        }
    }
    order.sort_unstable();
    let ids = |pos: usize| {
        let (p, i) = at[pos];
        let s = parts[p][i]
            .as_ref()
            .expect("every position holds a row until it moves");
        (s.trace_id, s.span_id, pos)
    };
    // Runs of equal start times, found by stepping: they are short (most are one row), and a
    // binary search over the rest of the order per run cost 1.2% of a 10M-span `check`'s CPU
    // (perf, session 48).
    let mut from = 0;
    while from < order.len() {
        let start = order[from].0;
        let mut to = from + 1;
        while to < order.len() && order[to].0 == start {
            to += 1;
        }
        if to - from > 1 {
            order[from..to].sort_by_cached_key(|(_, pos)| ids(*pos));
        }
        from = to;
    }
    // A part is freed as soon as its last row has moved: rows arrive from the parts in start
    // order, so most parts empty early and the rows are not held twice at the peak.
    let mut out = Vec::with_capacity(order.len());
    for (_, pos) in order {
        let (p, i) = at[pos];
        if let Some(row) = parts[p][i].take() {
            out.push(row);
        }
        left[p] -= 1;
        if left[p] == 0 {
            parts[p] = Vec::new();
        }
    }
    out
}

/// An "agent run" grouping key: the `invoke_agent` span, else the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Run {
    Agent(usize),
    Trace(TraceId),
}

/// A "same conversation" grouping key (the conversation id shared with the model, not copied:
/// rules build one per call).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Conversation(span::Sym),
    AgentRun(usize),
    Trace(TraceId),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(start_ns: i64, trace: u8, span: u8, name: &str) -> SpanRow {
        SpanRow {
            trace_id: TraceId([trace; 16]),
            span_id: SpanId([span; 8]),
            start_ns,
            name: name.into(),
            ..SpanRow::default()
        }
    }

    fn key(s: &SpanRow) -> (i64, TraceId, SpanId, String) {
        (s.start_ns, s.trace_id, s.span_id, s.name.to_string())
    }

    #[test]
    fn parents_are_found_in_their_own_trace_and_a_twice_stored_id_means_its_earliest_copy() {
        let child = |start, trace, span, parent: u8, name| SpanRow {
            parent_span_id: Some(SpanId([parent; 8])),
            ..row(start, trace, span, name)
        };
        let model = Model::build(vec![
            row(10, 1, 1, "root"),
            // span 1 of trace 1 again, later (re-exported with another start)
            row(30, 1, 1, "root again"),
            child(20, 1, 2, 1, "child"),
            child(25, 1, 3, 1, "second child"),
            // same span ids in another trace: never linked across traces
            child(15, 2, 2, 9, "orphan"),
            child(16, 2, 4, 4, "own parent"),
            row(5, 2, 1, "other root"),
        ]);
        let at = |trace: u8, span: u8| model.index_of(TraceId([trace; 16]), SpanId([span; 8]));
        let name = |i: Option<usize>| i.map(|i| model.spans[i].name.to_string());
        assert_eq!(name(at(1, 1)), Some("root".into()));
        assert_eq!(name(at(2, 1)), Some("other root".into()));
        assert_eq!(at(3, 1), None);
        let parent = |trace, span| name(model.parent[at(trace, span).unwrap()]);
        assert_eq!(parent(1, 2), Some("root".into()));
        assert_eq!(parent(1, 3), Some("root".into()));
        assert_eq!(parent(2, 2), None);
        assert_eq!(parent(2, 4), None);
        let root = at(1, 1).unwrap();
        let kids: Vec<_> = model.children[root]
            .iter()
            .map(|&c| name(Some(c)))
            .collect();
        assert_eq!(kids, [Some("child".into()), Some("second child".into())]);
    }

    #[test]
    fn gather_by_start_matches_a_stable_sort() {
        // A deterministic shuffle with ties (same key, different payload) and several cycles.
        let spans: Vec<SpanRow> = (0..200u32)
            .map(|i| {
                let k = (i * 7919) % 97;
                row(
                    i64::from(k / 3),
                    (k % 5) as u8,
                    (k % 7) as u8,
                    &format!("row{i}"),
                )
            })
            .collect();
        let mut expected = spans.clone();
        expected.sort_by(|a, b| {
            (a.start_ns, a.trace_id, a.span_id).cmp(&(b.start_ns, b.trace_id, b.span_id))
        });
        // Split in three parts as the loader does per partition.
        let parts: Vec<Vec<Option<SpanRow>>> = spans
            .chunks(70)
            .map(|c| c.iter().cloned().map(Some).collect())
            .collect();
        let spans = gather_by_start(parts);
        let got: Vec<_> = spans.iter().map(key).collect();
        let want: Vec<_> = expected.iter().map(key).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn sorted_input_is_left_alone_and_duplicates_are_kept_once() {
        let spans = vec![
            row(3, 1, 1, "c"),
            row(1, 1, 2, "a"),
            row(1, 1, 2, "a-again"),
        ];
        let model = Model::build(spans);
        let names: Vec<&str> = model.spans.iter().map(|s| &*s.name).collect();
        assert_eq!(names, ["a", "c"]);
    }
}
