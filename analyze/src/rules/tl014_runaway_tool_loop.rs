//! TL014 runaway-tool-loop: one agent run calls the same tool more than N times, or takes more
//! than M model turns.
//!
//! Why a rule: an agent that loops burns tokens, rate limits and (for write tools) side effects
//! without any error being raised; the per-run counts are only visible once spans are grouped by
//! agent run, which is what the trace model does. Thresholds come from the policy file's
//! `[limits]` (`max_calls_per_tool`, `max_model_turns`) or `check`'s flags; the defaults are
//! declared once, below, and the docs, [`super::RuleOptions`] and the CLI help read them.

use std::collections::HashSet;

use super::groups::Groups;
use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::{Model, TraceId};

pub struct RunawayToolLoop;

/// The default of `max_calls_per_tool`, as a literal so `concat!` can put it in help texts.
macro_rules! default_max_calls_per_tool {
    () => {
        10
    };
}
/// The default of `max_model_turns`, as a literal so `concat!` can put it in help texts.
macro_rules! default_max_model_turns {
    () => {
        25
    };
}
pub(crate) use {default_max_calls_per_tool, default_max_model_turns};

/// TL014: more calls of one tool than this in one agent run, unless `[limits]` or a flag says.
pub const DEFAULT_MAX_CALLS_PER_TOOL: usize = default_max_calls_per_tool!();
/// TL014: more model turns than this in one agent run, unless `[limits]` or a flag says.
pub const DEFAULT_MAX_MODEL_TURNS: usize = default_max_model_turns!();

/// Most related spans listed on one finding.
const MAX_RELATED: usize = 50;

static DOCS: RuleDocs = RuleDocs {
    what: concat!(
        "One agent run (an invoke_agent span and everything under it, stitched across \
         processes) calls the same tool more than max_calls_per_tool times (default ",
        default_max_calls_per_tool!(),
        "), or makes more than max_model_turns model calls (default ",
        default_max_model_turns!(),
        "). Tool calls are logical calls (host execute_tool + MCP client + MCP server spans \
         count once). Calls and model turns outside any invoke_agent span are grouped per \
         trace instead, and the coverage says so. Thresholds: `check --max-calls-per-tool N \
         --max-model-turns N`, or the policy file's [limits] max_calls_per_tool / \
         max_model_turns (flags win)."
    ),
    why: "A loop costs tokens, rate limit and, for write tools, repeated side effects, and raises \
          no error: the run eventually ends by a timeout or a context-length limit, and only the \
          bill shows it.",
    example: "invoke_agent field-service-assistant with 14 execute_tool search_tickets calls \
              (limit 10), each with slightly different arguments.",
    fix: "Cap tool calls and turns per run in the agent runtime, make the tool's result say \
          clearly when there is nothing more to find, and raise the limits in [limits] if the \
          workload legitimately needs more.",
};

/// What a loop is counted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Unit {
    /// An `invoke_agent` span.
    Run(usize),
    /// A trace, for calls outside any agent run.
    Trace(TraceId),
}

impl Unit {
    fn of(model: &Model, run: Option<usize>, span: usize) -> Self {
        match run {
            Some(r) => Self::Run(r),
            None => Self::Trace(model.spans[span].trace_id),
        }
    }
    /// Whether the unit is judged by `input` (its run span's trace, or its trace, is core).
    fn owned(self, input: &RuleInput) -> bool {
        match self {
            Self::Run(r) => input.owns(r),
            Self::Trace(t) => input.owns_trace(t),
        }
    }
    fn describe(self, model: &Model) -> String {
        match self {
            Self::Run(r) => match &model.spans[r].agent_name {
                Some(a) => format!("agent run {a}"),
                None => "one agent run".to_string(),
            },
            Self::Trace(_) => "one trace (no invoke_agent span)".to_string(),
        }
    }
}

/// Units (agent runs, traces outside any run) examined / of those, traces / tool calls without
/// a tool name.
const UNITS: &str = "units";
const TRACES: &str = "traces";
const UNNAMED: &str = "unnamed";

