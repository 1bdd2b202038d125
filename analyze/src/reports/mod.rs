//! `tripline report tools|conversations|guardrails|skills`: aggregate views over the trace model.
//!
//! Why separate from the rules: rules answer "what is wrong", reports answer "what happened" (how
//! often each tool ran and failed, how long it took, who approved what). Both read the same
//! [`Model`], so a report counts logical calls (host + MCP client + MCP server spans of one call
//! once) exactly like the rules do. Every report carries `notes` that say what could not be
//! observed, so an empty column is never mistaken for zero.

pub mod conversations;
pub mod guardrails;
pub mod skills;
pub mod tools;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};
use serde::Serialize;

use crate::model::Model;
use crate::store::Scanned;

/// Which report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportKind {
    /// Per tool and MCP server: calls, errors, latency, structured results, approvals.
    Tools,
    /// Per conversation: traces, agent runs, model and tool calls, errors, duration.
    Conversations,
    /// Guardrail decisions by guardrail and skill.
    Guardrails,
    /// Per skill: invocations, tool and model calls, errors, guardrail decisions.
    Skills,
}

/// Output format of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Table,
    Json,
}

/// Rendering a report failed.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Serialising to JSON failed (not expected for these plain structs).
    #[error("cannot serialise the {kind} report as JSON: {source}; try --format table")]
    Json {
        kind: &'static str,
        #[source]
        source: serde_json::Error,
    },
}

/// Builds and renders one report.
pub fn render(
    kind: ReportKind,
    model: &Model,
    format: ReportFormat,
) -> Result<String, ReportError> {
    render_scanned(kind, model, format, None)
}

/// [`render`] with what the store scan read: a `scanned` object in JSON (the table view leaves
/// it to the CLI's stderr summary).
pub fn render_scanned(
    kind: ReportKind,
    model: &Model,
    format: ReportFormat,
    scanned: Option<&Scanned>,
) -> Result<String, ReportError> {
    let out = Output { format, scanned };
    match kind {
        ReportKind::Tools => out.render(&tools::build(model), "tools", tools::table),
        ReportKind::Conversations => out.render(
            &conversations::build(model),
            "conversations",
            conversations::table,
        ),
        ReportKind::Guardrails => {
            out.render(&guardrails::build(model), "guardrails", guardrails::table)
        }
        ReportKind::Skills => out.render(&skills::build(model), "skills", skills::table),
    }
}

/// A report: rows plus notes on what could not be observed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Report<R> {
    pub rows: Vec<R>,
    pub notes: Vec<String>,
}

/// How a report is written out.
struct Output<'a> {
    format: ReportFormat,
    scanned: Option<&'a Scanned>,
}

/// A report's JSON: its rows and notes, plus `scanned` after a store scan.
#[derive(Serialize)]
struct JsonDoc<'a, R: Serialize> {
    #[serde(flatten)]
    report: &'a Report<R>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scanned: Option<&'a Scanned>,
}

impl Output<'_> {
    fn render<R: Serialize>(
        &self,
        report: &Report<R>,
        kind: &'static str,
        table: fn(&Report<R>) -> String,
    ) -> Result<String, ReportError> {
        match self.format {
            ReportFormat::Table => Ok(table(report)),
            ReportFormat::Json => serde_json::to_string_pretty(&JsonDoc {
                report,
                scanned: self.scanned,
            })
            .map(|s| s + "\n")
            .map_err(|source| ReportError::Json { kind, source }),
        }
    }
}

/// A comfy-table with the analyzer's preset.
pub(crate) fn new_table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(160)
        .set_header(header.to_vec());
    t
}

/// The table, an empty-state line when there are no rows, then the notes.
pub(crate) fn finish(table: Table, rows: usize, empty: &str, notes: &[String]) -> String {
    let mut out = if rows == 0 {
        format!("{empty}\n")
    } else {
        format!("{table}\n")
    };
    for n in notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

/// Nearest-rank percentile (`p` in 0..=100) of sorted values; None when empty.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

/// Nanoseconds as milliseconds, rounded to 0.001 ms.
pub fn ms(ns: i64) -> f64 {
    (ns as f64 / 1_000.0).round() / 1_000.0
}

/// `12.5` -> "12.5", None -> "-".
pub(crate) fn opt_ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x}"))
}

/// The skill a span runs under: its own `skill.name`, else the nearest ancestor's (following
/// stitched edges).
pub fn skill_of(model: &Model, span: usize) -> Option<&str> {
    let mut cur = Some(span);
    let mut steps = 0;
    while let Some(i) = cur {
        if let Some(s) = model.spans[i].skill_name.as_deref() {
            return Some(s);
        }
        steps += 1;
        if steps > 10_000 {
            break;
        }
        cur = model.effective_parent(i);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), Some(5.0));
        assert_eq!(percentile(&v, 95.0), Some(10.0));
        assert_eq!(percentile(&v, 99.0), Some(10.0));
        assert_eq!(percentile(&[7.0], 50.0), Some(7.0));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&v, 0.0), Some(1.0));
    }

    #[test]
    fn ms_rounds_to_microseconds() {
        assert_eq!(ms(12_345_678), 12.346);
        assert_eq!(ms(0), 0.0);
    }
}
