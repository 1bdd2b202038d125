//! TL016 guardrail-not-evaluated: a guardrail that guards a tool (per the policy file's
//! `[guardrails.<name>] guards = [...]`, or because the spans show it deciding on that tool) made
//! no decision in an agent run that executed the tool.
//!
//! Why a rule of its own: a guardrail that silently stopped running (a config flag, a code path
//! that bypasses it, a refactor of the dispatcher) looks exactly like a guardrail that allowed
//! everything. The only trace of it is an absence, seen per agent run. Calls TL002 already
//! reports (requires_approval, no approval) are left to TL002 so one gap is reported once.
//!
//! An absence is evidence only where a decision could have been seen: when no span of the store
//! records any guardrail decision, or the call's host side (where guardrails run) is not in the
//! store, the run is *not observable*, never clean and never a finding.
//!
//! In a windowed check, which tools a guardrail guards is the whole store's
//! ([`RuleInput::guardrails`], read in pass 1); a window judges the agent runs of its core, each
//! whole (a run lies in one trace).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::groups::Groups;
use super::input::short_list;
use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::{Call, McpRole, Model, Run};
use crate::policy::tool_part;

pub struct GuardrailNotEvaluated;

/// A set hashed with foldhash: keys are the analyzer's own (runs, span positions, names).
type FastSet<T> = HashSet<T, foldhash::fast::RandomState>;

static DOCS: RuleDocs = RuleDocs {
    what: "A guardrail that guards a tool never evaluated in an agent run that executed the tool. \
           A guardrail guards a tool when the policy file declares it ([guardrails.<name>] \
           guards = [tool keys]) or when the spans show it deciding on that tool \
           (guardrail.name with gen_ai.tool.name) in any run. One finding per agent run (else \
           trace) and guardrail, at its first guarded call. Calls TL002 reports (requires_approval \
           with no approval) are left to TL002. Not observable: no span records any guardrail \
           decision, or only the MCP server's side of the call is in the store.",
    why: "A guardrail that stopped running (a feature flag, a new code path to the dispatcher, a \
          refactor) looks exactly like one that allowed everything: nothing fails and every \
          dashboard stays green. The only evidence is its absence in runs that needed it.",
    example: "agent run invoke_agent field-service-assistant calls get_ticket twice; the policy \
              declares [guardrails.pii-filter] guards = [\"get_ticket\"] (or pii-filter decided \
              on get_ticket in other runs) but there is no pii-filter decision in this run.",
    fix: "Make the host run the guardrail on every dispatch path of the tools it guards and \
          record each decision as a span (guardrail.name, guardrail.decision = allow | \
          require_approval | block, gen_ai.tool.name or gen_ai.tool.call.id). If the guardrail \
          no longer applies to the tool, remove it from the policy's guards list.",
};

/// Runs examined (runs with guarded calls; with no guardrail known, runs with tool calls), runs
/// seen only from the MCP server, and runs left to TL002.
const RUNS: &str = "runs";
const SERVER_ONLY: &str = "server-only runs";
const DEFERRED: &str = "runs left to TL002";

/// Which guardrails guard which tools, and why.
#[derive(Default)]
struct Declared<'a> {
    /// guardrail -> tool parts it guards (policy keys and observed tool names).
    guards: BTreeMap<&'a str, BTreeSet<&'a str>>,
    /// guardrails the policy file declares (the others were learnt from the spans).
    from_policy: BTreeSet<&'a str>,
    /// Whether any span of the store records a guardrail decision (guardrail.name or
    /// guardrail.decision).
    any_decision: bool,
}

impl<'a> Declared<'a> {
    fn collect(input: &'a RuleInput) -> Self {
        let mut d = Self::default();
        for (name, g) in &input.policy.guardrails {
            d.from_policy.insert(name.as_str());
            let set = d.guards.entry(name.as_str()).or_default();
            set.extend(g.guards.iter().map(|k| tool_part(k)));
        }
        for (name, tool) in &input.guardrails.decided_on {
            d.guards.entry(name).or_default().insert(tool_part(tool));
        }
        d.any_decision = input.guardrails.any_decision;
        d
    }

    fn guarding<'s>(&'s self, tool: &'s str) -> impl Iterator<Item = &'a str> + 's {
        let part = tool_part(tool);
        self.guards
            .iter()
            .filter(move |(_, tools)| tools.contains(part))
            .map(|(name, _)| *name)
    }
}

/// Whether the host's side of a call (where guardrails run) is in the store: its `execute_tool`
/// or its MCP client span.
fn host_side_seen(model: &Model, call: &Call) -> bool {
    call.members
        .iter()
        .any(|&m| model.spans[m].is_execute_tool() || model.roles[m] == Some(McpRole::Client))
}

