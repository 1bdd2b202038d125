//! `tripline report KIND`: each report's table (as a terminal table or as Markdown for CI job
//! summaries), or its JSON (rows and notes, plus `scanned`).

use std::io::Write;

use comfy_table::{ColumnConstraint, Table, Width};
use serde::Serialize;

use super::{Format, Style};
use crate::model::Model;
use crate::reports::conversations::{ConversationRow, RowSink};
use crate::reports::guardrails::GuardrailRow;
use crate::reports::propagation::PropagationRow;
use crate::reports::skills::SkillRow;
use crate::reports::tools::ToolRow;
use crate::reports::{Built, Report, ReportKind};
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
    render_built(&crate::reports::build(kind, model), format, style, scanned)
}

/// Renders a built report (one model's, or merged across windows: `report` in bounded memory).
pub fn render_built(
    report: &Built,
    format: Format,
    style: &Style,
    scanned: Option<&Scanned>,
) -> Result<String, ReportError> {
    let out = Output {
        format,
        style,
        scanned,
    };
    match report {
        Built::Tools(r) => out.render(r, "tools", self::tools),
        Built::Conversations(r) => out.render(r, "conversations", self::conversations),
        Built::Guardrails(r) => out.render(r, "guardrails", self::guardrails),
        Built::Skills(r) => out.render(r, "skills", self::skills),
        Built::Propagation(r) => out.render(r, "propagation", self::propagation),
    }
}

/// How a report is written out.
struct Output<'a> {
    format: Format,
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
    /// `table` builds the report's table and says what to print when it has no rows.
    fn render<R: Serialize>(
        &self,
        report: &Report<R>,
        kind: &'static str,
        table: fn(&Report<R>, &Style) -> (Table, &'static str),
    ) -> Result<String, ReportError> {
        match self.format {
            Format::Json => serde_json::to_string_pretty(&JsonDoc {
                report,
                scanned: self.scanned,
            })
            .map(|s| s + "\n")
            .map_err(|source| ReportError::Json { kind, source }),
            Format::Markdown => {
                // Markdown cells are never cut: the page wraps them.
                let style = Style {
                    wide: true,
                    ..*self.style
                };
                let (t, empty) = table(report, &style);
                Ok(markdown(
                    kind,
                    &t,
                    report.rows.len(),
                    empty,
                    &report.notes,
                    self.scanned,
                ))
            }
            _ => {
                let (t, empty) = table(report, self.style);
                Ok(finish(t, report.rows.len(), empty, &report.notes))
            }
        }
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

/// A Markdown cell: pipes escaped, one line.
fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The same table as GitHub-flavoured Markdown (a CI job summary), with the notes as a list and
/// what the scan read.
fn markdown(
    kind: &str,
    table: &Table,
    rows: usize,
    empty: &str,
    notes: &[String],
    scanned: Option<&Scanned>,
) -> String {
    let mut out = format!("## tripline report {kind}\n\n");
    if rows == 0 {
        out.push_str(&format!("{}.\n", capitalize(empty)));
    } else {
        let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        let header: Vec<String> = table
            .header()
            .map(|h| h.cell_iter().map(|c| md_cell(&c.content())).collect())
            .unwrap_or_default();
        out.push_str(&line(header.clone()));
        out.push_str(&line(header.iter().map(|_| "---".to_string()).collect()));
        for row in table.row_iter() {
            out.push_str(&line(
                row.cell_iter().map(|c| md_cell(&c.content())).collect(),
            ));
        }
    }
    if !notes.is_empty() {
        out.push('\n');
        for n in notes {
            out.push_str(&format!("- note: {}\n", md_cell(n)));
        }
    }
    if let Some(s) = scanned {
        out.push_str(&format!("\n{}.\n", capitalize(&s.summary())));
    }
    out
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// `12.5` -> "12.5", None -> "-".
fn opt_ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x}"))
}

/// `report tools` as a table.
fn tools(r: &Report<ToolRow>, style: &Style) -> (Table, &'static str) {
    let mut t = style.table(&[
        "tool",
        "server",
        "calls",
        "errors tool / protocol",
        "ms p50 / p95 / p99",
        "structured",
        "approvals asked / granted",
    ]);
    // Tool names are never split: they are what the user looks for (and greps).
    let longest = r.rows.iter().map(|row| row.tool.chars().count()).max();
    if let (Some(c), Some(n)) = (t.column_mut(0), longest) {
        let n = u16::try_from(n.min(40)).unwrap_or(40);
        c.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(n)));
    }
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
            format!("{} / {}", row.tool_errors, row.protocol_errors),
            format!(
                "{} / {} / {}",
                opt_ms(row.p50_ms),
                opt_ms(row.p95_ms),
                opt_ms(row.p99_ms)
            ),
            structured,
            format!("{} / {}", row.approvals_asked, row.approvals_granted),
        ]);
    }
    (t, "no tool calls")
}

