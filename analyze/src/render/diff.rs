//! `tripline diff`: TL011's findings as a table (one row per drifted tool, then what each run
//! held) or as the `check` JSON contract with one `scanned` object per side.

use std::collections::BTreeSet;

use comfy_table::{ColumnConstraint, Width};

use super::{Format, Style};
use crate::rules::tl011_catalog_drift::{join, DiffReport};
use crate::store::Scanned;

/// The terminal view: one row per drifted tool, then what each side held.
fn table(diff: &DiffReport, style: &Style) -> String {
    let table = |header: &[&str]| style.table(header);
    let mut out = String::new();
    let findings = &diff.report.findings;
    if findings.is_empty() {
        out.push_str("no catalog drift\n\n");
    } else {
        let mut t = table(&["rule", "change", "tool", "message", "evidence trace / span"]);
        // Ids are never wrapped: they are what the user copies into `tripline trace`.
        if let Some(c) = t.column_mut(4) {
            c.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(34)));
        }
        for (f, k) in findings.iter().zip(&diff.kinds) {
            t.add_row(vec![
                format!("{}\n{}", f.rule, f.name),
                k.as_str().to_string(),
                f.tool.clone().unwrap_or_default(),
                f.message.clone(),
                format!("{}\n{}", f.trace_id, f.span_id),
            ]);
        }
        out.push_str(&format!(
            "{} catalog-drift finding(s)\n{t}\n\n",
            findings.len()
        ));
    }
    let mut c = table(&[
        "run",
        "spans",
        "model calls",
        "with tool definitions",
        "tools",
        "decision scopes",
    ]);
    for (name, cat) in [("baseline", &diff.baseline), ("candidate", &diff.candidate)] {
        let scopes: BTreeSet<&str> = cat.tools.keys().map(|(s, _)| s.as_str()).collect();
        c.add_row(vec![
            name.to_string(),
            cat.spans.to_string(),
            cat.model_calls.to_string(),
            cat.with_definitions.to_string(),
            cat.tool_names().len().to_string(),
            style.cell(&join(&scopes)),
        ]);
    }
    out.push_str(&format!("catalogs\n{c}\n"));
    out
}

/// `--format json`: the `check` JSON contract (`findings` + `coverage`), plus `scanned` with
/// one object per side when both runs were read from stores.
fn json(diff: &DiffReport) -> String {
    #[derive(serde::Serialize)]
    struct Sides<'a> {
        baseline: &'a Scanned,
        candidate: &'a Scanned,
    }
    let (Some(b), Some(c)) = (&diff.baseline.scanned, &diff.candidate.scanned) else {
        return super::render_json(&diff.report);
    };
    let mut v: serde_json::Value =
        serde_json::from_str(&super::render_json(&diff.report)).unwrap_or_default();
    if let Some(obj) = v.as_object_mut() {
        obj.insert(
            "scanned".into(),
            serde_json::to_value(Sides {
                baseline: b,
                candidate: c,
            })
            .unwrap_or_default(),
        );
    }
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

/// Renders `diff` as a table or JSON.
pub fn render_diff(diff: &DiffReport, format: Format, style: &Style) -> String {
    match format {
        Format::Json => json(diff),
        Format::Table | Format::Sarif | Format::Markdown | Format::Csv => table(diff, style),
    }
}
