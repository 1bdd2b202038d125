//! `--deterministic` regenerates the committed samples byte for byte: the real generator binary
//! plays every scenario again (real MCP processes, real SDK export into its sink) into a temp dir,
//! and each file must equal `samples/traces/<name>.json`. This proves both that the mode is
//! deterministic and that the committed files are what the generator produces today, on both MCP
//! revisions (`samples/traces`: 2025-11-25, `samples/traces-2026-07-28`: 2026-07-28).

use std::path::Path;
use std::process::Command;

use samples::scenario::Revision;

/// Plays every scenario on `revision` into a temp dir and compares each file with
/// `samples/<dir>/<name>.json`.
fn reproduces(revision: Revision) {
    let out = tempfile::tempdir().expect("temp dir");
    let status = Command::new(env!("CARGO_BIN_EXE_tripline-samples"))
        .args(["--deterministic", "--revision", revision.version(), "--out"])
        .arg(out.path())
        .status()
        .expect("run tripline-samples");
    assert!(status.success(), "generator failed: {status}");
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join(revision.dir());
    let mut compared = 0;
    for scenario in samples::scenario::all() {
        let name = format!("{}.json", scenario.name);
        let fresh = std::fs::read(out.path().join(&name)).expect("generated file");
        let kept = std::fs::read(committed.join(&name)).expect("committed file");
        assert!(fresh == kept, "{}/{name} differs from the committed sample: regenerate with `tripline-samples --deterministic --revision {} --out samples/{}`", revision.dir(), revision.version(), revision.dir());
        compared += 1;
    }
    assert_eq!(compared, samples::scenario::all().len());
    let written = std::fs::read_dir(out.path()).expect("list output").count();
    assert_eq!(written, compared, "one file per scenario, nothing else");
}

#[test]
fn deterministic_mode_reproduces_the_committed_samples_byte_for_byte() {
    reproduces(Revision::Initialize);
}

/// The seed scenarios on MCP 2026-07-28 (stateless: `server/discover`, no session).
#[test]
fn deterministic_mode_reproduces_the_committed_2026_07_28_samples() {
    reproduces(Revision::Stateless);
}

#[test]
fn two_runs_of_one_scenario_are_identical() {
    let a = tempfile::tempdir().expect("temp dir");
    let b = tempfile::tempdir().expect("temp dir");
    for dir in [a.path(), b.path()] {
        let status = Command::new(env!("CARGO_BIN_EXE_tripline-samples"))
            .args(["--deterministic", "--only", "atlas-healthy", "--out"])
            .arg(dir)
            .status()
            .expect("run tripline-samples");
        assert!(status.success());
    }
    let fa = std::fs::read(a.path().join("atlas-healthy.json")).expect("file a");
    let fb = std::fs::read(b.path().join("atlas-healthy.json")).expect("file b");
    assert!(!fa.is_empty());
    assert!(fa == fb, "two deterministic runs differ");
}

#[test]
fn unknown_scenario_is_an_error_with_a_hint() {
    let out = Command::new(env!("CARGO_BIN_EXE_tripline-samples"))
        .args([
            "--only",
            "no-such-scenario",
            "--out",
            "/nonexistent-tripline-dir",
        ])
        .output()
        .expect("run tripline-samples");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown scenario no-such-scenario; run `tripline-samples --list`"),
        "{stderr}"
    );
}
