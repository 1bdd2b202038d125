//! `report html` reads the store in windows (render/html/windows.rs); its page data must be the
//! one a single model of the whole store gives (`render::html::data::build`, what the command
//! did before): over the samples, every rule fixture with its policy, the real recordings
//! (skipped when absent) and a synthetic store whose orphaned server spans are stitched to host
//! calls in other windows. Windows are forced small (down to one trace) so there are many
//! boundaries; the lists are compared uncapped and capped (one finding per rule, two runs), and
//! a capped page says what it leaves out.

mod common;

use std::path::Path;

use analyze::check::check_store_with;
use analyze::load::ScanFilter;
use analyze::policy::Policy;
use analyze::render::html::data::build;
use analyze::render::html::windows::build_windowed;
use analyze::render::html::{PageContext, PageLimits};
use analyze::rules::spill::SpillOptions;
use analyze::rules::RULES;
use analyze::window::WindowOptions;
use common::stores::{ingest, orphans_across_boundaries, rt};
use serde_json::Value;

const UNCAPPED: PageLimits = PageLimits {
    findings_per_rule: usize::MAX,
    runs: usize::MAX,
};
const CAPPED: PageLimits = PageLimits {
    findings_per_rule: 1,
    runs: 2,
};

fn context() -> PageContext {
    PageContext {
        generated: "2026-12-02T00:00:00Z".into(),
        data_dir: "store".into(),
        ..PageContext::default()
    }
}

/// The page data of one model of the whole store.
fn whole(dir: &Path, policy: &Policy, limits: &PageLimits) -> Value {
    let (model, report, scanned) = rt()
        .block_on(check_store_with(
            dir,
            &ScanFilter::default(),
            policy,
            RULES,
            analyze::render::html::waterfall::COLUMNS,
        ))
        .unwrap();
    let ctx = context();
    serde_json::to_value(build(&model, &report, Some(&scanned), &ctx, limits)).unwrap()
}

/// The page data made in windows of `window_spans` spans, findings spilled past `max_held`;
/// and the number of windows (pass 1, and pass 2 in [`windowed_passes`]).
fn windowed(
    dir: &Path,
    policy: &Policy,
    limits: &PageLimits,
    window_spans: u64,
    max_held: usize,
) -> (Value, usize) {
    let (doc, first, _) = windowed_passes(dir, policy, limits, window_spans, max_held);
    (doc, first)
}

fn windowed_passes(
    dir: &Path,
    policy: &Policy,
    limits: &PageLimits,
    window_spans: u64,
    max_held: usize,
) -> (Value, usize, usize) {
    let options = WindowOptions {
        window_spans,
        memory_limit: None,
        spill_dir: None,
    };
    let spill = SpillOptions {
        max_held,
        ..SpillOptions::default()
    };
    let ctx = context();
    let (doc, stats) = rt()
        .block_on(build_windowed(
            dir,
            &ScanFilter::default(),
            policy,
            &options,
            spill,
            limits,
            &ctx,
        ))
        .unwrap();
    (
        serde_json::to_value(doc).unwrap(),
        stats.first.windows,
        stats.second.windows,
    )
}

/// The first keys at which two documents differ (a path and both values, cut short).
fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    if out.len() >= 8 || a == b {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let (va, vb) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                differences(va, vb, &format!("{path}.{k}"), out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                differences(va, vb, &format!("{path}[{i}]"), out);
            }
        }
        _ => {
            let cut = |v: &Value| v.to_string().chars().take(300).collect::<String>();
            out.push(format!("{path}: whole {} | windows {}", cut(a), cut(b)));
        }
    }
}

/// The windowed page data equals the whole store's at every window size, capped and uncapped
/// (once with every finding spilled to disk); returns the uncapped whole-store data and the
/// most windows seen.
fn assert_same(dir: &Path, policy: &Policy, sizes: &[u64]) -> (Value, usize) {
    let mut most = 0;
    let mut first = None;
    for limits in [UNCAPPED, CAPPED] {
        let expected = whole(dir, policy, &limits);
        for (k, &size) in sizes.iter().enumerate() {
            let max_held = if k == 0 { 1 } else { 100_000 };
            let (got, windows) = windowed(dir, policy, &limits, size, max_held);
            let mut diff = Vec::new();
            differences(&expected, &got, "", &mut diff);
            assert!(
                diff.is_empty(),
                "page data ({limits:?}) in windows of {size} spans ({windows} windows) differs from the whole store:\n{}",
                diff.join("\n")
            );
            most = most.max(windows);
        }
        first.get_or_insert(expected);
    }
    (first.expect("two limits"), most)
}

fn count(doc: &Value, key: &str) -> usize {
    doc[key].as_array().map_or(0, Vec::len)
}

#[test]
fn samples_page_in_windows_matches_the_whole_store() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let store = ingest(&[samples.join("traces")]);
    let policy = Policy::load(&samples.join("policy.toml")).unwrap();
    let (doc, windows) = assert_same(store.path(), &policy, &[1, 5, 40, 1_000_000]);
    assert!(windows > 10, "small windows cut the store: {windows}");
    // Not a vacuous comparison: the samples have findings with waterfalls, runs, tools.
    assert!(count(&doc, "findings") > 5, "{}", doc["findings"]);
    assert!(count(&doc, "views") > 0);
    assert!(count(&doc, "conversations") > 0);
    assert!(count(&doc["tools"], "rows") > 0);
    assert!(doc["conversations"][0]["runs"].as_array().is_some());
    // Uncapped, the page lists every finding and says nothing is left out.
    assert_eq!(doc["capped"], serde_json::json!([]));
}

