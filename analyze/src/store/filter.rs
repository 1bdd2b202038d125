//! What a scan selects: the `--since/--until/--service/--trace` filters of the command line.
//!
//! The snapshot uses the filter to count the part files in the partitions it selects and to say
//! why a scan read nothing; the scan (`load`) pushes it into DataFusion as expressions, bounds on
//! the partition columns included, so whole partitions are pruned. It lives in the store, below
//! both, so that the store does not depend on the scan (`load` re-exports it).

use arrow::datatypes::DataType;
use chrono::{DateTime, Datelike, Timelike, Utc};
use datafusion::prelude::{cast, col, lit, Expr};
use datafusion::scalar::ScalarValue;
use schemas::schema::col as c;

use crate::error::LoadError;
use crate::model::span::TraceId;

/// Scan filters from the command line (`--since/--until/--service/--trace`).
#[derive(Clone, Debug, Default)]
pub struct ScanFilter {
    /// Inclusive lower bound on `start_time`, in ns since the epoch.
    pub since_ns: Option<i64>,
    /// Inclusive upper bound on `start_time`, in ns since the epoch.
    pub until_ns: Option<i64>,
    pub service: Option<String>,
    pub trace: Option<TraceId>,
}

impl ScanFilter {
    /// Builds a filter from the raw flag values, `now` anchoring relative times.
    pub fn parse(
        since: Option<&str>,
        until: Option<&str>,
        service: Option<&str>,
        trace: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Self, LoadError> {
        Ok(Self {
            since_ns: since.map(|s| parse_time(s, now)).transpose()?,
            until_ns: until.map(|s| parse_time(s, now)).transpose()?,
            service: service.map(str::to_string),
            trace: trace
                .map(|t| TraceId::parse_hex(t).ok_or_else(|| LoadError::BadTraceId(t.into())))
                .transpose()?,
        })
    }

    /// The filter as DataFusion expressions: bounds on `start_time_unix_nano` plus the same bounds
    /// on the partition columns, which DataFusion evaluates against directory names to prune.
    pub fn exprs(&self) -> Vec<Expr> {
        let mut out = Vec::new();
        let hour = || cast(col("hour"), DataType::Int32);
        if let Some(ns) = self.since_ns {
            out.push(col(c::START_TIME_UNIX_NANO).gt_eq(lit(ns)));
            if let Some((date, h)) = partition_of(ns) {
                out.push(
                    col("date")
                        .gt(lit(date.clone()))
                        .or(col("date").eq(lit(date)).and(hour().gt_eq(lit(h)))),
                );
            }
        }
        if let Some(ns) = self.until_ns {
            out.push(col(c::START_TIME_UNIX_NANO).lt_eq(lit(ns)));
            if let Some((date, h)) = partition_of(ns) {
                out.push(
                    col("date")
                        .lt(lit(date.clone()))
                        .or(col("date").eq(lit(date)).and(hour().lt_eq(lit(h)))),
                );
            }
        }
        if let Some(s) = &self.service {
            out.push(col(c::SERVICE_NAME).eq(lit(s.clone())));
        }
        if let Some(t) = self.trace {
            out.push(col(c::TRACE_ID).eq(lit(ScalarValue::Binary(Some(t.0.to_vec())))));
        }
        out
    }
}

impl ScanFilter {
    /// Whether a `date=` / `hour=` partition can hold spans within the time bounds.
    pub fn admits_partition(&self, date: &str, hour: &str) -> bool {
        let Ok(hour) = hour.parse::<i32>() else {
            return true;
        };
        let after = |ns: i64| {
            partition_of(ns).is_none_or(|(d, h)| date > d.as_str() || (date == d && hour >= h))
        };
        let before = |ns: i64| {
            partition_of(ns).is_none_or(|(d, h)| date < d.as_str() || (date == d && hour <= h))
        };
        self.since_ns.is_none_or(after) && self.until_ns.is_none_or(before)
    }

    /// The filter as the flags that express it (`--since 2026-11-30T00:00:00Z --service x`).
    pub fn describe(&self) -> String {
        let time = |ns: i64| DateTime::<Utc>::from_timestamp_nanos(ns).to_rfc3339();
        let mut parts = Vec::new();
        if let Some(ns) = self.since_ns {
            parts.push(format!("--since {}", time(ns)));
        }
        if let Some(ns) = self.until_ns {
            parts.push(format!("--until {}", time(ns)));
        }
        if let Some(s) = &self.service {
            parts.push(format!("--service {s}"));
        }
        if let Some(t) = &self.trace {
            parts.push(format!("--trace {t}"));
        }
        if parts.is_empty() {
            "the scan".to_string()
        } else {
            parts.join(" ")
        }
    }
}

/// The `date=` / `hour=` partition a timestamp falls in (UTC, hour not zero-padded).
fn partition_of(ns: i64) -> Option<(String, i32)> {
    let t = DateTime::<Utc>::from_timestamp_nanos(ns);
    let date = format!("{:04}-{:02}-{:02}", t.year(), t.month(), t.day());
    i32::try_from(t.hour()).ok().map(|h| (date, h))
}

/// RFC 3339, or a relative duration before `now` (`90s`, `30m`, `24h`, `7d`, `2w`).
pub fn parse_time(s: &str, now: DateTime<Utc>) -> Result<i64, LoadError> {
    let bad = || LoadError::BadTime { value: s.into() };
    let t = s.trim();
    if let Ok(dt) = DateTime::parse_from_rfc3339(t) {
        return dt.with_timezone(&Utc).timestamp_nanos_opt().ok_or_else(bad);
    }
    let split = t.find(|ch: char| !ch.is_ascii_digit()).ok_or_else(bad)?;
    let (num, unit) = t.split_at(split);
    let n: i64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "s" => n,
        "m" => n.checked_mul(60).ok_or_else(bad)?,
        "h" => n.checked_mul(3600).ok_or_else(bad)?,
        "d" => n.checked_mul(86_400).ok_or_else(bad)?,
        "w" => n.checked_mul(7 * 86_400).ok_or_else(bad)?,
        _ => return Err(bad()),
    };
    let now_ns = now.timestamp_nanos_opt().ok_or_else(bad)?;
    secs.checked_mul(1_000_000_000)
        .and_then(|d| now_ns.checked_sub(d))
        .ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 30, 8, 0, 0).unwrap()
    }

    #[test]
    fn parses_relative_and_absolute_times() {
        let now_ns = now().timestamp_nanos_opt().unwrap();
        assert_eq!(
            parse_time("24h", now()).unwrap(),
            now_ns - 86_400 * 1_000_000_000
        );
        assert_eq!(
            parse_time("30m", now()).unwrap(),
            now_ns - 1_800 * 1_000_000_000
        );
        assert_eq!(
            parse_time("2026-11-29T07:00:00Z", now()).unwrap(),
            now_ns - 25 * 3_600 * 1_000_000_000
        );
        assert!(matches!(
            parse_time("yesterday", now()),
            Err(LoadError::BadTime { value }) if value == "yesterday"
        ));
        assert!(parse_time("5y", now()).is_err());
        assert!(parse_time("h", now()).is_err());
    }

    #[test]
    fn partition_of_is_not_zero_padded() {
        let ns = parse_time("2026-11-30T07:59:59Z", now()).unwrap();
        assert_eq!(partition_of(ns), Some(("2026-11-30".to_string(), 7)));
    }

    #[test]
    fn bad_trace_id_is_an_error_naming_it() {
        let e = ScanFilter::parse(None, None, None, Some("abc"), now()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid trace id \"abc\": expected 32 hex digits"
        );
    }
}
