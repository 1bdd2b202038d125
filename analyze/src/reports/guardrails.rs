//! `report guardrails`: guardrail decisions (`guardrail.decision` allow / require_approval /
//! block) by guardrail and by the skill they ran under, with the tools they judged and how many
//! require_approval decisions were later allowed (an approval granted).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{skill_of, Owned, Report};
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
struct Acc {
    allow: usize,
    require_approval: usize,
    block: usize,
    other: usize,
    granted: usize,
    tools: BTreeSet<String>,
}

/// The report's tallies over the decisions counted so far (one model, or window after window).
#[derive(Default)]
pub struct Totals {
    acc: BTreeMap<(String, Option<String>), Acc>,
    unnamed: usize,
}

/// Builds the report.
pub fn build(model: &Model) -> Report<GuardrailRow> {
    let mut t = Totals::default();
    t.add(model, &Owned::all());
    t.finish()
}

impl Totals {
    /// Counts the decision spans of `model` that `owned` selects, and the approvals whose
    /// require_approval span it selects.
    pub fn add(&mut self, model: &Model, owned: &Owned) {
        for (i, s) in model.spans.iter().enumerate() {
            let Some(decision) = s.guardrail_decision.as_deref() else {
                continue;
            };
            if !owned.span(i) {
                continue;
            }
            let Some(name) = s.guardrail_name.as_deref().map(str::to_string) else {
                self.unnamed += 1;
                continue;
            };
            let a = self
                .acc
                .entry((name, skill_of(model, i).map(str::to_string)))
                .or_default();
            match decision {
                "allow" => a.allow += 1,
                "require_approval" => a.require_approval += 1,
                "block" => a.block += 1,
                _ => a.other += 1,
            }
            if let Some(t) = s.tool_name.as_deref() {
                if !a.tools.contains(t) {
                    a.tools.insert(t.to_string());
                }
            }
        }
        // An approval is the require_approval span followed by the allow span; credit the row
        // of the require_approval decision.
        for approval in Approvals::collect(model).items {
            let Some(&first) = approval.spans.first() else {
                continue;
            };
            let s = &model.spans[first];
            if s.guardrail_decision.as_deref() != Some("require_approval") || !owned.span(first) {
                continue;
            }
            let Some(name) = s.guardrail_name.as_deref().map(str::to_string) else {
                continue;
            };
            if let Some(a) = self
                .acc
                .get_mut(&(name, skill_of(model, first).map(str::to_string)))
            {
                a.granted += 1;
            }
        }
    }

    /// The rows, by guardrail and skill, and the notes.
    pub fn finish(self) -> Report<GuardrailRow> {
        let rows = self
            .acc
            .into_iter()
            .map(|((guardrail, skill), a)| GuardrailRow {
                guardrail,
                skill,
                allow: a.allow,
                require_approval: a.require_approval,
                block: a.block,
                other: a.other,
                approvals_granted: a.granted,
                tools: a.tools.into_iter().collect(),
            })
            .collect();
        let mut notes = Vec::new();
        if self.unnamed > 0 {
            notes.push(format!(
                "{} guardrail decisions without guardrail.name are not listed",
                self.unnamed
            ));
        }
        Report { rows, notes }
    }
}
