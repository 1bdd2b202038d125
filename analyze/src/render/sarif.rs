//! `check --format sarif`: SARIF 2.1.0 with every rule in `tool.driver.rules` and one `ruleId`
//! per result, so code-scanning UIs group findings by rule. Spans have no file location, so each
//! result carries a logical location `trace/<trace_id>/span/<span_id>`; coverage goes into the
//! run's property bag.

use serde_json::{json, Value};

use crate::rules::{Report, Severity, RULES};
use crate::store::Scanned;

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The SARIF log, pretty-printed, newline-terminated.
pub fn render_sarif(report: &Report) -> String {
    render_sarif_with(report, None)
}

/// [`render_sarif`] with what the store scan read in the run's property bag (`scanned`).
pub fn render_sarif_with(report: &Report, scanned: Option<&Scanned>) -> String {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|r| {
            let d = r.docs();
            json!({
                "id": r.code(),
                "name": r.name(),
                "shortDescription": { "text": r.name() },
                "fullDescription": { "text": d.what },
                "help": {
                    "text": format!("{}\n\nWhy: {}\n\nFix: {}", d.what, d.why, d.fix),
                    "markdown": format!("{}\n\n**Why it matters.** {}\n\n**Example.** {}\n\n**How to fix.** {}", d.what, d.why, d.example, d.fix),
                },
                "defaultConfiguration": { "level": level(r.severity()) },
                "properties": { "tags": ["tripline", r.severity().as_str()] },
            })
        })
        .collect();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let index = RULES.iter().position(|r| r.code() == f.rule);
            let related: Vec<String> = f.related.iter().map(ToString::to_string).collect();
            json!({
                "ruleId": f.rule,
                "ruleIndex": index,
                "level": level(f.severity),
                "message": { "text": f.message },
                "locations": [{
                    "logicalLocations": [{
                        "name": f.span_id.to_string(),
                        "fullyQualifiedName": format!("trace/{}/span/{}", f.trace_id, f.span_id),
                        "kind": "object",
                    }]
                }],
                "partialFingerprints": {
                    "tripline/v1": format!("{}:{}:{}", f.rule, f.trace_id, f.span_id),
                },
                "properties": {
                    "severity": f.severity.as_str(),
                    "trace_id": f.trace_id.to_string(),
                    "span_id": f.span_id.to_string(),
                    "conversation_id": f.conversation_id,
                    "tool": f.tool,
                    "related": related,
                },
            })
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "tripline",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": "https://github.com/tripline/tripline",
                    "rules": rules,
                }
            },
            "results": results,
            "properties": { "coverage": report.coverage },
        }]
    });
    let mut doc = doc;
    if let (Some(scanned), Some(props)) = (scanned, doc["runs"][0]["properties"].as_object_mut()) {
        props.insert("scanned".into(), json!(scanned));
    }
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}
