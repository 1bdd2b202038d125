//! Storage faults injected with the `fail` crate at every WAL / Parquet / checkpoint i/o step
//! (`cargo test -p collector --features failpoints --test faults`), through the real pipeline
//! (and the real HTTP receiver for the 503). Each scenario then restarts on the same directory
//! (after a simulated crash where that matters) and proves that every acknowledged span is in
//! Parquet exactly once, that no temporary file is left, and that the collector recovers once
//! the fault is cleared, without a restart where the design says so.
//!
//! Fault points: `wal::write` (after the frame header: a disk filling up mid-record),
//! `wal::fsync`, `wal::rotate` (creating a segment), `parquet::write`, `parquet::fsync`,
//! `parquet::rename`, `parquet::dir_fsync`, `checkpoint::write`, `wal::dir_fsync` (the directory
//! entry of a new segment, owed by the next fsync), `convert::after_append` (the request
//! thread's conversion of a request record it has just appended; the request is still
//! acknowledged) and `record::convert` (converting a request record read back from the WAL). The fail configuration is
//! process-global: every test holds a [`fail::FailScenario`], which serialises them.

mod common;
mod store_support;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use collector::store::pipeline::{PipelineError, SubmitError};
use collector::store::wal::Wal;
use collector::{FsyncPolicy, Pipeline, Stats};
use schemas::layout;
use store_support::*;

/// Requests `range` submitted; returns those acknowledged.
fn submit_all(p: &Pipeline, range: std::ops::Range<u64>) -> BTreeSet<u64> {
    range.filter(|i| p.submit(&batch(*i)).is_ok()).collect()
}

fn degraded(stats: &Stats) -> bool {
    stats.storage_degraded.load(Ordering::Relaxed) == 1
}

/// The WAL of `dir` under `--fsync always` with one record per segment (every append rotates),
/// replaying into `replay`.
fn one_record_segments(dir: &Path, replay: impl FnMut(u64, Vec<u8>)) -> Wal {
    Wal::open(&layout::wal_dir(dir), FsyncPolicy::Always, 1, replay).unwrap()
}

/// The records a restart on `dir` replays, in order.
fn replayed(dir: &Path) -> Vec<(u64, Vec<u8>)> {
    let mut got = Vec::new();
    drop(one_record_segments(dir, |s, p| got.push((s, p))));
    got
}

/// Restart on `dir` with no fault, shut down cleanly, and check the store.
fn restart_and_check(dir: &Path, acked: &BTreeSet<u64>, maybe: &BTreeSet<u64>) {
    let (p, _) = start(config(dir));
    p.shutdown().expect("clean shutdown without faults");
    drop(p);
    assert_exactly_once(dir, acked, maybe);
    // A second start writes nothing again.
    let (p, _) = start(config(dir));
    assert_eq!(p.replayed_records(), 0, "everything was released");
    p.shutdown().unwrap();
    drop(p);
    assert_exactly_once(dir, acked, maybe);
}

#[test]
fn wal_write_failure_is_not_acknowledged_and_appends_resume() {
    let _s = fail::FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let (p, _) = start(config(dir.path()));
    let mut acked = submit_all(&p, 0..3);
    // Everything committed and released: the next append creates a new segment.
    p.flush().unwrap();
    fail::cfg("wal::write", "return").unwrap();
    for i in 3..6 {
        let e = p
            .submit(&batch(i))
            .expect_err("a failed WAL append is not acknowledged");
        assert!(matches!(e, SubmitError::Wal(_)), "{e}");
    }
    assert!(p.wal_failure().is_some(), "/health sees the failing WAL");
    fail::remove("wal::write");
    acked.extend(submit_all(&p, 6..10));
    assert_eq!(p.wal_failure(), None, "a successful append clears it");
    assert_eq!(acked.len(), 7);
    // Commit and release, then more records in the same segment: the release must not delete
    // the segment that is still being appended to.
    p.flush().unwrap();
    acked.extend(submit_all(&p, 10..14));
    p.pause_writer(true);
    p.abort();
    drop(p);
    restart_and_check(dir.path(), &acked, &BTreeSet::new());
}

