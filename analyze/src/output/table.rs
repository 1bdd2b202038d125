//! The terminal view: findings grouped by rule, then coverage; and the rule list.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ColumnConstraint, ContentArrangement, Table, Width};

use super::by_rule;
use crate::rules::{find, Report, RULES};

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(140)
        .set_header(header.to_vec());
    t
}

/// Findings table (one row per rule, with a count and the first finding as example) followed by
/// the coverage table.
pub fn render_table(report: &Report) -> String {
    let mut out = String::new();
    if report.findings.is_empty() {
        out.push_str("no findings\n\n");
    } else {
        let mut t = table(&[
            "rule",
            "severity",
            "count",
            "example trace / span",
            "tool",
            "message",
        ]);
        // Ids are never wrapped: they are what the user copies into `tripline trace`.
        if let Some(c) = t.column_mut(3) {
            c.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(34)));
        }
        for (rule, findings) in by_rule(report) {
            let Some(f) = findings.first() else { continue };
            t.add_row(vec![
                format!("{rule}\n{}", f.name),
                f.severity.to_string(),
                findings.len().to_string(),
                format!("{}\n{}", f.trace_id, f.span_id),
                f.tool.clone().unwrap_or_default(),
                f.message.clone(),
            ]);
        }
        out.push_str(&format!("{} finding(s)\n{t}\n\n", report.findings.len()));
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

/// `tripline rules`: code, name, severity, one line of what it detects.
pub fn render_rule_list() -> String {
    let mut t = table(&["code", "name", "severity", "detects"]);
    for r in RULES {
        let what = r.docs().what;
        let cut = [what.find(": "), what.find(". ")]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(what.len());
        let first = &what[..cut];
        t.add_row(vec![
            r.code().to_string(),
            r.name().to_string(),
            r.severity().to_string(),
            first.trim_end_matches('.').to_string(),
        ]);
    }
    t.add_row(vec![
        crate::diff::CODE.to_string(),
        crate::diff::NAME.to_string(),
        crate::diff::SEVERITY.to_string(),
        "Tool catalog changed between two runs (run by `tripline diff`)".to_string(),
    ]);
    format!("{t}\n")
}
