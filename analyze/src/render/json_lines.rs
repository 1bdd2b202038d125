//! `check --follow`: one finding per line, as soon as it is found (docs/json-output.md, "JSON
//! lines"). Each line is a finding object exactly as in `check --format json`'s `findings[]`, so
//! a consumer of one reads the other.

use crate::rules::Finding;

/// One finding as one JSON line, newline-terminated.
pub fn render_finding_line(f: &Finding) -> String {
    // Serialising plain structs of strings and numbers cannot fail.
    let mut s = serde_json::to_string(f).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    s.push('\n');
    s
}
