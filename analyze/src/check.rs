//! `check` as a library call: load (store or batches) -> model -> rules -> report.
//!
//! Kept apart from the CLI so tests, the benchmark and the demo run exactly what the command runs.

use std::path::Path;

use arrow::record_batch::RecordBatch;

use crate::error::LoadError;
use crate::load::{load_batches, scan_store, Projection, ScanFilter};
use crate::model::{Model, SpanRow};
use crate::policy::Policy;
use crate::rules::{run, Context, Report, Rule, RULES};
use crate::store::Scanned;

/// The columns `rules` need on top of the base projection.
pub fn projection_for(rules: &[&dyn Rule]) -> Projection {
    rules
        .iter()
        .fold(Projection::base(), |p, r| p.with(r.columns()))
}

/// Runs `rules` over already-loaded spans.
pub fn check_spans(spans: Vec<SpanRow>, policy: &Policy, rules: &[&dyn Rule]) -> (Model, Report) {
    check_model(Model::build(spans), policy, rules)
}

/// Runs `rules` over a built model.
fn check_model(model: Model, policy: &Policy, rules: &[&dyn Rule]) -> (Model, Report) {
    let report = {
        let ctx = Context::new(&model, policy);
        run(rules, &ctx)
    };
    (model, report)
}

/// Runs every rule over record batches (tests and fixtures).
pub fn check_batches(batches: &[RecordBatch], policy: &Policy) -> Result<Report, LoadError> {
    let spans = load_batches(batches)?;
    Ok(check_spans(spans, policy, RULES).1)
}

/// Runs `rules` over the store in `data_dir`; also says what was scanned. A scan that reads no
/// span is an error ([`LoadError::NoSpans`]), never a clean report.
pub async fn check_store(
    data_dir: &Path,
    filter: &ScanFilter,
    policy: &Policy,
    rules: &[&dyn Rule],
) -> Result<(Model, Report, Scanned), LoadError> {
    let scan = scan_store(data_dir, filter, &projection_for(rules)).await?;
    let (model, report) = check_model(Model::from_parts(scan.parts), policy, rules);
    Ok((model, report, scan.scanned))
}
