//! Self-telemetry: counters every part of the collector bumps, logged as one structured line
//! every `--stats-interval-secs` and at shutdown, so an operator sees refusals and lag without a
//! second monitoring system. Plain atomics: cheap enough for the request path.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Counters of one collector (or one ingest run).
#[derive(Debug, Default)]
pub struct Stats {
    /// Spans converted and acknowledged (in the WAL).
    pub spans_accepted: AtomicU64,
    /// Spans rejected by validation (reported back in `partial_success`).
    pub spans_rejected: AtomicU64,
    /// Spans refused after conversion because the queue was full (429 / RESOURCE_EXHAUSTED).
    /// A request refused at admission, before its body is read, has no known span count: it
    /// shows only in the per-status request counts.
    pub spans_refused: AtomicU64,
    /// Requests whose body was decoded and converted (a request refused at admission, before its
    /// body is read, is not counted).
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
    /// 1 while Parquet writing is failing: new data is refused (503) and the batcher retries
    /// the rows from the WAL with backoff; 0 once it works again.
    pub storage_degraded: AtomicU64,
    /// Times the batcher retried writing failed rows from the WAL.
    pub storage_retries: AtomicU64,
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
            requests_decoded = get(&self.requests_decoded),
            rows_committed = get(&self.rows_committed),
            files_committed = get(&self.files_committed),
            wal_bytes_appended = get(&self.wal_bytes_appended),
            wal_bytes_on_disk = get(&self.wal_bytes_on_disk),
            flush_lag_ms = get(&self.flush_lag_ms),
            write_errors = get(&self.write_errors),
            requests = %requests,
            "collector stats"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
