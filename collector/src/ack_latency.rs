//! Where an acknowledgement's time goes: one latency histogram per step of the acknowledgement
//! path, exposed on `/metrics` as `tripline_ack_stage_seconds` and summarised in the stats line.
//!
//! Why: a client sees one number (the time to its answer). When its tail is long, the operator
//! needs to know which step holds it — the body's upload, waiting for the work to start, waiting
//! for one of the processing slots, decoding, the queue reservation and WAL append, the
//! conversion, or the WAL fsync — before changing a setting. Fixed buckets and relaxed atomics:
//! recording costs a few instructions and never allocates or locks, so it stays on the request
//! path.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A step of the acknowledgement path, in the order a request takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckStage {
    /// OTLP/HTTP only: from the request's admission (its headers read) to its whole body
    /// received, or to the read's failure. The client's upload and the worker's reads of it; a
    /// long tail here with a short `total` lies in the transfer, not in the collector's work.
    /// Not recorded for OTLP/gRPC: tonic reads and decodes the message before the service sees
    /// the request.
    BodyRead,
    /// From the whole body received (HTTP) or the message decoded by tonic (gRPC) to the
    /// request's synchronous work starting ([`crate::receive::on_worker`]): near zero on a
    /// multi-thread runtime since session 33, a blocking thread's wake-up before.
    BlockingWait,
    /// Waiting behind earlier requests for one of the processing slots (one per core).
    SlotWait,
    /// Decompression, protobuf/JSON decode and validation (and, for logs or under
    /// `--redact-content`, conversion).
    Decode,
    /// Queue reservation and the WAL append of the record.
    WalAppend,
    /// A trace request's conversion to rows on its request thread, after its WAL append and
    /// before its fsync (ADR 0004). Not recorded for requests converted before the WAL (logs,
    /// `--redact-content`: in `Decode`).
    Convert,
    /// The wait for the WAL fsync after the append (and the conversion): `--fsync always`; near
    /// zero otherwise, or when another request's fsync already covered this record.
    WalFsync,
    /// From the whole body received (as for `BlockingWait`) to the answer: the sum of the
    /// stages after `BodyRead`, measured once.
    Total,
}

impl AckStage {
    /// Every stage, in path order.
    pub const ALL: [AckStage; 8] = [
        AckStage::BodyRead,
        AckStage::BlockingWait,
        AckStage::SlotWait,
        AckStage::Decode,
        AckStage::WalAppend,
        AckStage::Convert,
        AckStage::WalFsync,
        AckStage::Total,
    ];

    /// The `stage` label value.
    pub fn label(self) -> &'static str {
        match self {
            AckStage::BodyRead => "body_read",
            AckStage::BlockingWait => "blocking_wait",
            AckStage::SlotWait => "slot_wait",
            AckStage::Decode => "decode",
            AckStage::WalAppend => "wal_append",
            AckStage::Convert => "convert",
            AckStage::WalFsync => "wal_fsync",
            AckStage::Total => "total",
        }
    }
}

/// Upper bounds of the buckets, in microseconds (the last bucket, `+Inf`, is implicit).
pub const BUCKET_BOUNDS_MICROS: [u64; 14] = [
    250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000,
    2_500_000, 5_000_000,
];
const BUCKETS: usize = BUCKET_BOUNDS_MICROS.len() + 1;

/// One stage's histogram: counts per bucket (not cumulative) and the sum of the observations.
#[derive(Debug, Default)]
struct Histogram {
    counts: [AtomicU64; BUCKETS],
    sum_micros: AtomicU64,
}

impl Histogram {
    fn record(&self, micros: u64) {
        let i = BUCKET_BOUNDS_MICROS.partition_point(|&bound| bound < micros);
        self.counts[i].fetch_add(1, Ordering::Relaxed);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    fn snapshot(&self) -> [u64; BUCKETS] {
        std::array::from_fn(|i| self.counts[i].load(Ordering::Relaxed))
    }
}

/// The histograms of every [`AckStage`].
#[derive(Debug, Default)]
pub struct AckLatency {
    stages: [Histogram; AckStage::ALL.len()],
}

impl AckLatency {
    /// Record one request's time in `stage`.
    pub fn record(&self, stage: AckStage, took: Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.stages[stage as usize].record(micros);
    }

    /// Requests recorded in `stage`.
    pub fn count(&self, stage: AckStage) -> u64 {
        self.stages[stage as usize].snapshot().iter().sum()
    }