const CONVERSATION_COLUMNS: [&str; 9] = [
    "conversation",
    "started",
    "duration ms",
    "traces",
    "agent runs",
    "agents",
    "model calls",
    "tool calls",
    "tool errors",
];

/// `report conversations` as a table.
fn conversations(r: &Report<ConversationRow>, style: &Style) -> (Table, &'static str) {
    let mut t = style.table(&CONVERSATION_COLUMNS);
    for row in &r.rows {
        t.add_row(conversation_cells(row, style));
    }
    (t, "no conversations")
}

fn conversation_cells(row: &ConversationRow, style: &Style) -> Vec<String> {
    vec![
        row.conversation_id.clone(),
        row.started.clone(),
        format!("{}", row.duration_ms),
        row.traces.to_string(),
        row.agent_runs.to_string(),
        style.cell(&row.agents.join(", ")),
        row.model_calls.to_string(),
        row.tool_calls.to_string(),
        row.tool_errors.to_string(),
    ]
}

/// Conversations a `report conversations` table shows by default (`--max-rows`).
pub const DEFAULT_TABLE_ROWS: usize = 1_000;

/// `report conversations` written as its rows come ([`RowSink`], in report order), so the
/// report never holds every row: JSON and Markdown whole, with the bytes [`render_built`] gives
/// for the same rows; the table (sized over its rows) shows the first `max_rows` and says how
/// many it leaves out. An error writing is kept and returned by [`ConversationsOut::finish`].
pub struct ConversationsOut<'a, W: Write> {
    out: W,
    format: Format,
    style: &'a Style,
    max_rows: usize,
    rows: usize,
    kept: Vec<ConversationRow>,
    error: Option<std::io::Error>,
}

/// How `report conversations --format json` begins (the rows are its first key).
const JSON_HEAD: &str = "{\n  \"rows\": [";

impl<'a, W: Write> ConversationsOut<'a, W> {
    pub fn new(out: W, format: Format, style: &'a Style, max_rows: usize) -> Self {
        Self {
            out,
            format,
            style,
            max_rows,
            rows: 0,
            kept: Vec::new(),
            error: None,
        }
    }

    /// The part before the first row.
    fn head(&mut self) -> std::io::Result<()> {
        match self.format {
            Format::Json => self.out.write_all(JSON_HEAD.as_bytes()),
            Format::Markdown => {
                self.out
                    .write_all(b"## tripline report conversations\n\n")?;
                let header: Vec<String> = CONVERSATION_COLUMNS.iter().map(|h| md_cell(h)).collect();
                writeln!(self.out, "| {} |", header.join(" | "))?;
                let rule: Vec<&str> = header.iter().map(|_| "---").collect();
                writeln!(self.out, "| {} |", rule.join(" | "))
            }
            _ => Ok(()),
        }
    }

    fn write_row(&mut self, row: &ConversationRow) -> std::io::Result<()> {
        if self.rows == 1 {
            self.head()?;
        }
        match self.format {
            Format::Json => {
                let json = serde_json::to_string_pretty(row).map_err(std::io::Error::other)?;
                let sep = if self.rows == 1 { "\n    " } else { ",\n    " };
                write!(self.out, "{sep}{}", json.replace('\n', "\n    "))
            }
            _ => {
                // Markdown cells are never cut: the page wraps them.
                let style = Style {
                    wide: true,
                    ..*self.style
                };
                let cells: Vec<String> = conversation_cells(row, &style)
                    .iter()
                    .map(|c| md_cell(c))
                    .collect();
                writeln!(self.out, "| {} |", cells.join(" | "))
            }
        }
    }

