//! `report skills`: per `skill.name`, how often the skill ran and what it did: tool calls and
//! tool errors, model calls and guardrail decisions under it, the agents that used it, and the
//! total time spent in it.
//!
//! An invocation is the topmost span carrying the skill's name (its children that repeat the
//! attribute belong to the same invocation); calls and model calls are counted in its subtree.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{finish, ms, new_table, Report};
use crate::model::Model;

/// One row of `report skills`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SkillRow {
    pub skill: String,
    pub invocations: usize,
    pub agents: Vec<String>,
    pub tool_calls: usize,
    pub tool_errors: usize,
    pub model_calls: usize,
    pub guardrail_decisions: usize,
    /// Sum of the invocation spans' durations.
    pub total_ms: f64,
}

#[derive(Default)]
struct Acc<'a> {
    invocations: usize,
    agents: BTreeSet<&'a str>,
    tool_calls: usize,
    tool_errors: usize,
    model_calls: usize,
    guardrails: usize,
    total_ns: i64,
}

/// Builds the report.
pub fn build(model: &Model) -> Report<SkillRow> {
    let mut acc: BTreeMap<&str, Acc> = BTreeMap::new();
    for (i, s) in model.spans.iter().enumerate() {
        let Some(skill) = s.skill_name.as_deref() else {
            continue;
        };
        let nested = model
            .effective_parent(i)
            .is_some_and(|p| model.spans[p].skill_name.as_deref() == Some(skill));
        if nested {
            continue;
        }
        let a = acc.entry(skill).or_default();
        a.invocations += 1;
        a.total_ns = a.total_ns.saturating_add(s.duration_ns());
        if let Some(agent) = model.agent_run[i].and_then(|r| model.spans[r].agent_name.as_deref()) {
            a.agents.insert(agent);
        }
        let subtree: BTreeSet<usize> = model.subtree(i).into_iter().collect();
        for &j in &subtree {
            let t = &model.spans[j];
            if t.is_model_call() {
                a.model_calls += 1;
            }
            if t.guardrail_decision.is_some() {
                a.guardrails += 1;
            }
        }
        for call in model
            .calls
            .iter()
            .filter(|c| c.is_tool() && subtree.contains(&c.anchor))
        {
            a.tool_calls += 1;
            if call.is_error == Some(true) {
                a.tool_errors += 1;
            }
        }
    }
    let rows = acc
        .into_iter()
        .map(|(skill, a)| SkillRow {
            skill: skill.to_string(),
            invocations: a.invocations,
            agents: a.agents.iter().map(|s| s.to_string()).collect(),
            tool_calls: a.tool_calls,
            tool_errors: a.tool_errors,
            model_calls: a.model_calls,
            guardrail_decisions: a.guardrails,
            total_ms: ms(a.total_ns),
        })
        .collect();
    Report {
        rows,
        notes: Vec::new(),
    }
}

/// The terminal table.
pub fn table(r: &Report<SkillRow>) -> String {
    let mut t = new_table(&[
        "skill",
        "invocations",
        "agents",
        "tool calls",
        "tool errors",
        "model calls",
        "guardrail decisions",
        "total ms",
    ]);
    for row in &r.rows {
        t.add_row(vec![
            row.skill.clone(),
            row.invocations.to_string(),
            row.agents.join(", "),
            row.tool_calls.to_string(),
            row.tool_errors.to_string(),
            row.model_calls.to_string(),
            row.guardrail_decisions.to_string(),
            format!("{}", row.total_ms),
        ]);
    }
    finish(
        t,
        r.rows.len(),
        "no skills (no span carries skill.name)",
        &r.notes,
    )
}
