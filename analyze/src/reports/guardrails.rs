//! `report guardrails`: guardrail decisions (`guardrail.decision` allow / require_approval /
//! block) by guardrail and by the skill they ran under, with the tools they judged and how many
//! require_approval decisions were later allowed (an approval granted).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{skill_of, Report};
use crate::model::approvals::Approvals;
use crate::model::Model;

/// One row of `report guardrails`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GuardrailRow {
    pub guardrail: String,
    /// The skill the decision ran under; None when no skill.name is on the span or above it.
    pub skill: Option<String>,
    pub allow: usize,
    pub require_approval: usize,
    pub block: usize,
    /// Decisions with any other value.
    pub other: usize,
    /// require_approval decisions followed by an allow for the same tool (or tool call id).
    pub approvals_granted: usize,
    pub tools: Vec<String>,
}

#[derive(Default)]
struct Acc<'a> {
    allow: usize,
    require_approval: usize,
    block: usize,
    other: usize,
    granted: usize,
    tools: BTreeSet<&'a str>,
}

/// Builds the report.
pub fn build(model: &Model) -> Report<GuardrailRow> {
    let mut acc: BTreeMap<(String, Option<String>), Acc> = BTreeMap::new();
    let mut unnamed = 0;
    for (i, s) in model.spans.iter().enumerate() {
        let Some(decision) = s.guardrail_decision.as_deref() else {
            continue;
        };
        let Some(name) = s.guardrail_name.as_deref().map(str::to_string) else {
            unnamed += 1;
            continue;
        };
        let a = acc
            .entry((name, skill_of(model, i).map(str::to_string)))
            .or_default();
        match decision {
            "allow" => a.allow += 1,
            "require_approval" => a.require_approval += 1,
            "block" => a.block += 1,
            _ => a.other += 1,
        }
        if let Some(t) = s.tool_name.as_deref() {
            a.tools.insert(t);
        }
    }
    // An approval is the require_approval span followed by the allow span; credit the row of the
    // require_approval decision.
    for approval in Approvals::collect(model).items {
        let Some(&first) = approval.spans.first() else {
            continue;
        };
        let s = &model.spans[first];
        if s.guardrail_decision.as_deref() != Some("require_approval") {
            continue;
        }
        let Some(name) = s.guardrail_name.as_deref().map(str::to_string) else {
            continue;
        };
        if let Some(a) = acc.get_mut(&(name, skill_of(model, first).map(str::to_string))) {
            a.granted += 1;
        }
    }
    let rows = acc
        .into_iter()
        .map(|((guardrail, skill), a)| GuardrailRow {
            guardrail,
            skill,
            allow: a.allow,
            require_approval: a.require_approval,
            block: a.block,
            other: a.other,
            approvals_granted: a.granted,
            tools: a.tools.iter().map(|t| t.to_string()).collect(),
        })
        .collect();
    let mut notes = Vec::new();
    if unnamed > 0 {
        notes.push(format!(
            "{unnamed} guardrail decisions without guardrail.name are not listed"
        ));
    }
    Report { rows, notes }
}
