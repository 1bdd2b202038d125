//! `check`'s terminal view: findings grouped by rule, then coverage.

use comfy_table::{Cell, ColumnConstraint, Width};

use super::{by_rule, Style};
use crate::rules::{find, Report};

/// Findings table (one row per rule, with a count and the first finding as example) followed by
/// the coverage table.
pub fn render_table(report: &Report, style: &Style) -> String {
    render(report, style, true)
}

/// [`render_table`], with the coverage table only when `coverage` (not with `--quiet`).
pub(super) fn render(report: &Report, style: &Style, coverage: bool) -> String {
    let table = |h: &[&str]| style.table(h);
    let mut out = String::new();
    if report.findings.is_empty() {
        out.push_str("no findings\n\n");
    } else {
        let mut t = table(&[
            "rule",
            "severity",
            "count",
            "tool",
            "finding (first of the rule)",
        ]);
        // Ids are never wrapped: they are what the user copies into `tripline trace`.
        if let Some(c) = t.column_mut(4) {
            c.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(40)));
        }
        for (rule, findings) in by_rule(report) {
            let Some(f) = findings.first() else { continue };
            t.add_row(vec![
                Cell::new(rule),
                style.severity(f.severity),
                Cell::new(findings.len()),
                Cell::new(style.cell(f.tool.as_deref().unwrap_or_default())),
                Cell::new(format!(
                    "{}: {}\ntrace {}\nspan  {}",
                    f.name, f.message, f.trace_id, f.span_id
                )),
            ]);
        }
        out.push_str(&format!("{} finding(s)\n{t}\n\n", report.findings.len()));
    }
    if !coverage {
        return out;
    }
    let mut c = table(&["rule", "examined", "not observable", "reasons"]);
    for cov in &report.coverage {
        let name = find(cov.rule).map_or("", |r| r.name());
        c.add_row(vec![
            format!("{}\n{name}", cov.rule),
            cov.examined.to_string(),
            cov.not_observable.to_string(),
            cov.reasons.join("\n"),
        ]);
    }
    out.push_str(&format!("coverage\n{c}\n"));
    out
}
