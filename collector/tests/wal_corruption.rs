//! Damage to the WAL and its checkpoint, and requests that touch many partitions, through the
//! real pipeline (no fault injection): an acknowledged span is never lost silently and never
//! written twice.
//!
//! - a flipped byte in one WAL record costs that record only, reported by sequence number;
//! - a deleted or corrupt checkpoint is rebuilt from the Parquet files: no duplicates, no loss;
//! - one request spread over 2,500 hours keeps at most `max_open_files` part files open.

mod common;
mod store_support;

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;

use common::{request, T0};
use opentelemetry_proto::tonic::trace::v1::Span;
use schemas::layout;
use store_support::*;

/// Ten acknowledged requests, only in the WAL (the writer is paused, then the process "crashes").
fn ten_requests_in_the_wal(dir: &std::path::Path) {
    let (p, _) = start(config(dir));
    p.pause_writer(true);
    for i in 0..10 {
        p.submit(&batch(i)).expect("acknowledged");
    }
    p.abort();
}

#[test]
fn a_flipped_byte_in_record_3_of_10_loses_only_that_record() {
    let dir = tempfile::tempdir().unwrap();
    ten_requests_in_the_wal(dir.path());
    let segments = wal_segments(dir.path());
    assert_eq!(segments.len(), 1);
    let frames = frames(&segments[0]);
    assert_eq!(frames.len(), 10);
    let (off, len, seq) = frames[2];
    assert_eq!(seq, 2, "record 3 of 10 has sequence number 2");
    let mut bytes = std::fs::read(&segments[0]).unwrap();
    bytes[off + len / 2] ^= 0x10;
    std::fs::write(&segments[0], &bytes).unwrap();

    let (p, stats) = start(config(dir.path()));
    assert_eq!(
        p.replayed_records(),
        9,
        "records 1, 2 and 4..10 are replayed"
    );
    assert_eq!(
        stats.wal_records_lost.load(Ordering::Relaxed),
        1,
        "exactly seq 2 is lost"
    );
    // New appends after the resynchronised scan land in a readable segment.
    p.submit(&batch(10))
        .expect("acknowledged after the restart");
    p.shutdown().unwrap();
    let acked: BTreeSet<u64> = (0..11).filter(|i| *i != 2).collect();
    assert_exactly_once(dir.path(), &acked, &BTreeSet::new());

    let (p, stats) = start(config(dir.path()));
    assert_eq!(p.replayed_records(), 0, "nothing is replayed twice");
    assert_eq!(stats.wal_records_lost.load(Ordering::Relaxed), 0);
    p.shutdown().unwrap();
    assert_exactly_once(dir.path(), &acked, &BTreeSet::new());
}

#[test]
fn damage_after_the_last_intact_record_is_a_torn_tail_not_a_loss() {
    let dir = tempfile::tempdir().unwrap();
    ten_requests_in_the_wal(dir.path());
    let segment = &wal_segments(dir.path())[0];
    let frames = frames(segment);
    let (off, len, _) = frames[9];
    // A crash mid-append: the last record is cut short.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(segment)
        .unwrap();
    f.set_len((off + len / 2) as u64).unwrap();
    drop(f);
    let (p, stats) = start(config(dir.path()));
    assert_eq!(p.replayed_records(), 9);
    assert_eq!(stats.wal_records_lost.load(Ordering::Relaxed), 0);
    p.submit(&batch(10)).unwrap();
    p.shutdown().unwrap();
    let acked: BTreeSet<u64> = (0..11).filter(|i| *i != 9).collect();
    assert_exactly_once(dir.path(), &acked, &BTreeSet::new());
}

/// Requests 0..10 committed to Parquet while the WAL (restored from a copy) still holds them,
/// then five more only in the WAL; `damage` is applied to the checkpoint before each start.
fn checkpoint_lost_twice(damage: impl Fn(&std::path::Path)) {
    let dir = tempfile::tempdir().unwrap();
    let saved = tempfile::tempdir().unwrap();
    let (p, _) = start(config(dir.path()));
    p.pause_writer(true);
    for i in 0..10 {
        p.submit(&batch(i)).unwrap();
    }
    copy_dir(&layout::wal_dir(dir.path()), saved.path());
    p.pause_writer(false);
    p.shutdown().unwrap();
    drop(p);
    let all_ten: BTreeSet<u64> = (0..10).collect();
    assert_exactly_once(dir.path(), &all_ten, &BTreeSet::new());
    // The WAL as it was before the commit: every record is also in Parquet.
    std::fs::remove_dir_all(layout::wal_dir(dir.path())).unwrap();
    copy_dir(saved.path(), &layout::wal_dir(dir.path()));

    damage(&layout::wal_dir(dir.path()).join(layout::CHECKPOINT_FILE));
    let (p, _) = start(config(dir.path()));
    assert_eq!(
        p.replayed_records(),
        10,
        "the WAL is replayed from its oldest segment"
    );
    p.pause_writer(true);
    for i in 10..15 {
        p.submit(&batch(i)).unwrap();
    }
    p.abort();
    drop(p);

    damage(&layout::wal_dir(dir.path()).join(layout::CHECKPOINT_FILE));
    let (p, _) = start(config(dir.path()));
    p.shutdown().unwrap();
    drop(p);
    let all: BTreeSet<u64> = (0..15).collect();
    assert_exactly_once(dir.path(), &all, &BTreeSet::new());
}

#[test]
fn a_deleted_checkpoint_is_rebuilt_without_duplicates() {
    checkpoint_lost_twice(|path| std::fs::remove_file(path).unwrap());
}

