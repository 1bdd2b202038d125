//! `check`'s terminal view: findings grouped by rule, then coverage.
//!
//! The table shows one row per rule: its count and its first finding in report order. That is
//! all it needs, so [`RuleTally`] takes the findings one at a time (a windowed check's, merged
//! from memory and disk) and holds one finding per rule: the view of a store with millions of
//! findings costs what the view of a few does, with the same bytes.

use comfy_table::{Cell, ColumnConstraint, Width};

use super::Style;
use crate::rules::{find, Coverage, Finding, Report};

/// Findings table (one row per rule, with a count and the first finding as example) followed by
/// the coverage table.
pub fn render_table(report: &Report, style: &Style) -> String {
    render(report, style, true)
}

/// [`render_table`], with the coverage table only when `coverage` (not with `--quiet`).
pub(super) fn render(report: &Report, style: &Style, coverage: bool) -> String {
    let mut tally = RuleTally::default();
    for f in &report.findings {
        tally.add(f);
    }
    tally.render(&report.coverage, style, coverage)
}

/// Per rule, in order of first appearance (report order: worst severity first), how many
/// findings it has and the first of them.
#[derive(Debug, Default)]
pub struct RuleTally {
    rules: Vec<(u64, Finding)>,
    total: u64,
}

impl RuleTally {
    /// Counts `f` (findings come in report order); only a rule's first is kept.
    pub fn add(&mut self, f: &Finding) {
        self.total += 1;
        match self
            .rules
            .iter_mut()
            .find(|(_, first)| first.rule == f.rule)
        {
            Some((n, _)) => *n += 1,
            None => self.rules.push((1, f.clone())),
        }
    }

    /// The table of the findings counted, then (when `with_coverage`) the coverage table.
    pub fn render(&self, coverage: &[Coverage], style: &Style, with_coverage: bool) -> String {
        let table = |h: &[&str]| style.table(h);
        let mut out = String::new();
        if self.total == 0 {
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
            for (n, f) in &self.rules {
                t.add_row(vec![
                    Cell::new(f.rule),
                    style.severity(f.severity),
                    Cell::new(n),
                    Cell::new(style.cell(f.tool.as_deref().unwrap_or_default())),
                    Cell::new(format!(
                        "{}: {}\ntrace {}\nspan  {}",
                        f.name, f.message, f.trace_id, f.span_id
                    )),
                ]);
            }
            out.push_str(&format!("{} finding(s)\n{t}\n\n", self.total));
        }
        if !with_coverage {
            return out;
        }
        let mut c = table(&["rule", "examined", "not observable", "reasons"]);
        for cov in coverage {
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
}
