//! TL007 deprecated-attribute: a span carries a deprecated attribute name without its replacement.
//!
//! Why a rule: dashboards, alerts and tripline's own dialect-free queries key on the current
//! semantic-convention names. A span that only says `gen_ai.system=openai` is invisible to every
//! query on `gen_ai.provider.name`. The deprecated names and their replacements come from the
//! attribute registry in `schemas` ([`schemas::registry::deprecated_aliases`]), never from a list
//! of this rule's own, so the registry, the dialects and this rule cannot drift apart.
//!
//! Draft MCP names (`mcp.tool.name`, `mcp.request.id`, `mcp.transport`) were never part of a
//! released convention; the registry marks them `draft` and this rule only counts them in its
//! coverage (TL015 reports the missing semconv names on those spans instead).

use std::collections::{BTreeMap, HashMap};

use schemas::registry::{deprecated_alias, DeprecatedAlias};
use schemas::schema::col;

use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::list_memo::ListMemo;
use crate::model::SpanRow;

pub struct DeprecatedAttribute;

static DOCS: RuleDocs = RuleDocs {
    what: "A span carries a deprecated attribute name (per the attribute registry: gen_ai.system, \
           gen_ai.usage.prompt_tokens / completion_tokens, indexed gen_ai.prompt.N.* / \
           gen_ai.completion.N.*, ...) without the name that replaced it. One finding per span, \
           listing every such name. Spans that send both names are fine (a migration in progress) \
           and only counted in the coverage; draft MCP names (mcp.tool.name, mcp.request.id, \
           mcp.transport) are only counted in the coverage.",
    why: "Queries, dashboards and alerts are written against the current names. A span that only \
          sends gen_ai.system is missing from every per-provider cost or error panel keyed on \
          gen_ai.provider.name, silently, and the gap grows with every new instrumentation \
          release that drops the old name.",
    example: "chat scripted-agent-model-1 with gen_ai.system=openai and no gen_ai.provider.name \
              (an instrumentation package pinned to an old semantic-conventions release).",
    fix: "Upgrade the instrumentation (or set the replacement attribute yourself, e.g. \
          gen_ai.provider.name next to gen_ai.system) so both names are sent while consumers \
          migrate, then drop the deprecated one.",
};

/// Spans examined; deprecated names next to their replacement, and draft names, per name.
const SPANS: &str = "spans";
const BOTH: &str = "both";
const DRAFTS: &str = "drafts";

impl Rule for DeprecatedAttribute {
    fn code(&self) -> &'static str {
        "TL007"
    }
    fn name(&self) -> &'static str {
        "deprecated-attribute"
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }
    fn columns(&self) -> &'static [&'static str] {
        // Attribute keys, and the keys of vendor content attributes (indexed gen_ai.prompt.N.*
        // families are content and live there); the canonical message columns tell whether the
        // replacement of an indexed family was sent.
        &[
            col::ATTRIBUTES,
            col::CONTENT_ATTRIBUTES,
            col::GEN_AI_INPUT_MESSAGES,
            col::GEN_AI_OUTPUT_MESSAGES,
        ]
    }

    fn scan(&self, input: &RuleInput) -> Partial {
        let model = input.model;
        let mut out = Partial::default();
        // deprecated name -> spans that also carry the replacement / draft names -> spans: keyed
        // counts [`BOTH`] and [`DRAFTS`].
        // The registry lookup matches patterns; a store has a few hundred distinct keys on a
        // million spans, so each distinct key is looked up once.
        let mut lookups: HashMap<
            &str,
            Option<&'static DeprecatedAlias>,
            foldhash::fast::RandomState,
        > = HashMap::default();
        // Whether a key list names anything the registry knows, once per distinct list: most
        // spans' keys do not, and those spans need no more work.
        let mut any_alias = ListMemo::default();
        let mut spans = 0;
        for (i, s) in model.spans.iter().enumerate() {
            if !input.owns(i) {
                continue;
            }
            spans += 1;
            let content_keys = s.content.as_ref().is_some_and(|c| !c.other.is_empty());
            if !content_keys
                && !*any_alias.get(&s.attribute_keys, |keys| {
                    keys.iter().any(|k| deprecated_alias(k).is_some())
                })
            {
                continue;
            }
            let keys = span_keys(s);
            let mut missing: Vec<&'static DeprecatedAlias> = Vec::new();
            let mut seen: Vec<&'static str> = Vec::new();
            for &key in &keys {
                let found = *lookups.entry(key).or_insert_with(|| deprecated_alias(key));
                let Some(alias) = found else {
                    continue;
                };
                // An indexed family (gen_ai.prompt.0.*, gen_ai.prompt.1.*) counts once.
                if seen.contains(&alias.name) {
                    continue;
                }
                seen.push(alias.name);
                if alias.draft {
                    out.add_keyed(DRAFTS, alias.name, 1);
                } else if has_replacement(s, &keys, alias.replacement) {
                    out.add_keyed(BOTH, alias.name, 1);
                } else {
                    missing.push(alias);
                }
            }
            if missing.is_empty() {
                continue;
            }
            let parts: Vec<String> = missing
                .iter()
                .map(|a| format!("{} without {}", a.name, a.replacement))
                .collect();
            out.findings.push(Finding::at(
                self,
                model,
                i,
                format!("deprecated attribute {}", parts.join("; ")),
            ));
        }
        out.add(SPANS, spans);
        out
    }

    fn finish(&self, partial: Partial, _input: &RuleInput) -> RuleOutcome {
        let mut cov = Coverage::new(partial.count(SPANS));
        if let Some(both) = partial.keyed.get(BOTH) {
            cov.note(format!(
                "deprecated names sent next to their replacement (fine while consumers migrate): {}",
                counts(both)
            ));
        }
        if let Some(drafts) = partial.keyed.get(DRAFTS) {
            cov.note(format!(
                "draft MCP names not reported (never in a released convention): {}",
                counts(drafts)
            ));
        }
        RuleOutcome::new(partial.findings, cov)
    }
}

/// Attribute keys of the span, plus the keys of its vendor content attributes.
fn span_keys(s: &SpanRow) -> Vec<&str> {
    let mut keys: Vec<&str> = s.attribute_keys.iter().map(AsRef::as_ref).collect();
    if let Some(c) = &s.content {
        keys.extend(c.other.iter().map(|(k, _)| k.as_str()));
    }
    keys
}

/// True when the span also carries `replacement`: as an attribute key, or (for the message
/// attributes, which are content) in the canonical content column.
fn has_replacement(s: &SpanRow, keys: &[&str], replacement: &str) -> bool {
    if keys.contains(&replacement) {
        return true;
    }
    let Some(c) = &s.content else {
        return false;
    };
    match replacement {
        "gen_ai.input.messages" => c.input_messages.is_some(),
        "gen_ai.output.messages" => c.output_messages.is_some(),
        _ => false,
    }
}

fn counts(m: &BTreeMap<String, usize>) -> String {
    m.iter()
        .map(|(k, n)| format!("{k} on {n} span(s)"))
        .collect::<Vec<_>>()
        .join(", ")
}
