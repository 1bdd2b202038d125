//! `check --format json`: the stable contract of DESIGN.md (`findings` + `coverage`).

use serde::Serialize;

use crate::rules::{Coverage, Finding, Report};

#[derive(Serialize)]
struct JsonReport<'a> {
    findings: &'a [Finding],
    coverage: &'a [Coverage],
}

/// Pretty-printed JSON, newline-terminated.
pub fn render_json(report: &Report) -> String {
    let doc = JsonReport {
        findings: &report.findings,
        coverage: &report.coverage,
    };
    // Serialising plain structs of strings and numbers cannot fail.
    let mut s =
        serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    s.push('\n');
    s
}
