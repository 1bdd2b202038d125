//! `tripline report KIND`: each report's table, or its JSON (rows and notes, plus `scanned`).

use comfy_table::Table;
use serde::Serialize;

use super::{Format, Style};
use crate::model::Model;
use crate::reports::conversations::{self, ConversationRow};
use crate::reports::guardrails::{self, GuardrailRow};
use crate::reports::skills::{self, SkillRow};
use crate::reports::tools::{self, ToolRow};
use crate::reports::{Report, ReportKind};
use crate::store::Scanned;

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

/// Builds report `kind` from the model and renders it; JSON carries `scanned` when given (the
/// table view leaves it to the CLI's stderr summary).
pub fn render_report(
    kind: ReportKind,
    model: &Model,
    format: Format,
    style: &Style,
    scanned: Option<&Scanned>,
) -> Result<String, ReportError> {
    let out = Output {
        json: format == Format::Json,
        style,
        scanned,
    };
    match kind {
        ReportKind::Tools => out.render(&tools::build(model), "tools", self::tools),
        ReportKind::Conversations => out.render(
            &conversations::build(model),
            "conversations",
            self::conversations,
        ),
        ReportKind::Guardrails => {
            out.render(&guardrails::build(model), "guardrails", self::guardrails)
        }
        ReportKind::Skills => out.render(&skills::build(model), "skills", self::skills),
    }
}

/// How a report is written out.
struct Output<'a> {
    json: bool,
    style: &'a Style,
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
        table: fn(&Report<R>, &Style) -> String,
    ) -> Result<String, ReportError> {
        if !self.json {
            return Ok(table(report, self.style));
        }
        serde_json::to_string_pretty(&JsonDoc {
            report,
            scanned: self.scanned,
        })
        .map(|s| s + "\n")
        .map_err(|source| ReportError::Json { kind, source })
    }
}

/// The table, an empty-state line when there are no rows, then the notes.
fn finish(table: Table, rows: usize, empty: &str, notes: &[String]) -> String {
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

/// `12.5` -> "12.5", None -> "-".
fn opt_ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x}"))
}

/// `report tools` as a table.
fn tools(r: &Report<ToolRow>, style: &Style) -> String {
    let mut t = style.table(&[
        "tool",
        "server",
        "calls",
        "tool errors",
        "protocol errors",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "structured",
        "approvals asked / granted",
    ]);
    for row in &r.rows {
        let structured = if row.results_observed == 0 {
            "not observable".to_string()
        } else {
            format!(
                "{}/{} ({:.0}%)",
                row.results_structured,
                row.results_observed,
                100.0 * row.results_structured as f64 / row.results_observed as f64
            )
        };
        t.add_row(vec![
            row.tool.clone(),
            row.server.clone().unwrap_or_else(|| "-".into()),
            row.calls.to_string(),
            row.tool_errors.to_string(),
            row.protocol_errors.to_string(),
            opt_ms(row.p50_ms),
            opt_ms(row.p95_ms),
            opt_ms(row.p99_ms),
            structured,
            format!("{} / {}", row.approvals_asked, row.approvals_granted),
        ]);
    }
    finish(t, r.rows.len(), "no tool calls", &r.notes)
}

/// `report conversations` as a table.
fn conversations(r: &Report<ConversationRow>, style: &Style) -> String {
    let mut t = style.table(&[
        "conversation",
        "started",
        "duration ms",
        "traces",
        "agent runs",
        "agents",
        "model calls",
        "tool calls",
        "tool errors",
    ]);
    for row in &r.rows {
        t.add_row(vec![
            row.conversation_id.clone(),
            row.started.clone(),
            format!("{}", row.duration_ms),
            row.traces.to_string(),
            row.agent_runs.to_string(),
            style.cell(&row.agents.join(", ")),
            row.model_calls.to_string(),
            row.tool_calls.to_string(),
            row.tool_errors.to_string(),
        ]);
    }
    finish(t, r.rows.len(), "no conversations", &r.notes)
}

/// `report guardrails` as a table.
fn guardrails(r: &Report<GuardrailRow>, style: &Style) -> String {
    let mut t = style.table(&[
        "guardrail",
        "skill",
        "allow",
        "require approval",
        "block",
        "other",
        "approvals granted",
        "tools",
    ]);
    for row in &r.rows {
        t.add_row(vec![
            row.guardrail.clone(),
            row.skill.clone().unwrap_or_else(|| "-".into()),
            row.allow.to_string(),
            row.require_approval.to_string(),
            row.block.to_string(),
            row.other.to_string(),
            row.approvals_granted.to_string(),
            style.cell(&row.tools.join(", ")),
        ]);
    }
    finish(t, r.rows.len(), "no guardrail decisions", &r.notes)
}

/// `report skills` as a table.
fn skills(r: &Report<SkillRow>, style: &Style) -> String {
    let mut t = style.table(&[
        "skill",
        "conversations",
        "agents",
        "tool calls",
        "tool errors",
        "model calls",
        "guardrail decisions",
    ]);
    for row in &r.rows {
        t.add_row(vec![
            row.skill.clone(),
            row.conversations.to_string(),
            style.cell(&row.agents.join(", ")),
            row.tool_calls.to_string(),
            row.tool_errors.to_string(),
            row.model_calls.to_string(),
            row.guardrail_decisions.to_string(),
        ]);
    }
    finish(
        t,
        r.rows.len(),
        "no skills (no span carries skill.name)",
        &r.notes,
    )
}
