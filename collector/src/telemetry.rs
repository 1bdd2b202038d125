//! Self-telemetry: counters every part of the collector bumps, logged as one structured line
//! every `--stats-interval-secs` and at shutdown, so an operator sees refusals and lag without a
//! second monitoring system. Plain atomics: cheap enough for the request path.
//!
//! Refusals are logged through a rate limiter ([`log_refusal`], [`warn_limited`]): a flood of bad
//! or unauthenticated requests cannot flood the log, while the counters stay exact. Values a
//! client sent are cut ([`cut`]) before they are echoed into an answer or a log line.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use crate::ack_latency::AckLatency;

/// Longest client-supplied text echoed in an answer or a log line, in bytes.
pub const MAX_ECHO_BYTES: usize = 300;

/// Log lines per second per refusal reason; the rest are counted and reported as suppressed.
pub const LOG_LINES_PER_SECOND: u32 = 5;

/// `text` cut to at most [`MAX_ECHO_BYTES`] (on a character boundary), with `…(N bytes)` telling
/// the full size when it was cut.
pub fn cut(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= MAX_ECHO_BYTES {
        return text.into();
    }
    let mut end = MAX_ECHO_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…({} bytes)", &text[..end], text.len()).into()
}

/// One second of log lines for one reason.
struct Window {
    started: Instant,
    logged: u32,
    suppressed: u64,
}

/// Whether a line for `key` may be logged now, and how many were suppressed before it.
fn admit_line(key: String) -> Option<u64> {
    static WINDOWS: OnceLock<Mutex<HashMap<String, Window>>> = OnceLock::new();
    let windows = WINDOWS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut windows = windows.lock().ok()?;
    let w = windows.entry(key).or_insert_with(|| Window {
        started: Instant::now(),
        logged: 0,
        suppressed: 0,
    });
    if w.started.elapsed().as_secs() >= 1 {
        w.started = Instant::now();
        w.logged = 0;
    }
    if w.logged >= LOG_LINES_PER_SECOND {
        w.suppressed += 1;
        return None;
    }
    w.logged += 1;
    Some(std::mem::take(&mut w.suppressed))
}

/// Log a refused request (rate-limited per protocol and status; the message is cut).
pub fn log_refusal(protocol: &'static str, status: u16, reason: &str) {
    if let Some(suppressed) = admit_line(format!("{protocol}:{status}")) {
        tracing::warn!(protocol, status, suppressed, reason = %cut(reason), "request refused");
    }
}

/// A warning that can repeat at a high rate (accept errors, refused connections), rate-limited
/// per `key`.
pub fn warn_limited(key: &'static str, message: &str) {
    if let Some(suppressed) = admit_line(key.to_string()) {
        tracing::warn!(suppressed, "{}", cut(message));
    }
}

/// Counters of one collector (or one ingest run).
#[derive(Debug, Default)]
pub struct Stats {
    /// Connections open now (both listeners).
    pub connections_open: AtomicU64,
    /// Idle connections closed to make room for a new one at the connection cap.
    pub connections_evicted: AtomicU64,
    /// New connections closed at once: at the cap with every connection busy.
    pub connections_refused: AtomicU64,
    /// Connections closed by the header-read or idle timeout.
    pub connections_timed_out: AtomicU64,
    /// Spans converted and acknowledged (in the WAL).
    pub spans_accepted: AtomicU64,
    /// Spans rejected by validation (reported back in `partial_success`).
    pub spans_rejected: AtomicU64,
    /// Spans refused because the queue was full (429 / RESOURCE_EXHAUSTED): after their decode,
    /// or before it with the span count read from the framing. A request refused at admission,
    /// before its body is read, has no known span count: it shows only in the per-status
    /// request counts.
    pub spans_refused: AtomicU64,
    /// OTLP log records converted and acknowledged (in the WAL).
    pub log_records_accepted: AtomicU64,
    /// Log records rejected by validation (reported back in `partial_success`).
    pub log_records_rejected: AtomicU64,
    /// Requests whose body was decoded (a request refused before that, at admission or because
    /// the writer queue has no room for it, is not counted).
    pub requests_decoded: AtomicU64,
    /// Rows written into committed Parquet files.
    pub rows_committed: AtomicU64,
    /// Parquet files committed (renamed into place).
    pub files_committed: AtomicU64,
    /// Bytes appended to the WAL since start.
    pub wal_bytes_appended: AtomicU64,
    /// Bytes currently held in WAL segments.
    pub wal_bytes_on_disk: AtomicU64,
    /// Age in milliseconds of the oldest row not yet in a committed Parquet file.
    pub flush_lag_ms: AtomicU64,
    /// Parquet write failures (data stays in the WAL and is written on the next start).
    pub write_errors: AtomicU64,
    requests: Mutex<BTreeMap<(&'static str, u16), u64>>,
    /// Acknowledged WAL records found unreadable (damaged frames) when the WAL was opened.
    pub wal_records_lost: AtomicU64,
    /// Acknowledged requests that could not be converted into rows, kept whole under
    /// `<data-dir>/quarantine/` (a bug if ever non-zero).
    pub records_quarantined: AtomicU64,
    /// 1 while Parquet writing is failing: new data is refused (503) and the batcher retries
    /// the rows from the WAL with backoff; 0 once it works again.
    pub storage_degraded: AtomicU64,
    /// Times the batcher retried writing failed rows from the WAL.
    pub storage_retries: AtomicU64,
    /// Parquet part files open (being written) now.
    pub open_part_files: AtomicU64,
    /// Time spent committing part files (footer, fsync, rename, dir fsync), in microseconds.
    pub commit_micros: AtomicU64,
    /// Wall-clock time of the last successful commit, milliseconds since the Unix epoch (0: none).
    pub last_commit_unix_ms: AtomicU64,
    /// Time per step of the acknowledgement path.
    pub ack: AckLatency,
}

impl Stats {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// Count one answered request by protocol (`http` / `grpc`) and HTTP-equivalent status.
    pub fn request(&self, protocol: &'static str, status: u16) {
        if let Ok(mut m) = self.requests.lock() {
            *m.entry((protocol, status)).or_insert(0) += 1;
        }
    }

