//! `tripline rules` (the registry as a table) and `tripline explain CODE` (one rule's docs).

use super::Style;
use crate::rules::{self, Rule, RunBy};

/// `tripline rules`: code, name, severity, one line of what it detects, for every registered
/// rule in code order (a rule another command runs says which).
pub fn render_rule_list(style: &Style) -> String {
    let mut t = style.table(&["code", "name", "severity", "detects"]);
    for r in rules::all() {
        let mut detects = r.summary().to_string();
        if r.run_by() == RunBy::Diff {
            detects.push_str(" (run by `tripline diff`)");
        }
        t.add_row(vec![
            r.code().to_string(),
            r.name().to_string(),
            r.severity().to_string(),
            detects,
        ]);
    }
    format!("{t}\n")
}

/// The docs of one rule as `tripline explain` prints them.
pub fn explain_text(rule: &dyn Rule) -> String {
    let d = rule.docs();
    let mut text = format!(
        "{} {} ({})\n\nWhat it detects\n  {}\n\nWhy it matters\n  {}\n\nExample\n  {}\n\nHow to fix\n  {}\n",
        rule.code(),
        rule.name(),
        rule.severity(),
        d.what,
        d.why,
        d.example,
        d.fix
    );
    if rule.run_by() == RunBy::Diff {
        text.push_str("\nRun it with\n  tripline diff BASELINE_DATA_DIR CANDIDATE_DATA_DIR\n");
    }
    text
}
