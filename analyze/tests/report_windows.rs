//! `report` and `diff` in windows give byte for byte the output of one model of the whole
//! store: every report kind (JSON, table and Markdown) over the samples, the guardrail fixtures,
//! the real recordings (skipped when absent) and a synthetic store whose orphaned server spans
//! are stitched to host calls in other windows; `diff` (TL011) over the diff fixtures and over the
//! samples against the recordings. Stores are written by the collector's real ingest pipeline;
//! windows are forced small (down to one trace) so there are many boundaries.

mod common;

use std::path::Path;

use analyze::check::{conversations_store_streamed, diff_stores_with, report_store_bounded};
use analyze::load::{scan_store, Projection, ScanFilter};
use analyze::model::Model;
use analyze::render::{render_built, render_diff, render_report, ConversationsOut, Format, Style};
use analyze::reports::conversations::{self, ConversationRow};
use analyze::reports::{Owned, ReportKind};
use analyze::rules::tl011_catalog_drift::{diff_catalogs, DiffReport, RunCatalog};
use analyze::window::{each_window, WindowOptions};
use clap::ValueEnum;
use common::stores::{conversations_across_boundaries, ingest, orphans_across_boundaries, rt};

fn style() -> Style {
    Style::for_stdout(false, false)
}

const FORMATS: [Format; 3] = [Format::Json, Format::Table, Format::Markdown];

/// Report `kind` in each format over one model of the whole store (what `report` printed
/// before it read in windows).
fn whole(dir: &Path, kind: ReportKind) -> Vec<String> {
    let scan = rt()
        .block_on(scan_store(
            dir,
            &ScanFilter::default(),
            &Projection::base().with(kind.columns()),
        ))
        .unwrap();
    let model = Model::from_parts(scan.parts);
    FORMATS
        .iter()
        .map(|&f| render_report(kind, &model, f, &style(), Some(&scan.scanned)).unwrap())
        .collect()
}

/// Report `kind` in each format, in windows of `window_spans` spans; and the number of windows.
fn windowed(dir: &Path, kind: ReportKind, window_spans: u64) -> (Vec<String>, usize) {
    let options = WindowOptions {
        window_spans,
        memory_limit: None,
        spill_dir: None,
    };
    let (built, scanned, stats) = rt()
        .block_on(report_store_bounded(
            dir,
            &ScanFilter::default(),
            kind,
            &options,
        ))
        .unwrap();
    let out = FORMATS
        .iter()
        .map(|&f| render_built(&built, f, &style(), Some(&scanned)).unwrap())
        .collect();
    (out, stats.windows)
}

/// `report conversations` in each format as the CLI writes it: each row passed on as the windows
/// finish it (the table uncapped).
fn streamed_conversations(dir: &Path, window_spans: u64) -> Vec<String> {
    let options = WindowOptions {
        window_spans,
        memory_limit: None,
        spill_dir: None,
    };
    FORMATS
        .iter()
        .map(|&f| {
            let style = style();
            let mut out = ConversationsOut::new(Vec::new(), f, &style, usize::MAX);
            let (notes, scanned, _) = rt()
                .block_on(conversations_store_streamed(
                    dir,
                    &ScanFilter::default(),
                    &options,
                    &mut out,
                ))
                .unwrap();
            String::from_utf8(out.finish(notes, Some(&scanned)).unwrap()).unwrap()
        })
        .collect()
}

