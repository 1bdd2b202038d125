//! TL012 ambiguous-decision-scope: one model call could see two near-duplicate tools.
//!
//! Why a rule: adding a tool is backward compatible for an API client, not for a model that
//! chooses tools from names and descriptions (seed 002: `add_cs_interface` added beside
//! `add_interface`). The signal that separates a confusable pair from two tools that merely
//! share a verb is in [`similarity`].

mod similarity;

use std::collections::{BTreeMap, HashMap};

use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::{Scope, ToolDef};

pub struct AmbiguousDecisionScope;

static DOCS: RuleDocs = RuleDocs {
    what: "A model call's gen_ai.tool.definitions contain two near-duplicate tools: the same \
           verb and object told apart only by a qualifier token (add_interface / \
           add_cs_interface), the same words apart from case, separators, plural, version or \
           order, the same tool name from two servers, or descriptions at least 80% alike with a \
           shared name token. A substituted object or verb (get_order_summary / \
           get_invoice_summary) is not a near duplicate. One finding per pair and conversation \
           (else agent run, else trace), on the first model call that saw it.",
    why: "The model, not the user, picks the tool. Two confusable tools in one decision scope \
          turn a backward-compatible catalog change into a behaviour change: the same request \
          may now reach either tool, and nothing fails syntactically.",
    example: "chat scripted-agent-model-1 with tool definitions [add_interface, \
              add_cs_interface, list_interfaces] while the task was 'create a sender-receiver \
              interface'.",
    fix: "Scope the catalog per task (policy [scopes.<task>] tools = [...]) so one model call \
          never sees both, or rename / merge the tools so the difference is in the object, not \
          a qualifier.",
};

/// Model calls examined / without captured tool definitions.
const EXAMINED: &str = "examined";
const BLIND: &str = "blind";

impl Rule for AmbiguousDecisionScope {
    fn code(&self) -> &'static str {
        "TL012"
    }
    fn name(&self) -> &'static str {
        "ambiguous-decision-scope"
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }

    fn scan(&self, input: &RuleInput) -> Partial {
        let model = input.model;
        let mut out = Partial::default();
        // Pairs per distinct tool list (many model calls share one catalog).
        let mut cache: HashMap<Vec<&str>, Vec<(String, String, String)>> = HashMap::new();
        // (scope, a, b) -> (reason, model call spans)
        let mut seen: BTreeMap<(Scope, String, String), (String, Vec<usize>)> = BTreeMap::new();
        for &i in &model.model_call_spans {
            let s = &model.spans[i];
            out.add(EXAMINED, usize::from(input.owns(i)));
            let Some(defs) = &s.tool_definitions else {
                out.add(BLIND, usize::from(input.owns(i)));
                continue;
            };
            let mut unique: Vec<&ToolDef> = Vec::new();
            for d in defs.iter() {
                if !d.name.is_empty() && !unique.iter().any(|u| u.name == d.name) {
                    unique.push(d);
                }
            }
            unique.sort_by(|a, b| a.name.cmp(&b.name));
            let key: Vec<&str> = unique.iter().map(|d| d.name.as_str()).collect();
            let pairs = cache.entry(key).or_insert_with(|| near_duplicates(&unique));
            for (a, b, reason) in pairs.iter() {
                seen.entry((model.span_scope(i), a.clone(), b.clone()))
                    .or_insert_with(|| (reason.clone(), Vec::new()))
                    .1
                    .push(i);
            }
        }
        let mut findings = Vec::new();
        for ((_, a, b), (reason, spans)) in seen {
            // A scope's pair is judged by the window owning its first model call: the scope's
            // spans are all in that window.
            let Some((&first, rest)) = spans.split_first().filter(|(&f, _)| input.owns(f)) else {
                continue;
            };
            let mut message = format!("model could choose between {a} and {b}: {reason}");
            if !rest.is_empty() {
                message.push_str(&format!(" (seen by {} model calls)", spans.len()));
            }
            if let Some(hint) = scope_hint(input, &a, &b) {
                message.push_str(&format!("; {hint}"));
            }
            findings.push(
                Finding::at(self, model, first, message)
                    .with_tool(Some(b.as_str()))
                    .with_related(model, rest.iter().copied()),
            );
        }
        out.findings = findings;
        out
    }

    fn finish(&self, partial: Partial, _input: &RuleInput) -> RuleOutcome {
        let (examined, blind) = (partial.count(EXAMINED), partial.count(BLIND));
        let mut cov = Coverage::new(examined);
        cov.not_observable(
            blind,
            format!("gen_ai.tool.definitions not captured on {blind} of {examined} model calls"),
        );
        RuleOutcome::new(partial.findings, cov)
    }
}

/// Near-duplicate pairs of a sorted, deduplicated tool list: (a, b, reason) with a < b.
fn near_duplicates(defs: &[&ToolDef]) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (x, a) in defs.iter().enumerate() {
        for b in &defs[x + 1..] {
            if let Some(reason) = similarity::near_duplicate(a, b) {
                out.push((a.name.to_string(), b.name.to_string(), reason));
            }
        }
    }
    out
}

/// "task scope X lists only a": a policy scope that already separates the pair.
fn scope_hint(input: &RuleInput, a: &str, b: &str) -> Option<String> {
    input.policy.scopes.iter().find_map(|(name, scope)| {
        let has = |t: &str| scope.tools.iter().any(|s| s == t);
        match (has(a), has(b)) {
            (true, false) => Some(format!(
                "task scope {name} lists only {a}: the catalog is not scoped per task"
            )),
            (false, true) => Some(format!(
                "task scope {name} lists only {b}: the catalog is not scoped per task"
            )),
            _ => None,
        }
    })
}