#[test]
fn wal_fsync_failure_is_not_acknowledged() {
    let _s = fail::FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let (p, _) = start(config(dir.path()));
    let mut acked = submit_all(&p, 0..3);
    fail::cfg("wal::fsync", "return").unwrap();
    let refused: BTreeSet<u64> = (3..6).collect();
    for i in refused.iter() {
        assert!(
            p.submit(&batch(*i)).is_err(),
            "an unsynced record is not acknowledged"
        );
    }
    assert!(p.wal_failure().is_some(), "/health sees the failing fsync");
    fail::remove("wal::fsync");
    acked.extend(submit_all(&p, 6..10));
    assert_eq!(acked.len(), 7);
    p.pause_writer(true);
    p.abort();
    drop(p);
    // A refused record was written (not synced) before the fsync failed: it may be stored,
    // like a request whose answer was lost; never twice.
    restart_and_check(dir.path(), &acked, &refused);
}

#[test]
fn fsync_always_syncs_before_acknowledging_after_rotation_and_failed_writes() {
    let _s = fail::FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let syncs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&syncs);
    fail::cfg_callback("wal::fsync", move || {
        counter.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    let wal = one_record_segments(dir.path(), |_, _| {});
    // Record 0 appended, not yet committed; record 1 rotates to a new segment.
    let (s0, ()) = wal.append(b"zero", |_| ()).unwrap();
    let (s1, ()) = wal.append(b"one", |_| ()).unwrap();
    let before = syncs.load(Ordering::SeqCst);
    wal.commit(s0).unwrap();
    assert!(
        syncs.load(Ordering::SeqCst) >= before + 2,
        "the rotated-out segment and the current one are both fsynced"
    );
    wal.commit(s1).unwrap();
    // Record 2 appended, then an append fails (the segment is closed): committing record 2
    // must still fsync its segment.
    let (s2, ()) = wal.append(b"two", |_| ()).unwrap();
    fail::cfg("wal::write", "return").unwrap();
    assert!(wal.append(b"three", |_| ()).is_err());
    fail::remove("wal::write");
    let before = syncs.load(Ordering::SeqCst);
    wal.commit(s2).unwrap();
    assert!(
        syncs.load(Ordering::SeqCst) > before,
        "no acknowledgement without an fsync"
    );
    // And a failing fsync is an error, never a silent success.
    let (s3, ()) = wal.append(b"three", |_| ()).unwrap();
    fail::cfg("wal::fsync", "return").unwrap();
    assert!(wal.commit(s3).is_err());
    fail::remove("wal::fsync");
    wal.commit(s3).unwrap();
    drop(wal);
    let got = replayed(dir.path());
    let want: Vec<(u64, Vec<u8>)> = vec![
        (0, b"zero".to_vec()),
        (1, b"one".to_vec()),
        (2, b"two".to_vec()),
        (3, b"three".to_vec()),
    ];
    assert_eq!(got, want);
}

#[test]
fn wal_rotate_failure_is_not_acknowledged_and_rotation_resumes() {
    let _s = fail::FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.wal_segment_bytes = 1; // every record starts a new segment
    let (p, _) = start(c.clone());
    let mut acked = submit_all(&p, 0..3);
    fail::cfg("wal::rotate", "return").unwrap();
    assert!(
        submit_all(&p, 3..6).is_empty(),
        "no segment, no acknowledgement"
    );
    fail::remove("wal::rotate");
    acked.extend(submit_all(&p, 6..10));
    assert_eq!(acked.len(), 7);
    p.pause_writer(true);
    p.abort();
    drop(p);
    restart_and_check(dir.path(), &acked, &BTreeSet::new());
}

/// Parquet fails at `point` while data arrives: what was acknowledged stays in the WAL, new data
/// is refused, no temporary file is left, and once the fault is cleared the batcher recovers by
/// itself (no restart) and writes every acknowledged row exactly once.
fn parquet_fault_recovers_without_restart(point: &str) {
    let _s = fail::FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let (p, stats) = start(config(dir.path()));
    let mut acked = submit_all(&p, 0..2);
    p.flush().unwrap();
    fail::cfg(point, "return").unwrap();
    acked.extend(submit_all(&p, 2..5));
    // A commit fault shows at the flush; a write fault as soon as the writer takes a batch.
    assert!(
        acked.contains(&2),
        "{point}: accepted until the writer notices"
    );
    assert!(p.flush().is_err(), "{point}: the commit fails");
    assert!(degraded(&stats));
    let e = p
        .submit(&batch(5))
        .expect_err("refused while parquet writing fails");
    assert!(
        matches!(e, SubmitError::StorageDegraded { .. }),
        "{point}: {e}"
    );
    assert!(
        tmp_files(&layout::spans_dir(dir.path())).is_empty(),
        "{point}: failed files are removed"
    );
    fail::remove(point);
    wait_for("the batcher to recover", || !degraded(&stats));
    let before = acked.len();
    acked.extend(submit_all(&p, 6..9));
    assert_eq!(
        acked.len(),
        before + 3,
        "{point}: accepted again after recovery"
    );
    p.shutdown()
        .expect("clean shutdown once the fault is cleared");
    drop(p);
    assert_exactly_once(dir.path(), &acked, &BTreeSet::new());
    restart_and_check(dir.path(), &acked, &BTreeSet::new());
}

#[test]
fn parquet_write_failure_recovers() {
    parquet_fault_recovers_without_restart("parquet::write");
}

#[test]
fn parquet_fsync_failure_recovers() {
    parquet_fault_recovers_without_restart("parquet::fsync");
}

#[test]
fn parquet_rename_failure_recovers() {
    parquet_fault_recovers_without_restart("parquet::rename");
}

#[test]
fn parquet_dir_fsync_failure_recovers() {
    parquet_fault_recovers_without_restart("parquet::dir_fsync");
}

#[test]
fn a_crash_while_degraded_loses_nothing() {
    let _s = fail::FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let (p, stats) = start(config(dir.path()));
    let mut acked = submit_all(&p, 0..3);
    p.flush().unwrap();
    fail::cfg("parquet::rename", "return").unwrap();
    acked.extend(submit_all(&p, 3..6));
    let _ = p.flush();
    assert!(degraded(&stats));
    p.abort();
    drop(p);
    fail::remove("parquet::rename");
    restart_and_check(dir.path(), &acked, &BTreeSet::new());
}

#[test]
fn checkpoint_write_failure_writes_nothing_twice() {
    let _s = fail::FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let (p, _) = start(config(dir.path()));
    fail::cfg("checkpoint::write", "return").unwrap();
    let acked = submit_all(&p, 0..6);
    // The files are committed but the checkpoint cannot advance: the WAL keeps the records.
    p.flush().unwrap();
    p.pause_writer(true);
    p.abort();
    drop(p);
    fail::remove("checkpoint::write");
    let (p, _) = start(config(dir.path()));
    assert_eq!(p.replayed_records(), 6, "the records are still in the WAL");
    p.shutdown().unwrap();
    drop(p);
    restart_and_check(dir.path(), &acked, &BTreeSet::new());
}

#[test]
fn appends_and_acknowledgements_go_on_while_a_release_writes_the_checkpoint() {
    let _s = fail::FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let wal = Arc::new(one_record_segments(dir.path(), |_, _| {}));
    let (s0, ()) = wal.append(b"zero", |_| ()).unwrap();
    wal.commit(s0).unwrap();
    // The checkpoint write blocks until the test lets it go.
    let (entered_tx, entered) = std::sync::mpsc::channel::<()>();
    let (go, go_rx) = std::sync::mpsc::channel::<()>();
    let entered_tx = std::sync::Mutex::new(entered_tx);
    let go_rx = std::sync::Mutex::new(go_rx);
    fail::cfg_callback("checkpoint::write", move || {
        let _ = entered_tx.lock().unwrap().send(());
        let _ = go_rx.lock().unwrap().recv();
    })
    .unwrap();
    let releasing = {
        let wal = Arc::clone(&wal);
        std::thread::spawn(move || wal.release_below(s0 + 1))
    };
    entered
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the release reaches the checkpoint write");
    // Meanwhile a request appends (to a new segment) and is acknowledged.
    let (done_tx, done) = std::sync::mpsc::channel();
    {
        let wal = Arc::clone(&wal);
        std::thread::spawn(move || {
            let r = wal
                .append(b"one", |_| ())
                .and_then(|(s, ())| wal.commit(s).map(|()| s));
            let _ = done_tx.send(r.map_err(|e| e.to_string()));
        });
    }
    let acked = done.recv_timeout(std::time::Duration::from_secs(30));
    go.send(()).unwrap();
    fail::remove("checkpoint::write");
    let s1 = acked
        .expect("an append and its fsync do not wait for a checkpoint write")
        .expect("acknowledged");
    releasing.join().unwrap().expect("the release completes");
    drop(wal);
    // Record 0 is released, record 1 is replayed: nothing lost, nothing twice.
    let got = replayed(dir.path());
    assert_eq!(got, vec![(s1, b"one".to_vec())]);
}

#[test]
fn a_new_segment_is_not_acknowledged_until_its_directory_entry_is_durable() {
    let _s = fail::FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let wal = one_record_segments(dir.path(), |_, _| {});
    let dir_syncs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&dir_syncs);
    fail::cfg_callback("wal::dir_fsync", move || {
        counter.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    let (s0, ()) = wal.append(b"zero", |_| ()).unwrap();
    assert_eq!(dir_syncs.load(Ordering::SeqCst), 0, "not under the append");
    wal.commit(s0).unwrap();
    assert_eq!(dir_syncs.load(Ordering::SeqCst), 1, "owed by the fsync");
    // A failing directory fsync refuses the acknowledgement, and is still owed afterwards.
    let (s1, ()) = wal.append(b"one", |_| ()).unwrap();
    fail::cfg("wal::dir_fsync", "return").unwrap();
    assert!(wal.commit(s1).is_err(), "no acknowledgement without it");
    fail::cfg_callback("wal::dir_fsync", {
        let counter = Arc::clone(&dir_syncs);
        move || {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    })
    .unwrap();
    wal.commit(s1).unwrap();
    assert_eq!(
        dir_syncs.load(Ordering::SeqCst),
        2,
        "retried by the next fsync"
    );
    // Nothing new since: an fsync owes no directory sync.
    wal.sync_all().unwrap();
    assert_eq!(dir_syncs.load(Ordering::SeqCst), 2);
}

#[test]
fn shutdown_with_unwritten_rows_is_an_error_naming_the_wal() {
    let _s = fail::FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let (p, _) = start(config(dir.path()));
    p.pause_writer(true);
    let acked = submit_all(&p, 0..3);
    assert_eq!(acked.len(), 3);
    fail::cfg("parquet::write", "return").unwrap();
    let e = p
        .shutdown()
        .expect_err("rows left only in the WAL make shutdown fail");
    match &e {
        PipelineError::Unwritten {
            wal_dir,
            first_seq,
            last_seq,
            ..
        } => {
            assert_eq!((*first_seq, *last_seq), (0, 2));
            assert!(wal_dir.ends_with(layout::WAL_DIR), "{wal_dir}");
        }
        other => panic!("unexpected error: {other}"),
    }
    assert!(e.to_string().contains("0..=2"), "{e}");
    drop(p);
    fail::remove("parquet::write");
    restart_and_check(dir.path(), &acked, &BTreeSet::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_gets_503_with_retry_after_while_parquet_fails() {
    let _s = fail::FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path()).await;
    let req = |i: u64| common::request("http-svc", common::tool_call_spans(i, common::T0 + i));
    fail::cfg("parquet::write", "return").unwrap();
    let first = common::export(server.http_addr(), &req(0)).await;
    assert_eq!(first.status(), 200, "in the WAL: acknowledged");
    let stats = Arc::clone(server.pipeline().stats());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !degraded(&stats) {
        assert!(
            std::time::Instant::now() < deadline,
            "the writer notices the fault"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let refused = common::export(server.http_addr(), &req(1)).await;
    assert_eq!(refused.status(), 503);
    assert!(refused.headers().contains_key("retry-after"));
    fail::remove("parquet::write");
    while degraded(&stats) {
        assert!(std::time::Instant::now() < deadline, "the writer recovers");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let again = common::export(server.http_addr(), &req(2)).await;
    assert_eq!(again.status(), 200);
    server.shutdown().await.unwrap();
    let ids = common::stored_span_ids(dir.path());
    let want: BTreeSet<String> = [0u64, 2].iter().flat_map(|i| span_ids(*i)).collect();
    assert_eq!(ids.len(), 4);
    assert_eq!(ids.into_iter().collect::<BTreeSet<_>>(), want);
}

/// `convert::after_append`: the request thread's conversion fails on a request already in the
/// WAL. The request is acknowledged all the same; the batcher converts the record again from
/// the WAL: every span is stored exactly once, nothing is quarantined.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_conversion_on_the_request_thread_is_redone_from_the_wal() {
    let _s = fail::FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path()).await;
    fail::cfg("convert::after_append", "return").unwrap();
    for i in 0..3u64 {
        let req = common::request("convert-svc", common::tool_call_spans(i, common::T0 + i));
        assert_eq!(common::export(server.http_addr(), &req).await.status(), 200);
    }
    let stats = Arc::clone(server.pipeline().stats());
    server.shutdown().await.unwrap();
    fail::remove("convert::after_append");
    let ids: BTreeSet<String> = common::stored_span_ids(dir.path()).into_iter().collect();
    let want: BTreeSet<String> = (0..3u64).flat_map(span_ids).collect();
    assert_eq!(ids, want);
    assert_eq!(common::stored_span_ids(dir.path()).len(), 6, "exactly once");
    assert_eq!(stats.records_quarantined.load(Ordering::Relaxed), 0);
    assert!(!dir.path().join("quarantine").exists());
}

/// Both conversions of an acknowledged request fail (on its request thread and again from the
/// WAL):
/// the request is kept whole in `quarantine/`, counted, and `tripline ingest` of that file
/// stores its spans once the fault is gone. An acknowledged span never vanishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acknowledged_request_that_cannot_be_converted_is_quarantined() {
    let _s = fail::FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path()).await;
    let ok = common::request("convert-svc", common::tool_call_spans(0, common::T0));
    assert_eq!(common::export(server.http_addr(), &ok).await.status(), 200);
    fail::cfg("convert::after_append", "return").unwrap();
    fail::cfg("record::convert", "return").unwrap();
    let bad = common::request("convert-svc", common::tool_call_spans(1, common::T0 + 1));
    assert_eq!(common::export(server.http_addr(), &bad).await.status(), 200);
    let stats = Arc::clone(server.pipeline().stats());
    server.shutdown().await.unwrap();
    fail::remove("convert::after_append");
    fail::remove("record::convert");
    assert_eq!(stats.records_quarantined.load(Ordering::Relaxed), 1);
    let kept: Vec<_> = std::fs::read_dir(dir.path().join("quarantine"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].to_str().unwrap().ends_with(".pb"), "{kept:?}");
    let ids: BTreeSet<String> = common::stored_span_ids(dir.path()).into_iter().collect();
    assert_eq!(ids, span_ids(0).into_iter().collect::<BTreeSet<_>>());
    // The WAL moved past it: a restart replays nothing.
    let (p, _) = start(config(dir.path()));
    assert_eq!(p.replayed_records(), 0);
    let summary = collector::ingest::ingest_paths(&p, &kept, &Default::default());
    assert_eq!(summary.spans_accepted, 2, "{}", summary.render());
    p.shutdown().unwrap();
    drop(p);
    let ids: BTreeSet<String> = common::stored_span_ids(dir.path()).into_iter().collect();
    let want: BTreeSet<String> = (0..2u64).flat_map(span_ids).collect();
    assert_eq!(ids, want);
}
