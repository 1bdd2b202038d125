//! The lab's field recordings (lab/recordings, issue 10), scored exactly: every recording is
//! decoded, converted and checked with lab/policy.toml in process, and its findings of the scored
//! rules are matched to lab/labels.json the way lab/score.py matches them (a label unit takes one
//! finding of its rule whose span or related spans belong to the labelled call). What does not
//! match — labels missed, findings that match no label, rules the labels call *not observable*
//! while the coverage does not say so — must be exactly what `lab_expected_gaps.json` lists, with
//! a reason for every library and rule in it. A regression fails, and so does an improvement that
//! is not recorded (a ratchet): after a deliberate change run
//! `LAB_GAPS_UPDATE=1 cargo test --workspace --test lab_recordings`, then review the diff and give
//! every new (library, rule) gap its reason.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use analyze::check::check_spans;
use analyze::load::load_batches;
use analyze::policy::Policy;
use analyze::rules::{Finding, Report, RULES};
use serde_json::{json, Value};

fn lab_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab")
}

fn gaps_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lab_expected_gaps.json")
}

/// score.py's `label_spans`.
fn label_spans(label: &Value) -> Vec<String> {
    let strs = |key: &str| -> Vec<String> {
        label[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    match label["rule"].as_str().unwrap_or("") {
        "TL004" => label["server_spans"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["span_id"].as_str().map(str::to_string))
            .collect(),
        "TL007" => strs("span_ids"),
        "TL008" => {
            let c = strs("call_span_ids");
            if c.is_empty() {
                strs("execute_tool_span_ids")
            } else {
                c
            }
        }
        _ => {
            let c = strs("call_span_ids");
            if c.is_empty() {
                label["execute_tool_span_id"]
                    .as_str()
                    .map(|s| vec![s.to_string()])
                    .unwrap_or_default()
            } else {
                c
            }
        }
    }
}

/// What one recording shows against its labels.
#[derive(Debug, Default, PartialEq)]
struct Outcome {
    found: Vec<String>,
    missed: Vec<String>,
    /// `rule tool-or-span` per finding that matches no label.
    false_alarms: Vec<String>,
    /// Rules the labels call not observable whose coverage does not say so.
    not_observable_unsaid: Vec<String>,
}

/// score.py's `match`: greedy, one finding per label unit.
fn score(labels: &Value, report: &Report, scored: &[String]) -> Outcome {
    let mut units: Vec<(String, Vec<String>)> = Vec::new();
    for l in labels["expected_findings"].as_array().into_iter().flatten() {
        let rule = l["rule"].as_str().unwrap_or("").to_string();
        let spans = label_spans(l);
        if rule == "TL004" || rule == "TL007" {
            units.extend(spans.into_iter().map(|s| (rule.clone(), vec![s])));
        } else {
            units.push((rule, spans));
        }
    }
    let mut free: Vec<&Finding> = report
        .findings
        .iter()
        .filter(|f| scored.iter().any(|r| r == f.rule))
        .collect();
    let mut out = Outcome::default();
    for (rule, spans) in units {
        let belongs = |f: &Finding| {
            std::iter::once(f.span_id.to_string())
                .chain(f.related.iter().map(ToString::to_string))
                .any(|s| spans.contains(&s))
        };
        let mut hit = free.iter().position(|f| f.rule == rule && belongs(f));
        if hit.is_none() && rule == "TL006" {
            hit = free.iter().position(|f| f.rule == rule);
        }
        match hit {
            Some(i) => {
                free.remove(i);
                out.found.push(rule);
            }
            None => out.missed.push(rule),
        }
    }
    out.false_alarms = free
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f.rule,
                f.tool.clone().unwrap_or_else(|| f.span_id.to_string())
            )
        })
        .collect();
    out.false_alarms.sort();
    out.missed.sort();
    for rule in labels["not_observable"]
        .as_object()
        .into_iter()
        .flat_map(|o| o.keys())
    {
        let said = report
            .coverage
            .iter()
            .find(|c| c.rule == rule)
            .is_some_and(|c| c.not_observable > 0 || (c.examined == 0 && !c.reasons.is_empty()));
        if !said {
            out.not_observable_unsaid.push(rule.clone());
        }
    }
    out
}

fn analyse(dir: &Path, policy: &Policy) -> Report {
    let batches = common::recording_batches(dir);
    assert!(!batches.is_empty(), "{}: no export bodies", dir.display());
    let spans = load_batches(&batches).expect("batches load");
    check_spans(spans, policy, RULES).1
}