/// Capped, the page says per rule how many findings it leaves out and where the full list is,
/// and the counts still count every finding.
#[test]
fn a_capped_page_says_what_it_leaves_out() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let store = ingest(&[samples.join("traces")]);
    let policy = Policy::load(&samples.join("policy.toml")).unwrap();
    let all = whole(store.path(), &policy, &UNCAPPED);
    let (doc, _) = windowed(store.path(), &policy, &CAPPED, 40, 100_000);
    let total: u64 = doc["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["findings"].as_u64().unwrap())
        .sum();
    assert_eq!(total as usize, count(&all, "findings"));
    let counts = doc["counts"].as_array().unwrap();
    assert_eq!(count(&doc, "findings"), counts.len(), "one per rule");
    let many = counts
        .iter()
        .find(|c| c["findings"].as_u64().unwrap() > 1)
        .expect("a rule with several findings in the samples");
    let note = format!(
        "showing 1 of {} {} findings (--max-findings-per-rule); the full list: `tripline check --format json`",
        many["findings"], many["rule"].as_str().unwrap()
    );
    assert_eq!(many["note"], note.as_str());
    let capped: Vec<&str> = doc["capped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(capped.contains(&note.as_str()), "{capped:?}");
    assert!(
        capped
            .iter()
            .any(|n| n.starts_with("showing 2 of ") && n.contains(" agent runs (--max-runs 2)")),
        "{capped:?}"
    );
    let listed_runs: usize = doc["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| count(c, "runs"))
        .sum::<usize>()
        + count(&doc, "loose_runs");
    assert_eq!(listed_runs, 2);
}

/// Every rule fixture with its own policy, alone in a store, in windows as small as one trace.
#[test]
fn rule_fixtures_page_in_windows_matches_the_whole_store() {
    let dir = common::fixtures_dir();
    let codes = common::rule_fixture_codes();
    assert!(codes.len() > 10, "{codes:?}");
    for code in &codes {
        let store = ingest(&[dir.join(format!("{code}.json"))]);
        let policy = Policy::load(&common::fixture_policy_path(code)).unwrap();
        let (doc, _) = assert_same(store.path(), &policy, &[1, 4, 1_000_000]);
        let fired = doc["counts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["rule"] == code.as_str());
        assert!(fired, "{code}'s fixture fires {code}: {}", doc["counts"]);
    }
}

#[test]
fn recordings_page_in_windows_matches_the_whole_store() {
    let dir = common::recordings_dir();
    if !dir.join("policy.toml").exists() {
        eprintln!("skipped: the recordings are not present");
        return;
    }
    let store = ingest(std::slice::from_ref(&dir));
    let policy = Policy::load(&dir.join("policy.toml")).unwrap();
    let (_, windows) = assert_same(store.path(), &policy, &[1, 25, 1_000_000]);
    assert!(windows > 10, "small windows cut the store: {windows}");
}

/// Orphaned MCP server spans stitched to host calls in other windows: the waterfalls hold the
/// stitched groups, the runs count the stitched calls, as one model of the whole store does.
#[test]
fn synthetic_store_page_with_orphans_across_boundaries_matches_the_whole_store() {
    let store = orphans_across_boundaries();
    let policy =
        Policy::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/policy.toml"))
            .unwrap();
    let (doc, windows) = assert_same(store.path(), &policy, &[1, 3, 20, 100]);
    assert!(windows > 100, "one trace per window: {windows}");
    let stitched = doc["views"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v["traces"].as_array().unwrap().len() > 1);
    assert!(stitched, "a view joins traces across a broken edge");
}

/// Pass 2 reads only the windows owning a listed finding or agent run: capped, that is a few of
/// the samples' windows; and wherever the cap on runs falls (runs of listed conversations only,
/// some or all of the runs under no conversation too), the page is the whole store's.
#[test]
fn pass_two_reads_only_the_windows_of_what_the_page_lists() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let store = ingest(&[samples.join("traces")]);
    let policy = Policy::load(&samples.join("policy.toml")).unwrap();
    let (_, first, second) = windowed_passes(store.path(), &policy, &CAPPED, 1, 100_000);
    assert!(first > 10, "small windows cut the store: {first}");
    assert!(
        second < first / 2,
        "pass 2 read {second} of {first} windows for one finding per rule and 2 runs"
    );
    // Runs under no conversation: the samples with the conversation ids taken off every other
    // file (renamed to an attribute nothing reads).
    let input = tempfile::tempdir().unwrap();
    let mut files: Vec<_> = std::fs::read_dir(samples.join("traces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for (k, f) in files.iter().enumerate() {
        let mut text = std::fs::read_to_string(f).unwrap();
        if k % 2 == 0 {
            text = text.replace("gen_ai.conversation.id", "test.no_conversation.id");
        }
        std::fs::write(input.path().join(f.file_name().unwrap()), text).unwrap();
    }
    let store = ingest(&[input.path().to_path_buf()]);
    let all = whole(store.path(), &policy, &UNCAPPED);
    let loose = count(&all, "loose_runs");
    assert!(loose > 3, "{loose} runs under no conversation");
    let in_conversations: usize = all["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| count(c, "runs"))
        .sum();
    // Only runs of listed conversations; some runs under no conversation too; all of them.
    for runs in [1, 3, in_conversations + 2, in_conversations + loose] {
        let limits = PageLimits {
            findings_per_rule: 2,
            runs,
        };
        let expected = whole(store.path(), &policy, &limits);
        let (got, _, second) = windowed_passes(store.path(), &policy, &limits, 1, 100_000);
        let mut diff = Vec::new();
        differences(&expected, &got, "", &mut diff);
        assert!(
            diff.is_empty(),
            "page data (--max-runs {runs}, pass 2 read {second} windows) differs from the whole store:\n{}",
            diff.join("\n")
        );
    }
}
