//! TL017 executed-despite-deny: a guardrail denied a tool call (`guardrail.decision` = deny or
//! block, or the denied / blocked / reject spellings other hosts use) and the call executed
//! anyway, later.
//!
//! Matching: by `gen_ai.tool.call.id` when both the decision and the call carry one (within the
//! same conversation, else agent run, else trace), else by tool name (and by arguments digest
//! when both carry arguments) within the same agent run (else trace); the call must start after
//! the decision. A later `allow` decision for the same tool or call id lifts the denial (the host
//! re-evaluated), and each denial matches at most one call. `require_approval` without an
//! approval is TL002's, not this rule's.
//!
//! A denial and the call it matches share a conversation, agent run or trace, so a windowed
//! check judges each denial in the window owning its trace, with the same matches as one model
//! of the whole store.

use std::collections::HashSet;

use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::{Call, Model, Run, Scope};
use crate::policy::tool_part;

pub struct ExecutedDespiteDeny;

static DOCS: RuleDocs = RuleDocs {
    what: "A guardrail denied a tool call (guardrail.decision = deny or block, or denied / \
           blocked / reject / rejected) and the call executed anyway, after the decision: matched \
           by gen_ai.tool.call.id when both carry one (same conversation), else by tool name, and \
           arguments digest when both captured it, within the same agent run (else trace). A \
           later allow for the same tool or call lifts the denial. require_approval without an \
           approval is TL002.",
    why: "The guardrail worked and was ignored: the host logged the denial, then dispatched the \
          call anyway (a retry path, a second dispatcher, a decision read after dispatch). The \
          audit trail says the action was stopped while it happened.",
    example: "guardrail pii-filter decides block for export_service_records (gen_ai.tool.call.id \
              call_7) at 10:00:01.200; execute_tool export_service_records call_7 starts at \
              10:00:01.350 in the same agent run.",
    fix: "Make the dispatcher act on the guardrail's decision before sending the call (a denied \
          call must never reach tools/call), including retry and fallback paths; if the call was \
          meant to go ahead, record the re-evaluation as an allow decision before it.",
};

/// Decisions, denials, executed tool calls and denials naming no call, in what the input owns.
const DECISIONS: &str = "decisions";
const DENIALS: &str = "denials";
const CALLS: &str = "calls";
const UNNAMED: &str = "unnamed denials";

/// Whether a `guardrail.decision` value denies the call.
pub fn is_deny(decision: &str) -> bool {
    ["block", "blocked", "deny", "denied", "reject", "rejected"]
        .iter()
        .any(|d| decision.eq_ignore_ascii_case(d))
}

/// What a decision or a call is about, for matching one to the other.
struct Subject<'a> {
    tool: Option<&'a str>,
    call_id: Option<&'a str>,
    args_digest: Option<&'a str>,
    scope: Scope,
    run: Run,
}

impl<'a> Subject<'a> {
    fn of_span(model: &'a Model, i: usize) -> Self {
        let s = &model.spans[i];
        Self {
            tool: s.tool_name.as_deref(),
            call_id: s.tool_call_id.as_deref(),
            args_digest: s.arguments_digest.as_deref(),
            scope: model.span_scope(i),
            run: model.span_run(i),
        }
    }

    fn of_call(model: &'a Model, call: &'a Call) -> Self {
        let args = call.arguments_digest.as_deref().or_else(|| {
            call.members
                .iter()
                .find_map(|&m| model.spans[m].arguments_digest.as_deref())
        });
        Self {
            tool: call.tool.as_deref(),
            call_id: call.tool_call_id.as_deref(),
            args_digest: args,
            scope: model.call_scope(call),
            run: model.call_run(call),
        }
    }

    /// Same call: equal call ids in the same conversation when both carry one, else the same
    /// tool (and equal arguments where both have them) in the same agent run. `by_id` tells which.
    fn matches(&self, other: &Subject) -> Option<bool> {
        if let (Some(a), Some(b)) = (self.call_id, other.call_id) {
            return (a == b && self.scope == other.scope).then_some(true);
        }
        let same_tool =
            matches!((self.tool, other.tool), (Some(a), Some(b)) if tool_part(a) == tool_part(b));
        let same_args = match (self.args_digest, other.args_digest) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        (same_tool && same_args && self.run == other.run).then_some(false)
    }
}

