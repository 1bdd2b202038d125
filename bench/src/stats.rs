//! Latency summaries: exact percentiles over every recorded request.
//!
//! Why exact and not a histogram: a benchmark run is bounded (at most a few hundred thousand
//! requests), so keeping every latency costs a few MB and removes any bucketing error from the
//! p99 the targets are judged on.

use serde::Serialize;

/// Percentiles of request latency, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencySummary {
    pub count: usize,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
}

/// Nearest-rank percentile (`q` in 0..=1) of an ascending slice; `None` when empty.
pub fn percentile(sorted: &[u64], q: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.saturating_sub(1).min(sorted.len() - 1)])
}

/// Summarises latencies given in microseconds (the slice is sorted in place).
pub fn summarize_micros(latencies_us: &mut [u64]) -> LatencySummary {
    latencies_us.sort_unstable();
    let ms = |v: Option<u64>| v.map(|us| us as f64 / 1000.0).unwrap_or(0.0);
    let mean = if latencies_us.is_empty() {
        0.0
    } else {
        latencies_us.iter().sum::<u64>() as f64 / latencies_us.len() as f64 / 1000.0
    };
    LatencySummary {
        count: latencies_us.len(),
        p50_ms: ms(percentile(latencies_us, 0.50)),
        p90_ms: ms(percentile(latencies_us, 0.90)),
        p99_ms: ms(percentile(latencies_us, 0.99)),
        max_ms: ms(latencies_us.last().copied()),
        mean_ms: mean,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 0.50), Some(50));
        assert_eq!(percentile(&v, 0.99), Some(99));
        assert_eq!(percentile(&v, 1.0), Some(100));
        assert_eq!(percentile(&v, 0.0), Some(1));
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(percentile(&[7], 0.99), Some(7));
    }

    #[test]
    fn summary_in_milliseconds() {
        let mut v = vec![4000, 1000, 3000, 2000];
        let s = summarize_micros(&mut v);
        assert_eq!(s.count, 4);
        assert_eq!(s.p50_ms, 2.0);
        assert_eq!(s.p99_ms, 4.0);
        assert_eq!(s.max_ms, 4.0);
        assert_eq!(s.mean_ms, 2.5);
    }

    #[test]
    fn empty_summary_is_zero() {
        let s = summarize_micros(&mut []);
        assert_eq!(s.count, 0);
        assert_eq!(s.p99_ms, 0.0);
        assert_eq!(s.mean_ms, 0.0);
    }
}