impl Rule for RunawayToolLoop {
    fn code(&self) -> &'static str {
        "TL014"
    }
    fn name(&self) -> &'static str {
        "runaway-tool-loop"
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }

    fn scan(&self, input: &RuleInput) -> Partial {
        let model = input.model;
        let max_calls = input.options.max_calls_per_tool;
        let max_turns = input.options.max_model_turns;
        // (unit, tool) -> call anchors; unit -> model call spans; every unit seen.
        let mut calls: Groups<(Unit, &str), usize> = Groups::default();
        let mut turns: Groups<Unit, usize> = Groups::default();
        let mut seen: HashSet<Unit, foldhash::fast::RandomState> = HashSet::default();
        let mut out = Partial::default();
        for call in input.tool_calls() {
            let unit = Unit::of(model, model.call_agent_run(call), call.anchor);
            seen.insert(unit);
            match call.tool.as_deref() {
                Some(t) => calls.push((unit, t), call.anchor),
                None => out.add(UNNAMED, usize::from(unit.owned(input))),
            }
        }
        for &i in &model.model_call_spans {
            // A model call recorded twice (an agent framework's span around a model client's
            // span, e.g. ADK's call_llm > generate_content) is one turn.
            let nested = model.parent[i].is_some_and(|p| model.spans[p].is_model_call());
            if !nested {
                let unit = Unit::of(model, model.agent_run[i], i);
                seen.insert(unit);
                turns.push(unit, i);
            }
        }
        let mut units: Vec<Unit> = seen.into_iter().filter(|u| u.owned(input)).collect();
        units.sort_unstable();
        out.add(UNITS, units.len());
        let traces = units.iter().filter(|u| matches!(u, Unit::Trace(_))).count();
        out.add(TRACES, traces);
        // Both groupings are sorted by unit first: a unit's groups are found by binary search.
        let calls = calls.into_sorted();
        let turns = turns.into_sorted();
        let mut findings = Vec::new();
        for &unit in &units {
            // Described only when a limit is passed: most units pass none.
            let where_ = || unit.describe(model);
            let lo = calls.partition_point(|((u, _), _)| *u < unit);
            let hi = calls.partition_point(|((u, _), _)| *u <= unit);
            for ((_, tool), anchors) in &calls[lo..hi] {
                if anchors.len() <= max_calls {
                    continue;
                }
                let at = match unit {
                    Unit::Run(r) => r,
                    Unit::Trace(_) => anchors[0],
                };
                findings.push(
                    Finding::at(
                        self,
                        model,
                        at,
                        format!(
                            "{tool} called {} times in {} (limit {max_calls})",
                            anchors.len(),
                            where_()
                        ),
                    )
                    .with_tool(Some(*tool))
                    .with_related(model, anchors.iter().copied().take(MAX_RELATED)),
                );
            }
            let unit_turns = turns
                .binary_search_by(|(u, _)| u.cmp(&unit))
                .ok()
                .map(|k| &turns[k].1);
            if let Some(t) = unit_turns.filter(|t| t.len() > max_turns) {
                let at = match unit {
                    Unit::Run(r) => r,
                    Unit::Trace(_) => t[0],
                };
                findings.push(
                    Finding::at(
                        self,
                        model,
                        at,
                        format!(
                            "{} model turns in {} (limit {max_turns})",
                            t.len(),
                            where_()
                        ),
                    )
                    .with_related(model, t.iter().copied().take(MAX_RELATED)),
                );
            }
        }
        out.findings = findings;
        out
    }

    fn finish(&self, partial: Partial, input: &RuleInput) -> RuleOutcome {
        let max_calls = input.options.max_calls_per_tool;
        let max_turns = input.options.max_model_turns;
        let (traces, unnamed) = (partial.count(TRACES), partial.count(UNNAMED));
        let mut cov = Coverage::new(partial.count(UNITS));
        cov.note(format!(
            "limits: more than {max_calls} calls of one tool or more than {max_turns} model turns per agent run"
        ));
        if traces > 0 {
            cov.note(format!(
                "{traces} trace(s) have tool calls or model calls outside any invoke_agent span: counted per trace"
            ));
        }
        if unnamed > 0 {
            cov.note(format!(
                "tool name unknown on {unnamed} tool call(s): not counted per tool"
            ));
        }
        RuleOutcome::new(partial.findings, cov)
    }
}
