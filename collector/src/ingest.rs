//! `tripline ingest`: recorded OTLP exports through the same pipeline as live traffic
//! (convert -> WAL -> batcher -> Parquet), so an imported span is stored exactly like a received one.
//!
//! Formats by file name: `.json` (one `ExportTraceServiceRequest`), `.jsonl` / `.ndjson` (one per
//! line, the OpenTelemetry Collector file exporter's format), `.pb` (a serialised request, also
//! `.grpc.pb`), each optionally `.gz`. A file named on the command line must be one of these.
//! In a walked directory other files are skipped, and so are JSON files that are not OTLP trace
//! exports (no top-level `resourceSpans`), because recordings keep metadata beside the traces;
//! files whose name contains `traces` are always treated as trace exports. A file that fails is
//! reported and skipped, never aborting the rest.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use schemas::convert::{convert_request, IngestContext};

use crate::limits::{decompress_capped, BodyError, Encoding};
use crate::pipeline::Pipeline;
use crate::request::now_unix_nanos;

/// Largest file (after decompression) that is imported.
const MAX_FILE_BYTES: usize = 1 << 30;

/// How a file's content is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    Json,
    JsonLines,
    Protobuf,
}

/// The format a file name announces, and whether it is gzip-compressed.
pub fn format_of(path: &Path) -> Option<(FileFormat, bool)> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    let (stem, gz) = match name.strip_suffix(".gz") {
        Some(s) => (s.to_string(), true),
        None => (name, false),
    };
    let format = if stem.ends_with(".json") {
        FileFormat::Json
    } else if stem.ends_with(".jsonl") || stem.ends_with(".ndjson") {
        FileFormat::JsonLines
    } else if stem.ends_with(".pb") {
        FileFormat::Protobuf
    } else {
        return None;
    };
    Some((format, gz))
}

/// Options of one import.
#[derive(Debug, Clone, Default)]
pub struct IngestOptions {
    pub redact_content: bool,
    /// Show a progress bar (only ever on a terminal).
    pub progress: bool,
}

/// What an import did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct IngestSummary {
    pub files_ingested: usize,
    pub requests: usize,
    pub spans_accepted: usize,
    pub spans_rejected: usize,
    /// Rejection reason -> spans.
    pub rejection_reasons: BTreeMap<String, usize>,
    /// Files that could not be imported, with the reason.
    pub failed: Vec<(PathBuf, String)>,
    /// Files in walked directories that are not trace exports, with the reason.
    pub skipped: Vec<(PathBuf, String)>,
}

