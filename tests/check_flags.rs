//! `tripline check` flags that tune rules, through the real binary: `--max-calls-per-tool` and
//! `--max-model-turns` override the policy file's `[limits]` for TL014, and `explain TL011`
//! documents the rule `tripline diff` runs.

use serde_json::Value;

mod common;

use common::tripline;

/// TL014 findings of `check --rule TL014 <extra>` over the retried-tool-error sample.
fn tl014_messages(extra: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let ingest = tripline(
        dir.path(),
        &["ingest", "samples/traces/atlas-tool-error-retried.json"],
    );
    assert!(
        ingest.status.success(),
        "{}",
        String::from_utf8_lossy(&ingest.stderr)
    );
    let mut args = vec![
        "check",
        "--rule",
        "TL014",
        "--format",
        "json",
        "--fail-on",
        "critical",
    ];
    args.extend_from_slice(extra);
    let out = tripline(dir.path(), &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("check JSON");
    report["findings"]
        .as_array()
        .expect("findings array")
        .iter()
        .map(|f| f["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn max_calls_per_tool_flag_overrides_the_default_limit() {
    assert_eq!(tl014_messages(&[]), Vec::<String>::new());
    let tight = tl014_messages(&["--max-calls-per-tool", "1"]);
    assert!(
        !tight.is_empty(),
        "a limit of 1 call must flag the retried tool"
    );
    assert!(
        tight.iter().all(|m| m.contains("(limit 1)")),
        "messages name the limit: {tight:?}"
    );
}

#[test]
fn max_model_turns_flag_overrides_the_default_limit() {
    let tight = tl014_messages(&["--max-model-turns", "1"]);
    assert!(
        tight
            .iter()
            .any(|m| m.contains("model turns") && m.contains("(limit 1)")),
        "{tight:?}"
    );
}

#[test]
fn a_zero_limit_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = tripline(dir.path(), &["check", "--max-calls-per-tool", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-calls-per-tool"));
}

#[test]
fn explain_tl011_documents_the_diff_rule_and_check_points_to_diff() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = tripline(dir.path(), &["explain", "tl011"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("TL011 catalog-drift (warning)"), "{text}");
    for section in ["What it detects", "Why it matters", "Example", "How to fix"] {
        assert!(text.contains(section), "missing {section}: {text}");
    }
    assert!(text.contains("tripline diff BASELINE_DATA_DIR CANDIDATE_DATA_DIR"));

    let rules = tripline(dir.path(), &["rules"]);
    assert!(String::from_utf8_lossy(&rules.stdout).contains("TL011"));

    let check = tripline(dir.path(), &["check", "--rule", "TL011"]);
    assert_eq!(check.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&check.stderr).contains("use `tripline diff BASELINE CANDIDATE`"),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
}

/// The page flags of `report html` are refused, not ignored, by the other reports: a user who
/// asks `report tools --max-runs 5` learns it does nothing there.
#[test]
fn html_only_flags_are_refused_by_the_other_reports() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ingest = tripline(
        dir.path(),
        &["ingest", "samples/traces/atlas-tool-error-retried.json"],
    );
    assert!(ingest.status.success());
    for flag in [["--max-runs", "5"], ["--max-findings-per-rule", "3"]] {
        let out = tripline(dir.path(), &["report", "tools", flag[0], flag[1]]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag:?}: {stderr}");
        assert!(
            stderr.contains("apply to `tripline report html` only"),
            "{flag:?}: {stderr}"
        );
    }
    let ok = tripline(dir.path(), &["report", "tools"]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

/// `--max-rows` caps the conversations table and says so; it is refused where it would do
/// nothing (another report, or the JSON and Markdown, which list every row).
#[test]
fn max_rows_caps_the_conversations_table_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ingest = tripline(dir.path(), &["ingest", "samples/traces"]);
    assert!(ingest.status.success());
    let table = tripline(dir.path(), &["report", "conversations", "--max-rows", "2"]);
    let stdout = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.status.success(),
        "{}",
        String::from_utf8_lossy(&table.stderr)
    );
    assert!(
        stdout.contains("note: showing the first 2 of 17 conversations, by start (--max-rows 2)"),
        "{stdout}"
    );
    for args in [
        &["report", "tools", "--max-rows", "2"][..],
        &[
            "report",
            "conversations",
            "--format",
            "json",
            "--max-rows",
            "2",
        ][..],
    ] {
        let out = tripline(dir.path(), args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(
                "--max-rows applies to the table of `tripline report conversations` only"
            ),
            "{args:?}: {stderr}"
        );
    }
}
