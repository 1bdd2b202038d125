//! Every printer of the analyzer: `check` (table, JSON, SARIF, Markdown), the rule list and
//! `explain`, the reports, query results, the trace tree, `diff`, `verify`, and the self-contained
//! HTML page of `report html` ([`html`]).
//!
//! Why one module: one output-format enum ([`Format`]; each command accepts the subset it can
//! print, see [`Format::parser`]) and one table preset ([`Style::table`]) sized to the terminal,
//! so every command looks and behaves alike. Every renderer returns a `String`, so the CLI writes
//! it in one go (and treats a closed pipe as success), and tests snapshot exactly what the user
//! sees; `check` also has a writer form ([`write_check_streamed`])
//! giving the same bytes from the findings as they are read, so a windowed check never holds its
//! whole document (nor every finding: they may wait on disk).

mod check_table;
mod diff;
pub mod html;
mod json;
mod json_lines;
mod markdown;
mod query;
mod reports;
mod rules;
mod sarif;
mod trace;
mod verify;

pub use check_table::{render_table, RuleTally};
pub use diff::render_diff;
pub use json::{
    render_json, render_json_incremental, render_json_with, write_json_incremental_streamed,
    write_json_streamed,
};
pub use json_lines::{render_batch_line, render_finding_line};
pub use markdown::{render_markdown, write_markdown_streamed};
pub use query::{render_batches, RenderError};
pub use reports::{render_built, render_report, ConversationsOut, ReportError, DEFAULT_TABLE_ROWS};
pub use rules::{explain_text, render_rule_list};
pub use sarif::{render_sarif, render_sarif_with, write_sarif_streamed, SarifArtifact};
pub use trace::render_trace;
pub use verify::render_verify;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, Color, ContentArrangement, Table};

use crate::rules::{Coverage, Finding, Report, Severity};
use crate::store::Scanned;

/// The output formats of every command; each command accepts a subset ([`Format::parser`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table for people (sized to the terminal).
    Table,
    /// JSON for programs (`check`'s is the contract in docs/json-output.md).
    Json,
    /// SARIF 2.1.0 for code-scanning uploads (`check`).
    Sarif,
    /// Markdown for CI job summaries (`check`, `report`).
    Markdown,
    /// CSV (`query`).
    Csv,
}

impl Format {
    /// A clap value parser that accepts only `allowed`, so `--help` and the error for a wrong
    /// value list what this command can print.
    pub fn parser(
        allowed: &'static [Format],
    ) -> impl clap::builder::TypedValueParser<Value = Format> {
        use clap::builder::TypedValueParser as _;
        use clap::ValueEnum as _;
        let names: Vec<clap::builder::PossibleValue> = allowed
            .iter()
            .filter_map(|f| f.to_possible_value())
            .collect();
        clap::builder::PossibleValuesParser::new(names)
            .map(|s| Format::from_str(&s, true).unwrap_or(Format::Table))
    }
}

/// Formats of `check`.
pub const CHECK_FORMATS: &[Format] =
    &[Format::Table, Format::Json, Format::Sarif, Format::Markdown];
/// Formats of `report`, `diff` and `verify`.
pub const DATA_FORMATS: &[Format] = &[Format::Table, Format::Json];
/// `report`: the table, its JSON, or the same table as Markdown (CI job summaries).
pub const REPORT_FORMATS: &[Format] = &[Format::Table, Format::Json, Format::Markdown];
/// Formats of `query`.
pub const QUERY_FORMATS: &[Format] = &[Format::Table, Format::Json, Format::Csv];

/// Width of tables when stdout is not a terminal and `COLUMNS` is not set: stable output for
/// files, pipes and tests.
pub const DEFAULT_WIDTH: u16 = 100;
/// Longest data cell shown in a table (characters) unless `--wide`: longer ones end in `…`.
/// Finding messages and coverage reasons are never cut (they wrap): they are the report.
pub const MAX_CELL_CHARS: usize = 200;

/// How tables look: width, whether long cells are cut, colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    /// Table width in columns.
    pub width: u16,
    /// Show every cell whole (`--wide`): no cut, no width limit.
    pub wide: bool,
    /// Colour severities (`--color`, `NO_COLOR`).
    pub color: bool,
}

impl Default for Style {
    /// [`DEFAULT_WIDTH`], cells cut, no colour: what a pipe gets.
    fn default() -> Self {
        Self {
            width: DEFAULT_WIDTH,
            wide: false,
            color: false,
        }
    }
}

