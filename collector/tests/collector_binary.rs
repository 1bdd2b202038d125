//! `tripline-collector`, the collector alone, through the real binary: it receives OTLP over
//! HTTP and stores every acknowledged span (read back from the Parquet files), imports a
//! recorded export with `ingest`, and carries no analyzer command.

#![cfg(unix)]

mod common;

use std::process::Command;

use common::*;
use testkit::collector::RunningCollector;

const BIN: &str = env!("CARGO_BIN_EXE_tripline-collector");

#[test]
fn collect_acknowledges_and_stores_every_span() {
    let store = tempfile::tempdir().unwrap();
    let collector = RunningCollector::start(BIN, store.path(), &[]);
    let http = collector.http;
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        for i in 0..3 {
            export_ok(http, &request("crm-agent", tool_call_spans(4, i * 4))).await;
        }
    });
    // SIGTERM: a clean stop flushes the WAL into Parquet files.
    let status = collector.stop();
    assert!(status.success(), "clean stop: {status}");

    let mut ids = stored_span_ids(store.path());
    ids.sort();
    let mut sent: Vec<String> = (0..3)
        .flat_map(|i| tool_call_spans(4, i * 4))
        .map(|s| hex(&s.span_id))
        .collect();
    sent.sort();
    assert_eq!(
        ids, sent,
        "every acknowledged span is in the Parquet files, once"
    );
    let services = stored_services(store.path());
    assert_eq!(services.len(), sent.len());
    assert!(services.iter().all(|s| s == "crm-agent"), "{services:?}");
}

#[test]
fn ingest_imports_a_recorded_export() {
    let input = tempfile::tempdir().unwrap();
    let spans = tool_call_spans(5, 0);
    let body = serde_json::to_vec(&request("field-service", spans.clone())).unwrap();
    std::fs::write(input.path().join("export.json"), body).unwrap();
    let store = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .env("TRIPLINE_LOG", "warn")
        .arg("ingest")
        .arg("--data-dir")
        .arg(store.path())
        .arg(input.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stored_span_ids(store.path()).len(), spans.len());
}

#[test]
fn the_analyzer_commands_are_not_in_it() {
    let out = Command::new(BIN).arg("check").output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown subcommand is a usage error"
    );
    let help = Command::new(BIN).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("collect") && help.contains("ingest"),
        "{help}"
    );
    assert!(!help.contains("check"), "{help}");
}

/// Threads of process `pid` right now (`/proc/PID/task`).
fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count())
}

/// Requests beyond the processing slots wait in a bounded blocking pool: many concurrent
/// requests do not start a thread each (every thread that converts a request keeps its own
/// allocator heap; 73 threads were most of a 2.9 GB overload peak, BENCHMARKS.md session 11),
/// and every one of them is still acknowledged and stored.
#[cfg(target_os = "linux")]
#[test]
fn concurrent_requests_wait_in_a_bounded_thread_pool() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;

    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    // More concurrent requests than any bounded pool has threads.
    let requests = 4 * cores as u64 + 16;
    // 200 tool calls (400 spans) per request: long enough to convert that the requests overlap.
    let calls = 200;
    let store = tempfile::tempdir().unwrap();
    let collector = RunningCollector::start(BIN, store.path(), &[]);
    let (http, pid) = (collector.http, collector.pid());
    let idle = threads(pid);
    assert!(idle > 0, "cannot count the collector's threads");

    let done = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicUsize::new(idle));
    let sampler = {
        let (done, peak) = (Arc::clone(&done), Arc::clone(&peak));
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                peak.fetch_max(threads(pid), Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        })
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let sends = (0..requests).map(|i| {
            let spans = (0..calls)
                .flat_map(|k| tool_call_spans(i * calls + k, k * 1_000))
                .collect();
            let body = request("crm-agent", spans);
            async move { export_ok(http, &body).await }
        });
        futures::future::join_all(sends).await;
    });
    done.store(true, Ordering::SeqCst);
    sampler.join().unwrap();
    let peak = peak.load(Ordering::SeqCst);
    // Idle threads (runtime workers, batcher, main...) plus at most the pool: slots (one per
    // core) + 2. Unbounded, the pool grows towards one thread per waiting request.
    let bound = idle + cores + 2;
    assert!(
        peak <= bound,
        "{peak} threads for {requests} concurrent requests (idle {idle}, bound {bound})"
    );

    let status = collector.stop();
    assert!(status.success(), "clean stop: {status}");
    assert_eq!(
        stored_span_ids(store.path()).len() as u64,
        requests * calls * 2,
        "every acknowledged span is stored"
    );
}
