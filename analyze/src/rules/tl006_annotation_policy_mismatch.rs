//! TL006 annotation-policy-mismatch: the server's annotations imply one policy class and the host
//! registry says another.

use super::input::short_list;
use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::policy::{annotation_class, PolicySource};

pub struct AnnotationPolicyMismatch;

static DOCS: RuleDocs = RuleDocs {
    what: "For each tool an MCP server listed (a tools/list result seen in the spans; else, for a \
           tool no listing shows, the MCP annotations a model was shown with it, as Pydantic AI \
           records them), the class its annotations imply (readOnlyHint -> automatic; a write that is not destructive -> \
           requires_approval; destructive or unannotated, the spec's pessimistic defaults -> \
           prohibited) differs from the policy file's entry. Both are shown. Tools without a \
           policy entry, and registry tools whose annotations were never seen, are counted not \
           observable in coverage.",
    why: "Either the server's author and the host's registry disagree about what the tool does \
          (a 'read' tool that deletes), or the registry is stale. Hosts that fall back to \
          annotations will treat the tool differently from what the registry promises.",
    example:
        "tools/list shows raise_parts_order with no annotations (MCP defaults: destructive -> \
              prohibited) while the policy file says requires_approval.",
    fix: "Make the server annotate the tool truthfully (readOnlyHint, destructiveHint, \
          idempotentHint, openWorldHint), or correct the registry entry; then both agree.",
};

impl Rule for AnnotationPolicyMismatch {
    fn code(&self) -> &'static str {
        "TL006"
    }
    fn name(&self) -> &'static str {
        "annotation-policy-mismatch"
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }

    // The catalog is the store's (every window reads the same), so the coverage is counted once in
    // [`Rule::finish`]; a window reports the mismatches whose listing span it owns.
    fn scan(&self, input: &RuleInput) -> Partial {
        let model = input.model;
        let mut out = Partial::default();
        for (name, def) in &input.catalog.tools {
            let implied = annotation_class(def);
            let Some(registry) = input.policy.registry_class(name) else {
                continue;
            };
            if registry == implied.class {
                continue;
            }
            let seen = if input.catalog.shown_only.contains(name) {
                " as shown to the model"
            } else {
                ""
            };
            let why = match implied.source {
                PolicySource::Defaults => "listed without annotations, MCP defaults".to_string(),
                _ => format!(
                    "annotations{seen} readOnly={} destructive={}",
                    hint(def.read_only_hint),
                    hint(def.destructive_hint)
                ),
            };
            // At the listing that defined the tool, judged by the window owning its trace.
            let Some(&(trace, span_id)) = input.catalog.sources.get(name) else {
                continue;
            };
            if !input.owns_trace(trace) {
                continue;
            }
            let Some(span) = model.index_of(trace, span_id) else {
                continue;
            };
            out.findings.push(
                Finding::at(
                    self,
                    model,
                    span,
                    format!(
                        "{name}: server annotations imply {} ({why}) but the policy file says {registry}",
                        implied.class
                    ),
                )
                .with_tool(Some(name)),
            );
        }
        out
    }

    fn finish(&self, partial: Partial, input: &RuleInput) -> RuleOutcome {
        let summarized = &input.catalog.summarized;
        // Registry tools no listing (nor annotated model request) shows are candidates whose
        // annotations could not be observed.
        let unlisted: Vec<&str> = input
            .policy
            .tools
            .keys()
            .map(String::as_str)
            .filter(|k| input.catalog.get(k).is_none() && !summarized.contains_key(*k))
            .collect();
        let mut cov = Coverage::new(input.catalog.tools.len() + summarized.len() + unlisted.len());
        cov.not_observable(
            summarized.len(),
            format!(
                "tools/list captured as a summary (no inputSchema, so annotations not recorded) for {} tools: {}",
                summarized.len(),
                short_list(summarized.keys().map(String::as_str))
            ),
        );
        let no_entry: Vec<&str> = input
            .catalog
            .tools
            .keys()
            .map(String::as_str)
            .filter(|name| input.policy.registry_class(name).is_none())
            .collect();
        cov.not_observable(
            no_entry.len(),
            format!(
                "no policy entry for listed tools: {}",
                short_list(no_entry.iter().copied())
            ),
        );
        cov.not_observable(
            unlisted.len(),
            format!(
                "annotations not observed (no tools/list result captured) for {} registry tools: {}",
                unlisted.len(),
                short_list(unlisted.iter().copied())
            ),
        );
        if input.policy.is_empty() {
            cov.note("no policy file: nothing to compare the annotations with");
        }
        RuleOutcome::new(partial.findings, cov)
    }
}

