//! TL002 unconfirmed-write: a tool whose effective policy is `requires_approval` executed without
//! an approval before it.

use super::input::{effective_or_count, report_unknown};
use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
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

/// Tool calls examined / `elicitation/create` requests seen.
const CALLS: &str = "calls";
const ELICITATIONS: &str = "elicitations";

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

    fn scan(&self, input: &RuleInput) -> Partial {
        let model = input.model;
        let mut out = Partial::default();
        // What was examined, and whose policy is unknown, over the owned calls.
        for call in input.tool_calls() {
            if input.owns(call.anchor) {
                out.add(CALLS, 1);
                effective_or_count(input, &mut out, call, call.tool.as_deref().unwrap_or("?"));
            }
        }
        for &(call, eff_source) in input.unapproved_calls() {
            if !input.owns(call.anchor) {
                continue;
            }
            let tool = call.tool.as_deref().unwrap_or("?");
            let source = match eff_source {
                PolicySource::Registry => "the policy file",
                PolicySource::Annotations => "its MCP annotations (write, not destructive)",
                PolicySource::Defaults => "MCP defaults",
            };
            out.findings.push(Finding::for_call(
                self,
                model,
                call,
                format!("{tool} requires approval (per {source}) but executed with no approval before it"),
            ));
        }
        let elicitations = (0..model.spans.len())
            .filter(|&i| model.spans[i].method_is("elicitation/create") && input.owns(i))
            .count();
        out.add(ELICITATIONS, elicitations);
        out
    }

    fn finish(&self, partial: Partial, _input: &RuleInput) -> RuleOutcome {
        let mut cov = Coverage::new(partial.count(CALLS));
        report_unknown(&partial, &mut cov);
        let elicitations = partial.count(ELICITATIONS);
        if elicitations > 0 {
            cov.note(format!(
                "{elicitations} elicitation requests seen; their answer (accept/decline) is not recorded, so they were not counted as approvals"
            ));
        }
        RuleOutcome::new(partial.findings, cov)
    }
}

/// The calls TL002 reports, shared with TL016 (which leaves them to TL002 rather than report
/// them twice) through [`RuleInput::unapproved_calls`]: requires_approval, executed, and no
/// approval consumed for them, in start order, with where the policy came from. Every call of
/// the model consumes approvals in order (a call of a window's overlap may take an approval a
/// core call would otherwise have), so the list holds calls the input does not own too.
pub(crate) fn unapproved<'a>(input: &RuleInput<'a>) -> Vec<(&'a Call, PolicySource)> {
    let model = input.model;
    let mut out = Vec::new();
    let mut approvals = Approvals::collect(model);
    for call in input.tool_calls() {
        let tool = call.tool.as_deref().unwrap_or("?");
        let Some(eff) = input.effective_policy(tool) else {
            continue;
        };
        if eff.class != PolicyClass::RequiresApproval || call.input_required {
            // A round that asked for input did not execute yet; the answered round is checked.
            continue;
        }
        if approvals.consume(model, call) {
            continue;
        }
        out.push((call, eff.source));
    }
    out
}
