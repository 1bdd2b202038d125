//! `check --format json`: the stable contract (`findings` + `coverage`, plus `scanned` when the
//! report comes from a store scan: files, spans, WAL spans and unreadable files).
//!
//! [`write_json_streamed`] writes the same bytes straight to a writer, taking the findings one at
//! a time from an iterator (a windowed check's spilled findings, merged): neither the findings
//! nor the document (1.2 GB at 100M spans) is ever whole in memory.

use std::cell::RefCell;
use std::io::Write;

use serde::ser::{Error as _, SerializeSeq};
use serde::{Serialize, Serializer};

use crate::rules::spill::SpillError;
use crate::rules::{Coverage, Finding, Report};
use crate::store::Scanned;

#[derive(Serialize)]
struct JsonReport<'a, F: Serialize> {
    findings: F,
    coverage: &'a [Coverage],
    /// What the store scan read; absent for reports over in-memory batches.
    #[serde(skip_serializing_if = "Option::is_none")]
    scanned: Option<&'a Scanned>,
    /// `check --since last`: what the increment checked (docs/incremental.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    incremental: Option<serde_json::Value>,
}

/// Pretty-printed JSON, newline-terminated.
pub fn render_json(report: &Report) -> String {
    render_json_with(report, None)
}

/// [`render_json`] plus the `scanned` object of a store scan.
pub fn render_json_with(report: &Report, scanned: Option<&Scanned>) -> String {
    render_doc(report, scanned, None)
}

/// `check --since last --format json`: [`render_json_with`] plus the `incremental` object
/// (`scanned` is absent when nothing new was checked).
pub fn render_json_incremental(
    report: &Report,
    scanned: Option<&Scanned>,
    incremental: &impl Serialize,
) -> String {
    render_doc(report, scanned, serde_json::to_value(incremental).ok())
}

fn render_doc(
    report: &Report,
    scanned: Option<&Scanned>,
    incremental: Option<serde_json::Value>,
) -> String {
    let doc = JsonReport {
        findings: report.findings.as_slice(),
        coverage: &report.coverage,
        scanned,
        incremental,
    };
    // Serialising plain structs of strings and numbers cannot fail.
    let mut s =
        serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    s.push('\n');
    s
}

/// Findings serialised as a JSON array as they come out of an iterator (once).
struct Streamed<'a, I>(RefCell<&'a mut I>);

impl<I: Iterator<Item = Result<Finding, SpillError>>> Serialize for Streamed<'_, I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut findings = self.0.borrow_mut();
        let mut seq = s.serialize_seq(None)?;
        for f in &mut **findings {
            seq.serialize_element(&f.map_err(S::Error::custom)?)?;
        }
        seq.end()
    }
}

/// [`render_json_with`]'s bytes written to `out` (give it a buffered writer), the findings taken
/// from `findings` in order. An error reading a finding (a spilled run) is an I/O error.
pub fn write_json_streamed<I>(
    out: &mut impl Write,
    findings: &mut I,
    coverage: &[Coverage],
    scanned: Option<&Scanned>,
) -> std::io::Result<()>
where
    I: Iterator<Item = Result<Finding, SpillError>>,
{
    let doc = JsonReport {
        findings: Streamed(RefCell::new(findings)),
        coverage,
        scanned,
        incremental: None,
    };
    serde_json::to_writer_pretty(&mut *out, &doc).map_err(std::io::Error::from)?;
    out.write_all(b"\n")
}
