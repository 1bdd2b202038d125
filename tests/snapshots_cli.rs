//! Snapshots of what a user sees: the real `tripline` binary, every analyzer subcommand in each of
//! its formats (stdout, stderr and exit code), over stores made by `tripline ingest` from
//! `samples/traces` and the TL011 diff fixtures.
//!
//! Deterministic by construction: every command runs in one temporary directory with relative
//! paths (`--data-dir store`), `NO_COLOR`, no `COLUMNS` (tables are 100 columns wide when stdout
//! is not a terminal) and quiet logs, so no temporary path, colour or terminal width reaches a
//! snapshot. Stale snapshots fail `scripts/test` (scripts/unreferenced-snapshots).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use insta_cmd::{assert_cmd_snapshot, get_cargo_bin};

/// The host trace of the broken-propagation sample (TL004 fires on it; its server half is another
/// trace, stitched back in the tree).
const BROKEN_TRACE: &str = "9c8b13c8060ae8fc8b4c5500a18e58da";

/// The scratch directory every command runs in: `store/` (the samples), `base/` and `cand/` (the
/// TL011 fixtures), `empty/` (a directory with no store), `policy.toml` and `recording.json`.
fn workdir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let diff = repo.join("analyze/tests/fixtures/diff");
        for (store, input) in [
            ("store", repo.join("samples/traces")),
            ("base", diff.join("baseline.json")),
            ("cand", diff.join("candidate.json")),
        ] {
            let out = tripline(dir.path())
                .args(["ingest", "--data-dir", store])
                .arg(&input)
                .output()
                .expect("run tripline ingest");
            assert!(
                out.status.success(),
                "ingest {}: {}",
                input.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::fs::create_dir(dir.path().join("empty")).unwrap();
        std::fs::copy(
            repo.join("samples/policy.toml"),
            dir.path().join("policy.toml"),
        )
        .unwrap();
        std::fs::copy(
            diff.join("baseline.json"),
            dir.path().join("recording.json"),
        )
        .unwrap();
        dir
    })
    .path()
}

/// `tripline` in the scratch directory with a clean, deterministic environment.
fn tripline(dir: &Path) -> Command {
    let mut cmd = Command::new(get_cargo_bin("tripline"));
    cmd.current_dir(dir)
        .env("TRIPLINE_LOG", "warn")
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .env_remove("TRIPLINE_DATA_DIR")
        .env_remove("TRIPLINE_LOG_FORMAT")
        .env_remove("RUST_LOG");
    cmd
}

fn run(args: &[&str]) -> Command {
    let mut cmd = tripline(workdir());
    cmd.args(args);
    cmd
}

/// One snapshot test per case: `name => [args...]`.
macro_rules! cases {
    ($($name:ident => [$($arg:expr),* $(,)?]),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                assert_cmd_snapshot!(stringify!($name), run(&[$($arg),*]));
            }
        )*
    };
}

cases! {
    check_table => ["check", "--data-dir", "store", "--policy", "policy.toml"],
    check_json => ["check", "--data-dir", "store", "--policy", "policy.toml", "--format", "json"],
    check_sarif => ["check", "--data-dir", "store", "--policy", "policy.toml", "--format", "sarif"],
    check_markdown => ["check", "--data-dir", "store", "--policy", "policy.toml", "--format", "markdown"],
    check_quiet => ["check", "--data-dir", "store", "--policy", "policy.toml", "--quiet"],
    check_one_rule => ["check", "--data-dir", "store", "--rule", "TL004"],
    check_wrong_format => ["check", "--data-dir", "store", "--format", "csv"],
    check_tl011_points_at_diff => ["check", "--data-dir", "store", "--rule", "TL011"],
    check_unknown_rule => ["check", "--data-dir", "store", "--rule", "TL999"],
    check_empty_store => ["check", "--data-dir", "empty"],
    check_missing_store => ["check", "--data-dir", "no-such-dir"],
    check_missing_policy => ["check", "--data-dir", "store", "--policy", "no-such-policy.toml"],
    rules => ["rules"],
    explain_tl004 => ["explain", "TL004"],
    explain_tl011 => ["explain", "TL011"],
    explain_tl014 => ["explain", "tl014"],
    explain_tl016 => ["explain", "TL016"],
    explain_tl017 => ["explain", "TL017"],
    report_tools => ["report", "tools", "--data-dir", "store"],
    report_tools_json => ["report", "tools", "--data-dir", "store", "--format", "json"],
    report_conversations => ["report", "conversations", "--data-dir", "store"],
    report_conversations_json => ["report", "conversations", "--data-dir", "store", "--format", "json"],
    report_guardrails => ["report", "guardrails", "--data-dir", "store"],
    report_guardrails_json => ["report", "guardrails", "--data-dir", "store", "--format", "json"],
    report_skills => ["report", "skills", "--data-dir", "store"],
    report_skills_json => ["report", "skills", "--data-dir", "store", "--format", "json"],
    report_propagation => ["report", "propagation", "--data-dir", "store"],
    report_propagation_json => ["report", "propagation", "--data-dir", "store", "--format", "json"],
    report_propagation_markdown => ["report", "propagation", "--data-dir", "store", "--format", "markdown"],
    report_tools_markdown => ["report", "tools", "--data-dir", "store", "--format", "markdown"],
    query_table => ["query", "--data-dir", "store",
        "SELECT tool_name, count(*) AS calls FROM spans WHERE tool_name IS NOT NULL \
         GROUP BY tool_name ORDER BY calls DESC, tool_name LIMIT 5"],
    query_json => ["query", "--data-dir", "store", "--format", "json",
        "SELECT name, hour FROM spans ORDER BY start_time_unix_nano, name LIMIT 3"],
    query_csv => ["query", "--data-dir", "store", "--format", "csv",
        "SELECT name, hour FROM spans ORDER BY start_time_unix_nano, name LIMIT 3"],
    query_many_columns => ["query", "--data-dir", "store",
        "SELECT trace_id, span_id, parent_span_id, name, kind, service_name, gen_ai_tool_name, \
         status_code, hour, date FROM spans ORDER BY start_time_unix_nano, span_id LIMIT 2"],
    query_bad_sql => ["query", "--data-dir", "store", "SELECT nope FROM spans"],
    trace_tree => ["trace", "--data-dir", "store", "--policy", "policy.toml", BROKEN_TRACE],
    trace_not_found => ["trace", "--data-dir", "store", "00000000000000000000000000000001"],
    diff_table => ["diff", "base", "cand"],
    diff_json => ["diff", "base", "cand", "--format", "json"],
    diff_same_run => ["diff", "base", "base"],
    diff_files_instead_of_stores => ["diff", "recording.json", "recording.json"],
    diff_missing_dir => ["diff", "base", "no-such-dir"],
    diff_empty_store => ["diff", "base", "empty"],
    verify_table => ["verify", "--data-dir", "store"],
    verify_json => ["verify", "--data-dir", "store", "--format", "json"],
    verify_missing_store => ["verify", "--data-dir", "no-such-dir"],
}

