//! `samples/expected.json` and the README table, derived from the scenario table so the three
//! never disagree (tests compare the committed files with these).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::scenario::{self, Revision};

/// Policy file the samples are checked with, from the repository root.
pub const POLICY: &str = "samples/policy.toml";

/// Its text, for tools that run outside the repository (`tripline demo`).
pub const POLICY_TOML: &str = include_str!("../policy.toml");

/// `{"policy": …, "samples": {"samples/traces/<name>.json": ["TL00x", …], …}}`, with the
/// 2026-07-28 files (`samples/traces-2026-07-28/<name>.json`) next to the 2025-11-25 ones.
pub fn expected_json() -> Value {
    // Every scenario on both protocol revisions: the findings do not depend on the revision.
    let samples: BTreeMap<String, Vec<&str>> = scenario::all()
        .iter()
        .flat_map(|s| {
            Revision::ALL
                .into_iter()
                .map(move |r| (s.file_at(r), s.expected.to_vec()))
        })
        .collect();
    json!({"policy": POLICY, "samples": samples})
}

/// The same, as the committed text (pretty, trailing newline).
pub fn expected_text() -> String {
    let mut t = serde_json::to_string_pretty(&expected_json()).unwrap_or_default();
    t.push('\n');
    t
}

/// Markdown table: file, seed system, what is broken, findings.
pub fn readme_table() -> String {
    let mut t = String::from("| file | seed system | what is broken | findings `tripline check` must report |\n|---|---|---|---|\n");
    for s in scenario::all() {
        let transports: Vec<String> = s
            .servers
            .iter()
            .map(|u| format!("{} over {}", u.kind.service_name(), u.transport.name()))
            .collect();
        let findings = if s.expected.is_empty() {
            "none".to_string()
        } else {
            s.expected
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        t.push_str(&format!(
            "| `traces/{}.json` | {} ({}) | {} | {} |\n",
            s.name,
            s.seed.title(),
            transports.join(", "),
            s.broken,
            findings
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_file(rel: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
    }

    #[test]
    fn committed_expected_json_matches_the_scenario_table() {
        assert_eq!(repo_file("expected.json"), expected_text());
    }

    #[test]
    fn committed_readme_holds_the_generated_table() {
        let readme = repo_file("README.md");
        assert!(
            readme.contains(&readme_table()),
            "samples/README.md table is stale: run `tripline-samples --readme-table`"
        );
    }

    #[test]
    fn every_sample_file_is_committed() {
        for s in scenario::all() {
            for r in Revision::ALL {
                let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
                    "{}/{}.json",
                    r.dir(),
                    s.name
                ));
                assert!(path.is_file(), "{} is missing", path.display());
            }
        }
    }
}
