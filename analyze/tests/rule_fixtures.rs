//! Every registered rule against its fixture (`tests/fixtures/rules/<CODE>.json`): an insta
//! snapshot of its findings and coverage, plus the registry invariants (unique codes, docs
//! present, a fixture for every rule, fixtures with firing AND non-firing candidates).

mod common;

use std::collections::HashSet;
use std::path::Path;

use analyze::check::check_spans;
use analyze::load::load_batches;
use analyze::policy::Policy;
use analyze::rules::{RuleOutcome, RULES};

fn policy_for(code: &str) -> Policy {
    let own = common::fixtures_dir().join(format!("{code}.policy.toml"));
    let path = if own.exists() {
        own
    } else {
        common::fixtures_dir().join("policy.toml")
    };
    Policy::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn run_fixture(code: &str) -> RuleOutcome {
    let rule = analyze::rules::find(code).expect("registered");
    let batch = common::batch_from_json(&common::fixtures_dir().join(format!("{code}.json")));
    let spans = load_batches(&[batch]).expect("fixture loads");
    let (_, report) = check_spans(spans, &policy_for(code), &[rule]);
    RuleOutcome::new(
        report.findings,
        report.coverage.into_iter().next().unwrap_or_default(),
    )
}

#[test]
fn registry_codes_are_unique_and_documented() {
    let mut codes = HashSet::new();
    let mut names = HashSet::new();
    for r in RULES {
        assert!(codes.insert(r.code()), "duplicate code {}", r.code());
        assert!(names.insert(r.name()), "duplicate name {}", r.name());
        assert!(
            r.code().len() == 5 && r.code().starts_with("TL"),
            "bad code {}",
            r.code()
        );
        assert!(
            r.name()
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '-' || c.is_ascii_digit()),
            "{} name {} is not kebab-case",
            r.code(),
            r.name()
        );
        let d = r.docs();
        for (part, text) in [
            ("what", d.what),
            ("why", d.why),
            ("example", d.example),
            ("fix", d.fix),
        ] {
            assert!(
                text.len() > 40,
                "{} docs.{part} is missing or too short",
                r.code()
            );
        }
    }
    let mut sorted: Vec<&str> = RULES.iter().map(|r| r.code()).collect();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        RULES.iter().map(|r| r.code()).collect::<Vec<_>>(),
        "RULES not in code order"
    );
}

#[test]
fn every_rule_has_a_fixture_with_firing_and_non_firing_candidates() {
    for r in RULES {
        let path = common::fixtures_dir().join(format!("{}.json", r.code()));
        assert!(
            Path::new(&path).exists(),
            "{} has no fixture {}",
            r.code(),
            path.display()
        );
        let out = run_fixture(r.code());
        assert!(
            !out.findings.is_empty(),
            "{} fixture fires nothing",
            r.code()
        );
        assert!(
            out.coverage.examined > out.findings.len(),
            "{} fixture has no non-firing candidate (examined {}, findings {})",
            r.code(),
            out.coverage.examined,
            out.findings.len()
        );
        assert!(out.findings.iter().all(|f| f.rule == r.code()));
    }
}

#[test]
fn rule_fixture_snapshots() {
    for r in RULES {
        let out = run_fixture(r.code());
        let value = serde_json::json!({
            "findings": out.findings,
            "coverage": out.coverage,
        });
        insta::assert_json_snapshot!(r.code(), value);
    }
}
