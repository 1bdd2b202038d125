//! Rendering a check report: a terminal table, the JSON contract, SARIF 2.1.0 and Markdown.
//!
//! Every renderer returns a `String` so the CLI writes it in one go (and treats a closed pipe as
//! success), and so tests snapshot exactly what the user sees.

mod json;
mod markdown;
mod sarif;
mod table;
mod verify;

pub use json::{render_json, render_json_with};
pub use markdown::render_markdown;
pub use sarif::{render_sarif, render_sarif_with};
pub use table::{render_rule_list, render_table};
pub use verify::{render_verify, VerifyFormat};

use std::collections::BTreeMap;

use crate::rules::{Finding, Report};
use crate::store::Scanned;

/// Output formats of `tripline check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Sarif,
    Markdown,
}

/// Renders `report` in `format`, with what the store scan read (`scanned`) in the document for
/// JSON, SARIF and Markdown; the table view leaves it to the CLI's stderr summary.
pub fn render(report: &Report, scanned: Option<&Scanned>, format: Format) -> String {
    match format {
        Format::Table => render_table(report),
        Format::Json => render_json_with(report, scanned),
        Format::Sarif => render_sarif_with(report, scanned),
        Format::Markdown => {
            let mut out = render_markdown(report);
            if let Some(s) = scanned {
                out.push_str(&format!("\n{}.\n", capitalize(&s.summary())));
            }
            out
        }
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Findings grouped by rule code, in report order (worst severity first).
pub(crate) fn by_rule(report: &Report) -> Vec<(&'static str, Vec<&Finding>)> {
    let mut order: Vec<&'static str> = Vec::new();
    let mut groups: BTreeMap<&'static str, Vec<&Finding>> = BTreeMap::new();
    for f in &report.findings {
        if !groups.contains_key(f.rule) {
            order.push(f.rule);
        }
        groups.entry(f.rule).or_default().push(f);
    }
    order
        .into_iter()
        .map(|r| (r, groups.remove(r).unwrap_or_default()))
        .collect()
}
