//! `check --format sarif` is valid SARIF 2.1.0: every log is validated against the official JSON
//! schema (vendored as `tests/fixtures/sarif-schema-2.1.0.json`: the OASIS
//! `sarif-schema-2.1.0.json`, `$id` .../oasis-tcs/sarif-spec/.../sarif-schema-2.1.0.json, as
//! shipped in the serde-sarif 0.8.0 crate), and every result carries a physical location
//! (code-scanning uploads reject results without one) plus the span as a logical location.

mod common;

use analyze::check::check_spans;
use analyze::load::load_batches;
use analyze::policy::Policy;
use analyze::render::{render_sarif, render_sarif_with, SarifArtifact};
use analyze::rules::{Report, RULES};
use serde_json::Value;

fn report() -> Report {
    let batches: Vec<_> = ["TL002", "TL004", "TL010", "TL014"]
        .iter()
        .map(|c| common::batch_from_json(&common::fixtures_dir().join(format!("{c}.json"))))
        .collect();
    let policy = Policy::load(&common::fixtures_dir().join("policy.toml")).unwrap();
    check_spans(load_batches(&batches).unwrap(), &policy, RULES).1
}

/// The official schema, compiled. Its two `language` patterns have a stray `]`
/// (`...-[a-zA-Z]{2}]?$`), valid as a literal in ECMAScript but refused by Rust regex engines:
/// escaped here (tripline never writes `language`), and the replacement is asserted so an updated
/// schema without the erratum fails loudly instead of silently skipping it.
fn validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sarif-schema-2.1.0.json"),
    )
    .unwrap();
    let erratum = r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#;
    assert_eq!(text.matches(erratum).count(), 2, "schema erratum moved");
    let text = text.replace(erratum, r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\]?$""#);
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

fn validate(doc: &str) -> Value {
    let validator = validator();
    let v: Value = serde_json::from_str(doc).expect("SARIF is JSON");
    let errors: Vec<String> = validator
        .iter_errors(&v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "invalid SARIF: {errors:#?}");
    v
}

#[test]
fn sarif_with_findings_is_valid_and_every_result_has_a_location() {
    let report = report();
    assert!(report.findings.len() > 3, "fixtures fire");
    let v = validate(&render_sarif_with(
        &report,
        None,
        SarifArtifact::Policy("samples/policy.toml"),
    ));
    let results = v["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), report.findings.len());
    for (r, f) in results.iter().zip(&report.findings) {
        let loc = &r["locations"][0];
        assert_eq!(
            loc["physicalLocation"]["artifactLocation"]["uri"],
            "samples/policy.toml"
        );
        assert_eq!(loc["physicalLocation"]["region"]["startLine"], 1);
        assert_eq!(
            loc["logicalLocations"][0]["fullyQualifiedName"],
            format!("trace/{}/span/{}", f.trace_id, f.span_id)
        );
        assert_eq!(r["ruleId"], f.rule);
        let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(
            rules[r["ruleIndex"].as_u64().unwrap() as usize]["id"],
            f.rule
        );
    }
}

#[test]
fn sarif_without_policy_points_at_the_data_dir_and_is_valid() {
    let v = validate(&render_sarif_with(
        &report(),
        None,
        SarifArtifact::DataDir("/tmp/run 1/tripline-data"),
    ));
    assert_eq!(
        v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "file:///tmp/run%201/tripline-data"
    );
}

#[test]
fn sarif_without_findings_is_valid() {
    let v = validate(&render_sarif(&Report::default()));
    assert_eq!(v["runs"][0]["results"], serde_json::json!([]));
    assert_eq!(v["version"], "2.1.0");
}

#[test]
fn the_vendored_schema_rejects_a_result_without_a_message() {
    // The validation above can fail: a result lacking its required `message` is refused.
    let validator = validator();
    let mut v: Value = serde_json::from_str(&render_sarif_with(
        &report(),
        None,
        SarifArtifact::DataDir("d"),
    ))
    .unwrap();
    v["runs"][0]["results"][0]
        .as_object_mut()
        .unwrap()
        .remove("message");
    assert!(!validator.is_valid(&v));
}