fn first_difference(expected: &str, got: &str) -> String {
    expected
        .lines()
        .zip(got.lines())
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .take(10)
        .map(|(i, (a, b))| format!("line {}: whole {a} | windows {b}", i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every report kind in windows equals the whole-store report at every window size; returns,
/// per kind, the rows of the whole-store report, and the most windows seen.
fn assert_same(dir: &Path, sizes: &[u64]) -> (Vec<(ReportKind, usize)>, usize) {
    let mut rows = Vec::new();
    let mut most = 0;
    for &kind in ReportKind::value_variants() {
        let expected = whole(dir, kind);
        let doc: serde_json::Value = serde_json::from_str(&expected[0]).unwrap();
        rows.push((kind, doc["rows"].as_array().map_or(0, Vec::len)));
        for &size in sizes {
            let (got, windows) = windowed(dir, kind, size);
            for (f, (want, got)) in FORMATS.iter().zip(expected.iter().zip(&got)) {
                assert!(
                    want == got,
                    "report {kind:?}, {f:?}, window size {size} ({windows} windows) differs from the whole store:\n{}\nwhole:\n{want}\nwindows:\n{got}",
                    first_difference(want, got)
                );
            }
            if kind == ReportKind::Conversations {
                let got = streamed_conversations(dir, size);
                for (f, (want, got)) in FORMATS.iter().zip(expected.iter().zip(&got)) {
                    assert!(
                        want == got,
                        "report conversations streamed, {f:?}, window size {size} differs from the whole store:\n{}\nwhole:\n{want}\nstreamed:\n{got}",
                        first_difference(want, got)
                    );
                }
            }
            most = most.max(windows);
        }
    }
    (rows, most)
}

fn rows_of(rows: &[(ReportKind, usize)], kind: ReportKind) -> usize {
    rows.iter().find(|(k, _)| *k == kind).map_or(0, |r| r.1)
}

#[test]
fn samples_reports_in_windows_match_the_whole_store() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let store = ingest(&[samples.join("traces")]);
    let (rows, windows) = assert_same(store.path(), &[1, 5, 40, 1_000_000]);
    assert!(windows > 10, "small windows cut the store: {windows}");
    for kind in [
        ReportKind::Tools,
        ReportKind::Conversations,
        ReportKind::Guardrails,
        ReportKind::Skills,
        ReportKind::Propagation,
    ] {
        assert!(rows_of(&rows, kind) > 0, "{kind:?} has rows: {rows:?}");
    }
}

/// Guardrail decisions, approvals and skills across windows of one trace.
#[test]
fn guardrail_fixtures_reports_in_windows_match_the_whole_store() {
    let dir = common::fixtures_dir();
    let store = ingest(&[
        dir.join("TL016.json"),
        dir.join("TL017.json"),
        dir.join("TL002.json"),
    ]);
    let (rows, windows) = assert_same(store.path(), &[1, 2, 7, 1_000_000]);
    assert!(windows > 3, "small windows cut the store: {windows}");
    assert!(rows_of(&rows, ReportKind::Guardrails) > 0, "{rows:?}");
}

#[test]
fn recordings_reports_in_windows_match_the_whole_store() {
    let dir = common::recordings_dir();
    if !dir.join("policy.toml").exists() {
        eprintln!("skipped: the recordings are not present");
        return;
    }
    let store = ingest(std::slice::from_ref(&dir));
    let (rows, windows) = assert_same(store.path(), &[1, 25, 1_000_000]);
    assert!(windows > 10, "small windows cut the store: {windows}");
    assert!(rows_of(&rows, ReportKind::Tools) > 0, "{rows:?}");
    assert!(rows_of(&rows, ReportKind::Propagation) > 0, "{rows:?}");
}

/// Synthetic agent turns from streams whose clocks overlap, half of the MCP server spans cut off
/// from their host's trace (stitched back across window boundaries): the tools report's servers
/// and latencies and the propagation report's channels come out the same.
#[test]
fn synthetic_store_reports_with_orphans_across_boundaries_match_the_whole_store() {
    let store = orphans_across_boundaries();
    let (rows, windows) = assert_same(store.path(), &[1, 3, 20, 100]);
    assert!(windows > 100, "one trace per window: {windows}");
    assert!(rows_of(&rows, ReportKind::Tools) > 0, "{rows:?}");
    assert!(rows_of(&rows, ReportKind::Propagation) > 0, "{rows:?}");
}

/// `diff`'s JSON and table over one model of each whole store (what `diff` did before it read
/// in windows).
fn whole_diff(baseline: &Path, candidate: &Path) -> [String; 2] {
    let side = |dir: &Path| {
        let scan = rt()
            .block_on(scan_store(dir, &ScanFilter::default(), &Projection::base()))
            .unwrap();
        let mut cat = RunCatalog::collect(scan.parts.into_iter().flatten().flatten().collect());
        cat.scanned = Some(scan.scanned);
        cat
    };
    let report: DiffReport = diff_catalogs(side(baseline), side(candidate));
    [Format::Json, Format::Table].map(|f| render_diff(&report, f, &style()))
}

/// The windowed diff equals the whole-store diff at every window size; returns its JSON.
fn assert_same_diff(baseline: &Path, candidate: &Path, sizes: &[u64]) -> String {
    let expected = whole_diff(baseline, candidate);
    for &size in sizes {
        let options = WindowOptions {
            window_spans: size,
            memory_limit: None,
            spill_dir: None,
        };
        let report = rt()
            .block_on(diff_stores_with(baseline, candidate, &options))
            .unwrap();
        for (want, format) in expected.iter().zip([Format::Json, Format::Table]) {
            let got = render_diff(&report, format, &style());
            assert!(
                *want == got,
                "diff {format:?} in windows of {size} spans differs:\n{}",
                first_difference(want, &got)
            );
        }
    }
    expected[0].clone()
}

#[test]
fn diff_in_windows_matches_the_whole_stores() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/diff");
    let b = ingest(&[fixtures.join("baseline.json")]);
    let c = ingest(&[fixtures.join("candidate.json")]);
    let json = assert_same_diff(b.path(), c.path(), &[1, 2, 5, 1_000_000]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(
        doc["findings"].as_array().is_some_and(|f| !f.is_empty()),
        "the fixtures drift: {json}"
    );
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let s = ingest(&[samples.join("traces")]);
    assert_same_diff(s.path(), c.path(), &[1, 7, 1_000_000]);
    let dir = common::recordings_dir();
    if dir.join("policy.toml").exists() {
        let r = ingest(std::slice::from_ref(&dir));
        assert_same_diff(s.path(), r.path(), &[1, 25, 1_000_000]);
    }
}

/// Conversations overlapping in time across many windows (synth's agent runs from three seeds
/// on one clock): every report the same as the whole store's, the conversation rows streamed.
#[test]
fn synthetic_conversations_across_boundaries_match_the_whole_store() {
    let store = conversations_across_boundaries();
    let (rows, windows) = assert_same(store.path(), &[1, 7, 60, 1_000_000]);
    assert!(windows > 20, "small windows cut the store: {windows}");
    assert!(rows_of(&rows, ReportKind::Conversations) > 20, "{rows:?}");
}

/// The conversation rows leave the tally as the windows finish them, in report order: most
/// before the last window is counted, and never more than a few held at once; the rows are
/// those of one model of the whole store.
#[test]
fn conversation_rows_are_passed_on_as_the_windows_finish_them() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let stores = [
        ingest(&[samples.join("traces")]),
        conversations_across_boundaries(),
    ];
    for store in &stores {
        let dir = store.path();
        let scan = rt()
            .block_on(scan_store(dir, &ScanFilter::default(), &Projection::base()))
            .unwrap();
        let expected = conversations::build(&Model::from_parts(scan.parts)).rows;
        for size in [1, 20] {
            let options = WindowOptions {
                window_spans: size,
                memory_limit: None,
                spill_dir: None,
            };
            let mut totals = conversations::Totals::default();
            let mut rows: Vec<ConversationRow> = Vec::new();
            let (mut most_held, mut before_last) = (0, 0);
            rt().block_on(each_window(
                dir,
                &ScanFilter::default(),
                &Projection::base(),
                &options,
                |model, core, _, place| {
                    totals.add_at(model, &Owned::core(model, core), place);
                    totals.settle(place, &mut rows);
                    most_held = most_held.max(totals.held());
                    if place.later_from_ns != i64::MAX {
                        before_last = rows.len();
                    }
                },
            ))
            .unwrap();
            totals.finish_into(&mut rows);
            assert_eq!(rows, expected, "window size {size}");
            let n = expected.len();
            assert!(
                before_last * 4 >= n * 3,
                "window size {size}: {before_last} of {n} rows passed on before the last window"
            );
            assert!(
                most_held * 4 <= n,
                "window size {size}: {most_held} of {n} rows held at once"
            );
        }
    }
}

/// The table shows the first `--max-rows` conversations by start and says how many it leaves
/// out; JSON and Markdown are never capped.
#[test]
fn the_conversations_table_says_what_it_leaves_out() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let store = ingest(&[samples.join("traces")]);
    let dir = store.path();
    let (built, _, _) = rt()
        .block_on(report_store_bounded(
            dir,
            &ScanFilter::default(),
            ReportKind::Conversations,
            &WindowOptions::default(),
        ))
        .unwrap();
    let analyze::reports::Built::Conversations(mut report) = built else {
        panic!("a conversations report")
    };
    let n = report.rows.len();
    assert!(n > 3, "{n}");
    let style = style();
    let mut out = ConversationsOut::new(Vec::new(), Format::Table, &style, 3);
    let (notes, scanned, _) = rt()
        .block_on(conversations_store_streamed(
            dir,
            &ScanFilter::default(),
            &WindowOptions {
                window_spans: 5,
                memory_limit: None,
                spill_dir: None,
            },
            &mut out,
        ))
        .unwrap();
    let table = String::from_utf8(out.finish(notes, Some(&scanned)).unwrap()).unwrap();
    // The table of the first three rows, the note first.
    report.rows.truncate(3);
    report.notes.insert(
        0,
        format!(
            "showing the first 3 of {n} conversations, by start (--max-rows 3); `--format json` or `--format markdown` lists every one"
        ),
    );
    let want = render_built(
        &analyze::reports::Built::Conversations(report),
        Format::Table,
        &style,
        Some(&scanned),
    )
    .unwrap();
    assert_eq!(table, want);
}
