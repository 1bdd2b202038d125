//! `collect --writer-nice N` through the real binary: the work done after the answer, the Parquet
//! writer thread (and only it), runs at nice N; without the flag it keeps the process's priority;
//! out of range is refused. (Trace requests are converted on their request threads, ADR 0004:
//! those keep the process's priority.)

#![cfg(target_os = "linux")]

use std::process::Command;
use std::time::{Duration, Instant};

use testkit::collector::RunningCollector;

/// `tripline collect` with `extra` arguments, listening.
fn collect(data_dir: &std::path::Path, extra: &[&str]) -> RunningCollector {
    RunningCollector::start(env!("CARGO_BIN_EXE_tripline"), data_dir, extra)
}

/// The nice value of every thread of `pid`, by thread name.
fn thread_nices(pid: u32) -> Vec<(String, i32)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("task dir") {
        let dir = task.expect("task").path();
        let (Ok(comm), Ok(stat)) = (
            std::fs::read_to_string(dir.join("comm")),
            std::fs::read_to_string(dir.join("stat")),
        ) else {
            continue; // the thread ended meanwhile
        };
        let nice = testkit::proc::nice_in_stat(&stat).expect("a stat line");
        out.push((comm.trim().to_string(), nice));
    }
    out
}

/// The Parquet writer thread (names are cut to 15 bytes: "tripline-batche").
fn is_writer(name: &str) -> bool {
    name.starts_with("tripline-batch")
}

/// The nice of the writer thread and the highest nice of the other threads, once it runs.
fn writer_and_others(pid: u32) -> (i32, i32) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let threads = thread_nices(pid);
        let writers: Vec<i32> = threads
            .iter()
            .filter(|(n, _)| is_writer(n))
            .map(|(_, v)| *v)
            .collect();
        if let [writer] = writers[..] {
            let others = threads
                .iter()
                .filter(|(n, _)| !is_writer(n))
                .map(|(_, v)| *v)
                .max()
                .expect("other threads");
            return (writer, others);
        }
        assert!(
            writers.len() <= 1,
            "one writer thread, not {}: {threads:?}",
            writers.len()
        );
        assert!(Instant::now() < deadline, "no writer thread in {threads:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn own_nice() -> i32 {
    thread_nices(std::process::id())
        .into_iter()
        .map(|(_, n)| n)
        .min()
        .expect("threads")
}

#[test]
fn writer_nice_applies_to_the_writer_thread_only() {
    let base = own_nice();
    let dir = tempfile::tempdir().expect("tempdir");
    let collector = collect(&dir.path().join("nice"), &["--writer-nice", "17"]);
    let (writer, others) = writer_and_others(collector.pid());
    drop(collector);
    assert_eq!(writer, 17.max(base));
    assert_eq!(others, base, "request threads keep the process's priority");

    let collector = collect(&dir.path().join("plain"), &[]);
    let (writer, _) = writer_and_others(collector.pid());
    drop(collector);
    assert_eq!(
        writer, base,
        "without the flag the writer keeps the process's priority"
    );
}

#[test]
fn writer_nice_out_of_range_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_tripline"))
        .args(["collect", "--writer-nice", "20", "--data-dir"])
        .arg(dir.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--writer-nice"));
}
