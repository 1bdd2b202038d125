//! `check` as a library call: load (store or batches) -> model -> rules -> report.
//!
//! Kept apart from the CLI so tests, the benchmark and the demo run exactly what the command runs.

use std::path::Path;

use arrow::record_batch::RecordBatch;

use crate::error::LoadError;
use crate::load::{load_batches, load_store_parts, Projection, ScanFilter};
use crate::model::{Model, SpanRow};
use crate::policy::Policy;
use crate::rules::{run, Context, Report, Rule, RULES};

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

/// Runs `rules` over the store in `data_dir`.
pub async fn check_store(
    data_dir: &Path,
    filter: &ScanFilter,
    policy: &Policy,
    rules: &[&dyn Rule],
) -> Result<(Model, Report), LoadError> {
    let parts = load_store_parts(data_dir, filter, &projection_for(rules)).await?;
    Ok(check_model(Model::from_parts(parts), policy, rules))
}
