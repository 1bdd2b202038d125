//! Ground truth on the real recordings in ../shared/recordings: every recording's raw export
//! bodies are decoded, converted, and checked with ../shared/recordings/policy.toml; the findings
//! of the labelled rules must match `ground_truth.json` exactly (count, tool, span), negative
//! controls must yield none of them, and where the spans do not carry the data the coverage must
//! say *not observable*.
//!
//! Skipped (with a note on stderr) when the recordings are not present.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use analyze::check::check_spans;
use analyze::load::load_batches;
use analyze::policy::{Policy, PolicyClass};
use analyze::rules::{Finding, Report, RULES};
use serde_json::Value;

/// Rules whose findings the ground truth fully labels (README of the recordings).
const LABELLED: &[&str] = &[
    "TL001", "TL002", "TL003", "TL004", "TL005", "TL007", "TL008", "TL010",
];

fn recordings() -> Vec<PathBuf> {
    let root = common::recordings_dir();
    let mut out = Vec::new();
    let Ok(libs) = std::fs::read_dir(&root) else {
        return out;
    };
    for lib in libs.flatten() {
        let Ok(recs) = std::fs::read_dir(lib.path()) else {
            continue;
        };
        for r in recs.flatten() {
            if r.path().join("ground_truth.json").exists() {
                out.push(r.path());
            }
        }
    }
    out.sort();
    out
}

fn analyse(dir: &Path, policy: &Policy) -> Report {
    let batches = common::recording_batches(dir);
    assert!(!batches.is_empty(), "{}: no export bodies", dir.display());
    let spans = load_batches(&batches).expect("batches load");
    check_spans(spans, policy, RULES).1
}

fn ids(v: &Value, key: &str) -> BTreeSet<String> {
    v[key]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect()
}

fn spans_of(findings: &[&Finding]) -> BTreeSet<String> {
    findings.iter().map(|f| f.span_id.to_string()).collect()
}

