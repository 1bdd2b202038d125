//! `report skills`: per `skill.name`, where the skill was active and what ran under it: tool
//! calls and tool errors, model calls and guardrail decisions, and the agents that used it.
//!
//! `skill.name` is a custom attribute (no GenAI convention exists) that hosts put either on a
//! span wrapping the skill's work or only as context on the spans the skill constrains (seed
//! 000: guardrail decisions declared on the skill against a tool name). So a span belongs to a
//! skill when it or an ancestor carries the name, and a tool call that does not also belongs to
//! the skill whose guardrail decision named that tool earlier in the same conversation (else
//! agent run, else trace). Activity is counted per conversation, not per span, because a context
//! attribute repeated on sibling spans is not a new invocation.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{skill_of, Report};
use crate::model::{Call, Model, Scope};

/// One row of `report skills`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SkillRow {
    pub skill: String,
    /// Distinct conversations (else agent runs, else traces) the skill was active in.
    pub conversations: usize,
    pub agents: Vec<String>,
    pub tool_calls: usize,
    pub tool_errors: usize,
    pub model_calls: usize,
    pub guardrail_decisions: usize,
}

#[derive(Default)]
struct Acc<'a> {
    scopes: BTreeSet<Scope>,
    agents: BTreeSet<&'a str>,
    tool_calls: usize,
    tool_errors: usize,
    model_calls: usize,
    guardrails: usize,
}

/// Builds the report.
pub fn build(model: &Model) -> Report<SkillRow> {
    let mut acc: BTreeMap<&str, Acc> = BTreeMap::new();
    // Guardrail decisions of a skill that name a tool: (scope, tool, start, skill).
    let mut constraints: Vec<(Scope, &str, i64, &str)> = Vec::new();
    for (i, s) in model.spans.iter().enumerate() {
        let Some(skill) = skill_of(model, i) else {
            continue;
        };
        let a = acc.entry(skill).or_default();
        a.scopes.insert(model.span_scope(i));
        if let Some(agent) = model.agent_run[i].and_then(|r| model.spans[r].agent_name.as_deref()) {
            a.agents.insert(agent);
        }
        if s.is_model_call() {
            a.model_calls += 1;
        }
        if s.guardrail_decision.is_some() {
            a.guardrails += 1;
            if let Some(tool) = s.tool_name.as_deref() {
                constraints.push((model.span_scope(i), tool, s.start_ns, skill));
            }
        }
    }
    let mut by_guardrail = 0;
    for call in model.calls.iter().filter(|c| c.is_tool()) {
        let (skill, via_guardrail) = match call_skill(model, call) {
            Some(s) => (Some(s), false),
            None => (guardrail_skill(model, call, &constraints), true),
        };
        let Some(a) = skill.and_then(|s| acc.get_mut(s)) else {
            continue;
        };
        a.tool_calls += 1;
        if call.is_error == Some(true) {
            a.tool_errors += 1;
        }
        if via_guardrail {
            by_guardrail += 1;
        }
    }
    let rows = acc
        .into_iter()
        .map(|(skill, a)| SkillRow {
            skill: skill.to_string(),
            conversations: a.scopes.len(),
            agents: a.agents.iter().map(|s| s.to_string()).collect(),
            tool_calls: a.tool_calls,
            tool_errors: a.tool_errors,
            model_calls: a.model_calls,
            guardrail_decisions: a.guardrails,
        })
        .collect();
    let mut notes = Vec::new();
    if by_guardrail > 0 {
        notes.push(format!(
            "{by_guardrail} tool calls carry no skill.name and were attributed by an earlier guardrail decision of the skill naming the tool"
        ));
    }
    Report { rows, notes }
}

/// The skill on the call's spans or above them.
fn call_skill<'m>(model: &'m Model, call: &Call) -> Option<&'m str> {
    std::iter::once(call.anchor)
        .chain(call.members.iter().copied())
        .find_map(|m| skill_of(model, m))
}

/// The skill of the latest guardrail decision naming the call's tool before it, in its scope.
fn guardrail_skill<'a>(
    model: &Model,
    call: &Call,
    constraints: &[(Scope, &str, i64, &'a str)],
) -> Option<&'a str> {
    let tool = call.tool.as_deref()?;
    let scope = model.call_scope(call);
    let start = model.spans[call.anchor].start_ns;
    constraints
        .iter()
        .filter(|(sc, t, at, _)| *sc == scope && *t == tool && *at <= start)
        .max_by_key(|(_, _, at, _)| *at)
        .map(|(_, _, _, skill)| *skill)
}