#[test]
fn a_corrupt_checkpoint_is_moved_aside_and_rebuilt() {
    checkpoint_lost_twice(|path| std::fs::write(path, b"{\"epoch\": \"01J").unwrap());
}

#[test]
fn a_rebuilt_checkpoint_never_takes_an_older_wals_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let (p, _) = start(config(dir.path()));
    for i in 0..6 {
        p.submit(&batch(i)).unwrap();
    }
    p.shutdown().unwrap();
    drop(p);
    // A new WAL (sequence numbers start again at 0, same hour) whose checkpoint is lost before
    // its first Parquet commit: the newest part files are the old WAL's and cover seqs 0..5.
    std::fs::remove_dir_all(layout::wal_dir(dir.path())).unwrap();
    let (p, _) = start(config(dir.path()));
    p.pause_writer(true);
    for i in 100..104 {
        p.submit(&batch(i)).unwrap();
    }
    p.abort();
    drop(p);
    std::fs::remove_file(layout::wal_dir(dir.path()).join(layout::CHECKPOINT_FILE)).unwrap();
    let (p, _) = start(config(dir.path()));
    p.shutdown().unwrap();
    let acked: BTreeSet<u64> = (0..6).chain(100..104).collect();
    assert_exactly_once(dir.path(), &acked, &BTreeSet::new());
}

#[test]
fn a_corrupt_checkpoint_is_kept_for_inspection() {
    let dir = tempfile::tempdir().unwrap();
    ten_requests_in_the_wal(dir.path());
    let wal = layout::wal_dir(dir.path());
    std::fs::write(wal.join(layout::CHECKPOINT_FILE), b"not json").unwrap();
    let (p, _) = start(config(dir.path()));
    p.shutdown().unwrap();
    let aside: Vec<_> = std::fs::read_dir(&wal)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{}.corrupt-", layout::CHECKPOINT_FILE))
        })
        .collect();
    assert_eq!(aside.len(), 1, "the corrupt checkpoint is moved aside");
    assert_eq!(std::fs::read(aside[0].path()).unwrap(), b"not json");
    assert_exactly_once(dir.path(), &(0..10).collect(), &BTreeSet::new());
}

/// Thousands of part files are written and committed (debug build): allow for it.
const SLOW: std::time::Duration = std::time::Duration::from_secs(120);

const HOUR: u64 = 3_600_000_000_000;

/// One request with one span in each of `hours` consecutive hours going back from `T0` (span ids
/// from `first`). Backwards: a span claiming a start far in the future is filed under its
/// receipt hour (batcher::row_partitions), while old start times (recorded traces) keep theirs.
fn spread_request(first: u64, hours: u64) -> schemas::convert::Converted {
    let spans: Vec<Span> = (0..hours)
        .map(|h| {
            let mut s = common::tool_call_spans(first + h, T0 - h * HOUR).remove(0);
            s.span_id = common::span_id((first + h) * 2);
            s
        })
        .collect();
    convert(&request("spread-svc", spans))
}

#[test]
fn a_request_over_2500_hours_keeps_open_files_under_the_cap() {
    // Thousands of files are committed, each with two fsyncs: on tmpfs where there is one (this
    // test is about open files, not the disk).
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let mut c = config(dir.path());
    c.fsync = collector::FsyncPolicy::Never;
    let cap = c.max_open_files;
    assert_eq!(cap, 32, "the documented default");
    let (p, stats) = start(c.clone());
    let t = std::time::Instant::now();
    p.submit(&spread_request(0, 2500)).unwrap();
    wait_up_to(SLOW, "the writer to take the batch", || {
        p.queued_batches() == 0
    });
    eprintln!("2,500 partitions written in {:?}", t.elapsed());
    p.pause_writer(true); // nothing more happens while we look
    let open = tmp_files(&layout::spans_dir(dir.path())).len();
    assert_eq!(open, cap, "open part files are capped");
    assert_eq!(
        stats.files_committed.load(Ordering::Relaxed),
        2500 - cap as u64,
        "the least recently written files were committed to make room"
    );
    p.pause_writer(false);
    p.shutdown().unwrap();
    let ids = common::stored_span_ids(dir.path());
    let distinct: BTreeSet<&String> = ids.iter().collect();
    assert_eq!((ids.len(), distinct.len()), (2500, 2500), "every span once");
    assert!(tmp_files(&layout::spans_dir(dir.path())).is_empty());
}

#[test]
fn partitions_with_several_files_replay_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.max_open_files = 4;
    let (p, _) = start(c.clone());
    // 12 hours through 4 open files, twice: every partition gets a second file, then a crash
    // leaves the last four open.
    p.submit(&spread_request(0, 12)).unwrap();
    p.submit(&spread_request(10_000, 12)).unwrap();
    wait_for("the writer to take the batches", || p.queued_batches() == 0);
    p.abort();
    drop(p);
    assert_eq!(
        common::part_files(dir.path()).len(),
        20,
        "committed to make room"
    );
    let (p, _) = start(c);
    assert_eq!(
        p.replayed_records(),
        1,
        "record 0 is wholly in committed files"
    );
    p.shutdown().unwrap();
    let ids = common::stored_span_ids(dir.path());
    let distinct: BTreeSet<&String> = ids.iter().collect();
    assert_eq!((ids.len(), distinct.len()), (24, 24), "every span once");
    assert!(tmp_files(&layout::spans_dir(dir.path())).is_empty());
}