/// A store of the shared recordings of real MCP libraries (`testkit::recordings::dir()`), made
/// once by `tripline ingest`, in the scratch directory as `recordings/`; None (the cases say they
/// are skipped) when the corpus is not there.
fn recordings_store() -> Option<&'static str> {
    static MADE: OnceLock<bool> = OnceLock::new();
    let made = *MADE.get_or_init(|| {
        let Some(dir) = testkit::recordings::dir() else {
            return false;
        };
        let out = tripline(workdir())
            .args(["ingest", "--data-dir", "recordings"])
            .arg(&dir)
            .output()
            .expect("run tripline ingest");
        assert!(
            out.status.success(),
            "ingest {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        true
    });
    made.then_some("recordings")
}

/// One snapshot test per case over the recordings store: `name => [args...]`, where the
/// argument `RECORDINGS` is replaced by the store.
macro_rules! recording_cases {
    ($($name:ident => [$($arg:expr),* $(,)?]),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let Some(store) = recordings_store() else {
                    eprintln!("shared recordings not found: {} skipped", stringify!($name));
                    return;
                };
                let args: Vec<&str> = [$($arg),*]
                    .into_iter()
                    .map(|a| if a == RECORDINGS { store } else { a })
                    .collect();
                assert_cmd_snapshot!(stringify!($name), run(&args));
            }
        )*
    };
}

/// Stands for the recordings store in [`recording_cases!`].
const RECORDINGS: &str = "<recordings>";

recording_cases! {
    recordings_report_propagation => ["report", "propagation", "--data-dir", RECORDINGS],
    recordings_report_propagation_json => ["report", "propagation", "--data-dir", RECORDINGS, "--format", "json"],
    recordings_report_propagation_markdown => ["report", "propagation", "--data-dir", RECORDINGS, "--format", "markdown"],
}

/// `SELECT *` prints no line wider than the table width: long cells end in `…` and a result with
/// more columns than fit is shown one record at a time.
#[test]
fn select_star_fits_the_width() {
    let out = run(&[
        "query",
        "--data-dir",
        "store",
        "SELECT * FROM spans LIMIT 1",
    ])
    .output()
    .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let widest = stdout.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest <= 100, "a line of {widest} chars:\n{stdout}");
    assert!(stdout.contains("record 1"), "{stdout}");
    // `COLUMNS` sets the width.
    let out = run(&[
        "query",
        "--data-dir",
        "store",
        "SELECT * FROM spans LIMIT 1",
    ])
    .env("COLUMNS", "60")
    .output()
    .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let widest = stdout.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest <= 70, "a line of {widest} chars:\n{stdout}");
}

/// `--wide` shows a cell whole that the table view cuts with `…`.
#[test]
fn wide_shows_long_cells_whole() {
    let sql = "SELECT repeat('x', 300) AS long";
    let cut = run(&["query", "--data-dir", "store", sql])
        .output()
        .unwrap();
    let cut = String::from_utf8(cut.stdout).unwrap();
    assert!(
        cut.contains('…') && !cut.contains(&"x".repeat(300)),
        "{cut}"
    );
    let whole = run(&["query", "--data-dir", "store", "--wide", sql])
        .output()
        .unwrap();
    let whole = String::from_utf8(whole.stdout).unwrap();
    assert!(whole.contains(&"x".repeat(300)), "{whole}");
}

/// `--color always` colours severities; NO_COLOR (set for every case) and pipes get none.
#[test]
fn color_always_colours_severities_and_never_does_not() {
    let args = ["check", "--data-dir", "store", "--rule", "TL004"];
    let plain = run(&args).output().unwrap();
    assert!(!String::from_utf8_lossy(&plain.stdout).contains('\u{1b}'));
    let mut always = run(&args);
    always.arg("--color").arg("always");
    let always = always.output().unwrap();
    assert!(String::from_utf8_lossy(&always.stdout).contains("\u{1b}["));
}

/// An OS error is named once, even when the message already quotes its cause (the error chain
/// is printed without repeating a cause the message contains).
#[test]
fn os_errors_are_printed_once() {
    let out = run(&[
        "check",
        "--data-dir",
        "store",
        "--policy",
        "no-such-policy.toml",
    ])
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.matches("os error 2").count(), 1, "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // `diff` wraps the load error of a side; its text is said once.
    let out = run(&["diff", "base", "empty"]).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.matches("no spans/ directory").count(), 1, "{stderr}");
}
