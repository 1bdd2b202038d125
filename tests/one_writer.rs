//! One owner per data directory, through the real binary: a second writer exits 2 at once, names
//! the holder and changes nothing; `ingest` into a directory a collector owns goes through that
//! collector, so every span lands exactly once; reading commands work while the collector runs.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use schemas::layout;
use testkit::collector::RunningCollector;

/// `tripline collect` on free loopback ports; killed on drop.
fn start_collector(data_dir: &Path) -> RunningCollector {
    RunningCollector::start(env!("CARGO_BIN_EXE_tripline"), data_dir, &[])
}

/// Every file below `dir` with its length, to show a refused writer changed nothing.
fn listing(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out: Vec<(PathBuf, u64)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.file_name() != layout::LOCK_FILE)
        .map(|e| {
            (
                e.path().to_path_buf(),
                e.metadata().map(|m| m.len()).unwrap_or(0),
            )
        })
        .collect();
    out.sort();
    out
}

fn span_count(data_dir: &Path) -> u64 {
    let out = tripline(
        data_dir,
        &[
            "query",
            "--format",
            "json",
            "SELECT count(*) AS n FROM spans",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("query json");
    v[0]["n"].as_u64().expect("count")
}

fn sample(name: &str) -> PathBuf {
    repo().join("samples/traces").join(name)
}

#[test]
fn a_second_writer_is_refused_and_ingest_goes_through_the_owner() {
    let store = tempfile::tempdir().unwrap();
    let collector = start_collector(store.path());
    let before = listing(store.path());

    // A second collector: exit 2, names the holder's pid and address, touches nothing.
    let out = tripline(
        store.path(),
        &["collect", "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("pid {}", collector.pid())),
        "{stderr}"
    );
    assert!(stderr.contains(&collector.http.to_string()), "{stderr}");
    assert_eq!(
        listing(store.path()),
        before,
        "the refused collector changed the store"
    );

    // ingest into the owned dir is sent through the collector: nothing lost, nothing twice.
    let files = ["crm-healthy.json", "atlas-healthy.json"];
    let mut args = vec!["ingest"];
    let paths: Vec<String> = files
        .iter()
        .map(|f| sample(f).display().to_string())
        .collect();
    args.extend(paths.iter().map(String::as_str));
    let out = tripline(store.path(), &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("sending the spans through it"), "{stderr}");
    let accepted: u64 = stderr
        .split("requests): ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("accepted count in the summary");
    assert!(accepted > 0, "{stderr}");

    // Reading while the collector runs works (it does not need the lock).
    let out = tripline(store.path(), &["rules"]);
    assert!(out.status.success());

    assert!(collector.stop().success());
    assert_eq!(
        span_count(store.path()),
        accepted,
        "every forwarded span stored once"
    );

    // With the collector gone the lock is free again: a direct ingest works.
    let out = tripline(store.path(), &["ingest", &paths[0]]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn ingest_refuses_hostile_files_without_hanging_or_growing() {
    let store = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let data = store.path().join("data");

    // A path that does not exist: exit 2, says so, and creates no store.
    let out = tripline(&data, &["ingest", "/nonexistent/traces.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /nonexistent/traces.json"));
    assert!(!data.exists(), "a failed ingest created the store");

    // A FIFO and a device behind trace-like names: refused at once, not read.
    let fifo = scratch.path().join("pipe-traces.jsonl");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let zero = scratch.path().join("zero.jsonl");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    // A 2 GiB sparse file: refused by its size before a byte is read.
    let sparse = scratch.path().join("sparse.pb");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    // A gzip bomb of JSON lines: stopped at the cap while streaming.
    let bomb = scratch.path().join("bomb.jsonl.gz");
    {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(
            std::fs::File::create(&bomb).unwrap(),
            flate2::Compression::best(),
        );
        let line = b"{\"resourceSpans\":[]}\n";
        for _ in 0..(16 << 20) / line.len() {
            e.write_all(line).unwrap();
        }
        e.finish().unwrap();
    }
    // A JSON file that is not an OTLP export, named explicitly: an error, not "0 spans".
    let not_otlp = scratch.path().join("config.json");
    std::fs::write(&not_otlp, br#"{"hello": "world"}"#).unwrap();

    let started = Instant::now();
    let out = tripline(
        &data,
        &[
            "ingest",
            "--max-read-bytes",
            "4194304",
            fifo.to_str().unwrap(),
            zero.to_str().unwrap(),
            sparse.to_str().unwrap(),
            bomb.to_str().unwrap(),
            not_otlp.to_str().unwrap(),
        ],
    );
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        took < Duration::from_secs(60),
        "ingest took {took:?}: {stderr}"
    );
    for (file, why) in [
        ("pipe-traces.jsonl", "named pipe"),
        ("zero.jsonl", "a device"),
        ("sparse.pb", "more than 4194304 bytes"),
        (
            "bomb.jsonl.gz",
            "more than 4194304 bytes after decompression",
        ),
        ("config.json", "holds no spans"),
    ] {
        let line = stderr
            .lines()
            .find(|l| l.contains("failed") && l.contains(file))
            .unwrap_or_else(|| panic!("{file} not reported failed: {stderr}"));
        assert!(line.contains(why), "{file}: {line}");
    }
    assert!(stderr.contains("5 files failed"), "{stderr}");
}
