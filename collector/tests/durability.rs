//! Acknowledged spans survive a crash, exactly once.
//!
//! The crash is simulated in-process: the Parquet writer is paused (nothing acknowledged reaches
//! Parquet) and the collector is aborted, leaving only the WAL (and possibly temporary files).
//! A restart on the same directory must replay exactly the acknowledged spans, and a second
//! restart must not write them again. A crash between a Parquet rename and the WAL checkpoint is
//! reproduced by restoring the WAL as it was before the commit.

mod common;

use std::collections::HashSet;
use std::path::Path;

use common::*;
use schemas::layout;
use testkit::store::{copy_dir, tmp_files};

const N_REQUESTS: u64 = 25;

async fn send_acknowledged(server: &collector::Server, first: u64, n: u64) {
    for i in first..first + n {
        let req = request("durable-svc", tool_call_spans(i, T0 + i * 1_000_000));
        export_ok(server.http_addr(), &req).await;
    }
}

fn assert_exactly(data_dir: &Path, expected_spans: usize) {
    let ids = stored_span_ids(data_dir);
    let distinct: HashSet<&String> = ids.iter().collect();
    assert_eq!(ids.len(), expected_spans, "rows in the store");
    assert_eq!(
        distinct.len(),
        expected_spans,
        "distinct span ids in the store"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_spans_survive_a_crash_before_any_parquet_write() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    server.pipeline().pause_writer(true);
    send_acknowledged(&server, 0, N_REQUESTS).await;
    server.abort().await;
    assert!(
        part_files(dir.path()).is_empty(),
        "nothing reached parquet before the crash"
    );

    let restarted = start(dir.path()).await;
    assert_eq!(restarted.pipeline().replayed_records(), N_REQUESTS);
    restarted.shutdown().await.unwrap();
    assert_exactly(dir.path(), 2 * N_REQUESTS as usize);

    let again = start(dir.path()).await;
    assert_eq!(
        again.pipeline().replayed_records(),
        0,
        "a clean shutdown leaves nothing to replay"
    );
    again.shutdown().await.unwrap();
    assert_exactly(dir.path(), 2 * N_REQUESTS as usize);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_with_open_files_leaves_no_tmp_and_no_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    // Some requests reach committed files, some only an open (temporary) file, then a crash.
    send_acknowledged(&server, 0, 10).await;
    server.pipeline().flush().unwrap();
    send_acknowledged(&server, 10, 10).await;
    // Let the writer take the last batches into its open file before the crash.
    while server.pipeline().queued_batches() > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    server.abort().await;
    let tmp_before = tmp_files(&layout::spans_dir(dir.path())).len();
    assert_eq!(tmp_before, 1, "the crash left the open file behind");

    let restarted = start(dir.path()).await;
    restarted.shutdown().await.unwrap();
    assert_exactly(dir.path(), 40);
    let tmp_after = tmp_files(&layout::spans_dir(dir.path())).len();
    assert_eq!(tmp_after, 0, "temporary files are removed on start");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_between_parquet_rename_and_wal_release_writes_nothing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let saved_wal = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    server.pipeline().pause_writer(true);
    send_acknowledged(&server, 0, N_REQUESTS).await;
    // The WAL holds every record and the checkpoint says nothing is durable yet.
    copy_dir(&layout::wal_dir(dir.path()), saved_wal.path());
    server.pipeline().pause_writer(false);
    server.shutdown().await.unwrap();
    assert_exactly(dir.path(), 2 * N_REQUESTS as usize);

    // Put the WAL back as it was before the files were committed: exactly the state a crash
    // right after the rename (before the checkpoint) leaves.
    std::fs::remove_dir_all(layout::wal_dir(dir.path())).unwrap();
    copy_dir(saved_wal.path(), &layout::wal_dir(dir.path()));

    let restarted = start(dir.path()).await;
    assert_eq!(restarted.pipeline().replayed_records(), N_REQUESTS);
    restarted.shutdown().await.unwrap();
    assert_exactly(dir.path(), 2 * N_REQUESTS as usize);
}
