//! `check` in windows gives byte for byte the JSON of one model of the whole store: over the
//! samples, over the real recordings (skipped when absent) and over synthetic stores where traces
//! straddle window boundaries and orphaned server spans are stitched to host calls in other
//! windows. Stores are written by the collector's real ingest pipeline; windows are forced small
//! (`--window-spans`) so there are many boundaries. Every rule's fixture (the guardrail ones,
//! TL016 and TL017, whose store-wide facts come from pass 1, included) gives the same JSON in
//! windows of one trace as over the whole store. Also: a scan that cannot fit in
//! `--memory-limit` is an error naming the flag (a window that cannot: `window.rs`'s unit tests).

mod common;

use std::path::Path;

use analyze::check::{check_store, check_store_bounded, check_store_streamed};
use analyze::load::ScanFilter;
use analyze::policy::Policy;
use analyze::render::{render_json_with, write_json_streamed};
use analyze::rules::spill::SpillOptions;
use analyze::rules::RULES;
use analyze::window::{WindowError, WindowOptions, WindowStats};
use common::stores::{ingest, orphans_across_boundaries, rt};

/// `check --format json` over one model of the whole store.
fn whole(dir: &Path, policy: &Policy) -> String {
    let (_, report, scanned) = rt()
        .block_on(check_store(dir, &ScanFilter::default(), policy, RULES))
        .unwrap();
    render_json_with(&report, Some(&scanned))
}

/// `check --format json` in windows of `window_spans` spans.
fn windowed(dir: &Path, policy: &Policy, window_spans: u64) -> (String, WindowStats) {
    let options = WindowOptions {
        window_spans,
        memory_limit: None,
        spill_dir: None,
    };
    let (report, scanned, stats) = rt()
        .block_on(check_store_bounded(
            dir,
            &ScanFilter::default(),
            policy,
            RULES,
            &options,
        ))
        .unwrap();
    (render_json_with(&report, Some(&scanned)), stats)
}

/// `check --format json` in windows of `window_spans` spans, holding at most `max_held` findings
/// (the rest spilled to a temporary directory), written as the CLI writes it; and the number of
/// sorted runs the findings were merged from.
fn spilled(dir: &Path, policy: &Policy, window_spans: u64, max_held: usize) -> (String, usize) {
    let options = WindowOptions {
        window_spans,
        memory_limit: None,
        spill_dir: None,
    };
    let tmp = tempfile::tempdir().unwrap();
    let spill = SpillOptions {
        max_held,
        dir: Some(tmp.path().to_path_buf()),
    };
    let (streamed, scanned, _) = rt()
        .block_on(check_store_streamed(
            dir,
            &ScanFilter::default(),
            policy,
            RULES,
            &options,
            spill,
        ))
        .unwrap();
    let runs = streamed.findings.spilled_runs();
    let mut findings = streamed.findings;
    let mut out = Vec::new();
    write_json_streamed(&mut out, &mut findings, &streamed.coverage, Some(&scanned)).unwrap();
    drop(findings);
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "the spill directory is removed"
    );
    (String::from_utf8(out).unwrap(), runs)
}

/// The windowed JSON equals the whole-store JSON at every window size, and so does the JSON of
/// a check whose findings spill to disk (at most 2 held, windows of the smallest size); returns
/// the number of windows at the smallest size.
fn assert_same(dir: &Path, policy: &Policy, sizes: &[u64]) -> usize {
    let expected = whole(dir, policy);
    let findings = serde_json::from_str::<serde_json::Value>(&expected).unwrap()["findings"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(findings > 0, "the store yields findings: {expected}");
    let mut most = 0;
    for &size in sizes {
        let (got, stats) = windowed(dir, policy, size);
        if got != expected {
            let diff: Vec<String> = expected
                .lines()
                .zip(got.lines())
                .enumerate()
                .filter(|(_, (a, b))| a != b)
                .take(10)
                .map(|(i, (a, b))| format!("line {}: whole {a} | windows {b}", i + 1))
                .collect();
            panic!(
                "window size {size} ({} windows): JSON differs from the whole-store check:\n{}",
                stats.windows,
                diff.join("\n")
            );
        }
        most = most.max(stats.windows);
    }
    let (got, runs) = spilled(dir, policy, sizes[0], 2);
    assert!(
        runs > 0 || findings <= 2,
        "{findings} findings, no run spilled"
    );
    assert!(
        got == expected,
        "findings spilled in {runs} runs: JSON differs from the whole-store check"
    );
    most
}

#[test]
fn samples_in_windows_match_the_whole_store() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let store = ingest(&[samples.join("traces")]);
    let policy = Policy::load(&samples.join("policy.toml")).unwrap();
    let windows = assert_same(store.path(), &policy, &[1, 5, 40, 1_000_000]);
    assert!(windows > 10, "small windows cut the store: {windows}");
}

