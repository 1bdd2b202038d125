//! TL002 unconfirmed-write: a tool whose effective policy is `requires_approval` executed without
//! an approval before it.

use super::input::UnknownPolicies;
use super::{Coverage, Finding, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::approvals::Approvals;
use crate::model::Call;
use crate::policy::{PolicyClass, PolicySource};

pub struct UnconfirmedWrite;

static DOCS: RuleDocs = RuleDocs {
    what: "A tool whose effective policy is requires_approval (policy file entry, else its MCP \
           annotations: a write that is not destructive) executed without an approval before it \
           for that call: a guardrail decision `require_approval` followed by `allow`, or an MCP \
           `input_required` round answered, matched by tool call id or by tool within the same \
           conversation (else agent run, else trace). Each approval covers one call.",
    why: "Writes that the host registry says need a human confirmation went out unconfirmed: a \
          note on a customer record, a parts order, a support case. Nothing fails, so no \
          dashboard shows it.",
    example:
        "conversation conv-1: execute_tool raise_parts_order (policy requires_approval) with \
              no guardrail span deciding require_approval -> allow for raise_parts_order before it.",
    fix: "Route the tool through the host's approval step and record it as guardrail spans \
          (guardrail.decision=require_approval, then allow, with gen_ai.tool.name or \
          gen_ai.tool.call.id), or have the server ask for input (input_required / elicitation). \
          Policy file format (--policy tripline.toml): [tools.<name>] policy = \
          \"automatic\"|\"requires_approval\"|\"prohibited\", tags = [...]; \
          [agents.<name>] allow = [...]; [scopes.<name>] tools = [...]. A tool key is a bare \
          name, \"server/tool\" or \"namespace__tool\".",
};

impl Rule for UnconfirmedWrite {
    fn code(&self) -> &'static str {
        "TL002"
    }
    fn name(&self) -> &'static str {
        "unconfirmed-write"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }

    fn check(&self, input: &RuleInput) -> RuleOutcome {
        let model = input.model;
        let pass = unapproved(input);
        let mut cov = Coverage::new(pass.examined);
        let mut findings = Vec::new();
        for (call, eff_source) in &pass.calls {
            let tool = call.tool.as_deref().unwrap_or("?");
            let source = match eff_source {
                PolicySource::Registry => "the policy file",
                PolicySource::Annotations => "its MCP annotations (write, not destructive)",
                PolicySource::Defaults => "MCP defaults",
            };
            findings.push(Finding::for_call(
                self,
                model,
                call,
                format!("{tool} requires approval (per {source}) but executed with no approval before it"),
            ));
        }
        pass.unknown.report(&mut cov);
        if pass.elicitations > 0 {
            cov.note(format!(
                "{} elicitation requests seen; their answer (accept/decline) is not recorded, so they were not counted as approvals",
                pass.elicitations
            ));
        }
        RuleOutcome::new(findings, cov)
    }
}

/// What TL002 judges, shared with TL016 (which leaves these calls to TL002 rather than report
/// them twice).
pub(crate) struct Unapproved<'a> {
    /// Tool calls examined.
    pub examined: usize,
    /// Calls whose effective policy is requires_approval and that had no approval, with where
    /// the policy came from, in start order.
    pub calls: Vec<(&'a Call, PolicySource)>,
    unknown: UnknownPolicies<'a>,
    elicitations: usize,
}

/// The calls TL002 reports: requires_approval, executed, and no approval consumed for them.
pub(crate) fn unapproved<'a>(input: &'a RuleInput) -> Unapproved<'a> {
    let model = input.model;
    let calls: Vec<&Call> = input.tool_calls().collect();
    let mut out = Unapproved {
        examined: calls.len(),
        calls: Vec::new(),
        unknown: UnknownPolicies::default(),
        elicitations: 0,
    };
    let mut approvals = Approvals::collect(model);
    out.elicitations = approvals.elicitations;
    for call in calls {
        let tool = call.tool.as_deref().unwrap_or("?");
        let Some(eff) = out.unknown.effective(input, tool) else {
            continue;
        };
        if eff.class != PolicyClass::RequiresApproval || call.input_required {
            // A round that asked for input did not execute yet; the answered round is checked.
            continue;
        }
        if approvals.consume(model, call) {
            continue;
        }
        out.calls.push((call, eff.source));
    }
    out
}
