//! Snapshots of what the user sees: `check` in every format, `trace` (stitched, broken edge and
//! findings marked), `explain`, over the TL004 + TL010 fixtures with a fixed rule set so the
//! snapshots do not move when other rules are registered.

mod common;

use analyze::check::check_spans;
use analyze::load::load_batches;
use analyze::model::{Model, TraceId};
use analyze::policy::Policy;
use analyze::render::{
    explain_text, render_json, render_markdown, render_sarif, render_table, render_trace, Style,
};
use analyze::rules::{find, Report, Rule};

fn report() -> (Model, Report) {
    let batches: Vec<_> = ["TL004", "TL010"]
        .iter()
        .map(|c| common::batch_from_json(&common::fixtures_dir().join(format!("{c}.json"))))
        .collect();
    let policy = Policy::load(&common::fixtures_dir().join("policy.toml")).unwrap();
    let rules: Vec<&dyn Rule> = ["TL004", "TL010"].iter().filter_map(|c| find(c)).collect();
    check_spans(load_batches(&batches).unwrap(), &policy, &rules)
}

#[test]
fn check_table() {
    insta::assert_snapshot!(render_table(&report().1, &Style::default()));
}

#[test]
fn check_json_contract() {
    let out = render_json(&report().1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let f = &v["findings"][0];
    for key in [
        "rule",
        "name",
        "severity",
        "trace_id",
        "span_id",
        "conversation_id",
        "tool",
        "message",
        "related",
    ] {
        assert!(f.get(key).is_some(), "finding lacks {key}");
    }
    for key in ["rule", "examined", "not_observable", "reasons"] {
        assert!(v["coverage"][0].get(key).is_some(), "coverage lacks {key}");
    }
    insta::assert_snapshot!(out);
}

#[test]
fn check_markdown() {
    insta::assert_snapshot!(render_markdown(&report().1));
}

#[test]
fn check_sarif_has_one_rule_id_per_result() {
    let out = render_sarif(&report().1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["version"], "2.1.0");
    let results = v["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    for r in results {
        let idx = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[idx]["id"], r["ruleId"]);
    }
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["TL010", "TL004", "TL004"]);
}

#[test]
fn trace_view_stitches_the_broken_edge() {
    let (model, report) = report();
    let host = TraceId::parse_hex("00040000000000000000000000000002").unwrap();
    let out = render_trace(&model, &report, host);
    assert!(
        out.contains("⇢ tools/call get_ticket [acme-mcp-server]"),
        "{out}"
    );
    insta::assert_snapshot!(out);
}

#[test]
fn explain_prints_all_four_sections() {
    let out = explain_text(find("tl004").unwrap());
    for section in ["What it detects", "Why it matters", "Example", "How to fix"] {
        assert!(out.contains(section), "{section} missing");
    }
    insta::assert_snapshot!(out);
}
