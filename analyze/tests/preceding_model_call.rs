//! `Model::preceding_model_call` (an index since session 17) against the walk it replaced, on
//! every sample trace and rule fixture, through the real path (OTLP/JSON -> canonical batch ->
//! model).

use std::path::Path;

use analyze::load::load_batches;
use analyze::model::{Call, Model};
use schemas::IngestContext;

/// The definition the index replaces: walk the call's agent run (or trace) and take the latest
/// model call with tool definitions that started at or before the call.
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
    let ctx = IngestContext {
        received_at_unix_nano: 0,
        source: "file:test".into(),
        redact_content: false,
    };
    let converted = schemas::convert_request(&req, &ctx);
    Model::build(load_batches(&[converted.batch]).expect("load"))
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
