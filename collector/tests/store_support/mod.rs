//! Helpers for the storage-fault tests (tests/wal_corruption.rs, tests/faults.rs): a pipeline on
//! a temporary store driven through the real library API, numbered requests whose span ids are
//! known, and the check that the store holds exactly the acknowledged spans, once each.
#![allow(dead_code)]

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use collector::{Pipeline, PipelineConfig, Stats};
use schemas::convert::{convert_request, Converted, IngestContext};

use crate::common::{hex, request, span_id, stored_span_ids, tool_call_spans, T0};
use schemas::layout;
// Each test binary uses some of these.
#[allow(unused_imports)]
pub use testkit::store::{copy_dir, tmp_files, wal_segments};
#[allow(unused_imports)]
pub use testkit::wait::{wait_for, wait_up_to};

/// A pipeline configuration for tests: `--fsync always`, small row groups, files committed
/// only on flush / shutdown (an hour of age) unless a test says otherwise.
pub fn config(dir: &Path) -> PipelineConfig {
    let mut c = PipelineConfig::new(dir);
    c.max_file_age = Duration::from_secs(3600);
    c
}

pub fn start(c: PipelineConfig) -> (Pipeline, Arc<Stats>) {
    let stats = Arc::new(Stats::default());
    let p = Pipeline::start(c, Arc::clone(&stats)).expect("pipeline starts");
    (p, stats)
}

/// Request `i`: one tool call (two spans) in hour 10 of 2026-11-30.
pub fn batch(i: u64) -> Converted {
    convert(&request(
        "faults-svc",
        tool_call_spans(i, T0 + i * 1_000_000),
    ))
}

pub fn convert(
    req: &opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest,
) -> Converted {
    convert_request(
        req,
        &IngestContext {
            received_at_unix_nano: T0 as i64,
            source: "test".into(),
            redact_content: false,
        },
    )
}

/// The span ids (hex) of request `i`.
pub fn span_ids(i: u64) -> [String; 2] {
    [hex(&span_id(i * 2)), hex(&span_id(i * 2 + 1))]
}

/// The store holds the spans of exactly the `acked` requests, each once, and may hold those
/// of `maybe` (requests refused after their WAL append, e.g. a failed fsync) at most once.
pub fn assert_exactly_once(dir: &Path, acked: &BTreeSet<u64>, maybe: &BTreeSet<u64>) {
    let stored = stored_span_ids(dir);
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for id in &stored {
        *counts.entry(id.as_str()).or_default() += 1;
    }
    let dups: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(dups.is_empty(), "duplicate span ids in the store: {dups:?}");
    let missing: Vec<u64> = acked
        .iter()
        .copied()
        .filter(|i| {
            span_ids(*i)
                .iter()
                .any(|id| !counts.contains_key(id.as_str()))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "acknowledged requests missing from the store: {missing:?}"
    );
    let allowed: BTreeSet<String> = acked
        .iter()
        .chain(maybe)
        .flat_map(|i| span_ids(*i))
        .collect();
    let extra: Vec<&String> = stored.iter().filter(|id| !allowed.contains(*id)).collect();
    assert!(
        extra.is_empty(),
        "spans that were never acknowledged: {extra:?}"
    );
    assert!(
        tmp_files(&layout::spans_dir(dir)).is_empty(),
        "no temporary parquet file is left"
    );
    // And the store's own checker agrees: every file readable, WAL consistent, nothing left over.
    let report = collector::store::verify::verify(dir).expect("tripline verify runs");
    assert!(report.healthy(), "tripline verify: {report:?}");
}

/// Offsets and lengths of the frames of one segment (`magic | len | crc | seq | payload`).
pub fn frames(segment: &Path) -> Vec<(usize, usize, u64)> {
    let bytes = std::fs::read(segment).unwrap();
    let mut out = Vec::new();
    let mut off = 0;
    while off + 20 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[off + 4..off + 8].try_into().unwrap()) as usize;
        let seq = u64::from_le_bytes(bytes[off + 12..off + 20].try_into().unwrap());
        out.push((off, 20 + len, seq));
        off += 20 + len;
    }
    out
}