    /// The rest of the report after the last row: `notes`, then `scanned` (JSON, Markdown).
    pub fn finish(mut self, notes: Vec<String>, scanned: Option<&Scanned>) -> std::io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        match self.format {
            Format::Json => {
                let rest = serde_json::to_string_pretty(&JsonDoc {
                    report: &Report::<ConversationRow> {
                        rows: Vec::new(),
                        notes,
                    },
                    scanned,
                })
                .map_err(std::io::Error::other)?;
                // `{"rows": [], ...}` with the rows written: close them, then the rest as is.
                let rest = rest
                    .strip_prefix(JSON_HEAD)
                    .and_then(|r| r.strip_prefix(']'))
                    .ok_or_else(|| std::io::Error::other("the report's JSON lost its rows key"))?;
                if self.rows == 0 {
                    self.out.write_all(JSON_HEAD.as_bytes())?;
                } else {
                    self.out.write_all(b"\n  ")?;
                }
                writeln!(self.out, "]{rest}")?;
            }
            Format::Markdown => {
                if self.rows == 0 {
                    self.out
                        .write_all(b"## tripline report conversations\n\nNo conversations.\n")?;
                }
                if !notes.is_empty() {
                    self.out.write_all(b"\n")?;
                    for n in &notes {
                        writeln!(self.out, "- note: {}", md_cell(n))?;
                    }
                }
                if let Some(s) = scanned {
                    write!(self.out, "\n{}.\n", capitalize(&s.summary()))?;
                }
            }
            _ => {
                let shown = self.kept.len();
                let mut all = Vec::with_capacity(notes.len() + 1);
                if shown < self.rows {
                    all.push(format!(
                        "showing the first {} of {} conversations, by start (--max-rows {}); `--format json` or `--format markdown` lists every one",
                        thousands(shown),
                        thousands(self.rows),
                        self.max_rows
                    ));
                }
                all.extend(notes);
                let report = Report {
                    rows: std::mem::take(&mut self.kept),
                    notes: all,
                };
                let (t, empty) = conversations(&report, self.style);
                self.out
                    .write_all(finish(t, shown, empty, &report.notes).as_bytes())?;
            }
        }
        Ok(self.out)
    }
}

impl<W: Write> RowSink for ConversationsOut<'_, W> {
    fn row(&mut self, row: ConversationRow, _: &[u32]) {
        if self.error.is_some() {
            return;
        }
        self.rows += 1;
        match self.format {
            Format::Json | Format::Markdown => {
                if let Err(e) = self.write_row(&row) {
                    self.error = Some(e);
                }
            }
            _ => {
                if self.kept.len() < self.max_rows {
                    self.kept.push(row);
                }
            }
        }
    }
}

/// `12345` -> "12,345".
fn thousands(n: usize) -> String {
    super::html::data::thousands(n as u64)
}

/// `report guardrails` as a table.
fn guardrails(r: &Report<GuardrailRow>, style: &Style) -> (Table, &'static str) {
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
    (t, "no guardrail decisions")
}

/// `report skills` as a table.
fn skills(r: &Report<SkillRow>, style: &Style) -> (Table, &'static str) {
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
    (t, "no skills (no span carries skill.name)")
}

/// `report propagation` as a table.
fn propagation(r: &Report<PropagationRow>, style: &Style) -> (Table, &'static str) {
    let mut t = style.table(&[
        "client → server",
        "libraries (client / server)",
        "calls",
        "stitched",
        "how",
        "tools/call not stitched",
        "fix",
    ]);
    for row in &r.rows {
        let h = &row.how;
        let how: Vec<String> = [
            ("_meta", h.params_meta),
            ("HTTP header only", h.http_header_only),
            ("via gateway", h.via_gateway),
            ("re-rooted by gateway", h.rerooted_by_gateway),
            ("none", h.none),
            ("not observable", h.not_observable),
        ]
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(what, n)| format!("{what} {n}"))
        .collect();
        let libs = |l: &[String]| {
            if l.is_empty() {
                "-".to_string()
            } else {
                l.join(", ")
            }
        };
        t.add_row(vec![
            format!(
                "{} → {}",
                row.client.as_deref().unwrap_or("-"),
                row.server.as_deref().unwrap_or("-")
            ),
            style.cell(&format!(
                "{} / {}",
                libs(&row.client_libraries),
                libs(&row.server_libraries)
            )),
            row.calls.to_string(),
            row.stitched.to_string(),
            how.join(", "),
            row.unstitched_tool_calls.to_string(),
            style.cell(&row.fix),
        ]);
    }
    (t, "no MCP requests (no span with an MCP method)")
}