fn hint(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "true",
        Some(false) => "false",
        None => "unset",
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::model::{Model, SpanRow, ToolDef};
    use crate::policy::Policy;

    fn def(name: &str, input_schema: bool) -> ToolDef {
        ToolDef {
            name: name.into(),
            input_schema_digest: input_schema.then(|| "d".into()),
            has_output_schema: Some(false),
            ..ToolDef::default()
        }
    }

    /// A tools/list captured as a summary (no inputSchema, which every MCP tool has) says
    /// nothing about annotations: not observable, never "listed without annotations".
    #[test]
    fn a_summary_listing_is_not_observable_a_complete_one_is_judged() {
        let listing = SpanRow {
            mcp_method: Some("tools/list".into()),
            tool_definitions: Some(vec![def("summarised", false), def("complete", true)].into()),
            ..SpanRow::default()
        };
        let model = Model::build(vec![listing]);
        let policy = Policy::parse(
            "[tools.summarised]\npolicy = \"requires_approval\"\n[tools.complete]\npolicy = \"requires_approval\"\n",
            Path::new("policy.toml"),
        )
        .unwrap();
        let input = RuleInput::new(&model, &policy);
        let out = AnnotationPolicyMismatch.check(&input);
        let tools: Vec<_> = out.findings.iter().map(|f| f.tool.as_deref()).collect();
        assert_eq!(tools, [Some("complete")]);
        assert_eq!((out.coverage.examined, out.coverage.not_observable), (2, 1));
        assert!(
            out.coverage.reasons[0].contains("summary")
                && out.coverage.reasons[0].contains("summarised"),
            "{:?}",
            out.coverage.reasons
        );
    }

    /// A model shown a tool with MCP annotations (Pydantic AI's `model_request_parameters`)
    /// observes them where no listing does; a listing wins where both exist, and a definition
    /// shown without annotations says nothing.
    #[test]
    fn annotations_shown_to_a_model_count_for_tools_no_listing_shows() {
        let annotated = |name: &str, destructive: bool| ToolDef {
            read_only_hint: Some(false),
            destructive_hint: Some(destructive),
            ..def(name, true)
        };
        let chat = SpanRow {
            operation_name: Some("chat".into()),
            start_ns: 2,
            tool_definitions: Some(
                vec![
                    annotated("adjust_stock", true),
                    annotated("listed", true),
                    def("plain", true),
                ]
                .into(),
            ),
            ..SpanRow::default()
        };
        let listing = SpanRow {
            mcp_method: Some("tools/list".into()),
            start_ns: 1,
            span_id: crate::model::SpanId([1; 8]),
            tool_definitions: Some(vec![annotated("listed", false)].into()),
            ..SpanRow::default()
        };
        let model = Model::build(vec![listing, chat]);
        let policy = Policy::parse(
            "[tools.adjust_stock]\npolicy = \"requires_approval\"\n[tools.listed]\npolicy = \"requires_approval\"\n[tools.plain]\npolicy = \"requires_approval\"\n",
            Path::new("policy.toml"),
        )
        .unwrap();
        let input = RuleInput::new(&model, &policy);
        assert!(input.catalog.shown_only.contains("adjust_stock"));
        assert_eq!(
            input.catalog.get("adjust_stock").unwrap().has_output_schema,
            None
        );
        let out = AnnotationPolicyMismatch.check(&input);
        let found: Vec<_> = out
            .findings
            .iter()
            .map(|f| {
                (
                    f.tool.as_deref(),
                    f.message.contains("as shown to the model"),
                )
            })
            .collect();
        assert_eq!(found, [(Some("adjust_stock"), true)]);
        assert!(
            out.coverage
                .reasons
                .iter()
                .any(|n| n.contains("registry tools: plain")),
            "{:?}",
            out.coverage.reasons
        );
    }
}
