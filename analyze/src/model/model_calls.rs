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
        for (i, s) in model.spans.iter().enumerate() {
            if !(s.is_model_call() && s.tool_definitions.is_some()) {
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
    use std::path::Path;

    use super::*;
    use crate::model::{Call, SpanId, SpanRow};

    /// The definition the index replaces: walk the call's run (or trace) and take the latest.
    fn walked(model: &Model, call: &Call) -> Option<usize> {
        let anchor = &model.spans[call.anchor];
        let candidates: Vec<usize> = match model.call_agent_run(call) {
            Some(r) => model.subtree(r),
            None => model
                .traces
                .get(&anchor.trace_id)
                .cloned()
                .unwrap_or_default(),
        };
        candidates
            .into_iter()
            .filter(|&i| {
                let s = &model.spans[i];
                s.is_model_call() && s.tool_definitions.is_some() && s.start_ns <= anchor.start_ns
            })
            .max_by_key(|&i| (model.spans[i].start_ns, i))
    }

    fn model_of(path: &Path) -> Model {
        let body = std::fs::read(path).expect("fixture");
        let req = schemas::decode_json(&body).expect("otlp json");
        let ctx = schemas::IngestContext {
            received_at_unix_nano: 0,
            source: "file:test".into(),
            redact_content: false,
        };
        let converted = schemas::convert_request(&req, &ctx);
        Model::build(crate::load::load_batches(&[converted.batch]).expect("load"))
    }

    #[test]
    fn the_index_answers_as_the_walk_did_on_every_sample_and_rule_fixture() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files: Vec<_> = ["../samples/traces", "tests/fixtures/rules"]
            .iter()
            .flat_map(|d| std::fs::read_dir(root.join(d)).expect("fixture dir"))
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        let (mut calls, mut found) = (0, 0);
        for path in &files {
            let model = model_of(path);
            for call in &model.calls {
                let want = walked(&model, call);
                assert_eq!(
                    model.preceding_model_call(call),
                    want,
                    "{}: call at span {}",
                    path.display(),
                    call.anchor
                );
                calls += 1;
                found += usize::from(want.is_some());
            }
        }
        // The comparison means something: many calls, many of them with a catalog shown.
        assert!(files.len() > 20, "{files:?}");
        assert!(
            calls > 100 && found > 50,
            "{calls} calls, {found} with a model call"
        );
    }

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
            tool_definitions: Some(Vec::new()),
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
