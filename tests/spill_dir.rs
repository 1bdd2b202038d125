//! `tripline check --spill-dir DIR` through the real binary: with `TRIPLINE_SPILL_FINDINGS` set
//! low the findings go to sorted runs in a temporary directory under DIR (the library tests in
//! analyze/tests/windows.rs cover the merge); the JSON, SARIF and Markdown are the unspilled
//! run's (all three are written as the findings are read back), DIR is left as it was, and a DIR where no directory can be made is an error (exit 2) that names it, before the
//! store is read.

use std::path::Path;
use std::process::{Command, Output};

mod common;

use common::{repo, tripline};

/// A store of the samples (many findings of several rules).
fn samples_store() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = tripline(dir.path(), &["ingest", "samples/traces"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// `tripline --data-dir STORE ARGS` with `TRIPLINE_WINDOW_TRACE` on, the spill bounds at their
/// defaults unless `envs` sets them.
fn traced(store: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tripline"));
    cmd.current_dir(repo())
        .env("TRIPLINE_LOG", "warn")
        .env("TRIPLINE_WINDOW_TRACE", "1")
        .env_remove("TRIPLINE_SPILL_FINDINGS")
        .env_remove("TRIPLINE_PASS1_RUN_TRACES")
        .arg("--data-dir")
        .arg(store)
        .args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("run the tripline binary")
}

/// `check --format json --fail-on critical ARGS` with the spill bound `spill` (None: default),
/// printing the windows' trace (the spill line) on stderr.
fn check(store: &Path, spill: Option<&str>, args: &[&str]) -> Output {
    check_as(store, "json", spill, args)
}

/// [`check`] in `format`.
fn check_as(store: &Path, format: &str, spill: Option<&str>, args: &[&str]) -> Output {
    let mut all = vec![
        "check",
        "--format",
        format,
        "--fail-on",
        "critical",
        "--window-spans",
        "20",
    ];
    all.extend_from_slice(args);
    let env: Vec<(&str, &str)> = spill
        .map(|n| ("TRIPLINE_SPILL_FINDINGS", n))
        .into_iter()
        .collect();
    traced(store, &all, &env)
}

/// The `findings: N, R sorted runs spilled[ to DIR]` line of `TRIPLINE_WINDOW_TRACE`: R and DIR.
fn spill_line(stderr: &[u8]) -> (usize, Option<String>) {
    let text = String::from_utf8_lossy(stderr);
    let line = text
        .lines()
        .find(|l| l.starts_with("findings: "))
        .unwrap_or_else(|| panic!("no spill line in stderr:\n{text}"));
    let rest = line.split_once(", ").expect("findings: N, ...").1;
    let (runs, rest) = rest.split_once(' ').expect("R sorted runs");
    let dir = rest
        .strip_prefix("sorted runs spilled to ")
        .map(str::to_string);
    (runs.parse().expect("a number of runs"), dir)
}

#[test]
fn spilled_findings_give_the_same_json_and_leave_the_spill_dir_empty() {
    let store = samples_store();
    let plain = check(store.path(), None, &[]);
    // 1: the samples hold a critical finding.
    assert!(
        matches!(plain.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    assert_eq!(spill_line(&plain.stderr), (0, None), "nothing spilled");
    let doc: serde_json::Value = serde_json::from_slice(&plain.stdout).expect("check JSON");
    let findings = doc["findings"].as_array().expect("findings").len();
    assert!(
        findings > 10,
        "the samples have findings to spill: {findings}"
    );

    let spill = tempfile::tempdir().expect("spill dir");
    let dir = spill.path().to_str().expect("utf-8 temp path");
    let spilled = check(store.path(), Some("3"), &["--spill-dir", dir]);
    assert_eq!(
        spilled.status.code(),
        plain.status.code(),
        "{}",
        String::from_utf8_lossy(&spilled.stderr)
    );
    let (runs, at) = spill_line(&spilled.stderr);
    assert!(runs > 1, "findings past 3 were spilled in runs: {runs}");
    let at = at.expect("the runs' directory");
    assert!(
        Path::new(&at).starts_with(spill.path()),
        "spilled under --spill-dir {dir}: {at}"
    );
    assert_eq!(
        String::from_utf8_lossy(&spilled.stdout),
        String::from_utf8_lossy(&plain.stdout),
        "the spilled run's JSON is the unspilled one's"
    );
    assert!(!Path::new(&at).exists(), "{at} removed on exit");
    let left: Vec<_> = std::fs::read_dir(spill.path())
        .expect("spill dir still there")
        .map(|e| e.expect("entry").path())
        .collect();
    assert!(left.is_empty(), "--spill-dir left as it was: {left:?}");
    for format in ["sarif", "markdown"] {
        let plain = check_as(store.path(), format, None, &[]);
        let spilled = check_as(store.path(), format, Some("3"), &["--spill-dir", dir]);
        assert!(spill_line(&spilled.stderr).0 > 1, "{format}: spilled");
        assert_eq!(spilled.status.code(), plain.status.code(), "{format}");
        assert!(!plain.stdout.is_empty(), "{format}: a report");
        assert_eq!(
            String::from_utf8_lossy(&spilled.stdout),
            String::from_utf8_lossy(&plain.stdout),
            "{format}: the spilled run's output is the unspilled one's"
        );
    }
    assert_eq!(std::fs::read_dir(spill.path()).expect("dir").count(), 0);
}

/// `--spill-dir` where no directory can be made: exit 2 before the scan, the path and the fix
/// named on stderr, nothing on stdout.
fn assert_refused(store: &Path, dir: &Path) {
    let out = check(store, None, &["--spill-dir", dir.to_str().expect("utf-8")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty(), "no report on stdout");
    let expected = format!(
        "error: cannot create a directory for spilled findings in {}",
        dir.display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(
        stderr.contains("point TMPDIR (or --spill-dir) at a writable directory"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("findings: "),
        "refused before the rules ran: {stderr}"
    );
}

#[test]
fn an_unusable_spill_dir_is_an_error_with_exit_code_2() {
    let store = samples_store();
    let tmp = tempfile::tempdir().expect("temp dir");
    // A file, and a directory that does not exist.
    let file = tmp.path().join("a-file");
    std::fs::write(&file, b"not a directory").expect("write");
    assert_refused(store.path(), &file);
    assert_refused(store.path(), &tmp.path().join("missing/dir"));
    // A read-only directory, where permissions apply (not as root).
    let ro = tmp.path().join("read-only");
    std::fs::create_dir(&ro).expect("mkdir");
    let mut perms = std::fs::metadata(&ro).expect("stat").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o555);
    std::fs::set_permissions(&ro, perms).expect("chmod");
    if std::fs::write(ro.join("probe"), b"").is_err() {
        assert_refused(store.path(), &ro);
    } else {
        eprintln!("read-only case skipped: permissions do not apply to this user");
    }
}

/// The `pass 1: R sorted trace runs spilled to DIR` line of `TRIPLINE_WINDOW_TRACE`.
fn pass1_line(stderr: &[u8]) -> (usize, String) {
    let text = String::from_utf8_lossy(stderr);
    let rest = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("pass 1: ")
                .filter(|r| r.contains("runs spilled"))
        })
        .unwrap_or_else(|| panic!("no pass-1 spill line in stderr:\n{text}"));
    let (runs, dir) = rest
        .split_once(" sorted trace runs spilled to ")
        .expect("R sorted trace runs spilled to DIR");
    (runs.parse().expect("a number of runs"), dir.to_string())
}

/// Pass 1's sorted runs of traces (`TRIPLINE_PASS1_RUN_TRACES` low, so the samples' few
/// traces make several) go to `--spill-dir` for `check` and `report`, not to TMPDIR, and
/// the output is the one of a run that kept them in memory.
#[test]
fn pass_one_runs_go_to_the_spill_dir() {
    let store = samples_store();
    let spill = tempfile::tempdir().expect("spill dir");
    let dir = spill.path().to_str().expect("utf-8 temp path");
    let low = [("TRIPLINE_PASS1_RUN_TRACES", "2")];
    for args in [
        &["check", "--format", "json", "--fail-on", "critical"][..],
        &["report", "tools", "--format", "json"][..],
    ] {
        let plain = traced(store.path(), args, &[]);
        assert!(
            matches!(plain.status.code(), Some(0 | 1)),
            "{args:?}: {}",
            String::from_utf8_lossy(&plain.stderr)
        );
        let (runs, _) = pass1_line(&plain.stderr);
        assert_eq!(runs, 0, "{args:?}: the samples fit one map by default");
        assert!(!plain.stdout.is_empty(), "{args:?}: a report");

        let with_dir: Vec<&str> = args.iter().copied().chain(["--spill-dir", dir]).collect();
        let spilled = traced(store.path(), &with_dir, &low);
        assert_eq!(spilled.status.code(), plain.status.code(), "{args:?}");
        let (runs, at) = pass1_line(&spilled.stderr);
        assert!(runs > 5, "{args:?}: pass 1 wrote its runs to disk: {runs}");
        assert_eq!(
            Path::new(&at),
            spill.path(),
            "{args:?}: runs under --spill-dir"
        );
        assert_eq!(
            String::from_utf8_lossy(&spilled.stdout),
            String::from_utf8_lossy(&plain.stdout),
            "{args:?}: the same output with pass 1's runs on disk"
        );
        // Unlinked files: nothing is left behind.
        assert_eq!(std::fs::read_dir(spill.path()).expect("dir").count(), 0);
    }
}