impl Rule for ExecutedDespiteDeny {
    fn code(&self) -> &'static str {
        "TL017"
    }
    fn name(&self) -> &'static str {
        "executed-despite-deny"
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
        let decisions: Vec<usize> = model
            .spans
            .iter()
            .enumerate()
            .filter(|(_, s)| s.guardrail_decision.is_some())
            .map(|(i, _)| i)
            .collect();
        // The decision spans whose decision passes `pred`.
        let deciding = |pred: fn(&str) -> bool| -> Vec<usize> {
            decisions
                .iter()
                .copied()
                .filter(|&i| {
                    model.spans[i]
                        .guardrail_decision
                        .as_deref()
                        .is_some_and(pred)
                })
                .collect()
        };
        // Judged here: the denials of the traces this input owns. Their matches (calls, allows)
        // are in the same conversation, run or trace, so in the model too.
        let denials: Vec<usize> = deciding(is_deny)
            .into_iter()
            .filter(|&i| input.owns(i))
            .collect();
        let calls: Vec<&Call> = input.tool_calls().filter(|c| !c.input_required).collect();
        out.add(
            DECISIONS,
            decisions.iter().filter(|&&i| input.owns(i)).count(),
        );
        out.add(DENIALS, denials.len());
        out.add(CALLS, calls.iter().filter(|c| input.owns(c.anchor)).count());
        if denials.is_empty() {
            return out;
        }
        let call_subjects: Vec<Subject> =
            calls.iter().map(|c| Subject::of_call(model, c)).collect();
        let allows = deciding(|d| d.eq_ignore_ascii_case("allow"));
        let mut used: HashSet<usize> = HashSet::new();
        let mut unnamed = 0;
        for &d in &denials {
            let g = &model.spans[d];
            if g.tool_name.is_none() && g.tool_call_id.is_none() {
                unnamed += 1;
                continue;
            }
            let denied = Subject::of_span(model, d);
            let hit = calls.iter().zip(&call_subjects).find_map(|(c, cs)| {
                if used.contains(&c.anchor) || model.spans[c.anchor].start_ns < g.start_ns {
                    return None;
                }
                denied.matches(cs).map(|by_id| (*c, by_id))
            });
            let Some((call, by_id)) = hit else {
                continue;
            };
            let call_start = model.spans[call.anchor].start_ns;
            // A later allow for the same call (a re-evaluation) lifts the denial.
            let lifted = allows.iter().any(|&i| {
                let h = &model.spans[i];
                h.start_ns >= g.start_ns
                    && h.start_ns <= call_start
                    && denied.matches(&Subject::of_span(model, i)).is_some()
            });
            if lifted {
                continue;
            }
            used.insert(call.anchor);
            let tool = call.tool.as_deref().unwrap_or("?");
            let guardrail = g.guardrail_name.as_deref().unwrap_or("(unnamed guardrail)");
            let decision = g.guardrail_decision.as_deref().unwrap_or("block");
            let by = if by_id {
                "tool call id"
            } else {
                "tool name in the same agent run"
            };
            out.findings.push(
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
        out.add(UNNAMED, unnamed);
        out
    }

    fn keeps_window_findings(&self, partial: &Partial, _input: &RuleInput) -> bool {
        partial.count(DECISIONS) > 0 && partial.count(DENIALS) > 0
    }

    fn finish(&self, partial: Partial, _input: &RuleInput) -> RuleOutcome {
        let (decisions, denials, calls, unnamed) = (
            partial.count(DECISIONS),
            partial.count(DENIALS),
            partial.count(CALLS),
            partial.count(UNNAMED),
        );
        let mut cov = Coverage::new(denials);
        if decisions == 0 {
            cov.not_observable(
                calls,
                format!(
                    "no span records a guardrail decision (guardrail.decision): whether any of {calls} tool calls was denied is not observable"
                ),
            );
            return RuleOutcome::new(Vec::new(), cov);
        }
        if denials == 0 {
            cov.note(format!(
                "{decisions} guardrail decisions recorded, none deny or block"
            ));
            return RuleOutcome::new(Vec::new(), cov);
        }
        cov.not_observable(
            unnamed,
            format!("{unnamed} deny decisions name neither gen_ai.tool.name nor gen_ai.tool.call.id: the denied call cannot be matched"),
        );
        RuleOutcome::new(partial.findings, cov)
    }
}
