//! `report propagation` on the real recordings in ../shared/recordings (MCP Python SDK 2.3
//! built-in telemetry, Traceloop on mcp 1.30; stdio and Streamable HTTP), checked against
//! their ground truth and against TL004 on the same model: a pair whose server spans TL004
//! reports shows exactly those calls as not stitched, with the reason and a fix; a recording
//! labelled healthy for propagation shows every request of the pair stitched through
//! `params._meta`; the libraries are the instrumentation scopes the spans carry.
//!
//! Skipped (with a note on stderr) when the recordings are not present.

mod common;

use std::path::PathBuf;

use analyze::check::check_spans;
use analyze::load::load_batches;
use analyze::policy::Policy;
use analyze::reports::propagation::{self, PropagationRow};
use serde_json::Value;

const HOST: &str = "acme-agent-host";
const SERVER: &str = "acme-mcp-server";

fn recordings() -> Vec<PathBuf> {
    let root = common::recordings_dir();
    let mut out = Vec::new();
    for lib in std::fs::read_dir(&root).into_iter().flatten().flatten() {
        for r in std::fs::read_dir(lib.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if r.path().join("ground_truth.json").exists() {
                out.push(r.path());
            }
        }
    }
    out.sort();
    out
}

/// The labelled orphan server spans of a recording, and whether the host exported.
fn labels(gt: &Value) -> (usize, bool) {
    let broken = gt["expected_findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["id"] == "broken_trace_propagation")
        .map(|f| f["server_spans"].as_array().map_or(0, Vec::len))
        .sum();
    (broken, gt["meta"]["host_exports"] != Value::Bool(false))
}

#[test]
fn propagation_report_agrees_with_tl004_and_the_labels_on_every_recording() {
    let recs = recordings();
    if recs.is_empty() {
        eprintln!(
            "shared recordings not found at {}: skipped",
            common::recordings_dir().display()
        );
        return;
    }
    let tl004 = analyze::rules::find("TL004").expect("TL004");
    let mut pairs_seen = 0;
    let mut broken_seen = 0;
    let mut healthy_seen = 0;
    for rec in &recs {
        let name = rec.display().to_string();
        let gt: Value = serde_json::from_str(
            &std::fs::read_to_string(rec.join("ground_truth.json")).expect("ground truth"),
        )
        .expect("ground truth is JSON");
        let (labelled, host_exports) = labels(&gt);
        let spans = load_batches(&common::recording_batches(rec)).expect("batches load");
        let (model, report) = check_spans(spans, &Policy::default(), &[tl004]);
        let r = propagation::build(&model);
        for row in &r.rows {
            let h = &row.how;
            assert_eq!(
                h.params_meta
                    + h.http_header_only
                    + h.via_gateway
                    + h.rerooted_by_gateway
                    + h.none
                    + h.not_observable,
                row.calls,
                "{name}: the channels do not add up to the calls: {row:#?}"
            );
            assert_eq!(
                row.stitched,
                h.params_meta + h.http_header_only + h.via_gateway,
                "{name}: {row:#?}"
            );
        }
        // Every tools/call TL004 reports is a not-stitched call of some pair, and only those.
        let unstitched: usize = r.rows.iter().map(|row| row.unstitched_tool_calls).sum();
        assert_eq!(unstitched, report.findings.len(), "{name}: {:#?}", r.rows);
        assert_eq!(unstitched, labelled, "{name}: {:#?}", r.rows);
        let pair = |client: Option<&str>| -> Option<&PropagationRow> {
            r.rows.iter().find(|row| {
                row.client.as_deref() == client && row.server.as_deref() == Some(SERVER)
            })
        };
        if labelled > 0 {
            broken_seen += 1;
            if host_exports {
                // The host's calls were found again by stitching: the pair shows them as not
                // stitched (no context at all, or a parent outside the host's trace).
                let row = pair(Some(HOST)).unwrap_or_else(|| panic!("{name}: {:#?}", r.rows));
                assert_eq!(row.unstitched_tool_calls, labelled, "{name}: {row:#?}");
                assert!(
                    row.how.none + row.how.rerooted_by_gateway >= labelled,
                    "{name}: {row:#?}"
                );
                assert!(row.stitched < row.calls, "{name}: {row:#?}");
                assert!(row.fix.contains("trace"), "{name}: {}", row.fix);
            } else {
                // No host span at all: the server spans have no client, and say so.
                let row = pair(None).unwrap_or_else(|| panic!("{name}: {:#?}", r.rows));
                assert_eq!(row.unstitched_tool_calls, labelled, "{name}: {row:#?}");
                assert_eq!(row.stitched, 0, "{name}: {row:#?}");
                assert!(
                    row.fix.contains("instrument the client"),
                    "{name}: {}",
                    row.fix
                );
            }
        } else if let Some(row) = pair(Some(HOST)) {
            healthy_seen += 1;
            // Healthy propagation: every request with both sides in the store kept the trace,
            // in params._meta (both libraries inject there; no HTTP span sits in between).
            assert_eq!(row.unstitched_tool_calls, 0, "{name}: {row:#?}");
            assert_eq!(
                row.how.none + row.how.rerooted_by_gateway,
                0,
                "{name}: {row:#?}"
            );
            assert_eq!(row.how.params_meta, row.stitched, "{name}: {row:#?}");
            assert!(row.stitched > 0, "{name}: {row:#?}");
            assert!(row.fix.starts_with("none needed"), "{name}: {}", row.fix);
        }
        // The libraries are the instrumentation scopes of each side.
        for row in r.rows.iter().filter(|row| row.server.is_some()) {
            pairs_seen += 1;
            let want = if name.contains("traceloop") {
                "opentelemetry.instrumentation.mcp"
            } else {
                "mcp-python-sdk"
            };
            assert!(
                row.server_libraries.iter().any(|l| l.starts_with(want)),
                "{name}: server libraries {:?}",
                row.server_libraries
            );
        }
    }
    assert!(pairs_seen > 0 && broken_seen > 0 && healthy_seen > 0);
}
