//! TL016 guardrail-never-evaluated: a guardrail that guards a tool (per the policy file's
//! `[guardrails.<name>]`, or because the spans show it deciding on that tool) made no decision in
//! an agent run that called the tool.
//!
//! Why a rule of its own: a guardrail that silently stopped running (a config flag, a code path
//! that bypasses it, a refactor of the dispatcher) looks exactly like a guardrail that allowed
//! everything. The only trace of it is an absence, seen per agent run. Calls TL002 already
//! reports (requires_approval, no approval) are left to TL002 so one gap is reported once.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::input::short_list;
use super::tl002_unconfirmed_write::unapproved;
use super::{Coverage, Finding, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::{Call, Model, TraceId};
use crate::policy::tool_part;

pub struct GuardrailNeverEvaluated;

static DOCS: RuleDocs = RuleDocs {
    what: "A guardrail that guards a tool never evaluated in an agent run that called the tool. \
           A guardrail guards a tool when the policy file declares it ([guardrails.<name>] \
           guards = [tool keys]) or when the spans show it deciding on that tool \
           (guardrail.name with gen_ai.tool.name) in any run. One finding per agent run (else \
           trace) and guardrail, at its first guarded call. Calls TL002 reports (requires_approval \
           with no approval) are left to TL002.",
    why: "A guardrail that stopped running (a feature flag, a new code path to the dispatcher, a \
          refactor) looks exactly like one that allowed everything: nothing fails and every \
          dashboard stays green. The only evidence is its absence in runs that needed it.",
    example: "agent run invoke_agent field-service-assistant calls export_service_records; \
              guardrail pii-filter decided on export_service_records in other runs (or the \
              policy declares [guardrails.pii-filter] guards = [\"export_service_records\"]) but \
              there is no pii-filter span in this run.",
    fix: "Make the host run the guardrail on every dispatch path of the tools it guards and \
          record each decision as a span (guardrail.name, guardrail.decision = allow | \
          require_approval | block, gen_ai.tool.name or gen_ai.tool.call.id). If the guardrail \
          no longer applies to the tool, remove it from the policy's guards list.",
};

/// Where a run is judged: the agent run (`invoke_agent` span), else the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum RunKey {
    Agent(usize),
    Trace(TraceId),
}

fn run_of_span(model: &Model, i: usize) -> RunKey {
    model.agent_run[i].map_or(RunKey::Trace(model.spans[i].trace_id), RunKey::Agent)
}

fn run_of_call(model: &Model, call: &Call) -> RunKey {
    model
        .call_agent_run(call)
        .map_or(RunKey::Trace(model.spans[call.anchor].trace_id), RunKey::Agent)
}

/// Why a guardrail guards a tool.
#[derive(Default)]
struct Declared<'a> {
    /// guardrail -> tool parts it guards (policy keys and observed tool names).
    guards: BTreeMap<&'a str, BTreeSet<&'a str>>,
    /// guardrails the policy file declares (the others were learnt from the spans).
    from_policy: BTreeSet<&'a str>,
}

impl<'a> Declared<'a> {
    fn collect(input: &'a RuleInput) -> (Self, usize) {
        let mut d = Self::default();
        for (name, g) in &input.policy.guardrails {
            d.from_policy.insert(name.as_str());
            let set = d.guards.entry(name.as_str()).or_default();
            set.extend(g.guards.iter().map(|k| tool_part(k)));
        }
        let mut guardrail_spans = 0;
        for s in &input.model.spans {
            if s.guardrail_name.is_none() && s.guardrail_decision.is_none() {
                continue;
            }
            guardrail_spans += 1;
            if let (Some(name), Some(tool)) = (s.guardrail_name.as_deref(), s.tool_name.as_deref())
            {
                d.guards.entry(name).or_default().insert(tool_part(tool));
            }
        }
        (d, guardrail_spans)
    }

    fn guarding(&self, tool: &str) -> impl Iterator<Item = &'a str> + '_ {
        let part = tool_part(tool);
        self.guards
            .iter()
            .filter(move |(_, tools)| tools.contains(part))
            .map(|(name, _)| *name)
    }
}

impl Rule for GuardrailNeverEvaluated {
    fn code(&self) -> &'static str {
        "TL016"
    }
    fn name(&self) -> &'static str {
        "guardrail-never-evaluated"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }

    fn check(&self, input: &RuleInput) -> RuleOutcome {
        let model = input.model;
        let (declared, guardrail_spans) = Declared::collect(input);
        if declared.guards.is_empty() {
            let runs: HashSet<RunKey> = input.tool_calls().map(|c| run_of_call(model, c)).collect();
            let mut cov = Coverage::new(0);
            let why = if guardrail_spans > 0 {
                "guardrail spans carry no guardrail.name with gen_ai.tool.name and the policy file declares no [guardrails.<name>]: which tools a guardrail guards is unknown"
            } else {
                "no guardrail declared: no guardrail.* attributes in the spans and no [guardrails.<name>] in the policy file"
            };
            cov.not_observable(runs.len(), format!("{} agent runs with tool calls: {why}", runs.len()));
            return RuleOutcome::new(Vec::new(), cov);
        }
        // Decisions made per run, by guardrail name.
        let mut evaluated: HashSet<(RunKey, &str)> = HashSet::new();
        for (i, s) in model.spans.iter().enumerate() {
            if let Some(name) = s.guardrail_name.as_deref() {
                evaluated.insert((run_of_span(model, i), name));
            }
        }
        let left_to_tl002: HashSet<usize> = unapproved(input)
            .calls
            .iter()
            .map(|(c, _)| c.anchor)
            .collect();
        // (run, guardrail) -> the guarded calls of that run.
        let mut needed: BTreeMap<(RunKey, &str), Vec<&Call>> = BTreeMap::new();
        let mut runs: BTreeSet<RunKey> = BTreeSet::new();
        for call in input.tool_calls() {
            let Some(tool) = call.tool.as_deref() else {
                continue;
            };
            let run = run_of_call(model, call);
            for g in declared.guarding(tool) {
                runs.insert(run);
                needed.entry((run, g)).or_default().push(call);
            }
        }
        let mut cov = Coverage::new(runs.len());
        let mut findings = Vec::new();
        let mut deferred = 0;
        for ((run, guardrail), calls) in &needed {
            if evaluated.contains(&(*run, *guardrail)) {
                continue;
            }
            let own: Vec<&&Call> = calls
                .iter()
                .filter(|c| !left_to_tl002.contains(&c.anchor))
                .collect();
            let Some(first) = own.first() else {
                deferred += 1;
                continue;
            };
            let tools: BTreeSet<&str> = own.iter().filter_map(|c| c.tool.as_deref()).collect();
            let source = if declared.from_policy.contains(guardrail) {
                "the policy file"
            } else {
                "its decisions in other runs"
            };
            let mut f = Finding::for_call(
                self,
                model,
                first,
                format!(
                    "guardrail {guardrail} never evaluated in this agent run, which called {} ({} calls) that it guards (per {source})",
                    short_list(tools.iter().copied()),
                    own.len(),
                ),
            );
            for c in &own[1..] {
                f = f.with_related(model, std::iter::once(c.anchor).chain(c.members.iter().copied()));
            }
            findings.push(f);
        }
        if deferred > 0 {
            cov.note(format!(
                "{deferred} runs where a guardrail did not evaluate only before calls TL002 reports (requires_approval, no approval): left to TL002"
            ));
        }
        RuleOutcome::new(findings, cov)
    }
}