    /// The upper bound of the bucket holding quantile `q` (0–1) of `stage`, in microseconds:
    /// `None` when nothing was recorded, `u64::MAX` when it lies past the last bound.
    pub fn quantile_bound_micros(&self, stage: AckStage, q: f64) -> Option<u64> {
        let counts = self.stages[stage as usize].snapshot();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, n) in counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(BUCKET_BOUNDS_MICROS.get(i).copied().unwrap_or(u64::MAX));
            }
        }
        Some(u64::MAX)
    }

    /// `stage=p99_bound_ms` for every stage with observations, e.g.
    /// `slot_wait<=5ms,decode<=2.5ms,...` (`>5000ms` past the last bound): for the stats line.
    pub fn p99_summary(&self) -> String {
        AckStage::ALL
            .iter()
            .filter_map(|&s| {
                let bound = self.quantile_bound_micros(s, 0.99)?;
                Some(if bound == u64::MAX {
                    format!(
                        "{}>{}ms",
                        s.label(),
                        BUCKET_BOUNDS_MICROS[BUCKETS - 2] / 1000
                    )
                } else {
                    format!("{}<={}ms", s.label(), bound as f64 / 1000.0)
                })
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The histograms in the Prometheus text format: `tripline_ack_stage_seconds` with a
    /// `stage` label, cumulative `_bucket`s, `_sum` and `_count`.
    pub fn prometheus_text(&self, out: &mut String) {
        use std::fmt::Write as _;
        let _ = writeln!(
            out,
            "# HELP tripline_ack_stage_seconds Time an acknowledged or refused request spent in each step of the acknowledgement path."
        );
        let _ = writeln!(out, "# TYPE tripline_ack_stage_seconds histogram");
        for stage in AckStage::ALL {
            let h = &self.stages[stage as usize];
            let counts = h.snapshot();
            let label = stage.label();
            let mut cumulative = 0;
            for (i, n) in counts.iter().enumerate() {
                cumulative += n;
                let le = match BUCKET_BOUNDS_MICROS.get(i) {
                    Some(&b) => format!("{}", b as f64 / 1e6),
                    None => "+Inf".to_string(),
                };
                let _ = writeln!(
                    out,
                    "tripline_ack_stage_seconds_bucket{{stage=\"{label}\",le=\"{le}\"}} {cumulative}"
                );
            }
            let sum = h.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
            let _ = writeln!(
                out,
                "tripline_ack_stage_seconds_sum{{stage=\"{label}\"}} {sum}"
            );
            let _ = writeln!(
                out,
                "tripline_ack_stage_seconds_count{{stage=\"{label}\"}} {cumulative}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_land_in_the_bucket_of_their_upper_bound() {
        let l = AckLatency::default();
        l.record(AckStage::Decode, Duration::from_micros(250)); // on the bound: first bucket
        l.record(AckStage::Decode, Duration::from_micros(251)); // just past: second
        l.record(AckStage::Decode, Duration::from_secs(60)); // past every bound: +Inf
        let mut text = String::new();
        l.prometheus_text(&mut text);
        assert!(
            text.contains("tripline_ack_stage_seconds_bucket{stage=\"decode\",le=\"0.00025\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("tripline_ack_stage_seconds_bucket{stage=\"decode\",le=\"0.0005\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("tripline_ack_stage_seconds_bucket{stage=\"decode\",le=\"5\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("tripline_ack_stage_seconds_bucket{stage=\"decode\",le=\"+Inf\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("tripline_ack_stage_seconds_count{stage=\"decode\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("tripline_ack_stage_seconds_sum{stage=\"decode\"} 60.000501\n"),
            "{text}"
        );
        assert!(
            text.contains("tripline_ack_stage_seconds_count{stage=\"wal_fsync\"} 0\n"),
            "{text}"
        );
        assert_eq!(l.count(AckStage::Decode), 3);
        assert_eq!(l.count(AckStage::Total), 0);
    }

    #[test]
    fn the_quantile_bound_is_the_bucket_that_reaches_the_rank() {
        let l = AckLatency::default();
        assert_eq!(l.quantile_bound_micros(AckStage::WalFsync, 0.99), None);
        for _ in 0..98 {
            l.record(AckStage::WalFsync, Duration::from_micros(800));
        }
        l.record(AckStage::WalFsync, Duration::from_millis(40));
        // 98 of 100 under 1 ms: the 99th rank is the 40 ms one, in the 50 ms bucket.
        l.record(AckStage::WalFsync, Duration::from_millis(300));
        assert_eq!(
            l.quantile_bound_micros(AckStage::WalFsync, 0.5),
            Some(1_000)
        );
        assert_eq!(
            l.quantile_bound_micros(AckStage::WalFsync, 0.99),
            Some(50_000)
        );
        assert_eq!(
            l.quantile_bound_micros(AckStage::WalFsync, 1.0),
            Some(500_000)
        );
        l.record(AckStage::SlotWait, Duration::from_secs(9));
        assert_eq!(
            l.quantile_bound_micros(AckStage::SlotWait, 0.99),
            Some(u64::MAX)
        );
        assert_eq!(
            l.p99_summary(),
            "slot_wait>5000ms,wal_fsync<=50ms",
            "stages without observations are left out"
        );
    }
}