impl Rule for GuardrailNotEvaluated {
    fn code(&self) -> &'static str {
        "TL016"
    }
    fn name(&self) -> &'static str {
        "guardrail-not-evaluated"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }

    fn scan(&self, input: &RuleInput) -> Partial {
        let model = input.model;
        let declared = Declared::collect(input);
        let mut out = Partial::default();
        // Executed calls only (a round that asked for input did not run yet), of the runs this
        // input judges.
        let executed = || {
            input
                .tool_calls()
                .filter(|c| !c.input_required && input.owns(c.anchor))
        };
        if declared.guards.is_empty() {
            let runs: HashSet<Run> = executed().map(|c| model.call_run(c)).collect();
            out.add(RUNS, runs.len());
            return out;
        }
        // (run, guardrail) -> the guarded, host-observed calls of that run.
        let mut needed: Groups<(Run, &str), &Call> = Groups::default();
        // Only counted, so unordered.
        let mut runs: FastSet<Run> = FastSet::default();
        let mut server_only: FastSet<Run> = FastSet::default();
        // The guardrails guarding each tool, worked out once per tool name: a window has tens of
        // thousands of calls of a few dozen tools, and each asked every guardrail's tool set.
        let mut guarding: HashMap<&str, Vec<&str>, foldhash::fast::RandomState> =
            HashMap::default();
        for call in executed() {
            let Some(tool) = call.tool.as_deref() else {
                continue;
            };
            let run = model.call_run(call);
            let host = host_side_seen(model, call);
            let guards = guarding
                .entry(tool)
                .or_insert_with(|| declared.guarding(tool).collect());
            let guarded = !guards.is_empty();
            if host {
                for &g in guards.iter() {
                    needed.push((run, g), call);
                }
            }
            if guarded {
                runs.insert(run);
                if !host {
                    server_only.insert(run);
                }
            }
        }
        out.add(RUNS, runs.len());
        if !declared.any_decision {
            return out;
        }
        // Runs seen only from the MCP server (the guardrail runs in the host, which is not there).
        let needed = needed.into_sorted();
        let needed_runs: FastSet<Run> = needed.iter().map(|((run, _), _)| *run).collect();
        let server_only = server_only
            .into_iter()
            .filter(|r| !needed_runs.contains(r))
            .count();
        out.add(SERVER_ONLY, server_only);
        // Decisions made per run, by guardrail name.
        let mut evaluated: FastSet<(Run, &str)> = FastSet::default();
        for &i in &model.guardrail_spans {
            if let Some(name) = model.spans[i].guardrail_name.as_deref() {
                evaluated.insert((model.span_run(i), name));
            }
        }
        let left_to_tl002: FastSet<usize> = input
            .unapproved_calls()
            .iter()
            .map(|(c, _)| c.anchor)
            .collect();
        let mut deferred = 0;
        for ((run, guardrail), calls) in &needed {
            if evaluated.contains(&(*run, *guardrail)) {
                continue;
            }
            let own: Vec<&Call> = calls
                .iter()
                .copied()
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
                    "guardrail {guardrail} never evaluated in this agent run, which executed {} ({} calls) that it guards (per {source})",
                    short_list(tools.iter().copied()),
                    own.len(),
                ),
            );
            for c in &own[1..] {
                f = f.with_related(
                    model,
                    std::iter::once(c.anchor).chain(c.members.iter().copied()),
                );
            }
            out.findings.push(f);
        }
        out.add(DEFERRED, deferred);
        out
    }

    fn keeps_window_findings(&self, _partial: &Partial, input: &RuleInput) -> bool {
        let declared = Declared::collect(input);
        !declared.guards.is_empty() && declared.any_decision
    }

    fn finish(&self, partial: Partial, input: &RuleInput) -> RuleOutcome {
        let declared = Declared::collect(input);
        let runs = partial.count(RUNS);
        if declared.guards.is_empty() {
            let mut cov = Coverage::new(0);
            let why = if declared.any_decision {
                "no guardrail decision names its tool (guardrail.name with gen_ai.tool.name) and the policy file declares no [guardrails.<name>]: which tools a guardrail guards is unknown"
            } else {
                "no guardrail declared: no guardrail.* attributes in the spans and no [guardrails.<name>] in the policy file"
            };
            cov.not_observable(runs, format!("{runs} agent runs with tool calls: {why}"));
            return RuleOutcome::new(Vec::new(), cov);
        }
        let mut cov = Coverage::new(runs);
        if !declared.any_decision {
            // The policy declares guardrails, but the store holds no decision of any guardrail:
            // the host does not record them, so an absence proves nothing.
            let names: Vec<&str> = declared.from_policy.iter().copied().collect();
            cov.not_observable(
                runs,
                format!(
                    "{runs} agent runs called tools that {} guard (per the policy file), but no span in the store records a guardrail decision (guardrail.name / guardrail.decision): the host does not export them, so whether the guardrails ran is not observable",
                    short_list(names),
                ),
            );
            return RuleOutcome::new(Vec::new(), cov);
        }
        let server_only = partial.count(SERVER_ONLY);
        cov.not_observable(
            server_only,
            format!(
                "{server_only} agent runs with guarded tool calls seen only from the MCP server: the host, where guardrails run, is not in the store"
            ),
        );
        let deferred = partial.count(DEFERRED);
        if deferred > 0 {
            cov.note(format!(
                "{deferred} runs where a guardrail did not evaluate only before calls TL002 reports (requires_approval, no approval): left to TL002"
            ));
        }
        RuleOutcome::new(partial.findings, cov)
    }
}
