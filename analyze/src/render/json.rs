//! `check --format json`: the stable contract (`findings` + `coverage`, plus `scanned` when the
//! report comes from a store scan: files, spans, WAL spans and unreadable files).

use serde::Serialize;

use crate::rules::{Coverage, Finding, Report};
use crate::store::Scanned;

#[derive(Serialize)]
struct JsonReport<'a> {
    findings: &'a [Finding],
    coverage: &'a [Coverage],
    /// What the store scan read; absent for reports over in-memory batches.
    #[serde(skip_serializing_if = "Option::is_none")]
    scanned: Option<&'a Scanned>,
    /// `check --since last`: what the increment checked (docs/incremental.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    incremental: Option<serde_json::Value>,
}

/// Pretty-printed JSON, newline-terminated.
pub fn render_json(report: &Report) -> String {
    render_json_with(report, None)
}

/// [`render_json`] plus the `scanned` object of a store scan.
pub fn render_json_with(report: &Report, scanned: Option<&Scanned>) -> String {
    render_doc(report, scanned, None)
}

/// `check --since last --format json`: [`render_json_with`] plus the `incremental` object
/// (`scanned` is absent when nothing new was checked).
pub fn render_json_incremental(
    report: &Report,
    scanned: Option<&Scanned>,
    incremental: &impl Serialize,
) -> String {
    render_doc(report, scanned, serde_json::to_value(incremental).ok())
}

fn render_doc(
    report: &Report,
    scanned: Option<&Scanned>,
    incremental: Option<serde_json::Value>,
) -> String {
    let doc = JsonReport {
        findings: &report.findings,
        coverage: &report.coverage,
        scanned,
        incremental,
    };
    // Serialising plain structs of strings and numbers cannot fail.
    let mut s =
        serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    s.push('\n');
    s
}
