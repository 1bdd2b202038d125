//! `tripline ingest`: recorded OTLP exports through the same pipeline as live traffic
//! (convert -> WAL -> batcher -> Parquet), so an imported span is stored exactly like a received one.
//!
//! Formats by file name: `.json` (one `ExportTraceServiceRequest` and/or `ExportLogsServiceRequest`:
//! `resourceSpans`, `resourceLogs`), `.jsonl` / `.ndjson` (one per line, the OpenTelemetry
//! Collector file exporter's format, where a line holds either signal), `.pb` (a serialised
//! request, also `.grpc.pb`; a log request when the file name contains `logs`), each optionally
//! `.gz`. A file named on the command line must be one of these.
//! In a walked directory other files are skipped, and so are JSON files that are not OTLP
//! exports (no top-level `resourceSpans` or `resourceLogs`), because recordings keep metadata
//! beside the traces; files whose name contains `traces` are always treated as trace exports.
//! Log records go through the same pipeline into the `logs/` table. A file that fails is
//! reported and skipped, never aborting the rest.

pub mod forward;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal, Read};
use std::path::{Path, PathBuf};

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use schemas::convert::{convert_request, IngestContext};

use crate::config::{DEFAULT_MAX_READ_BYTES, DEFAULT_MAX_REQUEST_BYTES};
use crate::receive::request::now_unix_nanos;
use crate::store::pipeline::Pipeline;
use forward::{ForwardError, Forwarder};

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
#[derive(Debug, Clone)]
pub struct IngestOptions {
    pub redact_content: bool,
    /// Show a progress bar (only ever on a terminal).
    pub progress: bool,
    /// Stop reading a file beyond this many bytes (after decompression; checked while streaming,
    /// so memory never holds more than one request).
    pub max_file_bytes: u64,
    /// Largest single request: a whole `.json` / `.pb` file or one JSON line.
    pub max_request_bytes: usize,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            redact_content: false,
            progress: false,
            max_file_bytes: DEFAULT_MAX_READ_BYTES,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
        }
    }
}