/// Why one file failed.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot read the file: {0}; check the path and its permissions")]
    Read(std::io::Error),
    #[error("{0}")]
    Body(#[from] BodyError),
    #[error("{0}")]
    Decode(#[from] schemas::error::DecodeError),
    #[error("not an OTLP trace export (no top-level resourceSpans); pass OTLP/JSON, JSON lines or protobuf files")]
    NotOtlp,
    #[error("unsupported file type; expected .json, .jsonl, .ndjson or .pb (optionally .gz)")]
    Unsupported,
    #[error("storing its spans failed: {0}")]
    Store(#[from] crate::pipeline::SubmitError),
}

/// A file to import and whether it was named explicitly.
struct Candidate {
    path: PathBuf,
    explicit: bool,
}

/// Import `paths` (files and directories) through `pipeline`. Does not flush: the caller shuts
/// the pipeline down, which commits every file.
pub fn ingest_paths(
    pipeline: &Pipeline,
    paths: &[PathBuf],
    options: &IngestOptions,
) -> IngestSummary {
    let mut summary = IngestSummary::default();
    let mut candidates = Vec::new();
    for path in paths {
        if path.is_dir() {
            for entry in walkdir::WalkDir::new(path).sort_by_file_name() {
                match entry {
                    Ok(e) if e.file_type().is_file() => candidates.push(Candidate {
                        path: e.into_path(),
                        explicit: false,
                    }),
                    Ok(_) => {}
                    Err(e) => summary
                        .failed
                        .push((path.clone(), format!("cannot walk the directory: {e}"))),
                }
            }
        } else {
            candidates.push(Candidate {
                path: path.clone(),
                explicit: true,
            });
        }
    }
    let bar = (options.progress && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(candidates.len() as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} files {msg}")
        {
            bar.set_style(style);
        }
        bar
    });
    for c in &candidates {
        if let Some(bar) = &bar {
            bar.inc(1);
        }
        match ingest_file(pipeline, c, options, &mut summary) {
            Ok(true) => summary.files_ingested += 1,
            Ok(false) => {}
            Err(FileError::NotOtlp) if !c.explicit => summary
                .skipped
                .push((c.path.clone(), FileError::NotOtlp.to_string())),
            Err(e) => {
                tracing::warn!(file = %c.path.display(), error = %e, "ingest: file skipped");
                summary.failed.push((c.path.clone(), e.to_string()));
            }
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    summary
}

/// `Ok(false)`: not a trace file of a walked directory (recorded as skipped).
fn ingest_file(
    pipeline: &Pipeline,
    c: &Candidate,
    options: &IngestOptions,
    summary: &mut IngestSummary,
) -> Result<bool, FileError> {
    let Some((format, gz)) = format_of(&c.path) else {
        if c.explicit {
            return Err(FileError::Unsupported);
        }
        summary
            .skipped
            .push((c.path.clone(), "not a trace file type".to_string()));
        return Ok(false);
    };
    let raw = std::fs::read(&c.path).map_err(FileError::Read)?;
    let encoding = if gz {
        Encoding::Gzip
    } else {
        Encoding::Identity
    };
    let bytes = decompress_capped(&raw, encoding, MAX_FILE_BYTES)?;
    let named_traces = c
        .path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.to_ascii_lowercase().contains("traces"));
    let requests: Vec<ExportTraceServiceRequest> = match format {
        FileFormat::Protobuf => vec![schemas::decode::decode_protobuf(&bytes)?],
        FileFormat::Json => {
            if !c.explicit && !named_traces && !looks_like_otlp_json(&bytes) {
                return Err(FileError::NotOtlp);
            }
            vec![schemas::decode::decode_json(&bytes)?]
        }
        FileFormat::JsonLines => {
            let first = bytes
                .split(|b| *b == b'\n')
                .find(|l| !l.iter().all(u8::is_ascii_whitespace))
                .unwrap_or_default();
            if !c.explicit && !named_traces && !looks_like_otlp_json(first) {
                return Err(FileError::NotOtlp);
            }
            schemas::decode::decode_json_lines(&bytes)?
        }
    };
    let context = IngestContext {
        received_at_unix_nano: now_unix_nanos(),
        source: format!("file:{}", c.path.display()),
        redact_content: options.redact_content,
    };
    for request in &requests {
        let converted = convert_request(request, &context);
        pipeline.submit_wait(&converted)?;
        summary.requests += 1;
        summary.spans_accepted += converted.accepted;
        summary.spans_rejected += converted.rejected;
        for r in &converted.rejection_reasons {
            *summary.rejection_reasons.entry(r.clone()).or_insert(0) += 1;
        }
    }
    Ok(true)
}

/// A JSON document whose top level is an object with `resourceSpans` (or `resource_spans`).
fn looks_like_otlp_json(bytes: &[u8]) -> bool {
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(serde_json::Value::Object(m)) => {
            m.contains_key("resourceSpans") || m.contains_key("resource_spans")
        }
        _ => false,
    }
}

impl IngestSummary {
    /// The human summary printed on stderr.
    pub fn render(&self) -> String {
        let mut out = format!(
            "ingested {} files ({} requests): {} spans accepted, {} rejected, {} files failed",
            self.files_ingested,
            self.requests,
            self.spans_accepted,
            self.spans_rejected,
            self.failed.len()
        );
        for (reason, n) in &self.rejection_reasons {
            out.push_str(&format!("\n  rejected {n} spans: {reason}"));
        }
        for (path, why) in &self.failed {
            out.push_str(&format!("\n  failed {}: {why}", path.display()));
        }
        if !self.skipped.is_empty() {
            // Group by file name: recordings repeat the same metadata files in every directory.
            let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
            for (p, _) in &self.skipped {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                *by_name.entry(name).or_insert(0) += 1;
            }
            let names = by_name
                .iter()
                .map(|(n, c)| {
                    if *c > 1 {
                        format!("{n} ({c})")
                    } else {
                        n.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            out.push_str(&format!(
                "\n  skipped {} files that are not OTLP trace exports: {names}",
                self.skipped.len()
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_follow_the_file_name() {
        assert_eq!(
            format_of(Path::new("a/0001-traces.pb")),
            Some((FileFormat::Protobuf, false))
        );
        assert_eq!(
            format_of(Path::new("x.grpc.pb")),
            Some((FileFormat::Protobuf, false))
        );
        assert_eq!(
            format_of(Path::new("x.pb.gz")),
            Some((FileFormat::Protobuf, true))
        );
        assert_eq!(
            format_of(Path::new("x.JSON")),
            Some((FileFormat::Json, false))
        );
        assert_eq!(
            format_of(Path::new("x.ndjson.gz")),
            Some((FileFormat::JsonLines, true))
        );
        assert_eq!(
            format_of(Path::new("x.jsonl")),
            Some((FileFormat::JsonLines, false))
        );
        assert_eq!(format_of(Path::new("policy.toml")), None);
    }

    #[test]
    fn only_objects_with_resource_spans_look_like_otlp() {
        assert!(looks_like_otlp_json(br#"{"resourceSpans": []}"#));
        assert!(!looks_like_otlp_json(br#"{"expected": []}"#));
        assert!(!looks_like_otlp_json(b"[1,2]"));
        assert!(!looks_like_otlp_json(b"{\"a\":1}\n{\"b\":2}"));
    }
}