/// The findings a recording's ground truth expects, per rule code.
struct Expected {
    /// (rule, span id, tool) for per-call labels.
    calls: Vec<(&'static str, String, Option<String>)>,
    /// TL004: orphan server span ids, and host execute_tool span ids (when a host exported).
    propagation: Option<(BTreeSet<String>, BTreeSet<String>)>,
    /// TL008: the execute_tool spans of each retry loop.
    retries: Vec<BTreeSet<String>>,
    /// TL010: (conversation, exfiltration execute_tool span).
    chains: Vec<(String, String)>,
    /// TL007: the host spans carrying the deprecated name.
    deprecated: BTreeSet<String>,
}

fn expected(gt: &Value, policy: &Policy) -> Expected {
    let mut e = Expected {
        calls: Vec::new(),
        propagation: None,
        retries: Vec::new(),
        chains: Vec::new(),
        deprecated: BTreeSet::new(),
    };
    for f in gt["expected_findings"].as_array().into_iter().flatten() {
        let tool = f["tool"].as_str().map(str::to_string);
        let span = f["execute_tool_span_id"].as_str().unwrap_or("").to_string();
        match f["id"].as_str().unwrap_or("") {
            "structured_output_missing" => e.calls.push(("TL001", span, tool)),
            "write_without_confirmation" => {
                let prohibited = tool.as_deref().and_then(|t| policy.registry_class(t))
                    == Some(PolicyClass::Prohibited);
                e.calls
                    .push((if prohibited { "TL003" } else { "TL002" }, span, tool));
            }
            "tool_call_outside_allowlist" => e.calls.push(("TL005", span, tool)),
            "broken_trace_propagation" => {
                let servers = f["server_spans"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s["span_id"].as_str().map(str::to_string))
                    .collect();
                let hosts = f["host_execute_tool_spans_without_server_child"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s["span_id"].as_str().map(str::to_string))
                    .collect();
                e.propagation = Some((servers, hosts));
            }
            "tool_error_retry_loop" => e.retries.push(ids(f, "execute_tool_span_ids")),
            "exfiltration_chain" => e.chains.push((
                f["conversation_id"].as_str().unwrap_or("").to_string(),
                f["exfil_execute_tool_span_id"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )),
            "deprecated_gen_ai_system" => e.deprecated = ids(f, "span_ids"),
            other => panic!("unknown ground-truth id {other}"),
        }
    }
    e
}

/// Compares one recording; returns the mismatches (empty = as labelled).
fn compare(name: &str, report: &Report, e: &Expected) -> Vec<String> {
    let mut errs = Vec::new();
    let of = |rule: &str| -> Vec<&Finding> {
        report.findings.iter().filter(|f| f.rule == rule).collect()
    };
    for rule in ["TL001", "TL002", "TL003", "TL005"] {
        let got: BTreeSet<(String, Option<String>)> = of(rule)
            .iter()
            .map(|f| (f.span_id.to_string(), f.tool.clone()))
            .collect();
        let want: BTreeSet<(String, Option<String>)> = e
            .calls
            .iter()
            .filter(|(r, _, _)| *r == rule)
            .map(|(_, s, t)| (s.clone(), t.clone()))
            .collect();
        if got.len() != of(rule).len() || got != want {
            errs.push(format!("{name} {rule}: got {got:?}, want {want:?}"));
        }
    }
    let tl004 = of("TL004");
    match &e.propagation {
        None if !tl004.is_empty() => errs.push(format!(
            "{name} TL004: unexpected {:?}",
            tl004.iter().map(|f| &f.message).collect::<Vec<_>>()
        )),
        None => {}
        Some((servers, hosts)) => {
            if spans_of(&tl004) != *servers || tl004.len() != servers.len() {
                errs.push(format!(
                    "{name} TL004: got spans {:?}, want {servers:?}",
                    spans_of(&tl004)
                ));
            }
            let related: BTreeSet<String> = tl004
                .iter()
                .flat_map(|f| f.related.iter().map(ToString::to_string))
                .collect();
            if !hosts.is_subset(&related) {
                errs.push(format!(
                    "{name} TL004: host execute_tool spans {hosts:?} not all related ({related:?})"
                ));
            }
            if hosts.is_empty() && !related.is_empty() {
                errs.push(format!(
                    "{name} TL004: no host exported, yet related {related:?}"
                ));
            }
        }
    }
    let tl008 = of("TL008");
    let got: Vec<BTreeSet<String>> = tl008
        .iter()
        .map(|f| {
            std::iter::once(f.span_id.to_string())
                .chain(f.related.iter().map(ToString::to_string))
                .collect()
        })
        .collect();
    if got != e.retries {
        errs.push(format!("{name} TL008: got {got:?}, want {:?}", e.retries));
    }
    let got: Vec<(String, String)> = of("TL010")
        .iter()
        .map(|f| {
            (
                f.conversation_id.clone().unwrap_or_default(),
                f.span_id.to_string(),
            )
        })
        .collect();
    if got != e.chains {
        errs.push(format!("{name} TL010: got {got:?}, want {:?}", e.chains));
    }
    if analyze::rules::find("TL007").is_some() {
        let got = spans_of(&of("TL007"));
        if got != e.deprecated {
            errs.push(format!(
                "{name} TL007: got {got:?}, want {:?}",
                e.deprecated
            ));
        }
    }
    errs
}

#[test]
fn findings_match_ground_truth_on_every_recording() {
    let recs = recordings();
    if recs.is_empty() {
        eprintln!(
            "skipping: no recordings under {}",
            common::recordings_dir().display()
        );
        return;
    }
    let policy = Policy::load(&common::recordings_dir().join("policy.toml")).expect("policy");
    let mut errs = Vec::new();
    let mut summary = Vec::new();
    for dir in &recs {
        let name = dir
            .strip_prefix(common::recordings_dir())
            .unwrap_or(dir)
            .display()
            .to_string();
        let gt: Value = serde_json::from_slice(
            &std::fs::read(dir.join("ground_truth.json")).expect("ground truth"),
        )
        .expect("ground truth json");
        let report = analyse(dir, &policy);
        let e = expected(&gt, &policy);
        errs.extend(compare(&name, &report, &e));
        let labelled: Vec<String> = report
            .findings
            .iter()
            .filter(|f| LABELLED.contains(&f.rule))
            .map(|f| format!("{} {}", f.rule, f.span_id))
            .collect();
        summary.push(format!("{name}: {}", labelled.join(", ")));
    }
    eprintln!("{}", summary.join("\n"));
    assert!(
        errs.is_empty(),
        "{} mismatch(es):\n{}",
        errs.len(),
        errs.join("\n")
    );
    assert!(
        recs.len() >= 40,
        "expected the 42 recordings, found {}",
        recs.len()
    );
}

#[test]
fn missing_tool_results_are_reported_not_observable() {
    // mcp2-native without host content capture: no span carries the tool result.
    let policy = Policy::load(&common::recordings_dir().join("policy.toml"));
    let Ok(policy) = policy else {
        eprintln!("skipping: recordings not present");
        return;
    };
    for rec in [
        "mcp2-native/S1-structured-good",
        "mcp2-native/S2-structured-broken",
    ] {
        let dir = common::recordings_dir().join(rec);
        let report = analyse(&dir, &policy);
        let cov = report
            .coverage
            .iter()
            .find(|c| c.rule == "TL001")
            .expect("TL001 ran");
        assert_eq!(cov.examined, 1, "{rec}: {cov:?}");
        assert_eq!(cov.not_observable, 1, "{rec}: {cov:?}");
        assert_eq!(
            cov.reasons,
            vec![
                "tool result not captured on 1 of 1 tool calls (find_contact_by_email)".to_string()
            ],
            "{rec}"
        );
        assert!(report.findings.iter().all(|f| f.rule != "TL001"), "{rec}");
    }
}
