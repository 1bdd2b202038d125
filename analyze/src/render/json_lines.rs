//! `check --follow`: JSON lines, one object per line, as soon as a batch is checked
//! (docs/json-output.md, "JSON lines"). A finding line is a finding object exactly as in
//! `check --format json`'s `findings[]`, so a consumer of one reads the other; after the
//! findings of a batch comes one `{"batch": …}` line saying what the batch checked, so silence
//! between findings is never mistaken for health.

use serde::Serialize;

use crate::rules::{Coverage, Finding};
use crate::store::Scanned;

/// One finding as one JSON line, newline-terminated.
pub fn render_finding_line(f: &Finding) -> String {
    line(f)
}

#[derive(Serialize)]
struct BatchLine<'a, S: Serialize> {
    batch: Batch<'a, S>,
}

#[derive(Serialize)]
struct Batch<'a, S: Serialize> {
    /// When the batch was checked (RFC 3339).
    at: &'a str,
    #[serde(flatten)]
    summary: &'a S,
    scanned: &'a Scanned,
    coverage: &'a [Coverage],
}

/// The `{"batch": {…}}` line closing a checked batch: its time, the increment's summary, what
/// the rules' scan read and the rules' coverage.
pub fn render_batch_line(
    at: &str,
    summary: &impl Serialize,
    scanned: &Scanned,
    coverage: &[Coverage],
) -> String {
    line(&BatchLine {
        batch: Batch {
            at,
            summary,
            scanned,
            coverage,
        },
    })
}

fn line(v: &impl Serialize) -> String {
    // Serialising plain structs of strings and numbers cannot fail.
    let mut s = serde_json::to_string(v).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    s.push('\n');
    s
}
