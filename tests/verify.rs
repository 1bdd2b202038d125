//! `tripline verify`: 0 on a healthy store, 1 listing each damaged file (a corrupt part file, a
//! leftover temporary file, a corrupt WAL frame), 2 when it cannot run (no such directory, not a
//! store); a temporary file while a writer holds `<data>/LOCK` is "in progress", not a problem.
//! Through the real binary.

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;

use common::tripline;
use schemas::layout;
use testkit::store::part_files;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ingested() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = tripline(dir.path(), &["ingest", "samples/traces/atlas-healthy.json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    dir
}

fn first_part_file(dir: &Path) -> PathBuf {
    part_files(dir)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no part file under {}", dir.display()))
}

fn verify_json(dir: &Path) -> (Option<i32>, Value) {
    let out = tripline(dir, &["verify", "--format", "json"]);
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)));
    (out.status.code(), v)
}

#[test]
fn a_healthy_store_verifies_with_exit_0() {
    let dir = ingested();
    let out = tripline(dir.path(), &["verify"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("healthy"));
    let (code, v) = verify_json(dir.path());
    assert_eq!(code, Some(0));
    assert_eq!(v["healthy"], true);
    assert_eq!(v["part_files"], 1);
    assert!(v["rows"].as_u64().expect("rows") > 0);
    assert_eq!(v["problems"], serde_json::json!([]));
}

#[test]
fn a_corrupt_part_file_is_listed_with_exit_1() {
    let dir = ingested();
    let part = first_part_file(dir.path());
    // Flip bytes in the middle of the data: the footer may survive, the decode must not.
    let mut bytes = std::fs::read(&part).expect("read");
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid - 64..mid + 64] {
        *b ^= 0xa5;
    }
    std::fs::write(&part, &bytes).expect("write");
    let (code, v) = verify_json(dir.path());
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["problems"][0]["path"], part.display().to_string());
    let out = tripline(dir.path(), &["verify"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains(&part.display().to_string()));
}

#[test]
fn a_leftover_tmp_file_is_a_problem_unless_a_writer_holds_the_lock() {
    let dir = ingested();
    let part = first_part_file(dir.path());
    let tmp = part.with_file_name(layout::tmp_part_file_name("01JLEFTOVER"));
    std::fs::write(&tmp, b"half a file").expect("write tmp");
    let (code, v) = verify_json(dir.path());
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["problems"][0]["path"], tmp.display().to_string());
    assert!(v["problems"][0]["problem"]
        .as_str()
        .expect("problem")
        .starts_with("leftover temporary file"));

    // A writer holds <data>/LOCK: the temporary file is work in progress.
    let lock = std::fs::File::create(layout::lock_file(dir.path())).expect("lock file");
    // SAFETY: flock on a descriptor this test owns.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let (code, v) = verify_json(dir.path());
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["writer_running"], true);
    assert_eq!(v["in_progress"][0], tmp.display().to_string());
    drop(lock);
    assert_eq!(verify_json(dir.path()).0, Some(1), "released with the fd");
}

#[test]
fn a_corrupt_wal_frame_is_listed_with_exit_1() {
    let dir = tempfile::tempdir().expect("temp dir");
    let wal_dir = layout::wal_dir(dir.path());
    // Real records: a converted sample as the collector writes it (Arrow IPC).
    let body =
        std::fs::read(common::repo().join("samples/traces/atlas-healthy.json")).expect("sample");
    let req = schemas::decode_json(&body).expect("OTLP/JSON");
    let converted = schemas::convert_request(
        &req,
        &schemas::IngestContext {
            received_at_unix_nano: 1_796_000_000_000_000_000,
            source: "verify test".into(),
            redact_content: false,
        },
    );
    let payload = collector::store::wal::ipc::encode(&converted.batch).expect("encode");
    {
        let wal = collector::store::wal::Wal::open(
            &wal_dir,
            collector::FsyncPolicy::Always,
            1 << 20,
            |_, _| {},
        )
        .expect("open wal");
        for _ in 0..3 {
            let (seq, ()) = wal.append(&payload, |_| ()).expect("append");
            wal.commit(seq).expect("commit");
        }
    }
    let (code, v) = verify_json(dir.path());
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["wal_records_above_checkpoint"], 3);
    let seg = wal_dir.join(format!("{:020}.wal", 0));
    let mut bytes = std::fs::read(&seg).expect("segment");
    let frame = 20 + payload.len();
    bytes[frame + 20 + 10] ^= 0xff; // inside the second record's payload
    std::fs::write(&seg, &bytes).expect("write");
    let (code, v) = verify_json(dir.path());
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["problems"][0]["path"], seg.display().to_string());
    assert!(
        v["problems"][0]["problem"]
            .as_str()
            .expect("problem")
            .contains("checksum mismatch"),
        "{v}"
    );
}

#[test]
fn a_missing_dir_or_not_a_store_is_exit_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("nope");
    let out = tripline(&missing, &["verify"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("does not exist"),
        "{}",
        text(&out.stderr)
    );
    let out = tripline(dir.path(), &["verify"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("is not a tripline store"),
        "{}",
        text(&out.stderr)
    );
}