/// Where imported spans go: straight into a store this process owns, or through the collector
/// that owns it (so two writers never share a data directory).
pub enum Destination<'a> {
    Store(&'a Pipeline),
    Collector(&'a Forwarder),
}

/// What an import did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct IngestSummary {
    pub files_ingested: usize,
    pub requests: usize,
    pub spans_accepted: usize,
    pub spans_rejected: usize,
    /// OTLP log records stored (into `logs/`) and rejected.
    pub log_records_accepted: usize,
    pub log_records_rejected: usize,
    /// Rejection reason -> spans (or log records).
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
    #[error("not a regular file ({0}); pass a regular file or a directory of them")]
    NotRegular(&'static str),
    #[error("the file holds more than {limit} bytes{after}; split it or raise --max-read-bytes")]
    FileTooLarge { limit: u64, after: &'static str },
    #[error("{what} exceeds {limit} bytes; split it or raise --max-request-bytes")]
    RequestTooLarge { what: String, limit: usize },
    #[error("cannot decompress the gzip file: {0}; check it is really gzip")]
    Corrupt(std::io::Error),
    #[error("{0}")]
    Decode(#[from] schemas::error::DecodeError),
    #[error("not an OTLP trace or logs export (no top-level resourceSpans or resourceLogs); pass OTLP/JSON, JSON lines or protobuf files")]
    NotOtlp,
    #[error(
        "holds no spans and no log records; pass OTLP trace or logs exports (a file named explicitly must contain some)"
    )]
    NoSpans,
    #[error("unsupported file type; expected .json, .jsonl, .ndjson or .pb (optionally .gz)")]
    Unsupported,
    #[error("storing its spans failed: {0}")]
    Store(#[from] crate::store::pipeline::SubmitError),
    #[error("{0}")]
    Forward(#[from] ForwardError),
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
    ingest_into(&Destination::Store(pipeline), paths, options)
}

/// Import `paths` into `destination`.
pub fn ingest_into(
    destination: &Destination<'_>,
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
        match ingest_file(destination, c, options, &mut summary) {
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

/// Open `path` for reading only if it is a regular file. Opened non-blocking, then checked on the
/// handle: a FIFO would otherwise block forever in `open`, and `/dev/zero` never ends.
fn open_regular(path: &Path) -> Result<(File, u64), FileError> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(FileError::Read)?;
    let meta = file.metadata().map_err(FileError::Read)?;
    let t = meta.file_type();
    if !t.is_file() {
        return Err(FileError::NotRegular(if t.is_fifo() {
            "a named pipe"
        } else if t.is_char_device() || t.is_block_device() {
            "a device"
        } else if t.is_socket() {
            "a socket"
        } else {
            "not a plain file"
        }));
    }
    Ok((file, meta.len()))
}

/// Reads at most `limit` bytes through `inner`, then fails: the cap holds while streaming.
struct Capped<R> {
    inner: R,
    left: u64,
    limit: u64,
    compressed: bool,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // One byte more means the file is over the cap; exactly at the cap is fine.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(std::io::Error::other(CapExceeded)),
            };
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

#[derive(Debug)]
struct CapExceeded;
impl std::fmt::Display for CapExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("size cap exceeded")
    }
}
impl std::error::Error for CapExceeded {}

impl<R> Capped<R> {
    fn error(&self, e: std::io::Error) -> FileError {
        if e.get_ref().is_some_and(|i| i.is::<CapExceeded>()) {
            FileError::FileTooLarge {
                limit: self.limit,
                after: if self.compressed {
                    " after decompression"
                } else {
                    ""
                },
            }
        } else if self.compressed {
            FileError::Corrupt(e)
        } else {
            FileError::Read(e)
        }
    }
}

/// Read one request's bytes (the rest of the stream) under both caps.
fn read_request<R: Read>(
    r: &mut Capped<R>,
    limit: usize,
    what: &str,
) -> Result<Vec<u8>, FileError> {
    let mut out = Vec::new();
    let mut taken = (&mut *r).take(limit as u64 + 1);
    let res = taken.read_to_end(&mut out);
    if let Err(e) = res {
        return Err(r.error(e));
    }
    if out.len() > limit {
        return Err(FileError::RequestTooLarge {
            what: what.to_string(),
            limit,
        });
    }
    Ok(out)
}

/// `Ok(false)`: not a trace file of a walked directory (recorded as skipped).
fn ingest_file(
    destination: &Destination<'_>,
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
    let (file, len) = open_regular(&c.path)?;
    if len > options.max_file_bytes {
        return Err(FileError::FileTooLarge {
            limit: options.max_file_bytes,
            after: "",
        });
    }
    let raw = Capped {
        inner: file,
        left: options.max_file_bytes,
        limit: options.max_file_bytes,
        compressed: false,
    };
    let decoded: Box<dyn Read> = if gz {
        Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(raw)))
    } else {
        Box::new(raw)
    };
    let mut reader = Capped {
        inner: decoded,
        left: options.max_file_bytes,
        limit: options.max_file_bytes,
        compressed: gz,
    };
    let named_traces = c
        .path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.to_ascii_lowercase().contains("traces"));
    let context = IngestContext {
        received_at_unix_nano: now_unix_nanos(),
        source: format!("file:{}", c.path.display()),
        redact_content: options.redact_content,
    };
    let named_logs = c
        .path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.to_ascii_lowercase().contains("logs"));
    let counts = |s: &IngestSummary| {
        (
            s.spans_accepted,
            s.spans_rejected,
            s.log_records_accepted,
            s.log_records_rejected,
        )
    };
    let before = counts(summary);
    match format {
        FileFormat::Protobuf if named_logs => {
            let bytes = read_request(&mut reader, options.max_request_bytes, "the file")?;
            let request = schemas::decode::decode_logs_protobuf(&bytes)?;
            drop(bytes);
            send_logs(destination, &request, &context, summary)?;
        }
        FileFormat::Protobuf => {
            let bytes = read_request(&mut reader, options.max_request_bytes, "the file")?;
            let request = schemas::decode::decode_protobuf(&bytes)?;
            drop(bytes);
            send(destination, &request, &context, summary)?;
        }
        FileFormat::Json => {
            let bytes = read_request(&mut reader, options.max_request_bytes, "the file")?;
            if !c.explicit && !named_traces && !looks_like_otlp_json(&bytes) {
                return Err(FileError::NotOtlp);
            }
            let (request, logs) =
                schemas::decode::decode_json_line_signals(&bytes, 0).map_err(|e| match e {
                    // A whole file is not a line: report the inner error as a JSON body's.
                    schemas::DecodeError::JsonLine { source, .. } => *source,
                    other => other,
                })?;
            drop(bytes);
            send(destination, &request, &context, summary)?;
            send_logs(destination, &logs, &context, summary)?;
        }
        FileFormat::JsonLines => {
            let mut lines = BufReader::new(reader);
            let mut index = 0usize;
            let mut checked = c.explicit || named_traces;
            loop {
                let mut line = Vec::new();
                let limit = options.max_request_bytes;
                let n = (&mut lines)
                    .take(limit as u64 + 1)
                    .read_until(b'\n', &mut line)
                    .map_err(|e| lines.get_ref().error(e))?;
                if n == 0 {
                    break;
                }
                if line.len() > limit && line.last() != Some(&b'\n') {
                    return Err(FileError::RequestTooLarge {
                        what: format!("line {}", index + 1),
                        limit,
                    });
                }
                if !line.iter().all(u8::is_ascii_whitespace) {
                    if !checked {
                        if !looks_like_otlp_json(&line) {
                            return Err(FileError::NotOtlp);
                        }
                        checked = true;
                    }
                    let (request, logs) = schemas::decode::decode_json_line_signals(&line, index)?;
                    drop(line);
                    send(destination, &request, &context, summary)?;
                    send_logs(destination, &logs, &context, summary)?;
                }
                index += 1;
            }
        }
    }
    if c.explicit && counts(summary) == before {
        return Err(FileError::NoSpans);
    }
    Ok(true)
}

