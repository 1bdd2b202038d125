//! The model calls that show the model its tools, per agent run and per trace, in start order:
//! what [`Model::preceding_model_call`] looks a tool call's catalog up in.
//!
//! Why an index: the lookup used to walk the call's whole agent run (or trace) for every tool
//! call, so a run of N spans with M tool calls cost N × M steps; an agent that ran for hours in
//! one `invoke_agent` span made that quadratic in the run's length. Built once per model, on the
//! first lookup, each question is a binary search.

use std::collections::HashMap;

use super::{Model, TraceId};

/// Model calls with tool definitions, `(start_ns, span)` sorted, by the span whose in-store
/// subtree holds them (every ancestor, and the span itself) and by trace.
#[derive(Debug, Default)]
pub(crate) struct ModelCallIndex {
    by_root: HashMap<usize, Vec<(i64, usize)>, foldhash::fast::RandomState>,
    by_trace: HashMap<TraceId, Vec<(i64, usize)>, foldhash::fast::RandomState>,
}

impl ModelCallIndex {
    pub(crate) fn build(model: &Model) -> Self {
        let mut index = Self::default();
        // Which model call's walk last passed each span: a parent cycle (malformed input) is
        // walked once around, not until a step limit.
        let mut walked_by: Vec<usize> = Vec::new();
        for &i in &model.model_call_spans {
            let s = &model.spans[i];
            if s.tool_definitions.is_none() {
                continue;
            }
            if walked_by.is_empty() {
                walked_by = vec![usize::MAX; model.spans.len()];
            }
            let entry = (s.start_ns, i);
            index.by_trace.entry(s.trace_id).or_default().push(entry);
            // `Model::subtree(r)` holds i exactly when r is i or one of its in-store ancestors.
            let mut at = Some(i);
            while let Some(a) = at.filter(|&a| walked_by[a] != i) {
                walked_by[a] = i;
                index.by_root.entry(a).or_default().push(entry);
                at = model.parent[a];
            }
        }
        for list in index
            .by_root
            .values_mut()
            .chain(index.by_trace.values_mut())
        {
            list.sort_unstable();
        }
        index
    }

    /// The latest model call (by start, then span index) in `root`'s subtree (`None`: in
    /// `trace`) that started at or before `start_ns`.
    pub(crate) fn latest(
        &self,
        root: Option<usize>,
        trace: &TraceId,
        start_ns: i64,
    ) -> Option<usize> {
        let list = match root {
            Some(r) => self.by_root.get(&r),
            None => self.by_trace.get(trace),
        }?;
        let n = list.partition_point(|&(s, _)| s <= start_ns);
        n.checked_sub(1).map(|k| list[k].1)
    }
}

#[cfg(test)]
mod tests {
    //! The index against the walk it replaced, over every sample and rule fixture, is in
    //! `tests/preceding_model_call.rs` (it loads files, which this layer must not).
    use super::*;
    use crate::model::{SpanId, SpanRow};

    #[test]
    fn a_parent_cycle_is_walked_once() {
        // 0 -> 1 -> 2 -> 1: span 0's walk enters a cycle that does not hold it.
        let span = |n: u8, parent: u8| SpanRow {
            trace_id: TraceId([7; 16]),
            span_id: SpanId([n; 8]),
            parent_span_id: Some(SpanId([parent; 8])),
            start_ns: i64::from(n),
            name: "chat m".into(),
            operation_name: Some("chat".into()),
            tool_definitions: Some(Vec::new().into()),
            ..SpanRow::default()
        };
        let model = Model::build(vec![span(0, 1), span(1, 2), span(2, 1)]);
        let index = ModelCallIndex::build(&model);
        let at = |s: u8| model.spans.iter().position(|r| r.span_id == SpanId([s; 8]));
        // Every span reaches 1 and 2; each list holds each model call once.
        for root in [at(1), at(2)] {
            let list = &index.by_root[&root.unwrap()];
            let mut distinct = list.clone();
            distinct.dedup();
            assert_eq!(list, &distinct);
        }
        assert_eq!(index.latest(at(1), &TraceId([7; 16]), 10), at(2));
        assert_eq!(index.latest(at(0), &TraceId([7; 16]), 10), at(0));
        assert_eq!(index.latest(None, &TraceId([7; 16]), 1), at(1));
        assert_eq!(index.latest(None, &TraceId([7; 16]), -1), None);
    }
}