/// Every rule fixture with its own policy (as `rule_fixtures.rs` runs it), alone in a store, in
/// windows as small as one trace: TL016 learns which tools a guardrail guards from decisions in
/// other runs (other windows), TL017 matches denials to calls.
#[test]
fn rule_fixtures_in_windows_match_the_whole_store() {
    let dir = common::fixtures_dir();
    let codes = common::rule_fixture_codes();
    for must in ["TL006", "TL016", "TL017"] {
        assert!(
            codes.iter().any(|c| c == must),
            "{must} fixture in {codes:?}"
        );
    }
    for code in &codes {
        let store = ingest(&[dir.join(format!("{code}.json"))]);
        let policy = Policy::load(&common::fixture_policy_path(code)).unwrap();
        let expected = whole(store.path(), &policy);
        assert!(
            expected.contains(&format!("\"rule\": \"{code}\"")),
            "{code}'s fixture fires {code}: {expected}"
        );
        let windows = assert_same(store.path(), &policy, &[1, 4, 1_000_000]);
        // A fixture of one trace or one conversation is one window whatever its size; the
        // guardrail fixtures, with store-wide facts, must be cut.
        if ["TL016", "TL017"].contains(&code.as_str()) {
            assert!(
                windows > 1,
                "{code}: small windows cut the store ({windows})"
            );
        }
    }
}

/// The guardrail fixtures in one store: TL016's learnt guards and TL002's calls (which TL016
/// leaves to it) across windows.
#[test]
fn guardrail_fixtures_together_in_windows_match_the_whole_store() {
    let dir = common::fixtures_dir();
    let store = ingest(&[
        dir.join("TL016.json"),
        dir.join("TL017.json"),
        dir.join("TL002.json"),
    ]);
    let policy = Policy::load(&dir.join("TL016.policy.toml")).unwrap();
    let expected = whole(store.path(), &policy);
    for code in ["TL002", "TL016", "TL017"] {
        assert!(
            expected.contains(&format!("\"rule\": \"{code}\"")),
            "{code} fires: {expected}"
        );
    }
    let windows = assert_same(store.path(), &policy, &[1, 2, 7, 1_000_000]);
    assert!(windows > 3, "small windows cut the store: {windows}");
}

/// The findings of `check --format json` under `filter`, in windows of one trace, each as its
/// JSON text (so they compare and sort whole).
fn findings(dir: &Path, policy: &Policy, filter: &ScanFilter) -> Vec<String> {
    let options = WindowOptions {
        window_spans: 1,
        memory_limit: None,
        spill_dir: None,
    };
    let (report, scanned, _) = rt()
        .block_on(check_store_bounded(dir, filter, policy, RULES, &options))
        .unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&render_json_with(&report, Some(&scanned))).unwrap();
    let mut out: Vec<String> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.to_string())
        .collect();
    out.sort();
    out
}

