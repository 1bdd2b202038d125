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

use crate::rules::{Coverage, Finding, Report};
use crate::store::Scanned;

#[derive(Serialize)]
struct JsonReport<'a, F: Serialize, X: Serialize = serde_json::Value> {
    findings: F,
    coverage: &'a [Coverage],
    /// What the store scan read; absent for reports over in-memory batches.
    #[serde(skip_serializing_if = "Option::is_none")]
    scanned: Option<&'a Scanned>,
    /// `check --since last`: what the increment checked (docs/incremental.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    incremental: Option<X>,
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
struct Streamed<'a, 'b, I>(&'a RefCell<&'b mut I>);

impl<I, E> Serialize for Streamed<'_, '_, I>
where
    I: Iterator<Item = Result<Finding, E>>,
    E: std::fmt::Display,
{
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
pub fn write_json_streamed<I, E>(
    out: &mut impl Write,
    findings: &mut I,
    coverage: &[Coverage],
    scanned: Option<&Scanned>,
) -> std::io::Result<()>
where
    I: Iterator<Item = Result<Finding, E>>,
    E: std::fmt::Display,
{
    let cell = RefCell::new(findings);
    let doc: JsonReport<'_, _> = JsonReport {
        findings: Streamed(&cell),
        coverage,
        scanned,
        incremental: None,
    };
    serde_json::to_writer_pretty(&mut *out, &doc).map_err(std::io::Error::from)?;
    out.write_all(b"\n")
}

/// `check --since last --format json` written as [`write_json_streamed`] writes `check`'s: the
/// findings one at a time, then `incremental`, made by `summary` from the iterator once every
/// finding was read (the counts of an increment are final only then). The bytes of
/// [`render_json_incremental`] for the same findings and summary.
pub fn write_json_incremental_streamed<I, E, X>(
    out: &mut impl Write,
    findings: &mut I,
    coverage: &[Coverage],
    scanned: Option<&Scanned>,
    summary: impl Fn(&I) -> X,
) -> std::io::Result<()>
where
    I: Iterator<Item = Result<Finding, E>>,
    E: std::fmt::Display,
    X: Serialize,
{
    let cell = RefCell::new(findings);
    let doc = JsonReport {
        findings: Streamed(&cell),
        coverage,
        scanned,
        incremental: Some(Deferred {
            cell: &cell,
            make: summary,
        }),
    };
    serde_json::to_writer_pretty(&mut *out, &doc).map_err(std::io::Error::from)?;
    out.write_all(b"\n")
}

/// A value made from the findings' iterator when it is serialised (after the findings).
struct Deferred<'a, 'b, I, F> {
    cell: &'a RefCell<&'b mut I>,
    make: F,
}

impl<I, F, X> Serialize for Deferred<'_, '_, I, F>
where
    F: Fn(&I) -> X,
    X: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let findings = self.cell.borrow();
        (self.make)(&**findings).serialize(s)
    }
}