/// Store or forward one request and count it.
fn send(
    destination: &Destination<'_>,
    request: &ExportTraceServiceRequest,
    context: &IngestContext,
    summary: &mut IngestSummary,
) -> Result<(), FileError> {
    summary.requests += 1;
    let has_spans = request
        .resource_spans
        .iter()
        .flat_map(|r| &r.scope_spans)
        .any(|s| !s.spans.is_empty());
    if !has_spans {
        // Nothing to store: do not pay a conversion (or a round trip) for an empty request.
        return Ok(());
    }
    let (accepted, rejected, reasons) = match destination {
        Destination::Store(pipeline) => {
            let converted = convert_request(request, context);
            pipeline.submit_wait(&converted)?;
            (
                converted.accepted,
                converted.rejected,
                converted.rejection_reasons,
            )
        }
        Destination::Collector(forwarder) => forwarder.export(request)?,
    };
    summary.spans_accepted += accepted;
    summary.spans_rejected += rejected;
    for r in reasons {
        *summary.rejection_reasons.entry(r).or_insert(0) += 1;
    }
    Ok(())
}

/// Store or forward one log request and count it (nothing happens for a request without
/// records, so a trace-only line costs nothing here).
fn send_logs(
    destination: &Destination<'_>,
    request: &ExportLogsServiceRequest,
    context: &IngestContext,
    summary: &mut IngestSummary,
) -> Result<(), FileError> {
    if schemas::logs::log_record_count(request) == 0 {
        return Ok(());
    }
    let (accepted, rejected, reasons) = match destination {
        Destination::Store(pipeline) => {
            let converted = schemas::logs::convert_logs_request(request, context);
            pipeline.submit_wait(&converted)?;
            (
                converted.accepted,
                converted.rejected,
                converted.rejection_reasons,
            )
        }
        Destination::Collector(forwarder) => forwarder.export_logs(request)?,
    };
    summary.log_records_accepted += accepted;
    summary.log_records_rejected += rejected;
    for r in reasons {
        *summary.rejection_reasons.entry(r).or_insert(0) += 1;
    }
    Ok(())
}

/// A JSON document whose top level is an object with `resourceSpans` or `resourceLogs` (or their
/// snake_case spellings).
fn looks_like_otlp_json(bytes: &[u8]) -> bool {
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(serde_json::Value::Object(m)) => [
            "resourceSpans",
            "resource_spans",
            "resourceLogs",
            "resource_logs",
        ]
        .iter()
        .any(|k| m.contains_key(*k)),
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
        if self.log_records_accepted + self.log_records_rejected > 0 {
            out.push_str(&format!(
                "; {} log records accepted, {} rejected",
                self.log_records_accepted, self.log_records_rejected
            ));
        }
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
        assert!(looks_like_otlp_json(br#"{"resourceLogs": []}"#));
        assert!(!looks_like_otlp_json(br#"{"expected": []}"#));
        assert!(!looks_like_otlp_json(b"[1,2]"));
        assert!(!looks_like_otlp_json(b"{\"a\":1}\n{\"b\":2}"));
    }
}
