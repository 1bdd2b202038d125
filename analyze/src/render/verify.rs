//! `tripline verify`: the store check as a short text report or JSON (the
//! `collector::store::verify::VerifyReport` fields plus `healthy`).

use std::fmt::Write;

use collector::store::verify::VerifyReport;

use super::Format;

/// Renders a verify report, newline-terminated.
pub fn render_verify(report: &VerifyReport, format: Format) -> String {
    match format {
        Format::Json => {
            let mut v = serde_json::to_value(report).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                o.insert("healthy".into(), report.healthy().into());
            }
            let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
            s.push('\n');
            s
        }
        Format::Table | Format::Sarif | Format::Markdown | Format::Csv => {
            let mut out = String::new();
            let _ = writeln!(
                out,
                "{}: {} part file(s), {} row(s) decoded; {} WAL segment(s), {} record(s) not yet in Parquet; writer {}",
                report.data_dir.display(),
                report.part_files,
                report.rows,
                report.wal_segments,
                report.wal_records_above_checkpoint,
                if report.writer_running { "running (LOCK held)" } else { "not running" }
            );
            for p in &report.in_progress {
                let _ = writeln!(out, "in progress: {}", p.display());
            }
            for n in &report.notes {
                let _ = writeln!(out, "note: {n}");
            }
            if report.problems.is_empty() {
                let _ = writeln!(out, "healthy");
            } else {
                let _ = writeln!(out, "{} problem(s):", report.problems.len());
                for p in &report.problems {
                    let _ = writeln!(out, "  {}: {}", p.path.display(), p.problem);
                }
            }
            out
        }
    }
}