impl Style {
    /// The style for stdout: `COLUMNS` if set, else the terminal's width when stdout is a
    /// terminal, else [`DEFAULT_WIDTH`].
    pub fn for_stdout(wide: bool, color: bool) -> Self {
        let width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<u16>().ok())
            .filter(|&w| w >= 20)
            .or_else(|| Table::new().width())
            .unwrap_or(DEFAULT_WIDTH);
        Self { width, wide, color }
    }

    /// The one table preset: condensed UTF-8 borders, content wrapped to the width (no width
    /// limit with `--wide`).
    pub fn table(&self, header: &[&str]) -> Table {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED)
            .set_truncation_indicator("…")
            .set_header(header.to_vec());
        if self.wide {
            t.set_content_arrangement(ContentArrangement::Disabled);
        } else {
            t.set_content_arrangement(ContentArrangement::Dynamic)
                .set_width(self.width);
        }
        if self.color {
            t.enforce_styling();
        } else {
            t.force_no_tty();
        }
        t
    }

    /// `s` cut to [`MAX_CELL_CHARS`] with `…`, unless `--wide`.
    pub fn cell(&self, s: &str) -> String {
        if self.wide || s.chars().count() <= MAX_CELL_CHARS {
            return s.to_string();
        }
        let mut cut: String = s.chars().take(MAX_CELL_CHARS - 1).collect();
        cut.push('…');
        cut
    }

    /// A severity cell, coloured when colour is on.
    pub fn severity(&self, s: Severity) -> Cell {
        let cell = Cell::new(s.as_str());
        if !self.color {
            return cell;
        }
        cell.fg(match s {
            Severity::Critical => Color::Magenta,
            Severity::Error => Color::Red,
            Severity::Warning => Color::Yellow,
            Severity::Info => Color::Blue,
        })
    }
}

/// Renders a check `report` in `format`, with what the store scan read (`scanned`) in the
/// document for JSON, SARIF and Markdown; the table view leaves it to the CLI's stderr summary.
/// `quiet` leaves the coverage table out of the table view; SARIF results point at `artifact`.
pub fn render_check(
    report: &Report,
    scanned: Option<&Scanned>,
    format: Format,
    style: &Style,
    quiet: bool,
    artifact: SarifArtifact,
) -> String {
    match format {
        Format::Json => render_json_with(report, scanned),
        Format::Sarif => render_sarif_with(report, scanned, artifact),
        Format::Markdown => {
            let mut out = render_markdown(report);
            if let Some(s) = scanned {
                out.push_str(&format!("\n{}.\n", capitalize(&s.summary())));
            }
            out
        }
        Format::Table | Format::Csv => check_table::render(report, style, !quiet),
    }
}

/// [`render_check`]'s bytes written to `out` (give it a buffered writer), the findings (in
/// report order) read once as they are written (JSON, SARIF) or tallied (the table: one row per
/// rule, [`RuleTally`]; Markdown: a rule's first finding and count), so no format holds every
/// finding. An error reading a finding (a spilled run) is an I/O error.
#[allow(clippy::too_many_arguments)]
pub fn write_check_streamed<I, E>(
    out: &mut impl std::io::Write,
    findings: &mut I,
    coverage: &[Coverage],
    scanned: Option<&Scanned>,
    format: Format,
    style: &Style,
    quiet: bool,
    artifact: SarifArtifact,
) -> std::io::Result<()>
where
    I: Iterator<Item = Result<Finding, E>>,
    E: Into<Box<dyn std::error::Error + Send + Sync>> + std::fmt::Display,
{
    match format {
        Format::Json => write_json_streamed(out, findings, coverage, scanned)?,
        Format::Sarif => write_sarif_streamed(out, findings, coverage, scanned, artifact)?,
        Format::Markdown => {
            write_markdown_streamed(out, findings, coverage)?;
            if let Some(s) = scanned {
                write!(out, "\n{}.\n", capitalize(&s.summary()))?;
            }
        }
        Format::Table | Format::Csv => {
            let mut tally = RuleTally::default();
            for f in findings {
                tally.add(&f.map_err(std::io::Error::other)?);
            }
            out.write_all(tally.render(coverage, style, !quiet).as_bytes())?;
        }
    }
    Ok(())
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