    /// Requests answered so far, `protocol:status=count`.
    pub fn requests_by_status(&self) -> BTreeMap<String, u64> {
        self.requests
            .lock()
            .map(|m| {
                m.iter()
                    .map(|((p, s), n)| (format!("{p}:{s}"), *n))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The counters in the Prometheus text exposition format (version 0.0.4), every name
    /// prefixed `tripline_`, with `gauges` (name, help, value) measured by the caller appended.
    pub fn prometheus_text(&self, gauges: &[(&str, &str, f64)]) -> String {
        use std::fmt::Write as _;
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let mut out = String::new();
        let mut metric = |name: &str, kind: &str, help: &str, value: f64| {
            let _ = writeln!(out, "# HELP tripline_{name} {help}");
            let _ = writeln!(out, "# TYPE tripline_{name} {kind}");
            let _ = writeln!(out, "tripline_{name} {value}");
        };
        let counters: [(&str, &str, &AtomicU64); 19] = [

            (
                "spans_accepted_total",
                "Spans acknowledged (in the WAL).",
                &self.spans_accepted,
            ),
            (
                "spans_rejected_total",
                "Spans rejected by validation (reported in partial_success).",
                &self.spans_rejected,
            ),
            (
                "spans_refused_total",
                "Spans refused after conversion because the queue was full.",
                &self.spans_refused,
            ),            (
                "log_records_accepted_total",
                "OTLP log records acknowledged (in the WAL).",
                &self.log_records_accepted,
            ),
            (
                "log_records_rejected_total",
                "OTLP log records rejected by validation (reported in partial_success).",
                &self.log_records_rejected,
            ),
            (
                "requests_decoded_total",
                "Request bodies decoded and converted.",
                &self.requests_decoded,
            ),
            (
                "rows_committed_total",
                "Rows written into committed Parquet files.",
                &self.rows_committed,
            ),
            (
                "files_committed_total",
                "Parquet files committed.",
                &self.files_committed,
            ),
            (
                "wal_appended_bytes_total",
                "Bytes appended to the WAL since start.",
                &self.wal_bytes_appended,
            ),
            (
                "parquet_write_errors_total",
                "Parquet write failures (the data stays in the WAL).",
                &self.write_errors,
            ),
            (
                "connections_evicted_total",
                "Idle connections closed to make room at the connection cap.",
                &self.connections_evicted,
            ),
            (
                "connections_refused_total",
                "New connections closed at once: at the cap and all busy.",
                &self.connections_refused,
            ),
            (
                "connections_timed_out_total",
                "Connections closed by the header-read or idle timeout.",
                &self.connections_timed_out,
            ),
            (
                "connections_open",
                "Connections open now (both listeners).",
                &self.connections_open,
            ),
            (
                "wal_records_lost_total",
                "Acknowledged WAL records found damaged (unreadable) when the WAL was opened.",
                &self.wal_records_lost,
            ),
            (
                "records_quarantined_total",
                "Acknowledged requests that could not be converted into rows, kept whole under <data-dir>/quarantine/ (a bug if ever non-zero).",
                &self.records_quarantined,
            ),
            (
                "storage_degraded",
                "1 while Parquet writes fail: new data is refused with 503 and retried from the WAL.",
                &self.storage_degraded,
            ),
            (
                "storage_retries_total",
                "Retries of failed Parquet writes from the WAL.",
                &self.storage_retries,
            ),
            (
                "open_part_files",
                "Parquet part files being written now.",
                &self.open_part_files,
            ),
        ];
        for (name, help, counter) in counters {
            let kind = if name.ends_with("_total") {
                "counter"
            } else {
                "gauge"
            };
            metric(name, kind, help, get(counter) as f64);
        }
        metric(
            "wal_bytes",
            "gauge",
            "Bytes held in WAL segments now.",
            get(&self.wal_bytes_on_disk) as f64,
        );
        metric(
            "flush_lag_seconds",
            "gauge",
            "Age of the oldest acknowledged row not yet in a committed Parquet file.",
            get(&self.flush_lag_ms) as f64 / 1000.0,
        );
        metric(
            "commit_seconds_total",
            "counter",
            "Time spent committing part files (with tripline_files_committed_total: mean latency).",
            get(&self.commit_micros) as f64 / 1e6,
        );
        metric(
            "last_commit_timestamp_seconds",
            "gauge",
            "Unix time of the last successful Parquet commit (0: none yet).",
            get(&self.last_commit_unix_ms) as f64 / 1000.0,
        );
        for (name, help, value) in gauges {
            metric(name, "gauge", help, *value);
        }
        self.ack.prometheus_text(&mut out);
        let _ = writeln!(out, "# HELP tripline_requests_total Requests answered, by protocol and HTTP(-equivalent) status.");
        let _ = writeln!(out, "# TYPE tripline_requests_total counter");
        if let Ok(m) = self.requests.lock() {
            for ((protocol, status), n) in m.iter() {
                let _ = writeln!(
                    out,
                    "tripline_requests_total{{protocol=\"{protocol}\",status=\"{status}\"}} {n}"
                );
            }
        }
        out
    }

    /// Emit the one-line summary on the log (stderr).
    pub fn log(&self, when: &'static str) {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let requests = self
            .requests_by_status()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        tracing::info!(
            target: "tripline::stats",
            when,
            spans_accepted = get(&self.spans_accepted),
            spans_rejected = get(&self.spans_rejected),
            spans_refused = get(&self.spans_refused),
            log_records_accepted = get(&self.log_records_accepted),
            requests_decoded = get(&self.requests_decoded),
            rows_committed = get(&self.rows_committed),
            files_committed = get(&self.files_committed),
            wal_bytes_appended = get(&self.wal_bytes_appended),
            wal_bytes_on_disk = get(&self.wal_bytes_on_disk),
            flush_lag_ms = get(&self.flush_lag_ms),
            write_errors = get(&self.write_errors),
            requests = %requests,
            ack_p99 = %self.ack.p99_summary(),
            "collector stats"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoed_text_is_cut_with_its_size() {
        assert_eq!(cut("short"), "short");
        let long = "é".repeat(1000);
        let c = cut(&long);
        assert!(c.len() < MAX_ECHO_BYTES + 20, "{}", c.len());
        assert!(c.ends_with("…(2000 bytes)"), "{c}");
    }

    #[test]
    fn log_lines_are_limited_per_key_and_suppressed_ones_counted() {
        let key = "test-key-limit".to_string();
        let admitted = (0..20)
            .filter(|_| admit_line(key.clone()).is_some())
            .count();
        assert_eq!(admitted, LOG_LINES_PER_SECOND as usize);
        assert!(
            admit_line("another-key".into()).is_some(),
            "keys are independent"
        );
    }

    #[test]
    fn prometheus_text_has_help_type_and_labels() {
        let s = Stats::default();
        Stats::add(&s.spans_accepted, 7);
        s.request("http", 200);
        let text = s.prometheus_text(&[("queue_batches", "Batches queued.", 3.0)]);
        assert!(text.contains(
            "# TYPE tripline_spans_accepted_total counter\ntripline_spans_accepted_total 7\n"
        ));
        assert!(text.contains("tripline_queue_batches 3\n"));
        assert!(text.contains("tripline_requests_total{protocol=\"http\",status=\"200\"} 1\n"));
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            assert!(line.starts_with("tripline_"), "{line}");
        }
    }

    #[test]
    fn requests_are_counted_by_protocol_and_status() {
        let s = Stats::default();
        s.request("http", 200);
        s.request("http", 200);
        s.request("grpc", 429);
        let m = s.requests_by_status();
        assert_eq!(m.get("http:200"), Some(&2));
        assert_eq!(m.get("grpc:429"), Some(&1));
        assert_eq!(m.len(), 2);
    }
}
