//! `check --format markdown`: a CI job summary (GitHub `$GITHUB_STEP_SUMMARY` and friends).

use std::fmt::Write;

use super::by_rule;
use crate::rules::{find, Report};

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Markdown with a findings table grouped by rule and the coverage table.
pub fn render_markdown(report: &Report) -> String {
    let mut out = String::new();
    let n = report.findings.len();
    let _ = writeln!(out, "## tripline check\n");
    if n == 0 {
        let _ = writeln!(out, "No findings.\n");
    } else {
        let _ = writeln!(out, "{n} finding(s).\n");
        let _ = writeln!(
            out,
            "| rule | name | severity | count | example trace / span | tool | message |"
        );
        let _ = writeln!(out, "|---|---|---|---:|---|---|---|");
        for (rule, findings) in by_rule(report) {
            let Some(f) = findings.first() else { continue };
            let _ = writeln!(
                out,
                "| {rule} | {} | {} | {} | `{}` / `{}` | {} | {} |",
                f.name,
                f.severity,
                findings.len(),
                f.trace_id,
                f.span_id,
                cell(f.tool.as_deref().unwrap_or("")),
                cell(&f.message)
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "### Coverage\n");
    let _ = writeln!(out, "| rule | name | examined | not observable | reasons |");
    let _ = writeln!(out, "|---|---|---:|---:|---|");
    for c in &report.coverage {
        let name = find(c.rule).map_or("", |r| r.name());
        let _ = writeln!(
            out,
            "| {} | {name} | {} | {} | {} |",
            c.rule,
            c.examined,
            c.not_observable,
            cell(&c.reasons.join("; "))
        );
    }
    out
}