/// TL006 is not local in time: it judges the newest `tools/list` of each tool among the spans
/// read. One windowed run reads the catalog of the whole selection in pass 1, so a window that
/// holds only an older listing still judges the newest (the samples' parts server lists
/// raise_parts_order unannotated at 10:10 and annotated in later scenarios). A check split by time
/// (docs/scale-out.md) is another matter: its first half, ending at 10:15, has the 10:10 listing
/// as its newest, and reports the TL006 the whole store does not; that, and nothing else, is the
/// difference at that boundary, and at 10:25 there is none.
#[test]
fn tl006_judges_the_newest_listing_across_windows_and_a_time_split_does_not() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let store = ingest(&[samples.join("traces")]);
    let policy = Policy::load(&samples.join("policy.toml")).unwrap();
    let whole = findings(store.path(), &policy, &ScanFilter::default());
    let tl006 = |v: &[String]| {
        v.iter()
            .filter(|f| f.contains("\"rule\":\"TL006\""))
            .cloned()
            .collect::<Vec<_>>()
    };
    let at = |t: &str| {
        chrono::DateTime::parse_from_rfc3339(t)
            .unwrap()
            .timestamp_nanos_opt()
            .unwrap()
    };
    let split = |boundary: &str| {
        let b = at(boundary);
        let first = ScanFilter {
            until_ns: Some(b - 1),
            ..ScanFilter::default()
        };
        let second = ScanFilter {
            since_ns: Some(b),
            ..ScanFilter::default()
        };
        let mut merged = findings(store.path(), &policy, &first);
        merged.extend(findings(store.path(), &policy, &second));
        merged.sort();
        merged
    };
    assert_eq!(split("2026-11-02T10:25:00Z"), whole);
    let at_1015 = split("2026-11-02T10:15:00Z");
    let extra: Vec<&String> = at_1015.iter().filter(|f| !whole.contains(f)).collect();
    let missing: Vec<&String> = whole.iter().filter(|f| !at_1015.contains(f)).collect();
    assert!(missing.is_empty(), "{missing:?}");
    assert_eq!(extra.len(), 1, "{extra:?}");
    assert!(
        extra[0].contains("\"rule\":\"TL006\"") && extra[0].contains("raise_parts_order"),
        "{extra:?}"
    );
    assert!(
        !tl006(&whole)
            .iter()
            .any(|f| f.contains("raise_parts_order")),
        "the whole store's newest listing of raise_parts_order agrees with the policy"
    );
}

#[test]
fn recordings_in_windows_match_the_whole_store() {
    let dir = common::recordings_dir();
    if !dir.join("policy.toml").exists() {
        eprintln!("skipped: the recordings are not present");
        return;
    }
    let store = ingest(std::slice::from_ref(&dir));
    let policy = Policy::load(&dir.join("policy.toml")).unwrap();
    let windows = assert_same(store.path(), &policy, &[1, 25, 1_000_000]);
    assert!(windows > 10, "small windows cut the store: {windows}");
}

/// Synthetic agent turns from several streams whose clocks overlap, so every window boundary
/// falls inside other traces' time, and half of the MCP server spans lost their context: each is
/// a trace of its own, judged in another window than its host's call.
#[test]
fn synthetic_store_with_orphans_across_boundaries_matches_the_whole_store() {
    let store = orphans_across_boundaries();
    let policy =
        Policy::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/policy.toml"))
            .unwrap();
    let expected = whole(store.path(), &policy);
    assert!(
        expected.contains("although the host's"),
        "orphaned server spans are stitched to their host calls: {expected}"
    );
    let windows = assert_same(store.path(), &policy, &[1, 3, 20, 100]);
    assert!(windows > 100, "one trace per window: {windows}");
}

#[test]
fn a_scan_over_the_memory_limit_is_an_error_naming_the_flag() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let store = ingest(&[samples.join("traces")]);
    let options = WindowOptions {
        window_spans: 1_000_000,
        memory_limit: Some(1024),
        spill_dir: None,
    };
    let e = rt()
        .block_on(check_store_bounded(
            store.path(),
            &ScanFilter::default(),
            &Policy::default(),
            RULES,
            &options,
        ))
        .unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, WindowError::ScanTooLarge { .. }), "{msg}");
    assert!(
        msg.starts_with("--memory-limit 1.0 KiB is too small to index the store (pass 1): ")
            && msg.ends_with("; raise --memory-limit"),
        "{msg}"
    );
}