fn gap_json(o: &Outcome) -> Value {
    let mut m = serde_json::Map::new();
    if !o.missed.is_empty() {
        m.insert("missed".into(), json!(o.missed));
    }
    if !o.false_alarms.is_empty() {
        m.insert("false_alarms".into(), json!(o.false_alarms));
    }
    if !o.not_observable_unsaid.is_empty() {
        m.insert(
            "not_observable_not_said".into(),
            json!(o.not_observable_unsaid),
        );
    }
    Value::Object(m)
}

/// The (library, rule) keys a gap entry needs a reason for.
fn gap_keys(name: &str, gap: &Value) -> Vec<String> {
    let lib = name.split('/').next().unwrap_or(name);
    let mut keys = Vec::new();
    for field in ["missed", "false_alarms", "not_observable_not_said"] {
        for v in gap[field].as_array().into_iter().flatten() {
            let rule = v.as_str().unwrap_or("").split(' ').next().unwrap_or("");
            keys.push(format!("{lib} {rule}"));
        }
    }
    keys
}

#[test]
fn lab_recordings_score_exactly_as_recorded() {
    let labels_path = lab_dir().join("labels.json");
    let Ok(text) = std::fs::read_to_string(&labels_path) else {
        panic!("{} is missing", labels_path.display());
    };
    let labels: Value = serde_json::from_str(&text).expect("labels.json parses");
    let scored: Vec<String> = labels["scored_rules"]
        .as_array()
        .expect("scored_rules")
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    let policy = Policy::load(&lab_dir().join("policy.toml")).expect("lab policy");
    let recordings = labels["recordings"].as_object().expect("recordings");
    assert!(
        recordings.len() >= 100,
        "lab labels hold too few recordings"
    );

    let mut actual = BTreeMap::new();
    let mut totals = (0usize, 0usize, 0usize);
    for (name, rec) in recordings {
        let report = analyse(&lab_dir().join("recordings").join(name), &policy);
        let o = score(rec, &report, &scored);
        totals.0 += o.found.len();
        totals.1 += o.missed.len();
        totals.2 += o.false_alarms.len();
        let gap = gap_json(&o);
        if gap.as_object().is_some_and(|m| !m.is_empty()) {
            actual.insert(name.clone(), gap);
        }
    }
    eprintln!(
        "lab: {} found, {} missed, {} false alarms over {} recordings",
        totals.0,
        totals.1,
        totals.2,
        recordings.len()
    );

    let committed: Value = std::fs::read_to_string(gaps_file())
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| json!({}));
    let reasons = match &committed["reasons"] {
        Value::Object(m) => Value::Object(m.clone()),
        _ => json!({}),
    };
    if std::env::var_os("LAB_GAPS_UPDATE").is_some() {
        let file = json!({
            "about": "Known gaps of tripline on lab/recordings (see analyze/tests/lab_recordings.rs): \
                      per recording, labels missed, findings of a scored rule that match no label \
                      and rules the labels call not observable whose coverage does not say so. \
                      `reasons` says why, per library and rule.",
            "totals": {"found": totals.0, "missed": totals.1, "false_alarms": totals.2},
            "reasons": reasons,
            "recordings": actual,
        });
        let mut text = serde_json::to_string_pretty(&file).expect("serialises");
        text.push('\n');
        std::fs::write(gaps_file(), text).expect("write gaps file");
        return;
    }
    let expected: BTreeMap<String, Value> = committed["recordings"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let mut errs = Vec::new();
    for name in actual.keys().chain(expected.keys()) {
        let (a, e) = (actual.get(name), expected.get(name));
        if a != e
            && !errs
                .iter()
                .any(|x: &String| x.starts_with(&format!("{name}:")))
        {
            errs.push(format!(
                "{name}: now {}, recorded {}",
                a.map_or("no gap".into(), Value::to_string),
                e.map_or("no gap".into(), Value::to_string)
            ));
        }
    }
    for (name, gap) in &expected {
        for key in gap_keys(name, gap) {
            if reasons[&key].as_str().is_none_or(str::is_empty) {
                errs.push(format!(
                    "{}: no reason given for `{key}`",
                    gaps_file().display()
                ));
            }
        }
    }
    errs.dedup();
    assert!(
        errs.is_empty(),
        "the lab score moved (regression, or an improvement not recorded: see the module docs):\n{}",
        errs.join("\n")
    );
}
