//! TL017 denied-but-executed: a guardrail denied a tool call (`guardrail.decision` = block, or
//! the deny / reject spellings other hosts use) and the call executed anyway, later, in the same
//! conversation (else agent run, else trace).
//!
//! Matching: by `gen_ai.tool.call.id` when both the decision and the call carry one, else by tool
//! name (and by arguments digest when both carry arguments); the call must start after the
//! decision. A later `allow` decision for the same tool or call id lifts the denial (the host
//! re-evaluated), and each denial matches at most one call. `require_approval` without an
//! approval is TL002's, not this rule's.

use std::collections::HashSet;

use super::{Coverage, Finding, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::{Call, Model, SpanRow};
use crate::policy::tool_part;

pub struct DeniedButExecuted;

static DOCS: RuleDocs = RuleDocs {
    what: "A guardrail denied a tool call (guardrail.decision = block, or deny / denied / \
           blocked / reject / rejected) and the call executed anyway, later in the same \
           conversation (else agent run, else trace): matched by gen_ai.tool.call.id when both \
           carry one, else by tool name and arguments digest when captured. A later allow for the \
           same tool or call lifts the denial. require_approval without an approval is TL002.",
    why: "The guardrail worked and was ignored: the host logged the denial, then dispatched the \
          call anyway (a retry path, a second dispatcher, a decision read after dispatch). The \
          audit trail says the action was stopped while it happened.",
    example: "guardrail pii-filter decides block for export_service_records (gen_ai.tool.call.id \
              call_7) at 10:00:01.200; execute_tool export_service_records call_7 starts at \
              10:00:01.350 in the same conversation.",
    fix: "Make the dispatcher act on the guardrail's decision before sending the call (a denied \
          call must never reach tools/call), including retry and fallback paths; if the call was \
          meant to go ahead, record the re-evaluation as an allow decision before it.",
};

/// Whether a `guardrail.decision` value denies the call.
pub fn is_deny(decision: &str) -> bool {
    ["block", "blocked", "deny", "denied", "reject", "rejected"]
        .iter()
        .any(|d| decision.eq_ignore_ascii_case(d))
}

/// Whether a guardrail span `g` and a call (or another guardrail span `h`) are about the same
/// call: call ids when both have one, else tool names (and argument digests when both have one).
fn same_call(
    g: &SpanRow,
    tool: Option<&str>,
    call_id: Option<&str>,
    args_digest: Option<&str>,
) -> bool {
    if let (Some(a), Some(b)) = (g.tool_call_id.as_deref(), call_id) {
        return a == b;
    }
    let same_tool = matches!((g.tool_name.as_deref(), tool), (Some(a), Some(b)) if tool_part(a) == tool_part(b));
    let same_args = match (g.arguments_digest.as_deref(), args_digest) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    same_tool && same_args
}

fn call_args(model: &Model, call: &Call) -> Option<String> {
    call.arguments_digest.clone().or_else(|| {
        call.members
            .iter()
            .find_map(|&m| model.spans[m].arguments_digest.clone())
    })
}

impl Rule for DeniedButExecuted {
    fn code(&self) -> &'static str {
        "TL017"
    }
    fn name(&self) -> &'static str {
        "denied-but-executed"
    }
    fn severity(&self) -> Severity {
        Severity::Critical
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }

    fn check(&self, input: &RuleInput) -> RuleOutcome {
        let model = input.model;
        let denials: Vec<usize> = model
            .spans
            .iter()
            .enumerate()
            .filter(|(_, s)| s.guardrail_decision.as_deref().is_some_and(is_deny))
            .map(|(i, _)| i)
            .collect();
        let mut cov = Coverage::new(denials.len());
        if denials.is_empty() {
            cov.note("no guardrail deny/block decision in the spans: nothing to examine");
            return RuleOutcome::new(Vec::new(), cov);
        }
        let calls: Vec<&Call> = input
            .tool_calls()
            .filter(|c| !c.input_required)
            .collect();
        let allows: Vec<usize> = model
            .spans
            .iter()
            .enumerate()
            .filter(|(_, s)| s.guardrail_decision.as_deref() == Some("allow"))
            .map(|(i, _)| i)
            .collect();
        let mut used: HashSet<usize> = HashSet::new();
        let mut unnamed = 0;
        let mut findings = Vec::new();
        for &d in &denials {
            let g = &model.spans[d];
            if g.tool_name.is_none() && g.tool_call_id.is_none() {
                unnamed += 1;
                continue;
            }
            let scope = model.span_scope(d);
            let hit = calls.iter().find(|c| {
                !used.contains(&c.anchor)
                    && model.spans[c.anchor].start_ns >= g.start_ns
                    && model.call_scope(c) == scope
                    && same_call(
                        g,
                        c.tool.as_deref(),
                        c.tool_call_id.as_deref(),
                        call_args(model, c).as_deref(),
                    )
            });
            let Some(call) = hit else {
                continue;
            };
            let call_start = model.spans[call.anchor].start_ns;
            // A later allow for the same call (a re-evaluation) lifts the denial.
            let lifted = allows.iter().any(|&i| {
                let h = &model.spans[i];
                h.start_ns >= g.start_ns
                    && h.start_ns <= call_start
                    && i != d
                    && model.span_scope(i) == scope
                    && same_call(
                        h,
                        g.tool_name.as_deref(),
                        g.tool_call_id.as_deref(),
                        None,
                    )
            });
            if lifted {
                continue;
            }
            used.insert(call.anchor);
            let tool = call.tool.as_deref().unwrap_or("?");
            let guardrail = g.guardrail_name.as_deref().unwrap_or("(unnamed guardrail)");
            let decision = g.guardrail_decision.as_deref().unwrap_or("block");
            let by = if g.tool_call_id.is_some() && call.tool_call_id.is_some() {
                "call id"
            } else {
                "tool name"
            };
            findings.push(
                Finding::for_call(
                    self,
                    model,
                    call,
                    format!(
                        "{tool} executed {:.3} ms after guardrail {guardrail} decided {decision} for it (matched by {by})",
                        (call_start - g.start_ns) as f64 / 1e6
                    ),
                )
                .with_related(model, [d]),
            );
        }
        cov.not_observable(
            unnamed,
            format!("{unnamed} deny decisions name neither gen_ai.tool.name nor gen_ai.tool.call.id: the denied call cannot be matched"),
        );
        RuleOutcome::new(findings, cov)
    }
}
